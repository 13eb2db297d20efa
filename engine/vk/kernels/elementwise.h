// Elementwise kernels: unary functions, binary operators with numpy broadcasting, and
// binary operators with a scalar operand. f32. Kernels: unary, binary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/shape.h"
#include "engine/vk/kernels/launch.h"
#include "shaders/op_codes.h"

namespace vkp::vk {

// The functions and operators, numbered as the shaders compare them (shaders/op_codes.h).
using shaders::BinaryOp;
using shaders::to_string;
using shaders::UnaryOp;

// Mirrors the push-constant block of shaders/unary.comp.
struct UnaryPush {
  std::uint32_t n;
  float alpha;
};
static_assert(sizeof(UnaryPush) == 8);

// Mirrors the push-constant block of shaders/binary.comp.
struct BinaryPush {
  static constexpr int kMaxRank = 6;
  std::uint32_t n;
  std::uint32_t rank;
  std::uint32_t dims[kMaxRank];
  std::uint32_t stride_a[kMaxRank];
  std::uint32_t stride_b[kMaxRank];
  float scalar;  // the scalar operand, or alpha of the ops that take one
};
static_assert(sizeof(BinaryPush) == 84);
static_assert(offsetof(BinaryPush, dims) == 8 && offsetof(BinaryPush, stride_a) == 32 &&
              offsetof(BinaryPush, stride_b) == 56 && offsetof(BinaryPush, scalar) == 80);

// The push constants of c = a op b for these shapes: axes of extent 1 dropped and
// neighbours that broadcast alike merged, so that at most 6 dims remain (Error otherwise).
BinaryPush binary_push(const Shape& a, const Shape& b);

// y = op(x) over `n` elements; x and y may be the same slice.
void unary(Recording& recording, UnaryOp op, std::uint64_t n, const BufferSlice& x, const BufferSlice& y,
           float alpha = 0.0f);

// An operand that broadcasts: its slice and the shape it holds.
struct ShapedSlice {
  Shape shape;
  BufferSlice slice;
};

// c = a op b with broadcasting; c has broadcast_shapes(a.shape, b.shape) (core/shape.h).
void binary(Recording& recording, BinaryOp op, const ShapedSlice& a, const ShapedSlice& b, const BufferSlice& c,
            float alpha = 0.0f);

// A scalar operand: c = a op value, or with `first`, c = value op a.
struct ScalarOperand {
  float value = 0;
  bool first = false;
};
// c = a op scalar over `n` elements.
void binary_scalar(Recording& recording, BinaryOp op, std::uint64_t n, const BufferSlice& a, ScalarOperand scalar,
                   const BufferSlice& c);

}  // namespace vkp::vk
