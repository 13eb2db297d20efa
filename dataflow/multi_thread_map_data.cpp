#include "dataflow/multi_thread_map_data.h"

#include <algorithm>

#include <fmt/format.h>

namespace vkp::dataflow {
namespace {

RandomMapFunction ignore_rng(MapFunction func) {
  require(static_cast<bool>(func), ErrorCode::invalid_argument, "MultiThreadMapData: the function is empty");
  return [func = std::move(func)](Datapoint dp, Rng&) { return func(std::move(dp)); };
}

}  // namespace

MultiThreadMapData::MultiThreadMapData(DataFlowPtr df, MapFunction func, MultiThreadMapOptions options)
    : MultiThreadMapData(std::move(df), ignore_rng(std::move(func)), options) {}

MultiThreadMapData::MultiThreadMapData(DataFlowPtr df, RandomMapFunction func, MultiThreadMapOptions options)
    : df_(std::move(df)), func_(std::move(func)), options_(options) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "MultiThreadMapData: the dataflow to map is null");
  require(static_cast<bool>(func_), ErrorCode::invalid_argument, "MultiThreadMapData: the function is empty");
  require(options_.num_threads >= 1, ErrorCode::invalid_argument,
          "MultiThreadMapData: num_threads must be at least 1, got 0");
  require(options_.buffer_size >= 1, ErrorCode::invalid_argument,
          "MultiThreadMapData: buffer_size must be at least 1, got 0");
  require(options_.chunk >= 1, ErrorCode::invalid_argument, "MultiThreadMapData: chunk must be at least 1, got 0");
  options_.chunk = std::min(options_.chunk, options_.buffer_size);
}

std::string MultiThreadMapData::own_replay_obstacle() const {
  if (options_.ordered || options_.num_threads == 1) return {};
  return fmt::format("unordered, {} threads yield datapoints in the order they finish them", options_.num_threads);
}

MultiThreadMapData::~MultiThreadMapData() {
  {
    std::lock_guard lock(mutex_);
    shared_.stop = true;
  }
  workers_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void MultiThreadMapData::on_reset_state() {
  df_->reset_state();
  threads_.reserve(options_.num_threads);
  for (std::size_t i = 0; i < options_.num_threads; ++i) threads_.emplace_back([this] { worker_loop(); });
}

void MultiThreadMapData::on_start_epoch() {
  std::unique_lock lock(mutex_);
  if (shared_.source_busy) {
    shared_.reader_waits = ReaderWait::source;
    reader_cv_.wait(lock, [&] { return !shared_.source_busy; });
    shared_.reader_waits = ReaderWait::nothing;
  }
  // Chunks of the abandoned epoch still being mapped are dropped when they come back.
  ++shared_.generation;
  shared_.ready.clear();
  shared_.error = nullptr;
  shared_.end.reset();
  shared_.source_open = false;
  shared_.consumed = shared_.next_index;
  shared_.source_busy = true;
  lock.unlock();
  current_.clear();
  current_position_ = 0;
  try {
    df_->start_epoch();
  } catch (...) {
    lock.lock();
    shared_.source_busy = false;
    throw;
  }
  lock.lock();
  shared_.source_busy = false;
  shared_.source_open = true;
  lock.unlock();
  workers_cv_.notify_all();
}

std::optional<Datapoint> MultiThreadMapData::on_next() {
  while (true) {
    while (current_position_ < current_.size()) {
      std::optional<Datapoint>& result = current_[current_position_++];
      if (result) return std::move(result);
    }
    current_.clear();
    current_position_ = 0;
    std::unique_lock lock(mutex_);
    if (!reader_can_go_on()) {
      shared_.reader_waits = ReaderWait::data;
      reader_cv_.wait(lock, [&] { return reader_can_go_on(); });
      shared_.reader_waits = ReaderWait::nothing;
    }
    if (shared_.error) std::rethrow_exception(shared_.error);
    if (!chunk_ready()) return std::nullopt;
    const auto it = shared_.ready.begin();
    current_ = std::move(it->second.results);
    shared_.ready.erase(it);
    shared_.consumed += current_.size();
    wake(lock, /*reader=*/false, /*worker=*/true);
  }
}

bool MultiThreadMapData::can_take() const {
  return shared_.source_open && !shared_.source_busy && !shared_.error &&
         shared_.next_index - shared_.consumed < options_.buffer_size;
}

bool MultiThreadMapData::chunk_ready() const {
  if (shared_.ready.empty()) return false;
  return !options_.ordered || shared_.ready.begin()->first == shared_.consumed;
}

bool MultiThreadMapData::epoch_done() const { return shared_.end && shared_.consumed == *shared_.end; }

bool MultiThreadMapData::reader_can_go_on() const { return shared_.error || chunk_ready() || epoch_done(); }

// Notifies, after unlocking (a thread woken while the lock is held would block on it
// at once), the reader if it waits and can go on, and one worker if any waits and one
// can take a chunk. Returns with the lock held.
void MultiThreadMapData::wake(std::unique_lock<std::mutex>& lock, bool reader, bool worker) {
  const bool wake_reader = reader && (shared_.reader_waits == ReaderWait::source ? !shared_.source_busy
                                      : shared_.reader_waits == ReaderWait::data ? reader_can_go_on()
                                                                                 : false);
  const bool wake_worker = worker && shared_.workers_waiting > 0 && can_take();
  if (!wake_reader && !wake_worker) return;
  lock.unlock();
  if (wake_reader) reader_cv_.notify_one();
  if (wake_worker) workers_cv_.notify_one();
  lock.lock();
}

void MultiThreadMapData::worker_loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    if (!shared_.stop && !can_take()) {
      ++shared_.workers_waiting;
      workers_cv_.wait(lock, [&] { return shared_.stop || can_take(); });
      --shared_.workers_waiting;
    }
    if (shared_.stop) return;
    Chunk chunk = take_from_source(lock);
    if (chunk.results.empty()) continue;
    lock.unlock();
    std::exception_ptr error;
    try {
      map_chunk(chunk);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    deliver(lock, std::move(chunk), std::move(error));
  }
}

// Called with the lock held and can_take() true; returns with the lock held, and the
// taken datapoints, not yet mapped, in the chunk's results.
MultiThreadMapData::Chunk MultiThreadMapData::take_from_source(std::unique_lock<std::mutex>& lock) {
  Chunk chunk;
  chunk.generation = shared_.generation;
  chunk.first = shared_.next_index;
  const std::size_t room = options_.buffer_size - static_cast<std::size_t>(shared_.next_index - shared_.consumed);
  const std::size_t want = std::min(options_.chunk, room);
  shared_.source_busy = true;
  lock.unlock();
  chunk.results.reserve(want);
  bool exhausted = false;
  std::exception_ptr error;
  try {
    while (chunk.results.size() < want) {
      std::optional<Datapoint> dp = df_->next();
      if (!dp) {
        exhausted = true;
        break;
      }
      chunk.results.push_back(std::move(dp));
    }
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  shared_.source_busy = false;
  shared_.next_index += chunk.results.size();
  if (exhausted) {
    shared_.source_open = false;
    shared_.end = shared_.next_index;
  }
  if (error) {
    if (!shared_.error) shared_.error = error;
    shared_.source_open = false;
    chunk.results.clear();
  }
  // Another worker may read the source now; the reader may wait for the source
  // (start_epoch), for the end of the epoch or for the error.
  wake(lock, /*reader=*/true, /*worker=*/true);
  return chunk;
}

void MultiThreadMapData::map_chunk(Chunk& chunk) const {
  for (std::size_t i = 0; i < chunk.results.size(); ++i) {
    Rng rng(options_.seed, chunk.first + i);
    chunk.results[i] = func_(std::move(*chunk.results[i]), rng);
  }
}

// Called with the lock held: hands a mapped chunk (or its error) to the reader, unless
// the epoch it belongs to was abandoned.
void MultiThreadMapData::deliver(std::unique_lock<std::mutex>& lock, Chunk chunk, std::exception_ptr error) {
  if (chunk.generation != shared_.generation) {
    lock.unlock();  // its datapoints are freed outside the lock
    chunk = Chunk{};
    lock.lock();
    return;
  }
  if (error) {
    if (!shared_.error) shared_.error = std::move(error);
    shared_.source_open = false;
  } else {
    shared_.ready.emplace(chunk.first, std::move(chunk));
  }
  wake(lock, /*reader=*/true, /*worker=*/false);
}

}  // namespace vkp::dataflow
