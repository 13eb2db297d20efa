// What every Vulkan test shares: one instance with validation on and one device, and a
// fixture with an arena and upload/download helpers.
//
// Any validation message fails the test that was running when it was reported. The
// device is VKPACK_TEST_DEVICE (an index of `vkpack devices`; default 0), read here.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <vector>

#include "engine/vk/device.h"
#include "engine/vk/instance.h"
#include "engine/vk/memory.h"
#include "engine/vk/recording.h"
#include "engine/vk/transfer.h"

namespace vkp::test {

vk::Instance& instance();
vk::Device& device();
// The same physical device opened without storageBuffer16BitAccess: float16 storage
// takes the kernels' packed builds there, as on a device that lacks the feature.
vk::Device& packed_f16_device();
// The same physical device opened without VK_NV_cooperative_matrix, where device() has
// matrix units (else device() itself): kernels that would take them for float16
// operands run their float32-exact ones there.
vk::Device& device_without_matrix_units();
// Options for a test's own Device (same pipeline cache directory as device()).
vk::DeviceOptions device_options();
int device_index();

class VkTest : public ::testing::Test {
 protected:
  vk::Device& device() { return device_ ? *device_ : test::device(); }
  // Runs the fixture on `other` (before its first arena use), e.g. packed_f16_device().
  void use_device(vk::Device& other) { device_ = &other; }
  vk::Arena& arena();
  // A slice holding `values` (at least 4 bytes, so that empty inputs bind).
  vk::BufferSlice upload(std::span<const float> values);
  // A slice of `count` floats filled with a NaN pattern: kernels must overwrite it.
  vk::BufferSlice scratch(std::size_t count);
  std::vector<float> download(const vk::BufferSlice& slice, std::size_t count);
  // `values` (already float16 numbers) stored as float16 (BufferSlice::f16) when `half`,
  // else as float32; and `count` values read back from a slice of either width.
  vk::BufferSlice put(const std::vector<float>& values, bool half);
  std::vector<float> get(const vk::BufferSlice& slice, std::size_t count);

 private:
  vk::Device* device_ = nullptr;
  std::unique_ptr<vk::Arena> arena_;
};

// Each value rounded to the nearest float16.
std::vector<float> rounded_to_half(std::vector<float> values);

// Random floats in [low, high), reproducible from `seed`.
std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float low = -1.0f, float high = 1.0f);

}  // namespace vkp::test
