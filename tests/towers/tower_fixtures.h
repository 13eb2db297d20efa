// What the towers tests share: VkDevices for several towers on the test's physical
// device, and batches of a 3-class problem on 5 features.
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"
#include "engine/vk/device.h"

namespace vkp::test {

// Devices 0 .. count-1, each its own VkDevice, opened on first use and kept until
// close_tower_devices() (a suite's TearDownTestSuite: before the instance closes).
std::vector<vk::Device*> tower_devices(int count);
void close_tower_devices();

// `count` batches {x f32 [rows, features], label i32 [rows]}: feature `label` is 1.5
// plus normal noise, the others noise; reproducible from `seed`.
std::vector<std::vector<Array>> three_class_batches(int count, std::int64_t rows, std::uint64_t seed,
                                                    std::int64_t features = 5);

// |got - want| / |want| in the 2-norm over the elements (f32 arrays of one shape).
double relative_difference(const Array& got, const Array& want);

// Rows [begin, end) of each array of a batch.
std::vector<Array> rows(const std::vector<Array>& batch, std::int64_t begin, std::int64_t end);

}  // namespace vkp::test
