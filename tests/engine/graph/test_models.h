// Small models and separable synthetic data for the engine's training tests.
#pragma once

#include <cstdint>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"

namespace vkp::test {

struct Model {
  graph::Tensor x, labels;  // placeholders
  graph::Tensor logits, loss;
};

// 16 -> 32 -> relu -> 4, softmax cross entropy.
Model mlp(graph::Graph& g, std::int64_t batch = graph::kUnknown);
// 8x8x1 -> conv 3x3x8 -> BatchNorm -> relu -> max_pool 2 -> FC 4.
Model convnet(graph::Graph& g, std::int64_t batch = graph::kUnknown);

// Four classes, separable with margin: mlp_batch draws 16-d points around fixed class
// centres; image_batch draws 8x8 images of a bright bar (top, bottom, left or right) in
// noise. Reproducible from `step`.
std::pair<Array, Array> mlp_batch(std::int64_t batch, std::uint64_t step);
std::pair<Array, Array> image_batch(std::int64_t batch, std::uint64_t step);

}  // namespace vkp::test
