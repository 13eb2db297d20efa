// ModelState: the model a trainer trains, as callbacks read and write it: the graph,
// variables and hyperparameters, and the programs and device memory that run it. A
// trainer keeps one (train/trainer_state.h: one session on one device, or a multi-device
// trainer's towers); callbacks reach it through TrainerView, whose functions of the same
// names forward here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"

namespace vkp::graph {
class Program;
}
namespace vkp::vk {
class Device;
}

namespace vkp::callbacks {

// A program a trainer's steps run and the device it runs on (for profilers).
struct StepProgram {
  const graph::Program* program = nullptr;
  const vk::Device* device = nullptr;
};

class ModelState {
 public:
  virtual ~ModelState() = default;

  // The training graph: callbacks find tensors in it, and build ops in it at setup_graph.
  virtual graph::Graph& graph() = 0;

  // The training state, always current: where the trainer keeps a master copy elsewhere
  // (the parameter server's host master) it answers from it, or brings it back first.
  // Error(not_found) for names the graph does not have.
  virtual float hyperparameter(const std::string& name) = 0;
  virtual void set_hyperparameter(const std::string& name, float value) = 0;
  virtual Array variable(const std::string& name) = 0;
  // Several variables (slots and moving averages too) in one read, for checkpoints.
  virtual std::vector<Array> variable_values(const std::vector<std::string>& names) = 0;
  // Runs `targets` (ops a callback built in graph()) once, between steps.
  virtual void run_targets(const std::vector<graph::Tensor>& targets) = 0;

  // Device memory (bytes) held now and at most so far, over every device.
  virtual std::uint64_t device_memory_bytes() const = 0;
  virtual std::uint64_t peak_device_memory_bytes() const = 0;
  // Every program the steps may run, with its device; those that ran in a step carry
  // that step's host spans (graph::Program::host_spans, HostSpanLog).
  virtual std::vector<StepProgram> step_programs() const = 0;
};

}  // namespace vkp::callbacks
