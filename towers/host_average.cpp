#include "towers/host_average.h"

#include "core/error.h"

namespace vkp::towers {

void weighted_sum(std::span<const float* const> inputs, std::span<const float> weights, float* out, std::size_t n) {
  VKP_CHECK(inputs.size() == weights.size() && !inputs.empty(), "weighted_sum: one weight per input");
  const auto count = static_cast<std::ptrdiff_t>(n);
  // One thread streams a few GB/s, so below ~1M elements (a fraction of a millisecond)
  // waking the other threads costs more than it saves, the more so on a busy machine.
  constexpr std::ptrdiff_t kChunk = 1 << 14, kParallel = 1 << 20;
#pragma omp parallel for schedule(static) if (count >= kParallel)
  for (std::ptrdiff_t begin = 0; begin < count; begin += kChunk) {
    const std::ptrdiff_t end = std::min(count, begin + kChunk);
    const float w0 = weights[0];
    const float* in0 = inputs[0];
#pragma omp simd
    for (std::ptrdiff_t i = begin; i < end; ++i) out[i] = w0 * in0[i];
    for (std::size_t k = 1; k < inputs.size(); ++k) {
      const float w = weights[k];
      const float* in = inputs[k];
#pragma omp simd
      for (std::ptrdiff_t i = begin; i < end; ++i) out[i] += w * in[i];
    }
  }
}

void multiply(std::span<Array> gradients, std::span<const int> variables, float factor) {
  for (int i : variables)
    for (float& x : gradients[static_cast<std::size_t>(i)].data<float>()) x *= factor;
}

}  // namespace vkp::towers
