// DataParallelInferenceRunner: InferenceRunner over every tower of a multi-device trainer
// (tensorpack's DataParallelInferenceRunner). Batches of the dataflow go to the towers in
// turn, K at a time, each tower on its own device and thread; the inferencers receive
// the results in dataflow order, so the statistics are exactly those of InferenceRunner.
// With one tower it is InferenceRunner.
#pragma once

#include <vector>

#include "callbacks/inference_runner.h"

namespace vkp::callbacks {

class DataParallelInferenceRunner : public InferenceRunner {
 public:
  DataParallelInferenceRunner(dataflow::DataFlowPtr flow, std::vector<InferencerPtr> inferencers);

 protected:
  void on_setup_graph() override;
  void on_trigger() override;

 private:
  std::vector<std::string> outputs_;
};

}  // namespace vkp::callbacks
