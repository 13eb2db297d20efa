#include "dataflow/multi_thread_batch_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dataflow/internal/batch_board.h"

namespace vkp::dataflow {
namespace {

constexpr const char* kWho = "MultiThreadBatchData";

// Datapoints a worker takes from the flow at once. More than one, so that locks are
// taken per few datapoints; few, so that a worker's datapoints are allocated and freed
// close together: glibc keeps up to 7 freed blocks of each size per thread for quick
// reuse, and more held at once (a small image datapoint is 4 to 6 blocks, 2 of one size)
// spill into its slow, consolidating paths, which cost as much as the locks saved.
constexpr std::size_t kRun = 4;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Locks `m`, spinning a little (a few microseconds) first: the locks here are held for
// a microsecond or less, and putting a thread to sleep and waking it costs several (more
// in a virtual machine). Longer spinning would burn the time of a holder that was
// preempted.
std::unique_lock<std::mutex> lock_soon(std::mutex& m) {
  for (int i = 0; i < 128; ++i) {
    if (m.try_lock()) return std::unique_lock<std::mutex>(m, std::adopt_lock);
    cpu_relax();
  }
  return std::unique_lock<std::mutex>(m);
}

RandomMapFunction ignore_rng(MapFunction func) {
  require(static_cast<bool>(func), ErrorCode::invalid_argument, "MultiThreadBatchData: the function is empty");
  return [func = std::move(func)](Datapoint dp, Rng&) { return func(std::move(dp)); };
}

std::size_t checked_batch_size(std::size_t batch_size) {
  require(batch_size >= 1, ErrorCode::invalid_argument, "MultiThreadBatchData: batch_size must be at least 1, got 0");
  return batch_size;
}

// Whether `row` (a datapoint's component) fits a row of `batch` (a stacked component).
bool fits(const Array& row, const Array& batch) {
  const std::vector<std::int64_t>& r = row.shape().dims();
  const std::vector<std::int64_t>& b = batch.shape().dims();
  return row.dtype() == batch.dtype() && r.size() + 1 == b.size() && std::equal(r.begin(), r.end(), b.begin() + 1);
}

std::string describe_row(const Array& batch) {
  const std::vector<std::int64_t>& b = batch.shape().dims();
  return std::string(to_string(batch.dtype())) + to_string(Shape(std::vector<std::int64_t>(b.begin() + 1, b.end())));
}

}  // namespace

MultiThreadBatchData::MultiThreadBatchData(DataFlowPtr df, std::size_t batch_size, MapFunction func,
                                           MultiThreadBatchOptions options)
    : MultiThreadBatchData(std::move(df), batch_size, ignore_rng(std::move(func)), options) {}

MultiThreadBatchData::MultiThreadBatchData(DataFlowPtr df, std::size_t batch_size, RandomMapFunction func,
                                           MultiThreadBatchOptions options)
    : df_(std::move(df)),
      batch_size_(checked_batch_size(batch_size)),
      func_(std::move(func)),
      options_(options),
      board_(std::make_unique<BatchBoard>(batch_size_, options.buffer_batches, options.ordered)),
      stacker_(batch_size_, kWho) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "MultiThreadBatchData: the dataflow to batch is null");
  require(static_cast<bool>(func_), ErrorCode::invalid_argument, "MultiThreadBatchData: the function is empty");
  require(options_.num_threads >= 1, ErrorCode::invalid_argument,
          "MultiThreadBatchData: num_threads must be at least 1, got 0");
  require(options_.buffer_batches >= 1, ErrorCode::invalid_argument,
          "MultiThreadBatchData: buffer_batches must be at least 1, got 0");
}

std::string MultiThreadBatchData::own_replay_obstacle() const {
  if (options_.ordered || options_.num_threads == 1) return {};
  return fmt::format("unordered, {} threads fill batches in the order they finish them", options_.num_threads);
}

MultiThreadBatchData::~MultiThreadBatchData() {
  {
    std::lock_guard lock(mutex_);
    board_->stop = true;
  }
  workers_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::optional<std::size_t> MultiThreadBatchData::size() const {
  const std::optional<std::size_t> n = df_->size();
  if (!n) return std::nullopt;
  return options_.remainder ? (*n + batch_size_ - 1) / batch_size_ : *n / batch_size_;
}

void MultiThreadBatchData::on_reset_state() {
  df_->reset_state();
  threads_.reserve(options_.num_threads);
  for (std::size_t i = 0; i < options_.num_threads; ++i) threads_.emplace_back([this] { worker_loop(); });
}

void MultiThreadBatchData::on_start_epoch() {
  // Waits for a worker reading the flow to finish its run.
  std::lock_guard source(source_mutex_);
  BatchBoard::Slots abandoned;
  {
    std::lock_guard lock(mutex_);
    // Workers still mapping datapoints of the abandoned epoch find their generation gone.
    ++board_->generation;
    abandoned.swap(board_->slots);
    board_->error = nullptr;
    board_->end.reset();
    board_->epoch_first = board_->next_index;
    board_->yielded = 0;
    board_->open = false;
  }
  abandoned.clear();
  stacker_.clear();
  pending_.reset();
  df_->start_epoch();
  {
    std::lock_guard lock(mutex_);
    board_->open = true;
  }
  workers_cv_.notify_all();
}

std::optional<Datapoint> MultiThreadBatchData::on_next() {
  while (true) {
    if (pending_)
      if (std::optional<Datapoint> batch = take_pending_rows()) return batch;
    std::shared_ptr<BatchSlot> slot;
    std::size_t rows = 0;
    {
      std::unique_lock lock(mutex_);
      // A batch that is ready is taken at once; a reader that has to sleep is woken as
      // the board's reader_can_go_on() says.
      if (!board_->error && !board_->epoch_done() && board_->ready_slot() == board_->slots.end()) {
        if (options_.reader_helps && board_->can_take()) {
          lock.unlock();
          BatchRun run;
          if (take_run(run, helped_, false) == Taken::run && !helped_.empty()) do_run(run, helped_);
          continue;
        }
        board_->reader_waits = true;
        reader_cv_.wait(lock, [&] { return board_->reader_can_go_on(); });
        board_->reader_waits = false;
      }
      if (board_->error) std::rethrow_exception(board_->error);
      const auto it = board_->ready_slot();
      if (it == board_->slots.end()) {  // the epoch is done
        lock.unlock();
        if (stacker_.rows() > 0 && options_.remainder) return stacker_.take();
        stacker_.clear();
        return std::nullopt;
      }
      rows = board_->rows_of(it->first);
      slot = std::move(it->second);
      board_->slots.erase(it);
      ++board_->yielded;
      const bool wake = board_->workers_waiting > 0;
      lock.unlock();
      if (wake) workers_cv_.notify_all();
    }
    // The common case: a whole batch, every row written, passed on as it is.
    if (slot->kept_count == batch_size_ && stacker_.rows() == 0) return std::move(slot->batch);
    if (slot->kept_count == 0) continue;
    pending_ = std::move(slot);
    pending_row_ = 0;
    pending_rows_ = rows;
  }
}

// Moves the written rows of pending_ into stacker_ until it is full (then returns the
// batch) or pending_ has no more rows.
std::optional<Datapoint> MultiThreadBatchData::take_pending_rows() {
  while (!stacker_.full()) {
    while (pending_row_ < pending_rows_ && !pending_->kept[pending_row_]) ++pending_row_;
    if (pending_row_ == pending_rows_) {
      pending_.reset();
      return std::nullopt;
    }
    std::size_t end = pending_row_;
    const std::size_t room = batch_size_ - stacker_.rows();
    while (end < pending_rows_ && pending_->kept[end] && end - pending_row_ < room) ++end;
    stacker_.add_rows(pending_->batch, pending_row_, end);
    pending_row_ = end;
  }
  return stacker_.take();
}

void MultiThreadBatchData::worker_loop() {
  std::vector<Datapoint> taken;
  taken.reserve(kRun);
  while (true) {
    BatchRun run;
    if (take_run(run, taken, true) == Taken::stop) return;
    if (!taken.empty()) do_run(run, taken);
  }
}

void MultiThreadBatchData::do_run(BatchRun& run, std::vector<Datapoint>& taken) {
  std::size_t kept = 0;
  std::exception_ptr error;
  try {
    for (std::size_t i = 0; i < taken.size(); ++i) {
      Rng rng(options_.seed, run.first + i);
      // Mapped, copied into its row and freed at once, while its bytes are in cache.
      const std::optional<Datapoint> mapped = func_(std::move(taken[i]), rng);
      if (!mapped) continue;
      write_row(*run.slot, run.row + i, *mapped);
      ++kept;
    }
  } catch (...) {
    error = std::current_exception();
  }
  taken.clear();
  complete_run(run, kept, std::move(error));
}

// Takes a run, up to kRun datapoints of one batch: at once, or none; with `wait`, once
// one may be taken. Returns stop when the flow is being destroyed. A run taken may come
// back with `taken` empty (the epoch ended or failed).
MultiThreadBatchData::Taken MultiThreadBatchData::take_run(BatchRun& run, std::vector<Datapoint>& taken, bool wait) {
  std::unique_lock<std::mutex> source;
  std::size_t want = 0;
  while (true) {
    source = lock_soon(source_mutex_);
    std::unique_lock lock = lock_soon(mutex_);
    if (board_->stop) return Taken::stop;
    if (board_->can_take()) {
      want = board_->claim(run, kRun);
      break;
    }
    source.unlock();  // start_epoch() may need it
    if (!wait) return Taken::none;
    ++board_->workers_waiting;
    workers_cv_.wait(lock, [&] { return board_->stop || board_->can_take(); });
    --board_->workers_waiting;
  }
  bool exhausted = false;
  std::exception_ptr error;
  try {
    while (taken.size() < want) {
      std::optional<Datapoint> dp = df_->next();
      if (!dp) {
        exhausted = true;
        break;
      }
      taken.push_back(std::move(*dp));
    }
  } catch (...) {
    error = std::current_exception();
  }
  if (error) taken.clear();
  run.count = taken.size();
  if (!exhausted && !error) return Taken::run;
  // Still under source_mutex_, so the generation cannot have changed: start_epoch()
  // waits for it.
  const bool wake = cut_short(run, want, error);
  source.unlock();
  if (wake) reader_cv_.notify_one();
  return Taken::run;
}

bool MultiThreadBatchData::cut_short(BatchRun& run, std::size_t want, std::exception_ptr error) {
  std::unique_lock lock = lock_soon(mutex_);
  board_->next_index -= want - run.count;
  if (!error)  // the flow's epoch ended
    board_->end = board_->next_index;
  else if (!board_->error)
    board_->error = error;
  board_->open = false;
  if (run.count == 0) {  // nothing to complete
    --board_->runs_in_flight;
    if (run.row == 0) board_->slots.erase(run.batch);  // the epoch ended at a batch's start
    run.slot.reset();
  }
  return board_->reader_waits && board_->reader_can_go_on();
}

void MultiThreadBatchData::write_row(BatchSlot& slot, std::size_t row, const Datapoint& dp) const {
  std::call_once(slot.allocated, [&] {
    for (const Array& a : dp) {
      std::vector<std::int64_t> dims{static_cast<std::int64_t>(batch_size_)};
      dims.insert(dims.end(), a.shape().dims().begin(), a.shape().dims().end());
      slot.batch.push_back(Array::uninitialized(a.dtype(), Shape(std::move(dims))));
      slot.row_bytes.push_back(a.nbytes());
    }
    slot.first_row = row;
  });
  if (dp.size() != slot.batch.size())
    throw Error(ErrorCode::invalid_argument,
                std::string(kWho) + ": datapoint " + std::to_string(row) + " of the batch has " +
                    std::to_string(dp.size()) + " components, datapoint " + std::to_string(slot.first_row) + " has " +
                    std::to_string(slot.batch.size()) + "; every datapoint of a batch needs the same components");
  for (std::size_t c = 0; c < dp.size(); ++c)
    if (!fits(dp[c], slot.batch[c]))
      throw Error(ErrorCode::invalid_argument,
                  std::string(kWho) + ": component " + std::to_string(c) + " of datapoint " + std::to_string(row) +
                      " of the batch is " + describe(dp[c]) + ", datapoint " + std::to_string(slot.first_row) +
                      " has " + describe_row(slot.batch[c]) +
                      "; a component must have one shape and dtype across the batch");
  for (std::size_t c = 0; c < dp.size(); ++c)
    if (slot.row_bytes[c] > 0)
      std::memcpy(slot.batch[c].bytes().data() + row * slot.row_bytes[c], dp[c].bytes().data(), slot.row_bytes[c]);
  slot.kept[row] = 1;
}

void MultiThreadBatchData::complete_run(BatchRun& run, std::size_t kept, std::exception_ptr error) {
  std::unique_lock lock = lock_soon(mutex_);
  --board_->runs_in_flight;
  if (run.generation != board_->generation) {  // the epoch was abandoned: so is the slot
  } else if (error) {
    if (!board_->error) board_->error = std::move(error);
    board_->open = false;
  } else {
    run.slot->done += run.count;
    run.slot->kept_count += kept;
  }
  const bool wake = board_->reader_waits && board_->reader_can_go_on();
  lock.unlock();
  run.slot.reset();  // an abandoned batch is freed outside the lock
  if (wake) reader_cv_.notify_one();
}

}  // namespace vkp::dataflow
