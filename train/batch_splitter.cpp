#include "train/batch_splitter.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"
#include "core/log.h"

namespace vkp::train {

void BatchSplitter::set(BatchSplit split, int towers) {
  const auto n = static_cast<std::size_t>(towers);
  shares_.assign(n, 1.0 / static_cast<double>(n));
  if (split.mode == BatchSplit::Mode::fixed) {
    if (split.shares.size() != n)
      throw Error(ErrorCode::invalid_argument, "set_batch_split: " + std::to_string(split.shares.size()) +
                                                   " shares for " + std::to_string(n) + " towers");
    (void)split_rows(static_cast<std::int64_t>(n), split.shares);  // positive and finite, or Error
    double sum = 0;
    for (double w : split.shares) sum += w;
    for (std::size_t k = 0; k < n; ++k) shares_[k] = split.shares[k] / sum;
  }
  split_ = std::move(split);
}

void BatchSplitter::start(int towers) {
  if (shares_.empty()) shares_.assign(static_cast<std::size_t>(towers), 1.0 / static_cast<double>(towers));
  model_.reset(towers);
  resumed_ = false;
}

void BatchSplitter::read(InputSource& source, std::vector<std::vector<Array>>& batches) {
  const std::size_t n = shares_.size();
  if (split_.mode == BatchSplit::Mode::equal) {
    batches.resize(n);
    for (std::vector<Array>& batch : batches) batch = source.next_batch();
    return;
  }
  read_.resize(n);
  std::int64_t rows = 0;
  for (std::vector<Array>& batch : read_) {
    batch = source.next_batch();
    rows += batch_rows(batch);
  }
  resplit(read_, split_rows(rows, shares_), batches);
}

std::int64_t BatchSplitter::note_rows(std::span<const std::vector<Array>> batches) {
  std::int64_t samples = 0;
  rows_.resize(batches.size());
  for (std::size_t k = 0; k < batches.size(); ++k) samples += rows_[k] = batch_rows(batches[k]);
  return samples;
}

void BatchSplitter::add_time(int tower, double seconds) {
  model_.add(tower, rows_[static_cast<std::size_t>(tower)], seconds);
}

bool BatchSplitter::begin_epoch(const callbacks::Monitors& monitors, std::vector<std::vector<Array>>& staged) {
  if (!by_throughput()) return false;
  if (!resumed_) {
    // A resumed run goes on with the shares the interrupted one recorded last.
    resumed_ = true;
    std::vector<double> recorded;
    for (std::size_t k = 0; k < shares_.size(); ++k) {
      const std::string name = "towers/tower" + std::to_string(k) + "/share";
      if (!monitors.has_history(name) || monitors.get_history(name).empty()) break;
      recorded.push_back(monitors.get_history(name).back().second);
    }
    if (recorded.size() == shares_.size()) {
      shares_ = recorded;
      log_info("batch split: resuming with the recorded shares");
    }
  }
  if (staged.empty()) return false;
  std::int64_t rows = 0;
  for (const std::vector<Array>& b : staged) rows += batch_rows(b);
  const std::vector<std::int64_t> want = split_rows(rows, shares_);
  bool same = true;
  for (std::size_t k = 0; k < want.size(); ++k) same = same && batch_rows(staged[k]) == want[k];
  if (same) return false;
  std::vector<std::vector<Array>> cut;
  resplit(staged, want, cut);
  staged = std::move(cut);
  return true;
}

void BatchSplitter::end_epoch(callbacks::Monitors& monitors, int epoch) {
  if (!by_throughput() || !model_.measured()) return;
  model_.end_epoch();
  std::int64_t rows = 0;
  for (std::int64_t r : rows_) rows += r;
  const std::vector<std::int64_t> next = model_.balance(rows);
  std::string line;
  for (std::size_t k = 0; k < next.size(); ++k) {
    const int tower = static_cast<int>(k);
    shares_[k] = static_cast<double>(next[k]) / static_cast<double>(rows);
    line += fmt::format("{}tower {} {:.0f} samples/s ({:.2f} ms + {:.4f} ms a row)", k == 0 ? "" : ", ", k,
                        model_.rates()[k], 1e3 * model_.fixed_seconds(tower), 1e3 * model_.seconds_per_row(tower));
    const std::string prefix = "towers/tower" + std::to_string(k) + "/";
    monitors.put_scalar(prefix + "samples_per_second", model_.rates()[k]);
    monitors.put_scalar(prefix + "share", shares_[k]);
  }
  line += "; next epoch's shares";
  for (double s : shares_) line += fmt::format(" {:.3f}", s);
  log_info("batch split, epoch {}: {}", epoch, line);
}

}  // namespace vkp::train
