#include "train/batch_split.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "core/error.h"

namespace vkp::train {

BatchSplit parse_batch_split(const std::string& text) {
  if (text == "equal") return BatchSplit::equal();
  if (text == "throughput") return BatchSplit::by_throughput();
  std::vector<double> weights;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    std::size_t used = 0;
    double w = 0;
    try {
      w = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !std::isfinite(w) || w <= 0)
      throw Error(ErrorCode::invalid_argument, "batch split '" + text +
                                                   "': use equal, throughput, or one positive weight per tower (1,3)");
    weights.push_back(w);
    start = end + 1;
  }
  return BatchSplit::fixed(std::move(weights));
}

std::vector<std::int64_t> split_rows(std::int64_t rows, std::span<const double> shares) {
  const auto parts = static_cast<std::int64_t>(shares.size());
  if (parts == 0) throw Error(ErrorCode::invalid_argument, "batch split: no shares");
  double sum = 0;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    if (!std::isfinite(shares[k]) || shares[k] <= 0)
      throw Error(ErrorCode::invalid_argument, "batch split: tower " + std::to_string(k) + "'s share is " +
                                                   std::to_string(shares[k]) + "; shares must be positive");
    sum += shares[k];
  }
  if (rows < parts)
    throw Error(ErrorCode::invalid_argument, "batch split: " + std::to_string(rows) + " rows cannot give each of " +
                                                 std::to_string(parts) + " towers one");
  // Largest remainder of the exact quotas; then a part left without a row takes one
  // from the largest part.
  std::vector<std::int64_t> out(shares.size());
  std::vector<double> remainder(shares.size());
  std::int64_t given = 0;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    const double quota = static_cast<double>(rows) * shares[k] / sum;
    out[k] = static_cast<std::int64_t>(std::floor(quota));
    given += out[k];
    remainder[k] = quota - static_cast<double>(out[k]);
  }
  std::vector<std::size_t> order(shares.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t i = 0; given < rows; ++i, ++given) ++out[order[i % order.size()]];
  for (std::int64_t& n : out)
    if (n == 0) {
      --*std::max_element(out.begin(), out.end());
      n = 1;
    }
  return out;
}

void resplit(std::span<const std::vector<Array>> batches, std::span<const std::int64_t> rows,
             std::vector<std::vector<Array>>& out) {
  if (batches.empty()) throw Error(ErrorCode::invalid_argument, "batch split: no batches");
  const std::size_t inputs = batches[0].size();
  std::int64_t total = 0;
  for (std::size_t k = 0; k < batches.size(); ++k) {
    const std::vector<Array>& batch = batches[k];
    if (batch.size() != inputs)
      throw Error(ErrorCode::invalid_argument, "batch split: tower " + std::to_string(k) + "'s batch has " +
                                                   std::to_string(batch.size()) + " inputs, tower 0's " +
                                                   std::to_string(inputs));
    const std::int64_t n = batch_rows(batch);
    for (std::size_t i = 0; i < inputs; ++i) {
      const Shape& s = batch[i].shape();
      const Shape& first = batches[0][i].shape();
      const bool rows_ok = s.rank() > 0 && s[0] == n;
      const bool same_rest = s.rank() == first.rank() && batch[i].dtype() == batches[0][i].dtype() &&
                             std::equal(s.dims().begin() + (s.rank() > 0 ? 1 : 0), s.dims().end(),
                                        first.dims().begin() + (first.rank() > 0 ? 1 : 0));
      if (!rows_ok || !same_rest)
        throw Error(ErrorCode::invalid_argument,
                    "batch split: input " + std::to_string(i) + " of tower " + std::to_string(k) + " is " +
                        describe(batch[i]) + (rows_ok ? "; tower 0's is " + describe(batches[0][i])
                                                      : ", whose first dimension is not the batch's " +
                                                            std::to_string(n) + " rows"));
    }
    total += n;
  }
  const std::int64_t wanted = std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
  if (wanted != total)
    throw Error(ErrorCode::invalid_argument, "batch split: parts of " + std::to_string(wanted) + " rows for a batch of " +
                                                 std::to_string(total));
  out.resize(rows.size());
  for (std::size_t i = 0; i < inputs; ++i) {
    const Array& first = batches[0][i];
    const std::size_t row_bytes = first.nbytes() / static_cast<std::size_t>(batch_rows(batches[0]));
    std::size_t from = 0, offset = 0;  // source batch, row bytes into it
    for (std::size_t p = 0; p < rows.size(); ++p) {
      std::vector<std::int64_t> dims = first.shape().dims();
      dims[0] = rows[p];
      std::vector<Array>& part = out[p];
      part.resize(inputs);
      part[i] = Array::uninitialized(first.dtype(), Shape(std::move(dims)));
      std::byte* to = part[i].bytes().data();
      std::size_t left = static_cast<std::size_t>(rows[p]) * row_bytes;
      while (left > 0) {
        const std::span<const std::byte> src = batches[from][i].bytes();
        const std::size_t n = std::min(left, src.size() - offset);
        std::memcpy(to, src.data() + offset, n);
        to += n;
        left -= n;
        offset += n;
        if (offset == src.size()) {
          ++from;
          offset = 0;
        }
      }
    }
  }
}

void StepTimeModel::reset(int towers) {
  const auto n = static_cast<std::size_t>(towers);
  rows_.assign(n, 0);
  seconds_.assign(n, 0);
  steps_.assign(n, 0);
  last_.assign(n, Point{});
  fixed_.clear();
  per_row_.clear();
  rates_.clear();
}

void StepTimeModel::add(int tower, std::int64_t rows, double seconds) {
  const auto k = static_cast<std::size_t>(tower);
  rows_.at(k) += static_cast<double>(rows);
  seconds_.at(k) += seconds;
  steps_.at(k) += 1;
}

bool StepTimeModel::measured() const {
  if (steps_.empty()) return false;
  for (std::size_t k = 0; k < steps_.size(); ++k)
    if (steps_[k] == 0 || seconds_[k] <= 0) return false;
  return true;
}

void StepTimeModel::end_epoch() {
  if (!measured()) throw Error(ErrorCode::invalid_argument, "StepTimeModel: not every tower has been timed");
  const std::size_t n = steps_.size();
  const bool had_fit = fitted();
  fixed_.resize(n);
  per_row_.resize(n);
  rates_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Point now{rows_[k] / steps_[k], seconds_[k] / steps_[k]};
    rates_[k] = now.rows / now.seconds;
    const Point& before = last_[k];
    // Rows that moved by at least 2 and 5% measure the line through the two points.
    // Otherwise the line fitted before, scaled through the new point: a device that got
    // slower or faster as a whole (another load on the machine) keeps the ratio of its
    // fixed cost to its cost per row, rather than putting all the change in either.
    const double moved = std::abs(now.rows - before.rows);
    double a = 0, b = 0;
    if (before.rows > 0 && moved >= std::max(2.0, 0.05 * before.rows)) {
      b = (now.seconds - before.seconds) / (now.rows - before.rows);
      a = now.seconds - b * now.rows;
    } else if (had_fit) {
      const double scale = now.seconds / (fixed_[k] + per_row_[k] * now.rows);
      a = fixed_[k] * scale;
      b = per_row_[k] * scale;
    }
    if (!(b > 0) || a < 0) {
      a = 0;
      b = now.seconds / now.rows;
    }
    fixed_[k] = a;
    per_row_[k] = b;
    last_[k] = now;
  }
  std::fill(rows_.begin(), rows_.end(), 0.0);
  std::fill(seconds_.begin(), seconds_.end(), 0.0);
  std::fill(steps_.begin(), steps_.end(), 0.0);
}

std::vector<std::int64_t> StepTimeModel::balance(std::int64_t rows) const {
  if (!fitted()) throw Error(ErrorCode::invalid_argument, "StepTimeModel: no epoch has been fitted");
  const std::size_t n = fixed_.size();
  // The finishing time T at which the towers' rows, max(1, (T - a) / b), add up to `rows`.
  const auto rows_at = [&](double t, std::size_t k) { return std::max(1.0, (t - fixed_[k]) / per_row_[k]); };
  double lo = 0, hi = 0;
  for (std::size_t k = 0; k < n; ++k) hi = std::max(hi, fixed_[k] + per_row_[k] * static_cast<double>(rows));
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    double sum = 0;
    for (std::size_t k = 0; k < n; ++k) sum += rows_at(mid, k);
    (sum < static_cast<double>(rows) ? lo : hi) = mid;
  }
  std::vector<double> parts(n);
  for (std::size_t k = 0; k < n; ++k) parts[k] = rows_at(hi, k);
  return split_rows(rows, parts);
}

}  // namespace vkp::train
