// Row-wise kernels over [rows, cols]: softmax, log_softmax, sparse softmax cross
// entropy and its gradient, and in_top_k. Kernel: softmax.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/softmax.comp.
struct SoftmaxPush {
  std::uint32_t rows, cols;
  std::uint32_t k;
};
static_assert(sizeof(SoftmaxPush) == 12);

// Values are the shader's kMode.
enum class RowOp : std::uint32_t { softmax, log_softmax, xent, xent_grad, in_top_k };

// out = op(x, labels, dy): x [rows, cols] f32; labels i32 [rows] (xent, xent_grad,
// in_top_k); dy [rows] (xent_grad). An operand the op does not read may be left empty
// (x is bound in its place).
struct RowOperands {
  BufferSlice x, labels, dy, out;
};
void row_op(Recording& recording, RowOp op, std::uint32_t rows, std::uint32_t cols, const RowOperands& operands,
            std::uint32_t k = 1);

}  // namespace vkp::vk
