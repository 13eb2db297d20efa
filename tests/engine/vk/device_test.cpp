#include "engine/vk/device.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "scoped_env.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/transfer.h"
#include "shaders/embedded.h"

namespace vkp::test {
namespace {

namespace fs = std::filesystem;

std::string read_file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(VkTest, LimitsComeFromThePhysicalDevice) {
  const vk::PhysicalDeviceInfo& info = instance().device(device_index());
  EXPECT_EQ(device().limits().max_storage_buffer_range, info.limits.max_storage_buffer_range);
  EXPECT_EQ(device().kind(), info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? vk::DeviceKind::cpu : vk::DeviceKind::gpu);
  if (info.driver_name == "llvmpipe") {
    EXPECT_EQ(device().limits().max_storage_buffer_range, 128u << 20);
  }
}

// Two VkDevices on one physical device, as towers are tested on one GPU or lavapipe.
TEST_F(VkTest, SeveralDevicesOnOnePhysicalDeviceWorkIndependently) {
  vk::Device second(instance(), device_index(), device_options());
  vk::Arena other(second, vk::MemoryUse::device, "second device");
  const vk::BufferSlice here = scratch(1000), there = other.allocate(4000, "there");
  vk::Recording first_work(device()), second_work(second);
  vk::fill(first_work, here, 1000, 1.0f);
  vk::fill(second_work, there, 1000, 2.0f);
  first_work.finish();
  second_work.finish();
  second_work.submit();
  first_work.submit();
  first_work.wait();
  second_work.wait();
  std::vector<float> got(1000);
  vk::download(second, there, std::as_writable_bytes(std::span(got)));
  EXPECT_EQ(got, std::vector<float>(1000, 2.0f));
  EXPECT_EQ(download(here, 1000), std::vector<float>(1000, 1.0f));
}

TEST(Device, ASimulatedLossFailsLaterSubmissionsNamingTheDevice) {
  vk::Device dev(instance(), device_index(), device_options());
  vk::Arena arena(dev, vk::MemoryUse::device, "loss");
  const vk::BufferSlice slice = arena.allocate(400, "x");
  vk::Recording work(dev);
  vk::fill(work, slice, 100, 1.0f);
  work.finish();
  dev.queues().simulate_loss(1);
  work.run();  // the one submission still allowed
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      work.run();
      FAIL() << "a lost device took work";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::device_lost);
      EXPECT_NE(std::string(e.what()).find(dev.label()), std::string::npos) << e.what();
    }
  }
}

TEST_F(VkTest, KernelsAreBuiltOncePerSpecialization) {
  const vk::Kernel& a = device().kernel(shaders::fill, {{0, 64}, {1, 4}});
  const vk::Kernel& b = device().kernel(shaders::fill, {{1, 4}, {0, 64}});
  const vk::Kernel& c = device().kernel(shaders::fill, {{0, 32}, {1, 4}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  EXPECT_EQ(a.local_size()[0], 64u);
  EXPECT_EQ(c.local_size()[0], 32u);
  EXPECT_EQ(a.name(), "fill{0=64,1=4}");
}

TEST_F(VkTest, WorkgroupLargerThanTheDeviceAllowsIsAnError) {
  const std::uint32_t too_many = device().limits().max_workgroup_size[0] + 1;
  try {
    device().kernel(shaders::fill, {{0, too_many}, {1, 4}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("kernel fill"), std::string::npos) << e.what();
  }
}

TEST(PipelineCache, IsWrittenOnCloseAndReadBack) {
  const fs::path dir = fs::temp_directory_path() / ("vkpack-cache-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string path;
  {
    vk::Device dev(instance(), device_index(), {.pipeline_cache_dir = dir.string()});
    dev.kernel(shaders::unary, {{0, 64}, {1, 4}, {2, 3}});
    path = dev.kernels().pipelines().path();
  }
  ASSERT_TRUE(fs::exists(path)) << path;
  const std::string file = read_file_bytes(path);
  ASSERT_GE(file.size(), 24u + 16u);
  EXPECT_EQ(file.substr(0, 8), "VKPKPIPE");
  const auto* header = reinterpret_cast<const std::uint32_t*>(file.data() + 24);  // the driver's own header
  EXPECT_EQ(header[1], 1u);  // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
  EXPECT_EQ(header[2], instance().device(device_index()).vendor_id);
  {
    vk::Device again(instance(), device_index(), {.pipeline_cache_dir = dir.string()});
    again.kernel(shaders::unary, {{0, 64}, {1, 4}, {2, 3}});
  }
  fs::remove_all(dir);
}

// A device opened without a cache directory keeps its cache where docs/guide.md says:
// $VKPACK_CACHE_DIR, else $XDG_CACHE_HOME/vkpack, else $HOME/.cache/vkpack.
TEST(PipelineCache, TheDefaultDirectoryFollowsTheEnvironment) {
  const fs::path dir = fs::temp_directory_path() / ("vkpack-cache-env-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    ScopedEnv cache("VKPACK_CACHE_DIR", dir.c_str());
    std::string path;
    {
      vk::Device dev(instance(), device_index(), vk::DeviceOptions{});  // no pipeline_cache_dir
      dev.kernel(shaders::unary, {{0, 64}, {1, 4}, {2, 3}});
      path = dev.kernels().pipelines().path();
    }
    EXPECT_EQ(fs::path(path).parent_path(), dir);
    EXPECT_TRUE(fs::exists(path)) << path;
  }
  fs::remove_all(dir);
  ScopedEnv no_cache("VKPACK_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/somewhere/cache");
    EXPECT_EQ(vk::default_cache_dir(), "/somewhere/cache/vkpack");
  }
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(vk::default_cache_dir(), "/home/someone/.cache/vkpack");
  }
  ScopedEnv no_home("HOME", nullptr);
  EXPECT_EQ(vk::default_cache_dir(), "");
}

// Runs a unary kernel (square) on a device with a cache in `dir`; its results.
std::vector<float> square_with_cache(const fs::path& dir, const std::vector<float>& x) {
  vk::Device dev(instance(), device_index(), {.pipeline_cache_dir = dir.string()});
  vk::Arena arena(dev, vk::MemoryUse::device, "cache test");
  const vk::BufferSlice dx = arena.allocate(x.size() * 4, "x"), dy = arena.allocate(x.size() * 4, "y");
  vk::upload(dev, dx, std::as_bytes(std::span(x)));
  vk::Recording recording(dev);
  vk::unary(recording, vk::UnaryOp::square, x.size(), dx, dy);
  recording.finish();
  recording.run();
  std::vector<float> y(x.size());
  vk::download(dev, dy, std::as_writable_bytes(std::span(y)));
  return y;
}

// A damaged cache file is ignored with a warning; the driver builds the pipelines again,
// they compute what they computed before, and the file is written again, valid.
TEST(PipelineCache, DamagedFileIsIgnoredRebuiltAndGivesTheSameResults) {
  const fs::path dir = fs::temp_directory_path() / ("vkpack-cache-damaged-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::vector<float> x = random_floats(1031, 9);
  const std::vector<float> before = square_with_cache(dir, x);
  std::string path;
  { path = vk::Device(instance(), device_index(), {.pipeline_cache_dir = dir.string()}).kernels().pipelines().path(); }
  ASSERT_TRUE(fs::exists(path));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "not a pipeline cache at all, but long enough......";

  std::vector<std::string> warnings;
  const int sink = logger().add_sink([&](LogLevel level, std::string_view line) {
    if (level == LogLevel::warn) warnings.emplace_back(line);
  });
  const std::vector<float> after = square_with_cache(dir, x);
  logger().remove_sink(sink);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ignoring pipeline cache " + path + ": not a vkpack pipeline cache"), std::string::npos)
      << warnings[0];
  EXPECT_EQ(after, before);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(after[i], x[i] * x[i]) << i;  // one rounding: exact in f32

  std::string file = read_file_bytes(path);
  ASSERT_GE(file.size(), 24u + 16u) << "the rebuilt cache was not written";
  const auto* header = reinterpret_cast<const std::uint32_t*>(file.data() + 24);
  EXPECT_EQ(header[1], 1u) << "the rebuilt cache was not written";  // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
  EXPECT_EQ(header[2], instance().device(device_index()).vendor_id);

  // One byte of the driver's data changed, past its header: the checksum refuses the
  // file before the driver sees it (a driver need not check what it wrote itself).
  file[file.size() / 2 + 20] ^= 0x40;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << file;
  warnings.clear();
  const int again = logger().add_sink([&](LogLevel level, std::string_view line) {
    if (level == LogLevel::warn) warnings.emplace_back(line);
  });
  EXPECT_EQ(square_with_cache(dir, x), before);
  logger().remove_sink(again);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("(damaged)"), std::string::npos) << warnings[0];
  fs::remove_all(dir);
}

TEST_F(VkTest, ArenaCarvesAlignedRangesFromFewBlocks) {
  vk::Arena a(device(), vk::MemoryUse::device, "carving", 1 << 20);
  const std::uint64_t before = device().memory().allocated_bytes();
  const vk::BufferSlice x = a.allocate(100, "x"), y = a.allocate(1000, "y"), z = a.allocate(3 << 20, "big");
  EXPECT_EQ(x.buffer, y.buffer);
  EXPECT_EQ(y.offset % vk::Arena::kAlignment, 0u);
  EXPECT_GE(y.offset, x.offset + 100);
  EXPECT_NE(z.buffer, x.buffer) << "a request larger than a block gets its own";
  EXPECT_EQ(a.block_count(), 2u);
  EXPECT_EQ(a.allocated_bytes(), 100u + 1000u + (3u << 20));
  EXPECT_EQ(device().memory().allocated_bytes(), before + a.reserved_bytes());
  EXPECT_GE(device().memory().peak_bytes(), device().memory().allocated_bytes());
}

TEST_F(VkTest, OutOfDeviceMemoryNamesTheRequest) {
  vk::Arena a(device(), vk::MemoryUse::device, "greedy arena");
  try {
    a.allocate(std::uint64_t{1} << 44, "weights of an enormous layer");
    FAIL() << "16 TiB were granted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::out_of_memory);
    const std::string message = e.what();
    EXPECT_NE(message.find("greedy arena"), std::string::npos) << message;
    EXPECT_NE(message.find("weights of an enormous layer"), std::string::npos) << message;
  }
}

// The range is tightened (as a smaller GPU's would be) so that the test binds little
// memory on any device: a driver's own range may be as large as its largest allocation.
TEST(Device, BindingBeyondMaxStorageBufferRangeIsAnError) {
  vk::DeviceOptions options = device_options();
  options.custom_limits = instance().device(device_index()).limits;
  const std::uint64_t range = 64 * 1024;
  options.custom_limits->max_storage_buffer_range = range;
  vk::Device dev(instance(), device_index(), options);
  vk::Arena big(dev, vk::MemoryUse::device, "too big", range + 4096);
  const vk::BufferSlice slice = big.allocate(range + 4, "oversized");
  vk::Recording recording(dev);
  try {
    vk::fill(recording, slice, (range + 4) / 4, 0.0f);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("maxStorageBufferRange"), std::string::npos) << e.what();
  }
}

// A kernel beyond a limit of the device (here tightened as a smaller GPU's would be) is
// an error naming the kernel and the limit when it is built, never a driver fault.
TEST(Device, KernelsBeyondTheLimitsAreErrorsNamingTheLimit) {
  struct Case {
    const char* limit;
    void (*tighten)(vk::DeviceLimits&);
  };
  const Case cases[] = {
      {"maxComputeSharedMemorySize", [](vk::DeviceLimits& l) { l.max_shared_memory_bytes = 4096; }},
      {"maxComputeWorkGroupInvocations", [](vk::DeviceLimits& l) { l.max_workgroup_invocations = 128; }},
      {"maxPerStageDescriptorStorageBuffers", [](vk::DeviceLimits& l) { l.max_storage_buffers_per_stage = 2; }},
  };
  for (const Case& c : cases) {
    vk::DeviceOptions o = device_options();
    o.custom_limits = instance().device(device_index()).limits;
    c.tighten(*o.custom_limits);
    vk::Device dev(instance(), device_index(), o);
    try {
      // gemm_tiled: 8 KiB of shared memory, 256 invocations, 3 buffers.
      dev.kernel(shaders::gemm_tiled, {{0, 256}});
      ADD_FAILURE() << c.limit << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::unsupported);
      EXPECT_NE(std::string(e.what()).find(c.limit), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("gemm_tiled"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace vkp::test
