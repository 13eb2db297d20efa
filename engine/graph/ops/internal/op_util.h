// Helpers the op families share: argument checks, broadcasting with unknown extents,
// gradient plumbing, and index arithmetic for the references.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/internal/lower.h"
#include "engine/graph/internal/reference.h"

namespace vkp::graph::detail {

[[noreturn]] inline void fail(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

// Requires `t` to be f32 (what most kernels take), naming the input.
void require_f32(const TensorType& t, const char* what);
// axis in [-rank, rank) -> [0, rank).
int normalize_axis(int axis, int rank);
// `dims` as reshape's target: an unknown extent becomes -1 (reshape infers it); Error
// naming `op` when more than one is unknown.
std::vector<std::int64_t> reshape_target(const std::vector<std::int64_t>& dims, const char* op);
// Same when both are known; equal or unknown otherwise.
bool compatible(std::int64_t a, std::int64_t b);

// dy summed over the axes along which `like` was broadcast to dy's shape, then given
// like's shape: the gradient of broadcasting.
Tensor sum_to(Tensor dy, Tensor like);
std::vector<Tensor> no_gradients(std::size_t count);
// An OpDef::grad for ops through which no gradient flows (argmax, in_top_k).
std::vector<Tensor> no_gradient(const Node& node, std::span<const Tensor> inputs, Tensor y, Tensor dy);

// Row-major strides of concrete dims.
std::vector<std::int64_t> strides_of(const std::vector<std::int64_t>& dims);
// Strides of an operand of `dims` broadcast to `out` (0 along broadcast axes).
std::vector<std::int64_t> broadcast_strides(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& out);

// Calls fn(i, ia, ib) for each element i of `out` (concrete, row-major) with the
// offsets of the elements of a and b broadcast to it.
template <class Fn>
void for_each_broadcast(const std::vector<std::int64_t>& out, const std::vector<std::int64_t>& a,
                        const std::vector<std::int64_t>& b, Fn fn) {
  const std::vector<std::int64_t> sa = broadcast_strides(a, out), sb = broadcast_strides(b, out);
  std::vector<std::int64_t> index(out.size(), 0);
  std::int64_t n = 1;
  for (std::int64_t d : out) n *= d;
  std::int64_t ia = 0, ib = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    fn(i, ia, ib);
    for (std::size_t d = out.size(); d-- > 0;) {  // odometer step
      ia += sa[d];
      ib += sb[d];
      if (++index[d] < out[d]) break;
      ia -= sa[d] * out[d];
      ib -= sb[d] * out[d];
      index[d] = 0;
    }
  }
}
// The slice of a concrete input as the 32-bit element count a kernel takes.
std::uint32_t u32(std::int64_t value, const LowerContext& ctx);

}  // namespace vkp::graph::detail
