// BatchBoard: the batches a MultiThreadBatchData's workers are filling, as the workers and
// the reader see them: which datapoint is taken next, which batches are complete, where
// the epoch ended. Not synchronized: its owner reads and writes it under one mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

// One batch being filled by the workers. Its arrays are allocated by the first datapoint
// written (which fixes the shapes); every worker then copies its rows in, without locks,
// as rows are distinct memory.
struct BatchSlot {
  explicit BatchSlot(std::size_t rows) : kept(rows, 0) {}

  std::once_flag allocated;
  Datapoint batch;                     // batch_size rows per component
  std::vector<std::size_t> row_bytes;  // by component
  std::size_t first_row = 0;           // the row whose shapes the batch took
  std::vector<std::uint8_t> kept;      // by row: 1 once the mapped datapoint is written
  // Under the owner's mutex:
  std::size_t done = 0;        // rows whose datapoints were mapped (or dropped)
  std::size_t kept_count = 0;  // rows written
};

// Consecutive datapoints of one batch that a worker took from the flow.
struct BatchRun {
  std::uint64_t first = 0;  // number of the first datapoint, counted from reset_state()
  std::uint64_t generation = 0;
  std::uint64_t batch = 0;  // in the epoch
  std::size_t row = 0;      // of the first datapoint in its batch
  std::size_t count = 0;
  std::shared_ptr<BatchSlot> slot;  // the batch's
};

class BatchBoard {
 public:
  using Slots = std::map<std::uint64_t, std::shared_ptr<BatchSlot>>;

  // Batches of `batch_size` rows, at most `buffer_batches` ahead of the reader, handed to
  // it in order when `ordered`.
  BatchBoard(std::size_t batch_size, std::size_t buffer_batches, bool ordered)
      : batch_size_(batch_size), buffer_batches_(buffer_batches), ordered_(ordered) {}

  // Whether a worker may take datapoints now: the epoch is open, nothing failed, and the
  // buffer has room.
  bool can_take() const;
  // Numbers the next datapoints `run` (at most `max_run`, within one batch) and returns
  // how many.
  std::size_t claim(BatchRun& run, std::size_t max_run);
  // Rows batch `batch` of the epoch has (fewer in the last, once the end is known).
  std::size_t rows_of(std::uint64_t batch) const;
  // A batch whose rows are all done that the reader may take next, or slots.end().
  Slots::iterator ready_slot();
  // Whether every batch of the epoch went to the reader.
  bool epoch_done() const;
  // Whether a waiting reader should be woken.
  bool reader_can_go_on();

  bool stop = false;
  bool open = false;  // the current epoch of the flow may be read
  bool reader_waits = false;
  int workers_waiting = 0;
  std::size_t runs_in_flight = 0;    // taken and not yet completed
  std::uint64_t generation = 0;      // bumped by every start_epoch()
  std::uint64_t next_index = 0;      // number of the next datapoint taken
  std::uint64_t epoch_first = 0;     // number of the epoch's first datapoint
  std::optional<std::uint64_t> end;  // next_index when the flow's epoch ended
  std::uint64_t yielded = 0;         // batches of the epoch handed to the reader
  Slots slots;                       // batches being filled, by number
  std::exception_ptr error;

 private:
  std::size_t ready_count();

  std::size_t batch_size_;
  std::size_t buffer_batches_;
  bool ordered_;
};

}  // namespace vkp::dataflow
