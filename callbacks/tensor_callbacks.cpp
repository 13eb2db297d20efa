#include "callbacks/tensor_callbacks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/log.h"
#include "core/safetensors.h"
#include "engine/graph/collections.h"
#include "engine/graph/grad_proc.h"

namespace vkp::callbacks {
namespace {

std::vector<graph::Tensor> find_all(graph::Graph& g, const std::vector<std::string>& names) {
  std::vector<graph::Tensor> out;
  for (const std::string& name : names) out.push_back(g.find(name));
  return out;
}

}  // namespace

CheckNumerics::CheckNumerics(std::int64_t variable_period, std::vector<std::string> tensors)
    : variable_period_(variable_period), names_(std::move(tensors)) {}

std::vector<graph::Tensor> CheckNumerics::on_fetches() {
  std::vector<graph::Tensor> out;
  labels_.clear();
  if (trainer().cost().valid()) {
    out.push_back(trainer().cost());
    labels_.push_back(trainer().cost().name() + " (the cost)");
  }
  for (const graph::Tensor& t : find_all(trainer().graph(), names_)) {
    out.push_back(t);
    labels_.push_back(t.name());
  }
  return out;
}

void CheckNumerics::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (const std::int64_t bad = non_finite(values[i]).count; bad > 0)
      throw Error(ErrorCode::bad_data, "CheckNumerics: " + labels_[i] + " has " + std::to_string(bad) +
                                           " NaN or infinite value(s) at global step " +
                                           std::to_string(trainer().global_step()));
}

std::vector<graph::Tensor> GradientChecks::on_fetches() {
  const std::vector<graph::Tensor>& counts = trainer().graph().collection(graph::kGradientChecks);
  variables_.clear();
  const std::string prefix = "CheckGradient/";
  for (const graph::Tensor& t : counts)
    variables_.push_back(t.name().starts_with(prefix) ? t.name().substr(prefix.size()) : t.name());
  return counts;
}

void GradientChecks::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (const float bad = values[i].data<float>()[0]; bad != 0.0f)
      throw Error(ErrorCode::bad_data, fmt::format("CheckGradient: the gradient of '{}' has {} NaN or infinite "
                                                   "value(s) at global step {}",
                                                   variables_[i], bad, trainer().global_step()));
}

std::vector<graph::Tensor> PrintStats::on_fetches() {
  const std::vector<graph::Tensor>& stats = trainer().graph().collection(graph::kPrintStats);
  labels_.clear();
  constexpr std::string_view kScope = "print_stat/";  // print_stat's name scope, dropped from the label
  for (const graph::Tensor& t : stats) {
    const std::string& name = t.name();
    const std::size_t at = name.rfind(kScope);
    labels_.push_back(at == std::string::npos ? name : name.substr(0, at) + name.substr(at + kScope.size()));
  }
  return stats;
}

void PrintStats::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    log_info("{}: mean {:.6g}, rms {:.6g}", labels_[i], values[i].data<float>()[0], values[i].data<float>()[1]);
}

void CheckNumerics::check_variables() const {
  for (const graph::Tensor& v : trainer().graph().variables()) {
    const std::string& name = std::get<graph::VariableAttrs>(v.node().attrs).var_name;
    if (const std::int64_t bad = non_finite(trainer().variable(name)).count; bad > 0)
      throw Error(ErrorCode::bad_data, "CheckNumerics: variable " + name + " has " + std::to_string(bad) +
                                           " NaN or infinite value(s) at global step " +
                                           std::to_string(trainer().global_step()));
  }
}

void CheckNumerics::on_trigger_step() {
  if (variable_period_ > 0 && trainer().global_step() % variable_period_ == 0) check_variables();
}

void CheckNumerics::on_trigger() { check_variables(); }

RunOp::RunOp(std::function<std::vector<graph::Tensor>(graph::Graph&)> make, bool run_before, bool run_as_trigger,
             bool run_every_step)
    : make_(std::move(make)), run_before_(run_before), run_as_trigger_(run_as_trigger), run_every_step_(run_every_step) {}

void RunOp::on_setup_graph() { targets_ = make_(trainer().graph()); }
void RunOp::run() { trainer().run_targets(targets_); }
void RunOp::on_before_train() { if (run_before_) run(); }
void RunOp::on_trigger() { if (run_as_trigger_) run(); }
void RunOp::on_trigger_step() { if (run_every_step_) run(); }

std::vector<graph::Tensor> TensorPrinter::on_fetches() { return find_all(trainer().graph(), names_); }

void TensorPrinter::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    log_info("TensorPrinter at step {}: {}: {}", trainer().global_step(), names_[i], describe_values(values[i]));
}

std::string describe_values(const Array& a) {
  const auto n = static_cast<std::size_t>(a.shape().numel());
  const auto value = [&a](std::size_t i) -> double {
    switch (a.dtype()) {
      case DType::i32:
        return a.data<std::int32_t>()[i];
      case DType::u8:
        return a.data<std::uint8_t>()[i];
      default:
        return a.data<float>()[i];
    }
  };
  if (a.dtype() != DType::f32 && a.dtype() != DType::i32 && a.dtype() != DType::u8)
    return to_string(a.shape()) + " " + std::string(to_string(a.dtype()));
  if (n == 1) return fmt::format("{:.6g}", value(0));
  std::string text = to_string(a.shape());
  for (std::size_t i = 0; i < std::min<std::size_t>(n, 8); ++i) text += fmt::format(" {:.6g}", value(i));
  if (n > 8) text += fmt::format(" ... ({} values)", n);
  return text;
}

ProcessTensors::ProcessTensors(std::vector<std::string> names, std::function<void(std::span<const Array>)> fn)
    : names_(std::move(names)), fn_(std::move(fn)) {}

std::vector<graph::Tensor> ProcessTensors::on_fetches() { return find_all(trainer().graph(), names_); }

DumpTensors::DumpTensors(std::vector<std::string> names, std::int64_t every_k_steps)
    : names_(std::move(names)), every_k_steps_(every_k_steps) {
  chief_only_ = true;
}

void DumpTensors::on_setup_graph() {
  if (trainer().logger_dir().empty())
    throw Error(ErrorCode::invalid_argument, "DumpTensors writes into the log directory; train with one");
}

std::vector<graph::Tensor> DumpTensors::on_fetches() { return find_all(trainer().graph(), names_); }

void DumpTensors::on_after_run(std::span<const Array> values) {
  const std::int64_t step = trainer().global_step();
  if (every_k_steps_ > 1 && step % every_k_steps_ != 0) return;
  TensorFile file;
  for (std::size_t i = 0; i < values.size(); ++i) file.tensors.emplace_back(names_[i], values[i]);
  file.metadata["global_step"] = std::to_string(step);
  write_safetensors((std::filesystem::path(trainer().logger_dir()) / ("DumpTensor-" + std::to_string(step) + ".safetensors")).string(),
                    file);
}

}  // namespace vkp::callbacks
