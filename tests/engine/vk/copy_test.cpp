// Fill, strided copy and transpose: exact (they move bits).
#include "engine/vk/kernels/copy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "vk_test_env.h"
#include "core/error.h"

namespace vkp::test {
namespace {

TEST_F(VkTest, FillWritesExactlyTheFirstNElements) {
  for (std::size_t n : {1, 7, 63, 65, 257, 1031, 100003}) {
    const vk::BufferSlice d = scratch(n + 3);
    vk::Recording recording(device());
    vk::fill(recording, d, n, -2.5f);
    recording.finish();
    recording.run();
    const std::vector<float> got = download(d, n + 3);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], -2.5f) << i;
    for (std::size_t i = n; i < n + 3; ++i) ASSERT_TRUE(std::isnan(got[i])) << "wrote past n at " << i;
  }
}

TEST_F(VkTest, StridedCopySlicesPermutesBroadcastsAndConcatenates) {
  // src is a [5, 7, 9] tensor.
  const std::vector<float> src = random_floats(5 * 7 * 9, 4);
  const vk::BufferSlice ds = upload(src);
  // A slice [1:4, 2:7, 0:9:2], a permutation (2, 0, 1), and a broadcast of row 3 into
  // [4, 9], all into one buffer at increasing offsets.
  const std::uint32_t slice_n = 3 * 5 * 5, perm_n = 9 * 5 * 7, bcast_n = 4 * 9;
  const vk::BufferSlice dd = scratch(slice_n + perm_n + bcast_n);
  vk::Recording recording(device());
  vk::copy(recording, {{3, 5, 5}, {63, 9, 2}, 1 * 63 + 2 * 9, 0, {}}, ds, dd);
  vk::copy(recording, {{9, 5, 7}, {1, 63, 9}, 0, slice_n, {}}, ds, dd);
  vk::copy(recording, {{4, 9}, {0, 1}, 3 * 9, slice_n + perm_n, {}}, ds, dd);
  recording.finish();
  recording.run();
  const std::vector<float> got = download(dd, slice_n + perm_n + bcast_n);
  std::size_t at = 0;
  for (int i = 1; i < 4; ++i)
    for (int j = 2; j < 7; ++j)
      for (int k = 0; k < 9; k += 2) ASSERT_EQ(got[at++], src[static_cast<std::size_t>(i * 63 + j * 9 + k)]);
  for (int k = 0; k < 9; ++k)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 7; ++j) ASSERT_EQ(got[at++], src[static_cast<std::size_t>(i * 63 + j * 9 + k)]);
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 9; ++k) ASSERT_EQ(got[at++], src[static_cast<std::size_t>(3 * 9 + k)]);
}

// Concatenation along the middle axis: two [2, 3, 4] and [2, 5, 4] tensors into
// [2, 8, 4] with strided destinations; seven dims of which five merge away.
TEST_F(VkTest, StridedCopyScattersIntoStridedDestinations) {
  const std::vector<float> a = random_floats(2 * 3 * 4, 5), b = random_floats(2 * 5 * 4, 6);
  const vk::BufferSlice da = upload(a), db = upload(b), dd = scratch(2 * 8 * 4);
  vk::Recording recording(device());
  vk::copy(recording, {{2, 3, 4}, {12, 4, 1}, 0, 0, {32, 4, 1}}, da, dd);
  vk::copy(recording, {{1, 2, 1, 5, 1, 4, 1}, {0, 20, 0, 4, 0, 1, 0}, 0, 12, {0, 32, 0, 4, 0, 1, 0}}, db, dd);
  recording.finish();
  recording.run();
  const std::vector<float> got = download(dd, 64);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 4; ++k) {
        const float want = j < 3 ? a[static_cast<std::size_t>(i * 12 + j * 4 + k)]
                                 : b[static_cast<std::size_t>(i * 20 + (j - 3) * 4 + k)];
        ASSERT_EQ(got[static_cast<std::size_t>(i * 32 + j * 4 + k)], want) << i << " " << j << " " << k;
      }
}

// A copy moves 32-bit words, not floats: integers (labels, indices), NaN payloads,
// signalling NaNs and subnormals arrive bit for bit, through the texel build on a CPU
// device (an R32G32B32A32_UINT view) as through storage buffers.
TEST_F(VkTest, StridedCopyMovesWordsBitForBit) {
  const std::size_t rows = 25, cols = 40;  // 1000 words: whole texels
  std::vector<std::uint32_t> words(rows * cols);
  const std::uint32_t specials[] = {0x7fc00001u, 0x7f800001u, 0xffbfffffu, 0x00000001u, 0x807fffffu,
                                    0x80000000u, 0x00000005u, 0xfffffffbu, 0x7f800000u};
  for (std::size_t i = 0; i < words.size(); ++i)
    words[i] = i % 3 == 0 ? specials[i / 3 % 9] : static_cast<std::uint32_t>(i * 2654435761u);
  std::vector<float> as_floats(words.size());
  std::memcpy(as_floats.data(), words.data(), words.size() * 4);
  const vk::BufferSlice src = upload(as_floats), dst = scratch(words.size());
  vk::Recording recording(device());
  vk::copy(recording, {{cols, rows}, {1, cols}, 0, 0, {}}, src, dst);  // the transpose
  recording.finish();
  recording.run();
  const std::vector<float> got = download(dst, words.size());
  for (std::size_t c = 0; c < cols; ++c)
    for (std::size_t r = 0; r < rows; ++r) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &got[c * rows + r], 4);
      ASSERT_EQ(bits, words[r * cols + c]) << "row " << r << ", column " << c;
    }
}

TEST_F(VkTest, StridedCopyRejectsBadRanksAndShortSources) {
  const vk::BufferSlice s = scratch(8);
  vk::Recording recording(device());
  EXPECT_THROW(vk::copy(recording, {{2, 2}, {1}, 0, 0, {}}, s, s), Error);
  EXPECT_THROW(vk::copy(recording, {{2, 2}, {2, 1}, 0, 0, {1}}, s, s), Error);
  EXPECT_THROW(vk::copy(recording, {{2, 2, 2, 2, 2, 2, 2}, {1, 0, 1, 0, 1, 0, 1}, 0, 0, {}}, s, scratch(128)), Error);
  EXPECT_THROW(vk::copy(recording, {{3, 3}, {3, 1}, 0, 0, {}}, s, scratch(9)), Error);
}

class Transpose : public VkTest, public ::testing::WithParamInterface<vk::KernelChoice> {};

TEST_P(Transpose, SwapsTheLastTwoAxes) {
  const std::uint32_t shapes[][3] = {{1, 1, 1}, {1, 7, 65}, {3, 63, 65}, {2, 257, 17}, {1, 1031, 5}, {4, 16, 16}};
  for (const auto& s : shapes) {
    const std::uint32_t batch = s[0], rows = s[1], cols = s[2];
    const std::vector<float> src = random_floats(std::size_t{batch} * rows * cols, rows * cols);
    const vk::BufferSlice ds = upload(src), dd = scratch(src.size());
    vk::Recording recording(device());
    vk::transpose(recording, {batch, rows, cols}, ds, dd, GetParam());
    recording.finish();
    recording.run();
    const std::vector<float> got = download(dd, src.size());
    for (std::uint32_t b = 0; b < batch; ++b)
      for (std::uint32_t r = 0; r < rows; ++r)
        for (std::uint32_t c = 0; c < cols; ++c)
          ASSERT_EQ(got[(std::size_t{b} * cols + c) * rows + r], src[(std::size_t{b} * rows + r) * cols + c])
              << "batch " << b << " row " << r << " col " << c << " of " << rows << "x" << cols;
  }
}

INSTANTIATE_TEST_SUITE_P(Both, Transpose, ::testing::Values(vk::KernelChoice::cpu, vk::KernelChoice::gpu),
                         [](const auto& p) { return p.param == vk::KernelChoice::cpu ? "cpu" : "gpu"; });

}  // namespace
}  // namespace vkp::test
