// A chain of elementwise ops in one dispatch (shaders/elementwise_chain.comp): what the
// graph compiler lowers a run of unary and binary ops to, so that the intermediate
// tensors are neither written nor read back. Kernel: elementwise_chain.
#pragma once

#include <cstdint>
#include <span>

#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

inline constexpr std::size_t kMaxChainSteps = 8, kMaxChainInputs = 4;

// One step's operands: input k (0-3) or the result of an earlier step.
constexpr std::uint32_t chain_input(std::uint32_t k) { return k; }
constexpr std::uint32_t chain_result(std::uint32_t step) { return 4 + step; }

struct ChainStep {
  std::uint32_t op = 0;  // a UnaryOp, or 32 + a BinaryOp
  std::uint32_t a = 0, b = 0;
  float alpha = 0.0f;    // leaky relu's slope, elu's alpha, the gradients' alpha
};
inline ChainStep unary_step(UnaryOp op, std::uint32_t a, float alpha = 0.0f) {
  return {static_cast<std::uint32_t>(op), a, 0, alpha};
}
inline ChainStep binary_step(BinaryOp op, std::uint32_t a, std::uint32_t b, float alpha = 0.0f) {
  return {32 + static_cast<std::uint32_t>(op), a, b, alpha};
}

// How an input is read for output element i: at i, at i % channels (a vector along the
// last axis), or its one value.
enum class ChainInput : std::uint32_t { full, channel, one };

// Mirrors the push-constant block of shaders/elementwise_chain.comp.
struct ChainPush {
  std::uint32_t n, channels;
  float alpha[kMaxChainSteps];
};
static_assert(sizeof(ChainPush) == 40);

// The elements a chain writes: n of them, the last axis of `channels` (what per-channel
// inputs follow).
struct ChainExtent {
  std::uint64_t n = 0;
  std::uint32_t channels = 1;
};
// out[i] for i < n = the last step's result. Throws Error(invalid_argument) for more
// than 8 steps or 4 inputs, an operand that is not an input or an earlier step, or an
// input too small for its mode.
void elementwise_chain(Recording& recording, std::span<const ChainStep> steps, std::span<const BufferSlice> inputs,
                       std::span<const ChainInput> modes, ChainExtent extent, const BufferSlice& out);

}  // namespace vkp::vk
