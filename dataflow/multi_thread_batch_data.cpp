#include "dataflow/multi_thread_batch_data.h"

#include <algorithm>

#include <fmt/format.h>
#include <cstring>
#include <string>
#include <vector>

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

// One batch being filled by the workers. Its arrays are allocated by the first datapoint
// written (which fixes the shapes); every worker then copies its rows in, without locks,
// as rows are distinct memory.
struct MultiThreadBatchData::Slot {
  explicit Slot(std::size_t rows) : kept(rows, 0) {}

  std::once_flag allocated;
  Datapoint batch;                     // batch_size rows per component
  std::vector<std::size_t> row_bytes;  // by component
  std::size_t first_row = 0;           // the row whose shapes the batch took
  std::vector<std::uint8_t> kept;      // by row: 1 once the mapped datapoint is written
  // Guarded by mutex_:
  std::size_t done = 0;        // rows whose datapoints were mapped (or dropped)
  std::size_t kept_count = 0;  // rows written
};

MultiThreadBatchData::MultiThreadBatchData(DataFlowPtr df, std::size_t batch_size, MapFunction func,
                                           MultiThreadBatchOptions options)
    : MultiThreadBatchData(std::move(df), batch_size, ignore_rng(std::move(func)), options) {}

MultiThreadBatchData::MultiThreadBatchData(DataFlowPtr df, std::size_t batch_size, RandomMapFunction func,
                                           MultiThreadBatchOptions options)
    : df_(std::move(df)),
      batch_size_(checked_batch_size(batch_size)),
      func_(std::move(func)),
      options_(options),
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
    shared_.stop = true;
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
  std::map<std::uint64_t, std::shared_ptr<Slot>> abandoned;
  {
    std::lock_guard lock(mutex_);
    // Workers still mapping datapoints of the abandoned epoch find their generation gone.
    ++shared_.generation;
    abandoned.swap(shared_.slots);
    shared_.error = nullptr;
    shared_.end.reset();
    shared_.epoch_first = shared_.next_index;
    shared_.yielded = 0;
    shared_.open = false;
  }
  abandoned.clear();
  stacker_.clear();
  pending_.reset();
  df_->start_epoch();
  {
    std::lock_guard lock(mutex_);
    shared_.open = true;
  }
  workers_cv_.notify_all();
}

std::optional<Datapoint> MultiThreadBatchData::on_next() {
  while (true) {
    if (pending_)
      if (std::optional<Datapoint> batch = take_pending_rows()) return batch;
    std::shared_ptr<Slot> slot;
    std::size_t rows = 0;
    {
      std::unique_lock lock(mutex_);
      // A batch that is ready is taken at once; a reader that has to sleep is woken as
      // reader_can_go_on() says.
      if (!shared_.error && !epoch_done() && ready_slot() == shared_.slots.end()) {
        if (options_.reader_helps && can_take()) {
          lock.unlock();
          Run run;
          if (take_run(run, helped_, false) == Taken::run && !helped_.empty()) do_run(run, helped_);
          continue;
        }
        shared_.reader_waits = true;
        reader_cv_.wait(lock, [&] { return reader_can_go_on(); });
        shared_.reader_waits = false;
      }
      if (shared_.error) std::rethrow_exception(shared_.error);
      const auto it = ready_slot();
      if (it == shared_.slots.end()) {  // the epoch is done
        lock.unlock();
        if (stacker_.rows() > 0 && options_.remainder) return stacker_.take();
        stacker_.clear();
        return std::nullopt;
      }
      rows = rows_of(it->first);
      slot = std::move(it->second);
      shared_.slots.erase(it);
      ++shared_.yielded;
      const bool wake = shared_.workers_waiting > 0;
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
    Run run;
    if (take_run(run, taken, true) == Taken::stop) return;
    if (!taken.empty()) do_run(run, taken);
  }
}

void MultiThreadBatchData::do_run(Run& run, std::vector<Datapoint>& taken) {
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
MultiThreadBatchData::Taken MultiThreadBatchData::take_run(Run& run, std::vector<Datapoint>& taken, bool wait) {
  std::unique_lock<std::mutex> source;
  std::size_t want = 0;
  while (true) {
    source = lock_soon(source_mutex_);
    std::unique_lock lock = lock_soon(mutex_);
    if (shared_.stop) return Taken::stop;
    if (can_take()) {
      want = claim_run(run);
      break;
    }
    source.unlock();  // start_epoch() may need it
    if (!wait) return Taken::none;
    ++shared_.workers_waiting;
    workers_cv_.wait(lock, [&] { return shared_.stop || can_take(); });
    --shared_.workers_waiting;
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

std::size_t MultiThreadBatchData::claim_run(Run& run) {
  run.first = shared_.next_index;
  run.generation = shared_.generation;
  run.batch = (shared_.next_index - shared_.epoch_first) / batch_size_;
  run.row = static_cast<std::size_t>((shared_.next_index - shared_.epoch_first) % batch_size_);
  const std::size_t want = std::min(kRun, batch_size_ - run.row);
  shared_.next_index += want;  // given back by cut_short if the flow ends sooner
  ++shared_.runs_in_flight;
  std::shared_ptr<Slot>& slot = shared_.slots[run.batch];
  if (!slot) slot = std::make_shared<Slot>(batch_size_);
  run.slot = slot;
  return want;
}

bool MultiThreadBatchData::cut_short(Run& run, std::size_t want, std::exception_ptr error) {
  std::unique_lock lock = lock_soon(mutex_);
  shared_.next_index -= want - run.count;
  if (!error)  // the flow's epoch ended
    shared_.end = shared_.next_index;
  else if (!shared_.error)
    shared_.error = error;
  shared_.open = false;
  if (run.count == 0) {  // nothing to complete
    --shared_.runs_in_flight;
    if (run.row == 0) shared_.slots.erase(run.batch);  // the epoch ended at a batch's start
    run.slot.reset();
  }
  return shared_.reader_waits && reader_can_go_on();
}

void MultiThreadBatchData::write_row(Slot& slot, std::size_t row, const Datapoint& dp) const {
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

void MultiThreadBatchData::complete_run(Run& run, std::size_t kept, std::exception_ptr error) {
  std::unique_lock lock = lock_soon(mutex_);
  --shared_.runs_in_flight;
  if (run.generation != shared_.generation) {  // the epoch was abandoned: so is the slot
  } else if (error) {
    if (!shared_.error) shared_.error = std::move(error);
    shared_.open = false;
  } else {
    run.slot->done += run.count;
    run.slot->kept_count += kept;
  }
  const bool wake = shared_.reader_waits && reader_can_go_on();
  lock.unlock();
  run.slot.reset();  // an abandoned batch is freed outside the lock
  if (wake) reader_cv_.notify_one();
}

bool MultiThreadBatchData::can_take() const {
  return shared_.open && !shared_.error &&
         (shared_.next_index - shared_.epoch_first) / batch_size_ < shared_.yielded + options_.buffer_batches;
}

std::size_t MultiThreadBatchData::rows_of(std::uint64_t batch) const {
  const std::uint64_t first = shared_.epoch_first + batch * batch_size_;
  if (!shared_.end) return batch_size_;
  return static_cast<std::size_t>(std::min<std::uint64_t>(batch_size_, *shared_.end - first));
}

std::map<std::uint64_t, std::shared_ptr<MultiThreadBatchData::Slot>>::iterator MultiThreadBatchData::ready_slot() {
  const auto complete = [&](const auto& entry) { return entry.second->done == rows_of(entry.first); };
  if (options_.ordered) {
    const auto it = shared_.slots.find(shared_.yielded);
    return it != shared_.slots.end() && complete(*it) ? it : shared_.slots.end();
  }
  return std::find_if(shared_.slots.begin(), shared_.slots.end(), complete);
}

bool MultiThreadBatchData::epoch_done() const {
  return shared_.end && shared_.yielded * batch_size_ >= *shared_.end - shared_.epoch_first;
}

std::size_t MultiThreadBatchData::ready_count() {
  std::size_t ready = 0;
  for (const auto& [batch, slot] : shared_.slots) {
    const bool complete = slot->done == rows_of(batch);
    if (options_.ordered && (batch != shared_.yielded + ready || !complete)) break;
    ready += complete;
  }
  return ready;
}

// A reader faster than the workers is woken once a few batches are ready rather than
// for each (waking a sleeping thread costs microseconds), or sooner when the workers
// can do no more: the buffer is full or the epoch's datapoints are all taken.
bool MultiThreadBatchData::reader_can_go_on() {
  if (shared_.error || epoch_done()) return true;
  if (ready_slot() == shared_.slots.end()) return false;
  const std::size_t wake_after = std::max<std::size_t>(options_.buffer_batches / 2, 1);
  return (shared_.runs_in_flight == 0 && !can_take()) || wake_after == 1 || ready_count() >= wake_after;
}

}  // namespace vkp::dataflow
