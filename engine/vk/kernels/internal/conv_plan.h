// What implicit_conv.cpp (the checks, the CPU path) and implicit_conv_gpu.cpp (the GPU
// path: conv_tiled, conv_coopmat and their measured tilings) share: the convolution's
// index map, the filter gradient's splits of the pixels, and the GPU path's entry.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/implicit_conv.h"
#include "engine/vk/kernels/reduce.h"

namespace vkp::vk {

// The map conv_pack, conv_tiled and conv_coopmat walk: the convolution's own, or for the
// input gradient the adjoint's, whose image is dy and whose output pixels are x's.
ConvPackPush map_of(const ConvPush& g, std::uint32_t cout, ConvProduct product);
// Elements of w (and dw).
std::uint64_t dw_elements(const ConvPush& g, std::uint32_t cout);

// A filter gradient read in place (conv_regblock, conv_tiled, conv_coopmat) with its K,
// the pixels, cut into splits whose partial sums of dw `reduce` adds in a fixed order at
// the end: enough splits for about `workgroups` in all over `tiles` workgroups a split,
// each of at least 256 pixels and of whole `granule`s (the last may be shorter; none is
// empty).
struct PixelSplits {
  std::uint32_t splits = 1, k_split = 0;  // k_split: pixels of one split (k unsplit)
  ReduceArgs sums;                        // splits > 1: the partial sums' reduction
  std::uint64_t partial_bytes = 0, reduce_bytes = 0;
  std::uint64_t bytes() const { return partial_bytes + reduce_bytes; }
};
PixelSplits pixel_splits(std::uint32_t k, std::uint64_t tiles, std::uint64_t workgroups, std::uint32_t granule,
                         std::uint64_t dw_size, const Device& device);

// One product as a path records it, after implicit_conv() has checked the slices: their
// operand is w swapped where the path needs it (into the workspace's first `at` bytes).
struct ConvRun {
  ConvSlices slices;
  std::uint64_t at = 0;
  GemmEpilogue epilogue;
};

// The GPU path's workspace past the swapped w (the filter gradient's partial sums), and
// the path itself.
std::uint64_t implicit_conv_gpu_workspace_bytes(const ConvPush& g, std::uint32_t cout, ConvProduct product,
                                                const Device& device);
void implicit_conv_gpu(Recording& recording, const ConvProblem& problem, const ConvRun& run);

}  // namespace vkp::vk
