#include "engine/vk/recording.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/launch.h"
#include "shaders/embedded.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

// Recorded once, replayed with new inputs each time: the command buffer is not rebuilt.
TEST_F(VkTest, RecordedOnceReplayedWithNewInputs) {
  const std::size_t n = 1031;
  const vk::BufferSlice x = scratch(n), y = scratch(n);
  vk::Recording recording(device(), {.name = "double"});
  vk::binary_scalar(recording, vk::BinaryOp::mul, n, x, {2.0f}, y);
  recording.finish();
  for (int step = 0; step < 100; ++step) {
    const std::vector<float> input = random_floats(n, static_cast<std::uint64_t>(step));
    vk::upload(device(), x, std::as_bytes(std::span(input)));
    recording.run();
    const std::vector<float> got = download(y, n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * input[i]) << "step " << step << " element " << i;
  }
  EXPECT_EQ(recording.times().dispatch_count(), 1u);
}

// Each kernel reads what the previous one wrote: the recorder must put barriers between
// them (synchronisation validation reports it if not).
TEST_F(VkTest, DependentKernelsSeeEachOthersWrites) {
  const std::size_t n = 4099;
  const vk::BufferSlice a = scratch(n), b = scratch(n);
  vk::Recording recording(device());
  vk::fill(recording, a, n, 0.0f);
  for (int i = 0; i < 10; ++i) {
    vk::binary_scalar(recording, vk::BinaryOp::add, n, a, {1.0f}, b);
    vk::binary_scalar(recording, vk::BinaryOp::mul, n, b, {1.0f}, a);
  }
  recording.finish();
  recording.run();
  recording.run();  // the second replay starts from the first's result: fill resets it
  EXPECT_EQ(download(a, n), std::vector<float>(n, 10.0f));
}

TEST_F(VkTest, MisalignedBindingIsAnErrorNamingTheLimit) {
  const std::uint64_t alignment = device().limits().min_storage_buffer_offset_alignment;
  if (alignment <= 4) GTEST_SKIP() << "every 4-byte offset is aligned on this device";
  const vk::BufferSlice s = scratch(64);
  vk::Recording recording(device());
  try {
    vk::fill(recording, s.sub(4, 60), 15, 1.0f);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("minStorageBufferOffsetAlignment"), std::string::npos) << e.what();
  }
}

// A kernel family with a texel build takes it on a CPU device for slices of whole
// float32 vec4s, its plain build otherwise or when the device is told not to; both
// compute the same.
TEST_F(VkTest, TexelBuildsAreChosenWhereTheSliceAllowsAndAgreeWithStorageBuilds) {
  const std::vector<vk::SpecConstant> spec = {
      {0, 64}, {1, 4}, {2, static_cast<std::uint32_t>(vk::UnaryOp::neg)}, {3, 0}};
  auto chosen = [&](vk::Device& dev, const vk::BufferSlice& x, const vk::BufferSlice& y) {
    const vk::BufferSlice bindings[] = {x, y};
    const std::string& name =
        vk::storage_kernel(dev, {shaders::unary, shaders::unary_texel, shaders::unary_f16, shaders::unary_texel_f16},
                           0b01, bindings, spec)
            .name();
    return name.substr(0, name.find('{'));  // the build, without the specialization
  };
  const bool texel = device().kind() == vk::DeviceKind::cpu && device().features().texel_buffers;
  const std::vector<float> x = random_floats(1001, 5);
  const vk::BufferSlice whole = upload(std::span(x).first(1000)), ragged = upload(x), y = scratch(1001);
  EXPECT_EQ(chosen(device(), whole, y), texel ? "unary_texel" : "unary");
  EXPECT_EQ(chosen(device(), ragged, y), "unary") << "1001 floats are not whole vec4s";
  vk::DeviceOptions options = device_options();
  options.texel_buffers = false;
  vk::Device storage_only(instance(), device_index(), options);
  EXPECT_FALSE(storage_only.features().texel_buffers);
  EXPECT_EQ(chosen(storage_only, whole, y), "unary");

  for (const std::size_t n : {std::size_t{1000}, std::size_t{1001}}) {
    vk::Recording recording(device());
    vk::unary(recording, vk::UnaryOp::neg, n, n == 1000 ? whole : ragged, y);
    recording.finish();
    recording.run();
    const std::vector<float> got = download(y, n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], -x[i]) << "n " << n << ", element " << i;
  }
}

// A float16 input is read through an R16G16B16A16_SFLOAT view: the texel build needs no
// 16-bit feature for it (only a float16 storage binding picks the _texel_f16 build), so
// a device without storageBuffer16BitAccess reads it too, and the values are the
// float16 numbers exactly.
TEST_F(VkTest, Float16InputsAreReadThroughHalfTexelViews) {
  if (device().kind() != vk::DeviceKind::cpu || !device().features().half_texels)
    GTEST_SKIP() << "texel builds are chosen on CPU devices with R16G16B16A16_SFLOAT texel buffers";
  const std::size_t n = 1000;  // 250 texels of 8 bytes
  std::vector<std::uint16_t> bits(n);
  std::vector<float> x(n);
  const std::vector<float> values = random_floats(n, 9);
  for (std::size_t i = 0; i < n; ++i) {
    bits[i] = to_half(values[i]).bits;
    x[i] = to_float(Half{bits[i]});
  }
  std::vector<float> words(n / 2);
  std::memcpy(words.data(), bits.data(), n * 2);
  const std::vector<vk::SpecConstant> spec = {
      {0, 64}, {1, 4}, {2, static_cast<std::uint32_t>(vk::UnaryOp::neg)}, {3, 0}};
  for (const bool storage16 : {true, false}) {
    vk::DeviceOptions options = device_options();
    options.f16_storage = storage16;
    vk::Device dev(instance(), device_index(), options);
    vk::Arena arena(dev, vk::MemoryUse::device, "half texels", 1 << 16);
    vk::BufferSlice x16 = arena.allocate(n * 2, "x"), y16 = arena.allocate(n * 2, "y16");
    const vk::BufferSlice y32 = arena.allocate(n * 4, "y32");
    x16.f16 = y16.f16 = true;
    vk::upload(dev, x16, std::as_bytes(std::span(words)));
    auto chosen = [&](const vk::BufferSlice& y) {
      const vk::BufferSlice bindings[] = {x16, y};
      const std::string& name =
          vk::storage_kernel(dev, {shaders::unary, shaders::unary_texel, shaders::unary_f16, shaders::unary_texel_f16},
                             0b01, bindings, spec)
              .name();
      return name.substr(0, name.find('{'));
    };
    EXPECT_EQ(chosen(y32), "unary_texel") << "storageBuffer16BitAccess " << storage16;
    // A float16 result is stored as float16_t where the device has 16-bit storage; where
    // it has not, the packed plain build takes both bindings.
    EXPECT_EQ(chosen(y16), dev.features().f16_storage ? "unary_texel_f16" : "unary_f16p");

    vk::Recording recording(dev);
    vk::unary(recording, vk::UnaryOp::neg, n, x16, y32);
    vk::unary(recording, vk::UnaryOp::neg, n, x16, y16);
    recording.finish();
    recording.run();
    std::vector<float> got(n);
    vk::download(dev, y32, std::as_writable_bytes(std::span(got)));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], -x[i]) << "element " << i;
    std::vector<std::uint16_t> got16(n);
    vk::download(dev, y16, std::as_writable_bytes(std::span(got16)));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got16[i], bits[i] ^ 0x8000u) << "element " << i << " (float16)";
  }
}

TEST_F(VkTest, TexelBindingOfAnUnfitSliceIsAnErrorNamingIt) {
  const vk::BufferSlice x = scratch(5), y = scratch(5);  // 20 bytes: not whole 16-byte texels
  const vk::Kernel& kernel = device().kernel(
      shaders::unary_texel, {{0, 64}, {1, 4}, {2, static_cast<std::uint32_t>(vk::UnaryOp::neg)}, {3, 0}});
  vk::Recording recording(device());
  try {
    recording.dispatch(kernel, {x, y}, vk::UnaryPush{5, 0.0f}, {1, 1, 1}, "neg");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("binding 0 (20 bytes at byte"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot be read as a texel buffer"), std::string::npos) << e.what();
  }
}

TEST_F(VkTest, CopyMovesBytesBetweenSlices) {
  const std::vector<float> values = random_floats(777, 1);
  const vk::BufferSlice src = upload(values), dst = scratch(800);
  vk::Recording recording(device());
  recording.copy(src, dst);
  recording.finish();
  recording.run();
  EXPECT_EQ(download(dst, 777), values);
}

TEST_F(VkTest, TimestampsGiveEachDispatchItsDeviceTime) {
  if (!device().limits().timestamps) GTEST_SKIP() << "no timestamps on this queue";
  const std::size_t n = 1 << 18;
  const vk::BufferSlice a = scratch(n), b = scratch(n);
  vk::Recording recording(device(), {.name = "timed", .timestamps = true});
  vk::fill(recording, a, n, 1.0f);
  vk::unary(recording, vk::UnaryOp::exp, n, a, b);
  recording.finish();
  recording.run();
  const std::vector<vk::KernelTime> times = recording.times().kernel_times();
  ASSERT_EQ(times.size(), 2u);
  EXPECT_EQ(times[0].label, "fill");
  EXPECT_EQ(times[1].label, "exp");
  EXPECT_GE(times[0].ns, 0.0);
  EXPECT_GT(recording.times().total_ns(), 0.0);
}

// Copies are timed too, and every command carries the node named when it was recorded;
// the spans follow one another from the replay's first timestamp and add up to it.
TEST_F(VkTest, TimestampsCoverCopiesAndNameTheirNodes) {
  if (!device().limits().timestamps) GTEST_SKIP() << "no timestamps on this queue";
  const std::size_t n = 1 << 16;
  const vk::BufferSlice a = scratch(n), b = scratch(n), c = scratch(n);
  vk::Recording recording(device(), {.name = "timed", .timestamps = true});
  recording.set_node("ones");
  vk::fill(recording, a, n, 1.0f);
  recording.set_node("moved");
  recording.copy(a, b, "move");
  recording.set_node("");
  vk::unary(recording, vk::UnaryOp::exp, n, b, c);
  recording.finish();
  recording.run();
  EXPECT_EQ(recording.times().dispatch_count(), 2u) << "dispatches only";
  const std::vector<vk::KernelTime> times = recording.times().kernel_times();
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[1].label, "move");
  EXPECT_TRUE(times[1].copy);
  EXPECT_FALSE(times[0].copy || times[2].copy);
  EXPECT_EQ(times[0].node, "ones");
  EXPECT_EQ(times[1].node, "moved");
  EXPECT_EQ(times[2].node, "");
  EXPECT_EQ(times[0].begin_ns, 0.0);
  double end = 0;
  for (const vk::KernelTime& t : times) {
    EXPECT_NEAR(t.begin_ns, end, 1e-6 * end + 1e-3) << t.label;
    end = t.begin_ns + t.ns;
  }
  EXPECT_NEAR(end, recording.times().total_ns(), 1e-6 * end + 1e-3);
  EXPECT_NEAR(download(c, 1)[0], std::exp(1.0f), 1e-5f) << "the copy ran between them";
}

// A recording longer than the timestamp pool runs whole and times its first commands
// (a profiler must not make a large program fail).
TEST_F(VkTest, CommandsBeyondTheTimestampPoolRunUntimed) {
  if (!device().limits().timestamps) GTEST_SKIP() << "no timestamps on this queue";
  const vk::BufferSlice a = scratch(4);
  vk::Recording recording(device(), {.name = "long", .timestamps = true});
  for (int i = 0; i < 4100; ++i) vk::fill(recording, a, 4, static_cast<float>(i));
  recording.finish();
  recording.run();
  EXPECT_EQ(recording.times().dispatch_count(), 4100u);
  EXPECT_EQ(recording.times().kernel_times().size(), 4095u);
  EXPECT_EQ(download(a, 4), std::vector<float>(4, 4099.0f)) << "the untimed ones ran too";
}

}  // namespace
}  // namespace vkp::test
