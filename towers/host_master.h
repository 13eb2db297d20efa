// The master copy kept on the host (parameter server with Master::host, async towers):
// by trainable variable its value and its optimizer slots (none, m or m and s), loaded
// from and stored into tower 0, updated by host_optimizer.h. With loss scaling
// (TowerOptions::loss_scale) it keeps each objective's scale state too, moves it by
// graph/loss_scale.h's rule and sends it to the towers with the parameters. Towers::
// host_master() gives it where the towers keep one.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/loss_scale.h"
#include "towers/host_optimizer.h"

namespace vkp::towers {

class Replicas;

class HostMaster {
 public:
  // For the towers' own use (their constructor, step and update): the constructor,
  // values(), read_step() and apply(). Checks that every trainable variable is float32
  // and that tower 0 has the slot variables the optimizer makes, then loads them.
  HostMaster(Replicas& replicas, std::optional<graph::LossScaleOptions> loss_scale);

  // Tower 0's trainable variables, slots and loss scale state into the master.
  void load();
  // The master's slots into tower 0.
  void store_slots();
  bool holds(const std::string& name) const;
  // Error(not_found) when it holds no trainable variable, slot or loss scale state of
  // this name.
  const Array& value(const std::string& name) const;
  // What the towers receive (Replica::sent): every trainable variable, then with loss
  // scaling each objective's scale, good steps and skipped steps.
  const std::vector<Array>& values() const { return values_; }
  // This step's hyperparameters, from tower 0's session.
  HostOptimizerStep read_step(std::uint64_t global_step);
  // Updates `variables` of `objective` from `gradients` (by trainable variable). With
  // loss scaling the gradients are of scale * cost: when one of them is not finite the
  // update is skipped, else they are divided by the scale (in place) first; either way
  // the scale moves. Returns whether the update was made.
  bool apply(int objective, std::span<const int> variables, const HostOptimizerStep& step, std::span<Array> gradients);

 private:
  // The loss scale rule on objective o's state, after a step with or without an overflow.
  void move_scale(int objective, bool overflow);

  Replicas& replicas_;
  std::optional<graph::LossScaleOptions> loss_scale_;
  std::vector<std::string> sent_names_;  // as values_
  std::vector<Array> values_;
  std::vector<std::vector<Array>> slots_;
  std::vector<std::vector<std::string>> slot_names_;
};

}  // namespace vkp::towers
