// ScalarWords: a session's scalar buffer, which every kernel of its programs may read
// (Graph's word indices): the run counter, the global step, Adam's step factor, then the
// graph's hyperparameters in the order it made them. The host writes it between runs;
// one upload-memory slice, read by the device directly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/vk/memory.h"

namespace vkp::graph {

class Graph;

class ScalarWords {
 public:
  ScalarWords(const Graph& graph, vk::Device& device);

  const vk::BufferSlice& slice() const { return slice_; }
  // Writes the graph's hyperparameters made since the last call, at their initial values.
  void sync_hyperparameters();
  // Error(not_found) naming the graph's hyperparameters for an unknown name.
  void set_hyperparameter(const std::string& name, float value);
  float hyperparameter(const std::string& name);
  // Adam's bias correction for update `step` (1 for the first), from the words of the
  // learning rate, beta1 and beta2, when the graph has them (every Adam of a graph shares
  // these names, so one factor serves them all).
  void write_adam_step_factor(std::uint64_t step);
  void write(std::uint32_t word, std::uint32_t bits);

 private:
  std::uint32_t word_of(const std::string& name) const;
  std::uint32_t read(std::uint32_t word) const;

  const Graph* graph_;
  vk::Arena arena_;
  vk::BufferSlice slice_;
  std::size_t hyperparameters_written_ = 0;
  // The words of Adam's three hyperparameters, looked up again only when the graph has
  // made hyperparameters since (adam_words_for_: how many it had).
  std::optional<std::array<std::uint32_t, 3>> adam_words_;
  std::size_t adam_words_for_ = SIZE_MAX;
};

}  // namespace vkp::graph
