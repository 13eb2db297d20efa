// Every optimizer kind's facts, in one table that everything reads: graph::Optimizer
// (hyperparameter names, slot variables), the op's shape check and reference (slot
// count), the parameter server's host optimizer (hyperparameters it reads, slot names)
// and messages. Hyperparameters are listed by role, the order of OptimizerAttrs' word
// fields; an empty name is a role the kind does not use.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/attrs.h"

namespace vkp::graph {

// The roles of OptimizerAttrs' word fields, in order.
enum class HyperparameterRole { learning_rate, momentum, beta2, epsilon, weight_decay, count_ };

struct OptimizerSpec {
  OptimizerKind kind;
  std::string_view name;  // as messages name it: "sgd", "adam", ...
  // The scalar-buffer name of each role ("beta1" for adam's momentum role), "" if unused.
  std::array<std::string_view, static_cast<std::size_t>(HyperparameterRole::count_)> hyperparameters;
  // Slot variables, <variable>/<suffix>, in the kernel's binding order (m, then s).
  std::array<std::string_view, 2> slots;
  std::size_t slot_count;
};

const OptimizerSpec& optimizer_spec(OptimizerKind kind);

// <var>/<suffix> for each slot of `kind`.
std::vector<std::string> optimizer_slot_names(OptimizerKind kind, const std::string& var);

// Defaults of the factories in optimizer.h (TensorFlow's).
inline constexpr float kDefaultMomentum = 0.9f, kDefaultBeta1 = 0.9f, kDefaultBeta2 = 0.999f, kDefaultEpsilon = 1e-8f;
inline constexpr float kDefaultRmsDecay = 0.9f, kDefaultRmsEpsilon = 1e-10f, kDefaultAdagradInitial = 0.1f;

}  // namespace vkp::graph
