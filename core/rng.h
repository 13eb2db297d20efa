// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
//
// Counter-based so that any element of any stream can be computed independently: the
// same generator runs on the host (here) and in shaders, and a value depends only on
// (seed, stream, index), never on thread timing. Every random thing in vkpack (test
// data, initializers, shuffles, dropout masks) is reproducible from a seed.
#pragma once

#include <array>
#include <cstdint>

namespace vkp {

// One Philox4x32-10 block: 4 random 32-bit words from a 128-bit counter and 64-bit key.
std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter,
                                        std::array<std::uint32_t, 2> key);

// A sequential stream over philox4x32: key = seed, counter = (index, stream).
class Rng {
 public:
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) : seed_(seed), stream_(stream) {}

  std::uint32_t next_u32();
  std::uint64_t next_u64();
  // Uniform in [0, 1) with 24 random bits.
  float uniform();
  // Uniform in [low, high).
  float uniform(float low, float high) { return low + (high - low) * uniform(); }
  // Standard normal, Box-Muller.
  float normal();
  // Uniform integer in [0, n); n > 0. Unbiased (rejection).
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t seed_;
  std::uint64_t stream_;
  std::uint64_t block_ = 0;   // index of the next philox block
  std::array<std::uint32_t, 4> words_{};
  int used_ = 4;              // words of words_ already handed out
};

}  // namespace vkp
