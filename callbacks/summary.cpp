#include "vkpack/callbacks/summary.h"

#include "vkpack/callbacks/monitors.h"
#include "vkpack/core/error.h"

namespace vkp::callbacks {
namespace {

const std::string kMovingSummaries = "moving_summaries";

// The name a summary is reported under: its node name without the tower prefix.
std::string summary_name(const graph::Tensor& t) { return t.name(); }

}  // namespace

graph::Tensor add_moving_summary(graph::Tensor t) {
  if (t.type().numel() != 1 || t.dtype() != DType::f32)
    throw Error(ErrorCode::invalid_argument, "add_moving_summary: " + t.name() + " is " + graph::to_string(t.type()) +
                                                 ", not a scalar f32");
  if (!t.graph().tower().is_training) return t;  // summaries are of the training tower
  t.graph().add_to_collection(kMovingSummaries, t);
  return t;
}

void add_moving_summary(const std::vector<graph::Tensor>& ts) {
  for (const graph::Tensor& t : ts) add_moving_summary(t);
}

std::vector<graph::Tensor> MovingAverageSummary::on_fetches() {
  const std::vector<graph::Tensor>& ts = trainer().graph().collection(kMovingSummaries);
  names_.clear();
  for (const graph::Tensor& t : ts) names_.push_back(summary_name(t));
  return ts;
}

void MovingAverageSummary::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i].data<float>()[0];
    const auto [it, fresh] = averages_.emplace(names_[i], v);
    if (!fresh) it->second = decay_ * it->second + (1.0 - decay_) * v;
  }
}

void MovingAverageSummary::on_trigger() {
  for (const auto& [name, value] : averages_) trainer().monitors().put_scalar(name, value);
}

}  // namespace vkp::callbacks
