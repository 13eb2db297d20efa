// The shaders' push-constant blocks against their C++ mirrors (the static_asserts in the
// headers check the C++ side; this checks the SPIR-V side), and what reflection reads.
#include "engine/vk/spirv_reflect.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/implicit_conv.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/reduce.h"
#include "shaders/embedded.h"

namespace vkp::test {
namespace {

struct Mirror {
  const shaders::Spirv* shader;
  std::uint32_t bytes;
  std::vector<std::uint32_t> offsets;  // of the block's members, in order
  std::vector<bool> readonly;          // per binding
};

// Member offsets of a struct of 4-byte scalars and arrays, from its C++ layout.
std::vector<std::uint32_t> scalars(std::uint32_t count) {
  std::vector<std::uint32_t> o;
  for (std::uint32_t i = 0; i < count; ++i) o.push_back(4 * i);
  return o;
}

TEST(SpirvReflect, PushConstantsMatchTheirCppMirrors) {
  const Mirror mirrors[] = {
      {&shaders::fill, sizeof(vk::FillPush), scalars(2), {false}},
      {&shaders::copy, sizeof(vk::CopyPush),
       {0, 4, 8, 12, offsetof(vk::CopyPush, dims), offsetof(vk::CopyPush, src_strides),
        offsetof(vk::CopyPush, dst_strides)},
       {true, false}},
      {&shaders::transpose, sizeof(vk::TransposePush), scalars(2), {true, false}},
      {&shaders::unary, sizeof(vk::UnaryPush), scalars(2), {true, false}},
      {&shaders::binary, sizeof(vk::BinaryPush),
       {0, 4, offsetof(vk::BinaryPush, dims), offsetof(vk::BinaryPush, stride_a), offsetof(vk::BinaryPush, stride_b),
        offsetof(vk::BinaryPush, scalar)},
       {true, true, false}},
      {&shaders::reduce, sizeof(vk::ReducePush), scalars(5), {true, false}},
      {&shaders::reduce_rows, sizeof(vk::ReducePush), scalars(5), {true, false}},
      {&shaders::gemm_tiled, sizeof(vk::GemmTiledPush), scalars(15), {true, true, false, true, true}},
      {&shaders::gemm_pack, sizeof(vk::GemmPackPush), scalars(7), {true, false}},
      {&shaders::gemm_regblock, sizeof(vk::GemmRegblockPush), scalars(20), {true, true, false, true, true}},
      {&shaders::conv_pack, sizeof(vk::ConvPackPush), scalars(20), {true, false}},
      {&shaders::conv_tiled, sizeof(vk::ConvTiledPush), scalars(28), {true, true, false, true, true}},
  };
  for (const Mirror& m : mirrors) {
    const vk::SpirvReflection r = vk::reflect_spirv(m.shader->words, m.shader->name);
    EXPECT_EQ(r.push_constant_bytes, m.bytes) << m.shader->name;
    EXPECT_EQ(r.push_constant_offsets, m.offsets) << m.shader->name;
    ASSERT_EQ(r.bindings.size(), m.readonly.size()) << m.shader->name;
    for (std::size_t i = 0; i < m.readonly.size(); ++i)
      EXPECT_EQ(r.bindings[i].readonly, m.readonly[i]) << m.shader->name << " binding " << i;
  }
}

TEST(SpirvReflect, WorkgroupSizeComesFromItsSpecializationConstant) {
  const vk::SpirvReflection r = vk::reflect_spirv(shaders::transpose.words, "transpose");
  EXPECT_EQ(r.local_size[0].spec_id, 0);
  EXPECT_EQ(r.local_size[1].spec_id, 0);
  EXPECT_EQ(r.local_size[2].spec_id, -1);
  EXPECT_EQ(r.local_size[2].value, 1u);
}

// A textureBuffer is a texel-buffer binding, read only; its neighbours stay storage
// buffers (the _texel builds, shaders/texel_input.glsl).
TEST(SpirvReflect, TextureBuffersAreTexelBindings) {
  const vk::SpirvReflection r = vk::reflect_spirv(shaders::gemm_regblock_texel.words, "gemm_regblock_texel");
  ASSERT_EQ(r.bindings.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(r.bindings[i].texel, i <= 1) << "binding " << i;  // A and B
  EXPECT_TRUE(r.bindings[0].readonly);
  EXPECT_TRUE(r.bindings[1].readonly);
  EXPECT_FALSE(r.bindings[2].readonly);
  for (const vk::SpirvBinding& b : vk::reflect_spirv(shaders::gemm_regblock.words, "gemm_regblock").bindings)
    EXPECT_FALSE(b.texel) << "binding " << b.binding;
  EXPECT_EQ(r.bindings[0].sampled, vk::TexelSampled::float32);
  // copy reads words: a utextureBuffer, bound as an R32G32B32A32_UINT view.
  const vk::SpirvReflection copy = vk::reflect_spirv(shaders::copy_texel.words, "copy_texel");
  ASSERT_TRUE(copy.bindings.at(0).texel);
  EXPECT_EQ(copy.bindings[0].sampled, vk::TexelSampled::uint32);
}

// SPIR-V 1.6 (Vulkan 1.3 drivers) forbids a sampled image of dimension Buffer: the
// texel builds declare their buffers samplerless, with no OpTypeSampledImage at all.
TEST(SpirvReflect, TexelBuildsDeclareNoSampledImage) {
  for (const shaders::Spirv* s : {&shaders::gemm_regblock_texel, &shaders::copy_texel, &shaders::conv_regblock_texel,
                                  &shaders::reduce_texel, &shaders::elementwise_chain_texel}) {
    const std::span<const std::uint32_t> w = s->words;
    for (std::size_t at = 5; at < w.size(); at += w[at] >> 16) {
      ASSERT_GT(w[at] >> 16, 0u) << s->name;
      EXPECT_NE(w[at] & 0xffffu, 27u) << s->name << " declares an OpTypeSampledImage";
    }
  }
}

// Recording::dispatch splits an oversized grid only for shaders that do not read
// gl_NumWorkGroups.
TEST(SpirvReflect, ReadingNumWorkGroupsIsSeen) {
  EXPECT_TRUE(vk::reflect_spirv(shaders::unary.words, "unary").uses_num_workgroups);
  EXPECT_TRUE(vk::reflect_spirv(shaders::reduce_rows.words, "reduce_rows").uses_num_workgroups);
  EXPECT_FALSE(vk::reflect_spirv(shaders::gemm_pack.words, "gemm_pack").uses_num_workgroups);
  EXPECT_FALSE(vk::reflect_spirv(shaders::gemm_regblock.words, "gemm_regblock").uses_num_workgroups);
  EXPECT_FALSE(vk::reflect_spirv(shaders::transpose.words, "transpose").uses_num_workgroups);
}

// Shared arrays sized by specialization constants, by operations on them (transpose's
// kTile x (kTile + 1)) and by a choice between them (gemm_coopmat's layouts).
TEST(SpirvReflect, SharedMemoryFollowsSpecialization) {
  // gemm_tiled: kTileK rows of kTileM + 4 and of kTileN + 4 floats.
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::gemm_tiled.words, "gemm_tiled"), 2u * 16 * 68 * 4);
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::gemm_tiled.words, "gemm_tiled", {{1, 32}, {2, 128}, {3, 8}}),
            (8u * 36 + 8u * 132) * 4);
  // gemm_coopmat: float16 tiles of 128 x (32 + 8) and 32 x (128 + 8), in 16-byte runs, and
  // a float32 16 x 16 scratch for each of its 8 subgroups.
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::gemm_coopmat.words, "gemm_coopmat"),
            (128u * 40 + 32u * 136) * 2 + 8u * 256 * 4);
  // B transposed (constant 7) in a tile 256 wide (4 fragments, constant 13): 256 x (32 + 8).
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::gemm_coopmat.words, "gemm_coopmat", {{7, 1}, {13, 4}}),
            (128u * 40 + 256u * 40) * 2 + 8u * 256 * 4);
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::transpose.words, "transpose"), 16u * 17 * 4);
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::transpose.words, "transpose", {{0, 8}}), 8u * 9 * 4);
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::reduce_rows.words, "reduce_rows", {{0, 64}}), 64u * 4);
  EXPECT_EQ(vk::spirv_shared_memory_bytes(shaders::unary.words, "unary"), 0u);
}

TEST(SpirvReflect, MalformedModuleIsAnError) {
  const std::uint32_t not_spirv[] = {0x12345678u, 0, 0, 0, 0};
  EXPECT_THROW(vk::reflect_spirv(not_spirv, "junk"), Error);
  std::vector<std::uint32_t> truncated(shaders::fill.words.begin(), shaders::fill.words.begin() + 7);
  truncated[5] = 0xffff0011u;  // the first instruction claims 65535 words
  EXPECT_THROW(vk::reflect_spirv(truncated, "truncated"), Error);
}

}  // namespace
}  // namespace vkp::test
