// BatchSplitter: how a synchronous multi-device trainer shares each step's global batch
// between its towers (BatchSplit, batch_split.h), kept across steps and epochs: the
// shares, the rows each tower took in the last step, the step-time model the throughput
// mode measures, and the shares it records in the monitors and a resumed run takes back.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "callbacks/monitors.h"
#include "core/array.h"
#include "train/batch_split.h"
#include "train/input_source.h"

namespace vkp::train {

class BatchSplitter {
 public:
  // Error(invalid_argument) for fixed weights that are not one positive finite number
  // per tower.
  void set(BatchSplit split, int towers);
  bool by_throughput() const { return split_.mode == BatchSplit::Mode::throughput; }
  // At the trainer's setup: equal shares unless set, no epoch measured, the recorded
  // shares not looked up yet.
  void start(int towers);
  // One batch a tower from `source`, cut again by the shares (as read when equal).
  void read(InputSource& source, std::vector<std::vector<Array>>& batches);
  // This step's batches, as the towers take them: keeps their rows, returns their sum.
  std::int64_t note_rows(std::span<const std::vector<Array>> batches);
  // Tower k's timed step at the rows note_rows kept (throughput).
  void add_time(int tower, double seconds);
  // At an epoch's first step (throughput): once, the shares an interrupted run recorded
  // last; then `staged`, read during the last epoch with its shares, cut again by the
  // current ones. True when it was cut again.
  bool begin_epoch(const callbacks::Monitors& monitors, std::vector<std::vector<Array>>& staged);
  // At an epoch's end (throughput, once every tower was timed): the next epoch's shares
  // from the model, logged for `epoch` and recorded in `monitors`.
  void end_epoch(callbacks::Monitors& monitors, int epoch);
  const std::vector<double>& shares() const { return shares_; }
  const std::vector<std::int64_t>& rows() const { return rows_; }

 private:
  BatchSplit split_;
  std::vector<double> shares_;            // by tower, adding up to 1
  std::vector<std::int64_t> rows_;        // by tower, the last step's
  std::vector<std::vector<Array>> read_;  // the input source's batches before the cut
  StepTimeModel model_;                   // throughput
  bool resumed_ = false;                  // the recorded shares were looked up
};

}  // namespace vkp::train
