// The master copy kept on the host (parameter server with Master::host, async towers):
// by trainable variable its value and its optimizer slots (none, m or m and s), loaded
// from and stored into tower 0, updated by host_optimizer.h. Internal to towers/.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/array.h"
#include "towers/host_optimizer.h"

namespace vkp::towers {

class Replicas;

class HostMaster {
 public:
  // Checks that every trainable variable is float32 and that tower 0 has the slot
  // variables the optimizer makes, then loads them.
  explicit HostMaster(Replicas& replicas);

  // Tower 0's trainable variables and slots into the master.
  void load();
  // The master's slots into tower 0.
  void store_slots();
  bool holds(const std::string& name) const;
  // Error(not_found) when it holds no trainable variable or slot of this name.
  const Array& value(const std::string& name) const;
  // By trainable variable.
  const std::vector<Array>& values() const { return values_; }
  // This step's hyperparameters, from tower 0's session.
  HostOptimizerStep read_step(std::uint64_t global_step);
  // Updates `variables` from `gradients` (by trainable variable).
  void apply(std::span<const int> variables, const HostOptimizerStep& step, std::span<const Array> gradients);

 private:
  Replicas& replicas_;
  std::vector<Array> values_;
  std::vector<std::vector<Array>> slots_;
  std::vector<std::vector<std::string>> slot_names_;
};

}  // namespace vkp::towers
