#include "train/input_source.h"

#include <fmt/format.h>

#include <chrono>

#include "callbacks/monitors.h"
#include "core/error.h"
#include "core/log.h"
#include "core/rng.h"

namespace vkp::train {
namespace {

// Does `a` fit `spec` (known extents equal)?
bool fits(const Array& a, const InputSpec& spec) {
  if (a.dtype() != spec.type.dtype || a.shape().rank() != spec.type.rank()) return false;
  for (int i = 0; i < spec.type.rank(); ++i)
    if (spec.type.dims[static_cast<std::size_t>(i)] >= 0 && spec.type.dims[static_cast<std::size_t>(i)] != a.shape()[i])
      return false;
  return true;
}

// The next datapoint, starting the flow's next epoch when one ends.
std::vector<Array> next_datapoint(dataflow::DataFlow& flow) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (std::optional<dataflow::Datapoint> dp = flow.next()) return std::move(*dp);
    flow.start_epoch();
  }
  throw Error(ErrorCode::bad_data, "the dataflow produced an empty epoch; training needs datapoints");
}

}  // namespace

// The input source (and its dataflow, shuffles and augmentations included) is
// deterministic from its seed, so reading and dropping what the earlier run consumed
// puts it exactly where that run stood, whatever the dataflow. It costs reading, not
// training. A dataflow whose order follows thread timing cannot be put back exactly.
void InputSource::replay_consumed(std::int64_t batches, std::int64_t global_step) {
  const std::string obstacle = replay_obstacle();
  if (!obstacle.empty())
    log_warn(
        "this resume is not exact: the input cannot give the interrupted run's batches again ({}); "
        "training goes on from the checkpoint with other batches",
        obstacle);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < batches; ++i) next_batch();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log_info("resuming the input where global step {} left it: {} batches read and dropped in {:.1f} s", global_step,
           batches, seconds);
}

void InputSource::setup(const std::vector<InputSpec>& specs) {
  specs_ = specs;
  on_setup();
}

std::vector<Array> InputSource::next_batch() {
  std::vector<Array> batch = on_next();
  if (batch.size() != specs_.size())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("a datapoint has {} components, the model has {} inputs", batch.size(), specs_.size()));
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (!fits(batch[i], specs_[i]))
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("datapoint component {} is {}, the model's input '{}' takes {}", i, describe(batch[i]),
                              specs_[i].name, graph::to_string(specs_[i].type)));
  return batch;
}

FeedInput::FeedInput(dataflow::DataFlowPtr flow) : flow_(std::move(flow)) {}

void FeedInput::on_setup() {
  if (!flow_->is_reset()) flow_->reset_state();
}

std::vector<Array> FeedInput::on_next() { return next_datapoint(*flow_); }

QueueInput::QueueInput(dataflow::DataFlowPtr flow, std::size_t queue_size)
    : flow_(std::move(flow)), queue_(queue_size) {}

QueueInput::~QueueInput() {
  queue_.close();
  if (thread_.joinable()) thread_.join();
}

void QueueInput::on_setup() {
  if (thread_.joinable()) return;
  if (!flow_->is_reset()) flow_->reset_state();
  thread_ = std::thread([this] { fill_queue(); });
}

void QueueInput::fill_queue() {
  try {
    for (;;) {
      std::vector<Array> dp = next_datapoint(*flow_);
      // Counted before it can be popped, so the consumer's decrement never goes below 0.
      ++fill_;
      if (!queue_.push(std::move(dp))) {  // closed: training is over
        --fill_;
        return;
      }
    }
  } catch (...) {
    failure_ = std::current_exception();
    queue_.close();
  }
}

std::vector<Array> QueueInput::on_next() {
  std::vector<std::vector<Array>> one;
  if (!queue_.pop_some(one, 1)) {
    if (failure_) std::rethrow_exception(failure_);
    throw Error(ErrorCode::invalid_argument, "QueueInput: the queue was closed");
  }
  --fill_;
  return std::move(one[0]);
}

namespace {

// Samples a QueueInput's fill every step; puts the epoch's mean.
class QueueFillMonitor : public callbacks::Callback {
 public:
  explicit QueueFillMonitor(const QueueInput& input) : input_(input) {}

 protected:
  void on_trigger_step() override {
    sum_ += static_cast<double>(input_.fill());
    ++count_;
  }
  void on_trigger_epoch() override {
    if (count_ > 0) trainer().monitors().put_scalar("QueueInput/queue_size", sum_ / count_);
    sum_ = 0;
    count_ = 0;
  }

 private:
  const QueueInput& input_;
  double sum_ = 0;
  std::int64_t count_ = 0;
};

}  // namespace

std::vector<callbacks::CallbackPtr> QueueInput::callbacks() { return {std::make_shared<QueueFillMonitor>(*this)}; }

DummyConstantInput::DummyConstantInput(std::vector<Shape> shapes, std::int64_t label_range, std::uint64_t seed)
    : shapes_(std::move(shapes)), label_range_(label_range), seed_(seed) {}

void DummyConstantInput::on_setup() {
  if (shapes_.size() != specs().size())
    throw Error(ErrorCode::invalid_argument, fmt::format("DummyConstantInput has {} shapes, the model {} inputs",
                                                         shapes_.size(), specs().size()));
  Rng rng(seed_);
  batch_.clear();
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    Array a(specs()[i].type.dtype, shapes_[i]);
    if (a.dtype() == DType::i32)
      for (auto& v : a.data<std::int32_t>()) v = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(label_range_)));
    else if (a.dtype() == DType::f32)
      for (auto& v : a.data<float>()) v = rng.uniform(-1.0f, 1.0f);
    batch_.push_back(std::move(a));
  }
}

}  // namespace vkp::train
