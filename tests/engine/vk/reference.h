// Plain CPU references of the kernels, accumulating in double: the specification the
// device kernels are tested against.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "engine/vk/kernels/conv.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/implicit_conv.h"
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

// The direct convolution's three products (x [N, H, W, C], w [KH, KW, C / groups, Cout],
// out and dy [N, OH, OW, Cout]) in double, and the sum of |terms| of each element (for
// error bounds).
struct ConvReference {
  std::vector<double> out, dx, dw;
  std::vector<double> out_mag, dx_mag, dw_mag;
};

ConvReference conv_reference(const vk::ConvPush& g, std::uint32_t cout, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& dy);
// "forward", "filter gradient", "input gradient".
const char* name_of(vk::ConvProduct product);

}  // namespace vkp::test
