#include "train/distributed_trainer.h"

#include <array>
#include <iterator>
#include <variant>

#include <fmt/format.h>

#include "core/error.h"
#include "engine/graph/variables.h"

namespace vkp::train {
namespace {

towers::Reduction across_processes(towers::Reduction local) {
  if (local == towers::Reduction::async)
    throw Error(ErrorCode::unsupported, "DistributedTrainer: async towers have no average to reduce across processes; "
                                        "use replicated or parameter_server towers");
  return local;
}

const std::string& var_name(const graph::Tensor& v) { return std::get<graph::VariableAttrs>(v.node().attrs).var_name; }

}  // namespace

DistributedTrainer::DistributedTrainer(towers::MpiSession& mpi, const vk::Instance& instance,
                                       const std::vector<int>& devices, std::uint64_t seed,
                                       PerDeviceOptions device_options, towers::Reduction local)
    : MultiDeviceTrainer(instance, devices,
                         {.reduction = across_processes(local),
                          .seed = seed + static_cast<std::uint64_t>(mpi.rank()) * devices.size()},
                         std::move(device_options)),
      mpi_(mpi) {}

void DistributedTrainer::setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                                     OptimizerFn optimizer) {
  MultiDeviceTrainer::setup_graph(inputs, std::move(source), std::move(tower), std::move(optimizer));
  sync_towers().set_cross_reduce([this](std::span<Array> gradients, double& samples, double& cost) {
    what_.clear();  // keeps its capacity: no allocation in a steady loop
    fmt::format_to(std::back_inserter(what_), "gradients of global step {}", global_step());
    towers::allreduce_gradients(mpi_, gradients, samples, cost, bucket_, what_);
    global_samples_ = static_cast<std::int64_t>(samples);
  });
  sync_towers().set_cross_exchange([this](Array& value, double samples) {
    what_.clear();
    fmt::format_to(std::back_inserter(what_), "a value exchanged between towers in global step {}", global_step());
    double cost = 0;  // allreduce_gradients averages one; nothing to average here
    towers::allreduce_gradients(mpi_, std::span<Array>(&value, 1), samples, cost, bucket_, what_);
  });
}

const std::string& DistributedTrainer::logger_dir() const {
  return is_chief() ? MultiDeviceTrainer::logger_dir() : no_dir_;
}

void DistributedTrainer::run_step() {
  if (!agreed_) {
    check_agreement();
    agreed_ = true;
  }
  // Into every rank's tower 0 here, then from tower 0 into the local towers by
  // MultiDeviceTrainer at the same local step.
  if (loop().first_step_of_epoch()) broadcast_from_chief();
  MultiDeviceTrainer::run_step();
}

std::string DistributedTrainer::agree_to_stop(bool requested) {
  // The highest rank that asked, plus one; 0: none did.
  std::array<std::int64_t, 1> asked{requested ? mpi_.rank() + 1 : 0};
  what_.clear();
  fmt::format_to(std::back_inserter(what_), "the stop check after global step {}", global_step());
  mpi_.allreduce_max(asked, what_);
  if (asked[0] == 0) return "";
  return fmt::format("rank {} stopped training", asked[0] - 1);
}

void DistributedTrainer::check_agreement() {
  towers::Towers& t = towers();
  std::int64_t elements = 0;
  for (const graph::Tensor& v : t.graph(0).variables()) elements += v.type().numel();
  const std::array<std::pair<const char*, std::int64_t>, 8> facts{{
      {"global step", global_step()},
      {"epoch", epoch_num()},
      {"steps per epoch", steps_per_epoch()},
      {"max epoch", max_epoch()},
      {"number of variables", static_cast<std::int64_t>(t.graph(0).variables().size())},
      {"elements of all variables", elements},
      {"number of trainable variables", static_cast<std::int64_t>(t.trainable_names().size())},
      {"number of hyperparameters", static_cast<std::int64_t>(t.graph(0).hyperparameters().size())},
  }};
  // The maximum of v and of -v in one collective gives every rank the range.
  std::array<std::int64_t, 2 * facts.size()> range{};
  for (std::size_t i = 0; i < facts.size(); ++i) {
    range[i] = facts[i].second;
    range[facts.size() + i] = -facts[i].second;
  }
  mpi_.allreduce_max(range, "the ranks' agreement check");
  for (std::size_t i = 0; i < facts.size(); ++i) {
    const std::int64_t high = range[i], low = -range[facts.size() + i];
    if (low != high)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("DistributedTrainer: the {} ranks disagree on the {} (from {} to {}; rank {} has {}): give "
                              "every rank the same TrainConfig and model, and resume every rank from the same "
                              "checkpoint",
                              mpi_.size(), facts[i].first, low, high, mpi_.rank(), facts[i].second));
  }
}

void DistributedTrainer::broadcast_from_chief() {
  towers::Towers& t = towers();
  graph::Session& session = t.session(0);
  const std::vector<graph::Tensor>& variables = t.graph(0).variables();
  const std::vector<std::pair<std::string, float>>& hyperparameters = t.graph(0).hyperparameters();
  // Every rank reads its own values, which gives the others buffers of the right size.
  // Hyperparameters go along, last, so that a rank that did not restore a checkpoint
  // still applies rank 0's learning rate.
  std::vector<std::string> names;
  for (const graph::Tensor& v : variables) names.push_back(var_name(v));
  values_ = session.variable_values(names);
  values_.emplace_back();
  Array& knobs = values_.back();
  knobs = Array(DType::f32, Shape{static_cast<std::int64_t>(hyperparameters.size())});
  for (std::size_t i = 0; i < hyperparameters.size(); ++i)
    knobs.data<float>()[i] = session.hyperparameter(hyperparameters[i].first);
  towers::broadcast_arrays(mpi_, values_, 0, "variables and hyperparameters from the chief");
  if (mpi_.rank() == 0) return;
  session.set_variables(names, {values_.begin(), values_.end() - 1});
  for (std::size_t i = 0; i < hyperparameters.size(); ++i)
    if (session.hyperparameter(hyperparameters[i].first) != knobs.data<float>()[i])
      session.set_hyperparameter(hyperparameters[i].first, knobs.data<float>()[i]);
}

}  // namespace vkp::train
