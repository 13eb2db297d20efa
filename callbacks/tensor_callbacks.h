// Callbacks that read or run tensors of the graph: CheckNumerics, GradientChecks,
// TensorPrinter, RunOp,
// ProcessTensors, DumpTensors.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "callbacks/callback.h"

namespace vkp::callbacks {

// Stops training with an Error naming the tensor and the global step when the cost
// (checked every step) or a variable (checked every `variable_period` steps, and at
// every epoch's end) holds a NaN or an infinity. `tensors`: more scalars to check every
// step, by name.
class CheckNumerics : public Callback {
 public:
  explicit CheckNumerics(std::int64_t variable_period = 0, std::vector<std::string> tensors = {});

 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;
  void on_trigger_step() override;
  void on_trigger() override;

 private:
  void check_variables() const;
  std::int64_t variable_period_;
  std::vector<std::string> names_;
  std::vector<std::string> labels_;  // what each fetched tensor is, for messages
};

// CheckGradient's graph form (engine/graph/grad_proc.h): fetches the count of non-finite
// elements of each checked gradient every step and stops training with an Error naming
// the variable and the global step. The trainer adds it when the graph has such counts.
class GradientChecks : public Callback {
 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;

 private:
  std::vector<std::string> variables_;  // by count fetched
};

// Runs the targets `make` builds (at setup) at before_train, at every trigger, and, with
// run_every_step, after every step: e.g. an assignment that resets a variable.
class RunOp : public Callback {
 public:
  explicit RunOp(std::function<std::vector<graph::Tensor>(graph::Graph&)> make, bool run_before = true,
                 bool run_as_trigger = true, bool run_every_step = false);

 protected:
  void on_setup_graph() override;
  void on_before_train() override;
  void on_trigger() override;
  void on_trigger_step() override;

 private:
  void run();
  std::function<std::vector<graph::Tensor>(graph::Graph&)> make_;
  bool run_before_, run_as_trigger_, run_every_step_;
  std::vector<graph::Tensor> targets_;
};

// tensorpack's TensorPrinter: logs the values of the tensors named `names` after every
// step ("name: value" for a scalar, its shape and first values otherwise).
class TensorPrinter : public Callback {
 public:
  explicit TensorPrinter(std::vector<std::string> names) : names_(std::move(names)) {}

 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;

 private:
  std::vector<std::string> names_;
};

// Logs the tensors of graph::print_stat (the collection kPrintStats) after every step:
// "<message>: mean ..., rms ...". The trainer adds it whenever that collection holds one.
class PrintStats : public Callback {
 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;

 private:
  std::vector<std::string> labels_;
};

// "v" of an array for a log line: the value of one element, else its shape and up to
// eight first values ("[3, 4] 0.1 0.2 ... (12 values)").
std::string describe_values(const Array& a);

// Fetches the tensors named `names` every step and calls fn with their values.
class ProcessTensors : public Callback {
 public:
  ProcessTensors(std::vector<std::string> names, std::function<void(std::span<const Array>)> fn);

 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override { fn_(values); }

 private:
  std::vector<std::string> names_;
  std::function<void(std::span<const Array>)> fn_;
};

// Writes the tensors named `names` to <log dir>/DumpTensor-<global step>.safetensors
// after every step, or every k-th.
class DumpTensors : public Callback {
 public:
  explicit DumpTensors(std::vector<std::string> names, std::int64_t every_k_steps = 1);

 protected:
  void on_setup_graph() override;
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;

 private:
  std::vector<std::string> names_;
  std::int64_t every_k_steps_;
};

}  // namespace vkp::callbacks
