// Gradient processors (tensorpack's tfutils/gradproc): rules applied to a list of
// (gradient, variable) pairs between the gradients and the update, attached to an
// optimizer with apply_grad_processors (optimizer.h), so that every trainer applies them:
//   GlobalNormClip   scales all gradients so that their global L2 norm is at most a bound
//   ScaleGradient    multiplies the gradients of variables matching a pattern
//   MapGradient      any rule of one gradient, for variables matching a pattern
//   CheckGradient    stops training, naming the variable, when a gradient is not finite
//   SummaryGradient  each gradient's histogram and root mean square to the monitors
//   PrintGradient    each gradient's mean and root mean square to the log, every step
//   FilterNoneGrad   drops variables the cost does not depend on
// Each processor has two forms of the same rule. The graph form adds ops to the graph
// that applies the update (one device, a GAN, a replicated tower). The host form runs on
// float arrays where the update is reduced on the host: every multi-device trainer applies
// the processors there, once, to the averaged gradients (after the reduction across
// towers and processes, as tensorpack applies them after its all-reduce); asynchronous
// towers apply them to each tower's gradient before it reaches the master.
// Variable patterns are ECMAScript regular expressions matched against the whole name
// (tensorpack's re.match with '$' appended).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/graph/autodiff.h"
#include "engine/graph/graph.h"

namespace vkp::graph {

// Collections the graph forms fill; callbacks read them (callbacks/tensor_callbacks.h,
// callbacks/pictures.h).
inline constexpr const char* kGradientChecks = "gradient_checks";        // CheckGradient's counts
inline constexpr const char* kGradientSummaries = "gradient_summaries";  // SummaryGradient's gradients

// A gradient as the host holds it: the variable's name and the values (float32).
struct HostGradient {
  std::string_view variable;
  std::span<float> values;
};

// What a host form computed for the monitors: a histogram, or a scalar (one value).
struct ProcessorSummary {
  std::string name;
  std::vector<float> values;
  bool histogram = false;
};

class GradientProcessor {
 public:
  virtual ~GradientProcessor() = default;
  // tensorpack's class name, for messages.
  virtual std::string name() const = 0;
  // The graph form: new pairs computed from `grads` (pairs without a gradient may be
  // passed and are passed on, unless the processor drops them).
  virtual std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const = 0;
  // The host form: the same rule, in place. Called by one thread at a time per trainer,
  // except with asynchronous towers, where every tower's thread calls it (the processors
  // here are safe for that; a MapGradient's host function must be too).
  virtual void process_host(std::span<const HostGradient> grads) const = 0;
  // Whether process_host does anything more than refuse (MapGradient without a host rule).
  virtual bool has_host_form() const { return true; }
  // The summaries the host form made since the last call (SummaryGradient's).
  virtual std::vector<ProcessorSummary> take_summaries() const { return {}; }
};

using GradProcPtr = std::shared_ptr<const GradientProcessor>;

// Applies each processor's graph form in order.
std::vector<GradAndVar> process_gradients(const std::vector<GradProcPtr>& processors, std::vector<GradAndVar> grads);
// Applies each processor's host form in order.
// Error(unsupported) naming the first processor without a host form, for `trainer`.
void require_host_forms(const std::vector<GradProcPtr>& processors, const std::string& trainer);
void process_gradients_on_host(const std::vector<GradProcPtr>& processors, std::span<const HostGradient> grads);

// factor = max_norm / max(global norm, max_norm), as tf.clip_by_global_norm; max_norm > 0.
class GlobalNormClip : public GradientProcessor {
 public:
  explicit GlobalNormClip(float global_norm);
  std::string name() const override { return "GlobalNormClip"; }
  std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const override;
  void process_host(std::span<const HostGradient> grads) const override;

 private:
  float norm_;
};

// Each gradient whose variable matches a pattern is multiplied by that pattern's factor;
// the first pattern that matches decides, other gradients pass unchanged. A factor of 0
// multiplies too, in both forms, so every trainer does the same: an optimizer with slots
// (momentum, Adam) still moves such a variable by them, where tensorpack drops the
// gradient and the update with it (use FreezeVariables, or trainable = false, to freeze).
class ScaleGradient : public GradientProcessor {
 public:
  explicit ScaleGradient(std::vector<std::pair<std::string, float>> multipliers);
  std::string name() const override { return "ScaleGradient"; }
  std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const override;
  void process_host(std::span<const HostGradient> grads) const override;

 private:
  std::vector<std::pair<std::regex, float>> multipliers_;
};

// `graph_fn(gradient, variable)` returns the new gradient of each variable matching
// `pattern`. A host form needs `host_fn(variable name, values)`, the same rule on floats
// in place; without it, a trainer that applies processors on the host refuses to start.
class MapGradient : public GradientProcessor {
 public:
  using GraphFn = std::function<Tensor(Tensor gradient, Tensor variable)>;
  using HostFn = std::function<void(std::string_view variable, std::span<float> values)>;
  explicit MapGradient(GraphFn graph_fn, std::string pattern = ".*", HostFn host_fn = {});
  std::string name() const override { return "MapGradient"; }
  std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const override;
  void process_host(std::span<const HostGradient> grads) const override;
  bool has_host_form() const override { return static_cast<bool>(host_fn_); }

 private:
  GraphFn graph_fn_;
  HostFn host_fn_;
  std::regex pattern_;
  std::string pattern_text_;
};

// Graph form: "CheckGradient/<variable>", the count of the gradient's inf and NaN
// elements, joins the collection kGradientChecks; the trainer fetches it every step and
// stops with an Error naming the variable and the step (callbacks::GradientChecks), after
// that step's update (tensorpack's check_numerics stops before it; the checkpoint on
// disk is the last good one either way).
// Host form: the same Error at once. With dynamic loss scaling an overflow, which the
// scaler would have skipped, stops training too.
class CheckGradient : public GradientProcessor {
 public:
  std::string name() const override { return "CheckGradient"; }
  std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const override;
  void process_host(std::span<const HostGradient> grads) const override;
};

// For each variable matching `pattern`: a histogram "<variable>-grad" and the root mean
// square "<variable>/rms" of its gradient, from the last training step of every epoch
// (graph form: the gradient joins kGradientSummaries, which callbacks::GradientSummaries,
// added by the trainer, fetches with that step; host form: a copy of every step's,
// taken by the trainer at the epoch's end).
class SummaryGradient : public GradientProcessor {
 public:
  explicit SummaryGradient(std::string pattern = ".*");
  std::string name() const override { return "SummaryGradient"; }
  std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const override;
  void process_host(std::span<const HostGradient> grads) const override;
  std::vector<ProcessorSummary> take_summaries() const override;

 private:
  std::regex pattern_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, ProcessorSummary> latest_;  // by name: a GAN's objectives each add theirs
};

// For each variable matching `pattern`: the mean and root mean square of its gradient,
// logged after every step as "<variable>/grad: mean ..., rms ..." (graph form: print_stat,
// collections.h; host form: logged where the host holds the gradient).
class PrintGradient : public GradientProcessor {
 public:
  explicit PrintGradient(std::string pattern = ".*");
  std::string name() const override { return "PrintGradient"; }
  std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const override;
  void process_host(std::span<const HostGradient> grads) const override;

 private:
  std::regex pattern_;
};

// Drops pairs without a gradient, naming their variables in a warning (verbose).
class FilterNoneGrad : public GradientProcessor {
 public:
  explicit FilterNoneGrad(bool verbose = true) : verbose_(verbose) {}
  std::string name() const override { return "FilterNoneGrad"; }
  std::vector<GradAndVar> process(std::vector<GradAndVar> grads) const override;
  void process_host(std::span<const HostGradient>) const override {}  // host gradients all exist

 private:
  bool verbose_;
};

// The root mean square of `values`, in double.
double root_mean_square(std::span<const float> values);

}  // namespace vkp::graph
