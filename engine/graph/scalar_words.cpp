#include "engine/graph/scalar_words.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/optimizer.h"

namespace vkp::graph {
namespace {

// Words of the scalar buffer: run counter, global step, then hyperparameters.
constexpr std::uint32_t kScalarWords = 256;

}  // namespace

ScalarWords::ScalarWords(const Graph& graph, vk::Device& device)
    : graph_(&graph), arena_(device, vk::MemoryUse::upload, "scalars", kScalarWords * 4) {
  slice_ = arena_.allocate(kScalarWords * 4, "scalars");
  std::memset(slice_.host, 0, kScalarWords * 4);
}

std::uint32_t ScalarWords::word_of(const std::string& name) const {
  const auto& hyper = graph_->hyperparameters();
  for (std::size_t i = 0; i < hyper.size(); ++i)
    if (hyper[i].first == name) return Graph::kFirstHyperparameterWord + static_cast<std::uint32_t>(i);
  std::string known;
  for (const auto& [n, v] : hyper) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::not_found,
              "no hyperparameter named '" + name + "' (the graph has: " + (known.empty() ? "none" : known) + ")");
}

void ScalarWords::write_adam_step_factor(std::uint64_t step) {
  const auto& hyper = graph_->hyperparameters();
  if (adam_words_for_ != hyper.size()) {
    adam_words_for_ = hyper.size();
    const auto has = [&](std::string_view name) {
      return std::any_of(hyper.begin(), hyper.end(), [&](const auto& h) { return h.first == name; });
    };
    adam_words_.reset();
    if (has("beta1") && has("beta2")) adam_words_ = {word_of("learning_rate"), word_of("beta1"), word_of("beta2")};
  }
  if (!adam_words_) return;
  const auto value = [&](std::size_t i) { return std::bit_cast<float>(read((*adam_words_)[i])); };
  const float factor = adam_step_factor(value(0), value(1), value(2), step);
  write(Graph::kAdamStepWord, std::bit_cast<std::uint32_t>(factor));
}

void ScalarWords::sync_hyperparameters() {
  const auto& hyper = graph_->hyperparameters();
  if (Graph::kFirstHyperparameterWord + hyper.size() > kScalarWords)
    throw Error(ErrorCode::unsupported, "more hyperparameters than the scalar buffer holds");
  for (; hyperparameters_written_ < hyper.size(); ++hyperparameters_written_)
    write(Graph::kFirstHyperparameterWord + static_cast<std::uint32_t>(hyperparameters_written_),
          std::bit_cast<std::uint32_t>(hyper[hyperparameters_written_].second));
}

void ScalarWords::set_hyperparameter(const std::string& name, float value) {
  sync_hyperparameters();
  write(word_of(name), std::bit_cast<std::uint32_t>(value));
}

float ScalarWords::hyperparameter(const std::string& name) {
  sync_hyperparameters();
  return std::bit_cast<float>(read(word_of(name)));
}

void ScalarWords::write(std::uint32_t word, std::uint32_t bits) { std::memcpy(slice_.host + 4 * word, &bits, 4); }

std::uint32_t ScalarWords::read(std::uint32_t word) const {
  std::uint32_t bits = 0;
  std::memcpy(&bits, slice_.host + 4 * word, 4);
  return bits;
}

}  // namespace vkp::graph
