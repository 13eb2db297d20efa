// VKPACK_KERNEL_STATS: the driver's statistics of each kernel (registers, local memory),
// where it offers VK_KHR_pipeline_executable_properties; a kernel built with them still
// computes what it should.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/transfer.h"
#include "scoped_env.h"
#include "shaders/embedded.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

// Fills 1000 floats with 3 on `dev` and reads them back.
std::vector<float> filled(vk::Device& dev) {
  vk::Arena arena(dev, vk::MemoryUse::device, "statistics");
  const vk::BufferSlice slice = arena.allocate(4000, "x");
  vk::Recording work(dev);
  vk::fill(work, slice, 1000, 3.0f);
  work.finish();
  work.run();
  std::vector<float> got(1000);
  vk::download(dev, slice, std::as_writable_bytes(std::span(got)));
  return got;
}

TEST(KernelStatistics, NoneUnlessAskedFor) {
  ScopedEnv off("VKPACK_KERNEL_STATS", nullptr);
  vk::Device dev(instance(), device_index(), device_options());
  EXPECT_FALSE(dev.features().kernel_statistics);
  EXPECT_TRUE(dev.kernel(shaders::fill, {{0, 64}, {1, 4}}).statistics().empty());
}

TEST(KernelStatistics, AskedForTheDriverGivesThemWhereItOffersThem) {
  ScopedEnv on("VKPACK_KERNEL_STATS", "1");
  vk::Device dev(instance(), device_index(), device_options());
  EXPECT_EQ(dev.features().kernel_statistics, dev.info().pipeline_statistics);
  EXPECT_EQ(filled(dev), std::vector<float>(1000, 3.0f));
  const vk::Kernel& kernel = dev.kernel(shaders::fill, {{0, 64}, {1, 4}});
  if (!dev.features().kernel_statistics) {
    EXPECT_TRUE(kernel.statistics().empty());
    GTEST_SKIP() << dev.label() << " lacks VK_KHR_pipeline_executable_properties: kernels build without statistics";
  }
  ASSERT_FALSE(kernel.statistics().empty());
  for (const vk::KernelStatistic& s : kernel.statistics()) {
    EXPECT_FALSE(s.name.empty());
    EXPECT_FALSE(s.value.empty()) << s.name;
  }
}

TEST(KernelStatistics, AValueOtherThanZeroOrOneIsRefusedNamingTheVariable) {
  ScopedEnv bad("VKPACK_KERNEL_STATS", "yes");
  try {
    vk::Device dev(instance(), device_index(), device_options());
    FAIL() << "VKPACK_KERNEL_STATS=yes was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("VKPACK_KERNEL_STATS"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
