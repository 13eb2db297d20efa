// InputSource: where each training step's inputs come from (tensorpack's InputSource).
//   FeedInput          reads the dataflow in the training thread
//   QueueInput         a thread keeps a bounded queue of batches filled from the dataflow
//   StagingInput       wraps another source; the trainer writes step i+1's inputs into a
//                      second set of input buffers while step i runs
//   DummyConstantInput the same random batch every step (benchmarks)
// Datapoints must match the model's inputs (count, dtype, shape); the first one that does
// not stops training with an Error naming the input. Dataflows are read epoch after epoch
// without end: steps_per_epoch, not the dataflow, decides when an epoch ends.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "callbacks/callback.h"
#include "dataflow/bounded_queue.h"
#include "dataflow/dataflow.h"
#include "train/model_desc.h"

namespace vkp::train {

class InputSource {
 public:
  virtual ~InputSource() = default;

  // Before training: the model's inputs, which every batch is checked against.
  void setup(const std::vector<InputSpec>& specs);
  // The next step's inputs, in the order of the specs.
  std::vector<Array> next_batch();
  // Batches per epoch of the underlying dataflow, when known.
  virtual std::optional<std::size_t> size() const { return std::nullopt; }
  // Callbacks this source needs in training (QueueInput monitors its queue).
  virtual std::vector<callbacks::CallbackPtr> callbacks() { return {}; }
  // Input buffers the trainer should keep: 2 to overlap uploads with steps.
  virtual int staging_buffers() const { return 1; }
  // Why reading this source again from the start may not give the same batches in the
  // same order ("" when it does): see DataFlow::replay_obstacle().
  virtual std::string replay_obstacle() const { return {}; }
  // A resume at `global_step`: reads and drops the `batches` the interrupted run
  // consumed, so that this source goes on where that run's stood (warning first when
  // replay_obstacle() says it cannot give the same ones).
  void replay_consumed(std::int64_t batches, std::int64_t global_step);

 protected:
  virtual void on_setup() {}
  virtual std::vector<Array> on_next() = 0;
  const std::vector<InputSpec>& specs() const { return specs_; }

 private:
  std::vector<InputSpec> specs_;
};

using InputSourcePtr = std::shared_ptr<InputSource>;

class FeedInput : public InputSource {
 public:
  explicit FeedInput(dataflow::DataFlowPtr flow);
  std::optional<std::size_t> size() const override { return flow_->size(); }
  std::string replay_obstacle() const override { return flow_->replay_obstacle(); }

 protected:
  void on_setup() override;
  std::vector<Array> on_next() override;

 private:
  dataflow::DataFlowPtr flow_;
};

class QueueInput : public InputSource {
 public:
  explicit QueueInput(dataflow::DataFlowPtr flow, std::size_t queue_size = 50);
  ~QueueInput() override;  // stops and joins the thread
  std::optional<std::size_t> size() const override { return flow_->size(); }
  std::string replay_obstacle() const override { return flow_->replay_obstacle(); }
  // Puts "QueueInput/queue_size", the mean fill of the queue over each epoch.
  std::vector<callbacks::CallbackPtr> callbacks() override;
  // Batches waiting now.
  std::size_t fill() const { return fill_.load(); }

 protected:
  void on_setup() override;
  std::vector<Array> on_next() override;

 private:
  void fill_queue();

  dataflow::DataFlowPtr flow_;
  dataflow::BoundedQueue<std::vector<Array>> queue_;
  std::atomic<std::size_t> fill_{0};
  std::exception_ptr failure_;  // the thread's error, rethrown by on_next
  std::thread thread_;
};

class StagingInput : public InputSource {
 public:
  explicit StagingInput(InputSourcePtr source) : source_(std::move(source)) {}
  std::optional<std::size_t> size() const override { return source_->size(); }
  std::vector<callbacks::CallbackPtr> callbacks() override { return source_->callbacks(); }
  int staging_buffers() const override { return 2; }
  std::string replay_obstacle() const override { return source_->replay_obstacle(); }

 protected:
  void on_setup() override { source_->setup(specs()); }
  std::vector<Array> on_next() override { return source_->next_batch(); }

 private:
  InputSourcePtr source_;
};

class DummyConstantInput : public InputSource {
 public:
  // Batches of the model's inputs with these concrete shapes, random (labels in
  // [0, label_range)), made once.
  explicit DummyConstantInput(std::vector<Shape> shapes, std::int64_t label_range = 10, std::uint64_t seed = 0);

 protected:
  void on_setup() override;
  std::vector<Array> on_next() override { return batch_; }

 private:
  std::vector<Shape> shapes_;
  std::int64_t label_range_;
  std::uint64_t seed_;
  std::vector<Array> batch_;
};

}  // namespace vkp::train
