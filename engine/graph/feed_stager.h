// FeedStager: the double-buffered inputs of one program (StagingInput), the one mechanism
// every step runner uses: Trainer's step and each tower of towers::SyncTowers. The program is
// compiled with two variants (CompileOptions::variants); while run i computes from one
// set of input buffers, the host writes run i+1's batch into the other (on a transfer
// queue where memory is staged and the device has one), so run i+1 starts without
// waiting for its inputs.
#pragma once

#include <span>
#include <string>

#include "core/array.h"
#include "engine/graph/program.h"

namespace vkp::graph {

class FeedStager {
 public:
  // Forgets what was staged: the program changed, or training starts again.
  void reset() {
    variant_ = 0;
    staged_ = false;
  }
  // Whether the next run's batch is written already (by stage()).
  bool staged() const { return staged_; }
  // The variant to submit for this run, `batch` written into it unless stage() did already.
  int prepare(Program& program, std::span<const Array> batch) {
    if (!staged_) program.write_feeds(batch, variant_);
    staged_ = false;
    return variant_;
  }
  // While the run prepare() returned computes: the next run's batch into the other
  // variant. Error(invalid_argument), starting with `what`, when an input's shape is not
  // the program's (staging needs batches of one shape).
  void stage(Program& program, std::span<const Array> next, const std::string& what);

 private:
  int variant_ = 0;
  bool staged_ = false;  // the variant to submit next holds its batch already
};

}  // namespace vkp::graph
