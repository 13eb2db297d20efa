#include "callbacks/summary.h"

#include <cmath>

#include "callbacks/monitors.h"
#include "core/error.h"
#include "engine/graph/initializer.h"
#include "engine/graph/ops.h"

namespace vkp::callbacks {
namespace {

// Pairs (average variable, decay as a constant scalar node) of a graph's summaries.
const std::string kMovingSummaries = "moving_summaries";
const std::string kSuffix = "/EMA";
const std::string kActivations = "activation_summaries";

}  // namespace

graph::Tensor add_activation_summary(graph::Tensor t) {
  if (t.rank() < 2 || t.dtype() != DType::f32)
    throw Error(ErrorCode::invalid_argument, "add_activation_summary: " + t.name() + " is " + graph::to_string(t.type()) +
                                                 "; it summarises activations of rank 2 or more, f32");
  graph::Graph& g = t.graph();
  if (g.tower().is_training) g.add_to_collection(kActivations, t);
  return t;
}

const std::vector<graph::Tensor>& activation_summaries(graph::Graph& graph) { return graph.collection(kActivations); }

graph::Tensor add_moving_summary(graph::Tensor t, float decay) {
  if (t.type().numel() != 1 || t.dtype() != DType::f32)
    throw Error(ErrorCode::invalid_argument, "add_moving_summary: " + t.name() + " is " + graph::to_string(t.type()) +
                                                 ", not a scalar f32");
  if (!(decay >= 0.0f && decay < 1.0f))
    throw Error(ErrorCode::invalid_argument, "add_moving_summary: decay must be in [0, 1), not " + std::to_string(decay));
  graph::Graph& g = t.graph();
  if (!g.tower().is_training) return t;  // summaries are of the training tower
  const std::string name = t.name() + kSuffix;
  if (g.find_variable(name).valid()) return t;  // already summarised
  // Named exactly (no scope prefix): the node name already carries the scopes.
  const graph::TensorType type = graph::f32({});
  const graph::Tensor average =
      g.add(graph::OpKind::variable, {}, graph::VariableAttrs{name, type, graph::zeros(), false}, "moving_average");
  g.register_variable(average);
  const graph::Tensor reshaped = t.type() == type ? t : graph::reshape(t, {});
  g.add_to_collection(graph::kUpdateOps, graph::assign(average, average * decay + reshaped * (1.0f - decay)));
  g.add_to_collection(kMovingSummaries, average);
  g.add_to_collection(kMovingSummaries, graph::scalar(g, decay));
  return t;
}

void add_moving_summary(const std::vector<graph::Tensor>& ts, float decay) {
  for (const graph::Tensor& t : ts) add_moving_summary(t, decay);
}

void MovingAverageSummary::on_setup_graph() {
  const std::vector<graph::Tensor>& pairs = trainer().graph().collection(kMovingSummaries);
  summaries_.clear();
  for (std::size_t i = 0; i + 1 < pairs.size(); i += 2) {
    const std::string& variable = std::get<graph::VariableAttrs>(pairs[i].node().attrs).var_name;
    const Array& decay = std::get<graph::ConstantAttrs>(pairs[i + 1].node().attrs).value;
    summaries_.push_back({variable.substr(0, variable.size() - kSuffix.size()), variable, decay.data<float>()[0]});
  }
}

void MovingAverageSummary::on_trigger() {
  const double steps = static_cast<double>(trainer().global_step());
  for (const Summary& s : summaries_) {
    const double raw = trainer().variable(s.variable).data<float>()[0];
    const double correction = 1.0 - std::pow(s.decay, steps);
    const double value = correction > 0 ? raw / correction : raw;
    averages_[s.name] = value;
    trainer().monitors().put_scalar(s.name, value);
  }
}

SimpleMovingAverage::SimpleMovingAverage(std::vector<std::string> names, std::size_t window_size)
    : names_(std::move(names)), window_(window_size) {
  if (window_ == 0) throw Error(ErrorCode::invalid_argument, "SimpleMovingAverage: the window must hold a step or more");
}

std::vector<graph::Tensor> SimpleMovingAverage::on_fetches() {
  std::vector<graph::Tensor> out;
  for (const std::string& name : names_) {
    const graph::Tensor t = trainer().graph().find(name);
    if (t.type().numel() != 1)
      throw Error(ErrorCode::invalid_argument,
                  "SimpleMovingAverage: " + name + " is " + graph::to_string(t.type()) + ", not a scalar");
    out.push_back(t);
  }
  recent_.assign(names_.size(), {});
  return out;
}

void SimpleMovingAverage::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::deque<double>& r = recent_[i];
    r.push_back(values[i].dtype() == DType::f32 ? values[i].data<float>()[0] : values[i].data<std::int32_t>()[0]);
    if (r.size() > window_) r.pop_front();
  }
}

void SimpleMovingAverage::on_trigger_step() {
  if (trainer().global_step() % static_cast<std::int64_t>(window_) != 0) return;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (recent_[i].empty()) continue;
    double sum = 0;
    for (double v : recent_[i]) sum += v;
    trainer().monitors().put_scalar(names_[i] + "/SMA", sum / static_cast<double>(recent_[i].size()));
  }
}

}  // namespace vkp::callbacks
