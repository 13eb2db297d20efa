// How a synchronous multi-device step shares its global batch between the towers. The
// global batch is the towers' batches from the input source, one each, concatenated in
// tower order; it is cut again into consecutive parts, one per tower. Gradients are
// averaged weighted by the samples each tower took (towers::Towers), so every split
// trains on the same global batch with the same mean gradient; only how long the step
// waits for its slowest tower changes.
//
//   equal       each tower keeps the batch it read (tensorpack's behaviour)
//   fixed       parts proportional to given weights, for every step (reproducible)
//   throughput  parts by each tower's speed measured over the last epoch (equal in the
//               first): proportional to samples per second, then, once two epochs have
//               timed each tower at different rows, cut so that every tower finishes
//               together given its fixed cost per step (StepTimeModel); re-measured every
//               epoch, recorded in the monitors (towers/tower<k>/share) so that a resumed
//               run repeats it
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/array.h"

namespace vkp::train {

struct BatchSplit {
  enum class Mode { equal, fixed, throughput };
  Mode mode = Mode::equal;
  std::vector<double> shares;  // fixed: one positive weight per tower

  static BatchSplit equal() { return {}; }
  static BatchSplit fixed(std::vector<double> weights) { return {Mode::fixed, std::move(weights)}; }
  static BatchSplit by_throughput() { return {Mode::throughput, {}}; }
};

// "equal", "throughput", or weights "1,3" (fixed); Error(invalid_argument) otherwise.
BatchSplit parse_batch_split(const std::string& text);

// `rows` cut into shares.size() parts proportional to the shares (largest remainder,
// ties to the lower tower; a part that would get none takes a row from the largest). Error(invalid_argument) when a share is not
// a positive finite number or there are fewer rows than parts.
std::vector<std::int64_t> split_rows(std::int64_t rows, std::span<const double> shares);

// The batches (one per tower, the same inputs in each) concatenated along their first
// dimension, in tower order, and cut into parts of `rows` (which must add up to the
// batches' rows) into `out`, one batch per part. Error(invalid_argument), naming the
// input, when an input's first dimension is not its batch's rows or the towers' batches
// disagree in inputs, dtypes or later dimensions.
void resplit(std::span<const std::vector<Array>> batches, std::span<const std::int64_t> rows,
             std::vector<std::vector<Array>>& out);

// Each tower's step time as a fixed cost plus a cost per row, t = a + b * rows, and the
// split that makes the towers finish together by it. The fixed cost is what a small part
// cannot save (submission, synchronization, a driver's own overhead per dispatch); a
// split proportional to samples per second ignores it and starves a device whose fixed
// cost is large. An epoch gives each tower one point (its mean step at its rows); two
// epochs at different rows give the line; a later epoch refits it whenever the rows moved
// enough to measure a slope, and otherwise scales it through the newest point. With
// one point, or a fit that is not a cost (a negative slope or fixed cost, from noise),
// the fixed cost is taken as 0: the split is proportional to samples per second.
class StepTimeModel {
 public:
  void reset(int towers);  // forgets every epoch
  void add(int tower, std::int64_t rows, double seconds);  // a step of the current epoch
  bool measured() const;   // every tower has a timed step in the current epoch
  // Fits the current epoch's means into the model and starts the next epoch.
  void end_epoch();
  bool fitted() const { return !fixed_.empty(); }  // end_epoch has run with every tower timed
  double fixed_seconds(int tower) const { return fixed_.at(static_cast<std::size_t>(tower)); }
  double seconds_per_row(int tower) const { return per_row_.at(static_cast<std::size_t>(tower)); }
  // Samples per second of each tower in the last epoch ended, at the rows it took.
  const std::vector<double>& rates() const { return rates_; }
  // `rows` cut so that every tower's modelled step ends together (each at least 1 row).
  std::vector<std::int64_t> balance(std::int64_t rows) const;

 private:
  struct Point {
    double rows = 0, seconds = 0;
  };
  std::vector<double> rows_, seconds_, steps_;  // the current epoch's sums, by tower
  std::vector<Point> last_;                     // the last epoch's mean step, by tower
  std::vector<double> fixed_, per_row_, rates_;
};

}  // namespace vkp::train
