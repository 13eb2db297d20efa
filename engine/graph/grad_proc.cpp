#include "engine/graph/grad_proc.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "core/log.h"
#include "engine/graph/collections.h"
#include "engine/graph/ops.h"

namespace vkp::graph {
namespace {

const std::string& var_name(const Tensor& var) { return std::get<VariableAttrs>(var.node().attrs).var_name; }

bool matches(const std::regex& pattern, std::string_view name) {
  return std::regex_match(name.begin(), name.end(), pattern);
}

std::regex compile_pattern(const std::string& pattern, const char* who) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: '{}' is not a regular expression ({})", who, pattern, e.what()));
  }
}

}  // namespace

double root_mean_square(std::span<const float> values) {
  double squares = 0;
  for (float x : values) squares += static_cast<double>(x) * x;
  return values.empty() ? 0.0 : std::sqrt(squares / static_cast<double>(values.size()));
}

std::vector<GradAndVar> process_gradients(const std::vector<GradProcPtr>& processors, std::vector<GradAndVar> grads) {
  for (const GradProcPtr& p : processors) grads = p->process(std::move(grads));
  return grads;
}

void require_host_forms(const std::vector<GradProcPtr>& processors, const std::string& trainer) {
  for (const GradProcPtr& p : processors)
    if (!p->has_host_form())
      throw Error(ErrorCode::unsupported, fmt::format("{} applies gradient processors on the host, and this {} has no "
                                                      "host form; give it one",
                                                      trainer, p->name()));
}

void process_gradients_on_host(const std::vector<GradProcPtr>& processors, std::span<const HostGradient> grads) {
  for (const GradProcPtr& p : processors) p->process_host(grads);
}

GlobalNormClip::GlobalNormClip(float global_norm) : norm_(global_norm) {
  if (!(global_norm > 0.0f) || !std::isfinite(global_norm))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("GlobalNormClip: the norm must be positive, not {}", global_norm));
}

std::vector<GradAndVar> GlobalNormClip::process(std::vector<GradAndVar> grads) const {
  return clip_by_global_norm(std::move(grads), norm_);
}

void GlobalNormClip::process_host(std::span<const HostGradient> grads) const {
  double squares = 0;
  for (const HostGradient& g : grads)
    for (float x : g.values) squares += static_cast<double>(x) * x;
  // The graph form's factor, in float: max_norm / max(norm, max_norm).
  const float norm = static_cast<float>(std::sqrt(squares));
  const float factor = norm_ / std::max(norm, norm_);
  if (factor == 1.0f) return;
  for (const HostGradient& g : grads)
    for (float& x : g.values) x *= factor;
}

ScaleGradient::ScaleGradient(std::vector<std::pair<std::string, float>> multipliers) {
  for (auto& [pattern, factor] : multipliers)
    multipliers_.emplace_back(compile_pattern(pattern, "ScaleGradient"), factor);
}

std::vector<GradAndVar> ScaleGradient::process(std::vector<GradAndVar> grads) const {
  for (GradAndVar& gv : grads) {
    if (!gv.first.valid()) continue;
    for (const auto& [pattern, factor] : multipliers_)
      if (matches(pattern, var_name(gv.second))) {
        if (factor != 1.0f) gv.first = gv.first * factor;
        break;
      }
  }
  return grads;
}

void ScaleGradient::process_host(std::span<const HostGradient> grads) const {
  for (const HostGradient& g : grads)
    for (const auto& [pattern, factor] : multipliers_)
      if (matches(pattern, g.variable)) {
        for (float& x : g.values) x *= factor;
        break;
      }
}

MapGradient::MapGradient(GraphFn graph_fn, std::string pattern, HostFn host_fn)
    : graph_fn_(std::move(graph_fn)),
      host_fn_(std::move(host_fn)),
      pattern_(compile_pattern(pattern, "MapGradient")),
      pattern_text_(std::move(pattern)) {
  if (!graph_fn_) throw Error(ErrorCode::invalid_argument, "MapGradient: no function given");
}

std::vector<GradAndVar> MapGradient::process(std::vector<GradAndVar> grads) const {
  for (GradAndVar& gv : grads) {
    if (!gv.first.valid() || !matches(pattern_, var_name(gv.second))) continue;
    const Tensor mapped = graph_fn_(gv.first, gv.second);
    if (!mapped.valid() || mapped.type() != gv.first.type())
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("MapGradient: the function gave {} for the gradient of '{}', which is {}",
                              mapped.valid() ? to_string(mapped.type()) : std::string("nothing"), var_name(gv.second),
                              to_string(gv.first.type())));
    gv.first = mapped;
  }
  return grads;
}

void MapGradient::process_host(std::span<const HostGradient> grads) const {
  if (!host_fn_)
    throw Error(ErrorCode::unsupported, "MapGradient ('" + pattern_text_ + "') has no host form; give it one");
  for (const HostGradient& g : grads)
    if (matches(pattern_, g.variable)) host_fn_(g.variable, g.values);
}

std::vector<GradAndVar> CheckGradient::process(std::vector<GradAndVar> grads) const {
  for (const GradAndVar& gv : grads) {
    if (!gv.first.valid()) continue;
    Graph& g = gv.first.graph();
    g.add_to_collection(kGradientChecks, identity(count_nonfinite(gv.first), "CheckGradient/" + var_name(gv.second)));
  }
  return grads;
}

void CheckGradient::process_host(std::span<const HostGradient> grads) const {
  for (const HostGradient& g : grads) {
    std::size_t bad = 0;
    for (float x : g.values) bad += std::isfinite(x) ? 0 : 1;
    if (bad > 0)
      throw Error(ErrorCode::bad_data, fmt::format("CheckGradient: the gradient of '{}' has {} of {} values not finite",
                                                   g.variable, bad, g.values.size()));
  }
}

SummaryGradient::SummaryGradient(std::string pattern) : pattern_(compile_pattern(pattern, "SummaryGradient")) {}

std::vector<GradAndVar> SummaryGradient::process(std::vector<GradAndVar> grads) const {
  for (const GradAndVar& gv : grads)
    if (gv.first.valid() && gv.first.dtype() == DType::f32 && matches(pattern_, var_name(gv.second)))
      gv.first.graph().add_to_collection(kGradientSummaries, identity(gv.first, var_name(gv.second) + "-grad"));
  return grads;
}

PrintGradient::PrintGradient(std::string pattern) : pattern_(compile_pattern(pattern, "PrintGradient")) {}

std::vector<GradAndVar> PrintGradient::process(std::vector<GradAndVar> grads) const {
  for (const GradAndVar& gv : grads)
    if (gv.first.valid() && matches(pattern_, var_name(gv.second))) print_stat(gv.first, var_name(gv.second) + "/grad");
  return grads;
}

void PrintGradient::process_host(std::span<const HostGradient> grads) const {
  for (const HostGradient& g : grads) {
    if (!matches(pattern_, g.variable)) continue;
    double sum = 0;
    for (float x : g.values) sum += x;
    const double mean = g.values.empty() ? 0.0 : sum / static_cast<double>(g.values.size());
    log_info("{}/grad: mean {:.6g}, rms {:.6g}", g.variable, mean, root_mean_square(g.values));
  }
}

void SummaryGradient::process_host(std::span<const HostGradient> grads) const {
  std::vector<ProcessorSummary> made;
  for (const HostGradient& g : grads) {
    if (!matches(pattern_, g.variable)) continue;
    const std::string name(g.variable);
    made.push_back({name + "-grad", std::vector<float>(g.values.begin(), g.values.end()), true});
    made.push_back({name + "/rms", {static_cast<float>(root_mean_square(g.values))}, false});
  }
  const std::lock_guard lock(mutex_);
  for (ProcessorSummary& s : made) latest_[s.name] = std::move(s);
}

std::vector<ProcessorSummary> SummaryGradient::take_summaries() const {
  const std::lock_guard lock(mutex_);
  std::vector<ProcessorSummary> out;
  for (auto& [name, s] : latest_) out.push_back(std::move(s));
  latest_.clear();
  return out;
}

std::vector<GradAndVar> FilterNoneGrad::process(std::vector<GradAndVar> grads) const {
  if (verbose_)
    for (const GradAndVar& gv : grads)
      if (!gv.first.valid()) log_warn("FilterNoneGrad: no gradient for '{}'; it is not trained", var_name(gv.second));
  return filter_none(std::move(grads));
}

}  // namespace vkp::graph
