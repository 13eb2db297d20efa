// Host-side gradient averaging: out = sum_k weight[k] * in[k], element by element, the
// towers summed in a fixed order (tower 0 first) so that the result does not depend on
// thread count or timing. OpenMP splits the elements; each thread's inner loop is
// vectorised. Public for the towers' benchmark (bench/towers_bench.cpp) and for code
// that averages gradients of its own on the host as the towers do.
#pragma once

#include <cstddef>
#include <span>

#include "core/array.h"

namespace vkp::towers {

void weighted_sum(std::span<const float* const> inputs, std::span<const float> weights, float* out, std::size_t n);

// gradients[i] *= factor for each i of `variables` (gradients by trainable variable).
void multiply(std::span<Array> gradients, std::span<const int> variables, float factor);

}  // namespace vkp::towers
