#include "engine/vk/transfer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "vk_test_env.h"
#include "core/error.h"
#include "engine/vk/kernels/copy.h"

namespace vkp::test {
namespace {

// A device that reaches its memory as a discrete GPU does, with a small staging ring so
// that transfers larger than the ring are exercised with little data.
vk::DeviceOptions staged(std::uint64_t staging_bytes = 4096) {
  vk::DeviceOptions o = device_options();
  o.memory = vk::MemoryMode::staged;
  o.staging_bytes = staging_bytes;
  return o;
}

std::vector<float> read(vk::Device& dev, const vk::BufferSlice& slice, std::size_t count) {
  std::vector<float> out(count);
  vk::download(dev, slice, std::as_writable_bytes(std::span(out)));
  return out;
}

TEST(Transfer, StagedDeviceMemoryIsNotMapped) {
  vk::Device dev(instance(), device_index(), staged());
  EXPECT_FALSE(dev.memory().mapped());
  EXPECT_EQ(dev.memory().mode(), vk::MemoryMode::staged);
  vk::Arena arena(dev, vk::MemoryUse::device, "staged");
  EXPECT_FALSE(arena.host_visible());
  EXPECT_EQ(arena.allocate(64, "x").host, nullptr);
}

TEST(Transfer, UploadAndDownloadThroughStagingAreExact) {
  vk::Device dev(instance(), device_index(), staged());
  vk::Arena arena(dev, vk::MemoryUse::device, "staged");
  for (std::size_t n : {1u, 37u, 1024u, 1025u, 10007u}) {  // around and beyond the 4 KiB ring
    const std::vector<float> values = random_floats(n, n);
    const vk::BufferSlice slice = arena.allocate(n * 4, "x");
    vk::upload(dev, slice, std::as_bytes(std::span(values)));
    EXPECT_EQ(read(dev, slice, n), values) << n << " floats";
  }
}

// The device really holds what was uploaded: a kernel reads it.
TEST(Transfer, KernelsSeeStagedUploadsAndDownloadsSeeKernels) {
  vk::Device dev(instance(), device_index(), staged());
  vk::Arena arena(dev, vk::MemoryUse::device, "staged");
  const std::size_t n = 3001;
  const std::vector<float> values = random_floats(n, 7);
  const vk::BufferSlice src = arena.allocate(n * 4, "src"), dst = arena.allocate(n * 4, "dst");
  vk::upload(dev, src, std::as_bytes(std::span(values)));
  vk::Recording work(dev);
  vk::copy(work, {.dims = {static_cast<std::uint32_t>(n)}, .src_strides = {1}}, src, dst);
  vk::fill(work, src, 5, 0.5f);
  work.finish();
  work.run();
  EXPECT_EQ(read(dev, dst, n), values);
  EXPECT_EQ(read(dev, src, 6), (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f, 0.5f, values[5]}));
}

TEST(Transfer, ABatchThatFitsTheRingIsOneSubmission) {
  vk::Device dev(instance(), device_index(), staged(1 << 16));
  vk::Arena arena(dev, vk::MemoryUse::device, "staged");
  std::vector<vk::BufferSlice> slices;
  std::vector<std::vector<float>> values;
  for (int i = 0; i < 20; ++i) {
    slices.push_back(arena.allocate(400, "x"));
    values.push_back(random_floats(100, static_cast<std::uint64_t>(i)));
  }
  std::vector<std::vector<float>> back(20, std::vector<float>(100));
  const std::uint64_t before = [&] { return dev.lock_staging().ring.submissions(); }();
  {
    vk::TransferBatch batch(dev);
    for (int i = 0; i < 20; ++i) batch.upload(slices[static_cast<std::size_t>(i)], std::as_bytes(std::span(values[static_cast<std::size_t>(i)])));
    // Read back in the same batch, in another order: the copies are ordered by barriers.
    for (int i = 19; i >= 0; --i)
      batch.download(slices[static_cast<std::size_t>(i)], std::as_writable_bytes(std::span(back[static_cast<std::size_t>(i)])));
    batch.run();
  }
  EXPECT_EQ(dev.lock_staging().ring.submissions() - before, 1u);
  EXPECT_EQ(back, values);
}

TEST(Transfer, ABatchLargerThanTheRingIsSplitAndStillExact) {
  vk::Device dev(instance(), device_index(), staged(4096));
  vk::Arena arena(dev, vk::MemoryUse::device, "staged");
  const std::vector<float> a = random_floats(900, 1), b = random_floats(900, 2);  // 3600 bytes each
  const vk::BufferSlice sa = arena.allocate(3600, "a"), sb = arena.allocate(3600, "b");
  std::vector<float> ga(900), gb(900);
  vk::TransferBatch batch(dev);
  batch.upload(sa, std::as_bytes(std::span(a)));
  batch.upload(sb, std::as_bytes(std::span(b)));
  batch.download(sa, std::as_writable_bytes(std::span(ga)));
  batch.download(sb, std::as_writable_bytes(std::span(gb)));
  batch.run();
  EXPECT_EQ(ga, a);
  EXPECT_EQ(gb, b);
}

TEST(Transfer, MappedDevicesCopyThroughTheMapping) {
  if (!device().memory().mapped()) GTEST_SKIP() << "the test device is staged (VKPACK_MEMORY=staged)";
  vk::DeviceOptions o = device_options();
  o.memory = vk::MemoryMode::mapped;
  vk::Device dev(instance(), device_index(), o);
  vk::Arena arena(dev, vk::MemoryUse::device, "mapped");
  const vk::BufferSlice slice = arena.allocate(40, "x");
  ASSERT_NE(slice.host, nullptr);
  const std::vector<float> values = random_floats(10, 3);
  vk::upload(dev, slice, std::as_bytes(std::span(values)));
  EXPECT_EQ(std::memcmp(slice.host, values.data(), 40), 0);
}

TEST(Transfer, OversizedCopiesAreRejectedNamingTheSizes) {
  vk::Device dev(instance(), device_index(), staged());
  vk::Arena arena(dev, vk::MemoryUse::device, "staged");
  const vk::BufferSlice slice = arena.allocate(16, "x");
  std::vector<float> big(5);
  EXPECT_THROW(vk::upload(dev, slice, std::as_bytes(std::span(big))), Error);
  EXPECT_THROW(vk::download(dev, slice, std::as_writable_bytes(std::span(big))), Error);
}

TEST(Transfer, MemoryModeNamesParseAndBadOnesAreRejected) {
  EXPECT_EQ(vk::parse_memory_mode("staged", "x"), vk::MemoryMode::staged);
  EXPECT_EQ(vk::parse_memory_mode("mapped", "x"), vk::MemoryMode::mapped);
  EXPECT_EQ(vk::parse_memory_mode("auto", "x"), vk::MemoryMode::automatic);
  try {
    vk::parse_memory_mode("stage", "--memory");
    FAIL() << "accepted 'stage'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--memory is 'stage'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
