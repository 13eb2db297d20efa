#include "dataflow/internal/batch_board.h"

#include <algorithm>

namespace vkp::dataflow {

bool BatchBoard::can_take() const {
  return open && !error && (next_index - epoch_first) / batch_size_ < yielded + buffer_batches_;
}

std::size_t BatchBoard::claim(BatchRun& run, std::size_t max_run) {
  run.first = next_index;
  run.generation = generation;
  run.batch = (next_index - epoch_first) / batch_size_;
  run.row = static_cast<std::size_t>((next_index - epoch_first) % batch_size_);
  const std::size_t want = std::min(max_run, batch_size_ - run.row);
  next_index += want;  // given back by the owner if the flow ends sooner
  ++runs_in_flight;
  std::shared_ptr<BatchSlot>& slot = slots[run.batch];
  if (!slot) slot = std::make_shared<BatchSlot>(batch_size_);
  run.slot = slot;
  return want;
}

std::size_t BatchBoard::rows_of(std::uint64_t batch) const {
  const std::uint64_t first = epoch_first + batch * batch_size_;
  if (!end) return batch_size_;
  return static_cast<std::size_t>(std::min<std::uint64_t>(batch_size_, *end - first));
}

BatchBoard::Slots::iterator BatchBoard::ready_slot() {
  const auto complete = [&](const auto& entry) { return entry.second->done == rows_of(entry.first); };
  if (ordered_) {
    const auto it = slots.find(yielded);
    return it != slots.end() && complete(*it) ? it : slots.end();
  }
  return std::find_if(slots.begin(), slots.end(), complete);
}

bool BatchBoard::epoch_done() const { return end && yielded * batch_size_ >= *end - epoch_first; }

std::size_t BatchBoard::ready_count() {
  std::size_t ready = 0;
  for (const auto& [batch, slot] : slots) {
    const bool complete = slot->done == rows_of(batch);
    if (ordered_ && (batch != yielded + ready || !complete)) break;
    ready += complete;
  }
  return ready;
}

// A reader faster than the workers is woken once a few batches are ready rather than
// for each (waking a sleeping thread costs microseconds), or sooner when the workers
// can do no more: the buffer is full or the epoch's datapoints are all taken.
bool BatchBoard::reader_can_go_on() {
  if (error || epoch_done()) return true;
  if (ready_slot() == slots.end()) return false;
  const std::size_t wake_after = std::max<std::size_t>(buffer_batches_ / 2, 1);
  return (runs_in_flight == 0 && !can_take()) || wake_after == 1 || ready_count() >= wake_after;
}

}  // namespace vkp::dataflow
