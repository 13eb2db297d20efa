// Plain CPU references of the kernels, accumulating in double: the specification the
// device kernels are tested against.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/reduce.h"

namespace vkp::test {

// C = alpha * op(A) op(B) + beta * C over every batch, with the strides of `args`
// (defaults filled in as gemm() does). Also returns, per element of C, the sum of the
// magnitudes of its terms (for error bounds) in `magnitude`; -1 where C is not written
// (gaps between padded rows and batches).
void gemm_reference(const vk::GemmArgs& args, const std::vector<float>& a, const std::vector<float>& b,
                    std::vector<double>& c, std::vector<double>& magnitude);

double unary_reference(vk::UnaryOp op, double x);
double binary_reference(vk::BinaryOp op, double x, double y);
// numpy broadcasting of a op b.
std::vector<double> broadcast_reference(vk::BinaryOp op, const Shape& a_shape, const std::vector<float>& a,
                                        const Shape& b_shape, const std::vector<float>& b);

// [outer, axis, inner] -> [outer, inner].
std::vector<double> reduce_reference(vk::ReduceOp op, std::uint32_t outer, std::uint32_t axis, std::uint32_t inner,
                                     const std::vector<float>& x);

}  // namespace vkp::test
