// What the training tests share: a tiny model (FC-BN-relu-dropout-FC on 6 features,
// 3 classes), separable synthetic batches, and a callback that records its hooks.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "dataflow/dataflow.h"
#include "train/model_desc.h"
#include "train/train_config.h"
#include "train/trainer.h"

namespace vkp::test {

class TinyModel : public train::ModelDesc {
 public:
  // `sync_statistics`: its BatchNorm's (BatchNormOptions::sync_statistics).
  explicit TinyModel(std::int64_t hidden = 8, float learning_rate = 0.1f, bool sync_statistics = false)
      : hidden_(hidden), lr_(learning_rate), sync_statistics_(sync_statistics) {}
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
  graph::Optimizer optimizer(graph::Graph& graph) override;

 private:
  std::int64_t hidden_;
  float lr_;
  bool sync_statistics_;
};

// The tiny model trained with Adam: for resume tests, where its slots and its bias
// correction, which counts steps, must both survive.
class TinyAdamModel : public TinyModel {
 public:
  graph::Optimizer optimizer(graph::Graph& g) override;
};

// Fails the run (Error device_lost, "simulated crash") in trigger_step at global step `step`.
class CrashAt : public callbacks::Callback {
 public:
  explicit CrashAt(std::int64_t step) : step_(step) {}

 protected:
  void on_trigger_step() override;

 private:
  std::int64_t step_;
};

// Every variable of the trainer's graph (slots and moving averages too), by name.
std::map<std::string, Array> all_variables(train::Trainer& t);

// `count` batches of `batch` datapoints {x f32 [batch, 6], label i32 [batch]}, three
// classes around fixed centres, reproducible from `seed`.
std::vector<dataflow::Datapoint> tiny_batches(std::size_t count, std::int64_t batch = 16, std::uint64_t seed = 1);
// The batches in order, every epoch the same.
dataflow::DataFlowPtr tiny_flow(std::size_t count, std::int64_t batch = 16, std::uint64_t seed = 1);

// A config with no default callbacks or monitors (quiet and fast), the tiny model and
// `count` batches per epoch.
train::TrainConfig tiny_config(std::size_t count, int epochs);

// Records every hook it sees as "hook@global_step".
class HookRecorder : public callbacks::Callback {
 public:
  std::vector<std::string> hooks;

 protected:
  void on_setup_graph() override { add("setup_graph"); }
  void on_before_train() override { add("before_train"); }
  void on_before_epoch() override { add("before_epoch"); }
  void on_before_run() override { add("before_run"); }
  void on_after_run(std::span<const Array>) override { add("after_run"); }
  void on_trigger_step() override { add("trigger_step"); }
  void on_after_epoch() override { add("after_epoch"); }
  void on_trigger_epoch() override { add("trigger_epoch"); }
  void on_after_train() override { add("after_train"); }

 private:
  void add(const std::string& hook) { hooks.push_back(hook + "@" + std::to_string(trainer().global_step())); }
};

// A callback made of functions, for tests: each hook that is set runs.
class Hooks : public callbacks::Callback {
 public:
  using Fn = std::function<void(callbacks::TrainerView&)>;
  Fn before_epoch, before_run, trigger_step, trigger_epoch, after_train;

 protected:
  void on_before_epoch() override { call(before_epoch); }
  void on_before_run() override { call(before_run); }
  void on_trigger_step() override { call(trigger_step); }
  void on_trigger_epoch() override { call(trigger_epoch); }
  void on_after_train() override { call(after_train); }

 private:
  void call(const Fn& f) {
    if (f) f(trainer());
  }
};

// A fresh empty directory under the system's temporary directory.
std::string temp_dir(const std::string& name);

}  // namespace vkp::test
