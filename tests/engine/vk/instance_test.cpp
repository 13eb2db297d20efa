#include "engine/vk/instance.h"

#include <gtest/gtest.h>

#include <mutex>

#include "core/error.h"
#include "engine/vk/device.h"
#include "engine/vk/internal/check.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

TEST(Instance, ListsDevicesWithTheirLimits) {
  const auto& devices = instance().devices();
  ASSERT_FALSE(devices.empty());
  for (const auto& d : devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.limits.max_storage_buffer_range, 1u << 27) << "Vulkan guarantees at least 2^27 bytes";
    EXPECT_GE(d.limits.max_workgroup_invocations, 128u);
    EXPECT_GE(d.limits.max_shared_memory_bytes, 16384u);
    EXPECT_GE(d.limits.subgroup_size, 1u);
    EXPECT_FALSE(d.heaps.empty());
  }
}

TEST(Instance, UnknownDeviceIndexListsTheDevices) {
  try {
    instance().device(99);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("0: " + instance().devices()[0].name), std::string::npos) << e.what();
  }
}

TEST(Instance, MissingLoaderSaysWhatToInstall) {
  vk::InstanceOptions options;
  options.loader_path = "/nonexistent/libvulkan.so.1";
  try {
    vk::Instance broken(options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::no_device);
    const std::string message = e.what();
    EXPECT_NE(message.find("no Vulkan loader found"), std::string::npos) << message;
    EXPECT_NE(message.find("mesa-vulkan-drivers"), std::string::npos) << message;
  }
}

// The validation layer is really on and its messages reach the callback: a buffer of
// size 0 breaks VUID-VkBufferCreateInfo-size-00912.
TEST(Instance, ValidationReportsMisuseToTheCallback) {
  std::mutex mutex;
  std::vector<std::string> messages;
  vk::InstanceOptions options;
  options.validation = true;
  options.on_message = [&](const vk::ValidationMessage& m) {
    std::lock_guard lock(mutex);
    messages.push_back(m.text);
  };
  vk::Instance checked(options);
  vk::Device dev(checked, device_index(), device_options());
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 0;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer buffer = VK_NULL_HANDLE;
  const VkResult result = dev.fn().vkCreateBuffer(dev.handle(), &info, nullptr, &buffer);
  if (result == VK_SUCCESS && buffer != VK_NULL_HANDLE) dev.fn().vkDestroyBuffer(dev.handle(), buffer, nullptr);
  std::lock_guard lock(mutex);
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("00912"), std::string::npos) << messages[0];
}

TEST(Check, NamesTheCallTheResultAndTheSource) {
  try {
    vk::check(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::out_of_memory);
    const std::string message = e.what();
    EXPECT_NE(message.find("vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos) << message;
    EXPECT_NE(message.find(" at tests/engine/vk/instance_test.cpp:"), std::string::npos) << message;
  }
  EXPECT_THROW(vk::check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit"), Error);
  EXPECT_EQ(vk::check(VK_TIMEOUT, "vkWaitSemaphores"), VK_TIMEOUT);
}

}  // namespace
}  // namespace vkp::test
