// The embedding gradient (gather_grad): row r of dtable is the sum of the rows of dy
// whose index is r, added in increasing position. Both variants (the GPU's workgroup per
// row, the CPU's walk per column) must equal that float32 sum computed here in the same
// order, bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "vk_test_env.h"
#include "engine/vk/kernels/gather.h"

namespace vkp::test {
namespace {

class GatherGrad : public VkTest, public ::testing::WithParamInterface<vk::KernelChoice> {};

TEST_P(GatherGrad, IsTheOrderedSumOfTheRowsThatReadEachRow) {
  struct Case {
    std::uint32_t outer, rows, inner, count;
  };
  // Widths under, over and not a multiple of a workgroup's columns; counts not a multiple
  // of anything; several outer slices; rows that no index names.
  for (const Case c : {Case{1, 11, 67, 500}, Case{3, 5, 9, 37}, Case{2, 256, 130, 1031}, Case{1, 1, 1, 3}}) {
    SCOPED_TRACE(fmt::format("outer {} rows {} inner {} count {}", c.outer, c.rows, c.inner, c.count));
    std::vector<std::int32_t> ids(c.count);
    const std::vector<float> draws = random_floats(c.count, c.count, 0.0f, 1.0f);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      ids[k] = static_cast<std::int32_t>(draws[k] * static_cast<float>(c.rows + 1));
      if (k % 17 == 5) ids[k] = -1;                                      // outside: adds to no row
      if (k % 19 == 7) ids[k] = static_cast<std::int32_t>(c.rows);     // likewise
      if (ids[k] > static_cast<std::int32_t>(c.rows)) ids[k] = static_cast<std::int32_t>(c.rows) - 1;
    }
    std::vector<float> id_words(ids.size());
    std::memcpy(id_words.data(), ids.data(), ids.size() * 4);
    const std::size_t gathered = std::size_t{c.outer} * c.count * c.inner, table = std::size_t{c.outer} * c.rows * c.inner;
    const std::vector<float> dy = random_floats(gathered, c.inner, -3.0f, 3.0f);
    std::vector<float> want(table, 0.0f);
    for (std::size_t o = 0; o < c.outer; ++o)
      for (std::size_t k = 0; k < c.count; ++k) {
        if (ids[k] < 0 || ids[k] >= static_cast<std::int32_t>(c.rows)) continue;
        for (std::size_t i = 0; i < c.inner; ++i)
          want[(o * c.rows + static_cast<std::size_t>(ids[k])) * c.inner + i] += dy[(o * c.count + k) * c.inner + i];
      }
    const vk::BufferSlice dy_slice = upload(dy), id_slice = upload(id_words), out = scratch(table);
    vk::Recording recording(device());
    vk::gather_grad(recording, {c.outer, c.rows, c.inner, c.count}, dy_slice, id_slice, out, GetParam());
    recording.finish();
    recording.run();
    const std::vector<float> got = download(out, table);
    for (std::size_t e = 0; e < table; ++e)
      ASSERT_EQ(std::memcmp(&got[e], &want[e], 4), 0) << "element " << e << ": " << got[e] << " where " << want[e];
  }
}

INSTANTIATE_TEST_SUITE_P(Both, GatherGrad, ::testing::Values(vk::KernelChoice::cpu, vk::KernelChoice::gpu),
                         [](const auto& p) { return p.param == vk::KernelChoice::cpu ? "cpu" : "gpu"; });

}  // namespace
}  // namespace vkp::test
