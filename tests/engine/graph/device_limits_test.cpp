// Training within real devices' limits: grids fold when a dimension's workgroup count
// is small, every limits profile trains the same bits, and a tensor beyond the binding
// range is an error that names it.
#include <gtest/gtest.h>

#include <cstring>

#include "test_models.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "engine/vk/limits_profile.h"

namespace vkp::test {
namespace {

using namespace graph;

// Five Adam steps of the convnet and five of the MLP; every variable and the losses.
std::vector<Array> train(vk::Device& dev) {
  std::vector<Array> out;
  for (int which = 0; which < 2; ++which) {
    Graph g(21);
    const bool conv = which == 0;
    const Model m = conv ? convnet(g, 20) : mlp(g, 20);
    const std::vector<Tensor> step = adam(g, 1e-2f).minimize(m.loss);
    Session session(g, dev);
    const TensorType x_type = conv ? f32({20, 8, 8, 1}) : f32({20, 16});
    Program& program = session.program({{m.x, x_type}, {m.labels, i32({20})}}, {m.loss}, step);
    std::vector<Array> outputs;
    for (std::uint64_t i = 0; i < 5; ++i) {
      auto [x, labels] = conv ? image_batch(20, i) : mlp_batch(20, i);
      const std::vector<Array> feeds = {std::move(x), std::move(labels)};
      session.run_program(program, feeds, outputs);
      out.push_back(outputs[0]);
    }
    for (const Tensor& v : g.variables())
      out.push_back(session.variable(std::get<VariableAttrs>(v.node().attrs).var_name));
  }
  return out;
}

void expect_bitwise_equal(const std::vector<Array>& got, const std::vector<Array>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), want[i].nbytes()) << what << ", value " << i;
    EXPECT_EQ(std::memcmp(got[i].bytes().data(), want[i].bytes().data(), got[i].nbytes()), 0)
        << what << ", value " << i;
  }
}

const std::vector<Array>& reference_run() {
  static const std::vector<Array> values = [] {
    vk::DeviceOptions o = device_options();
    o.limits_profile = "none";
    vk::Device dev(instance(), device_index(), o);
    return train(dev);
  }();
  return values;
}

// Every kernel's grid folds (or is split into dispatches with a base) when X and Y allow
// only a few workgroups, as it must on a device whose 65535 a large tensor exceeds.
TEST(DeviceLimits, GridsFoldWhenTheirDimensionsAreSmall) {
  vk::DeviceOptions o = device_options();
  o.custom_limits = instance().device(device_index()).limits;
  o.custom_limits->max_workgroup_count[0] = 3;
  o.custom_limits->max_workgroup_count[1] = 2;
  vk::Device dev(instance(), device_index(), o);
  ASSERT_EQ(dev.limits().max_workgroup_count[0], 3u);
  expect_bitwise_equal(train(dev), reference_run(), "X count 3, Y count 2");
}

// Which limits each profile tightens on this device, and that training is unchanged.
class EveryProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryProfile, TrainsTheSameBitsWithinItsLimits) {
  const vk::LimitsProfile& profile = vk::limits_profile(GetParam());
  vk::DeviceOptions o = device_options();
  o.limits_profile = profile.name;
  vk::Device dev(instance(), device_index(), o);
  const vk::DeviceLimits& driver = instance().device(device_index()).limits;
  const vk::DeviceLimits& l = dev.limits();
  EXPECT_EQ(dev.limits_profile(), profile.name);
  EXPECT_EQ(l.max_workgroup_invocations, std::min(driver.max_workgroup_invocations, profile.limits.max_workgroup_invocations));
  EXPECT_EQ(l.max_storage_buffer_range, std::min(driver.max_storage_buffer_range, profile.limits.max_storage_buffer_range));
  EXPECT_EQ(l.max_push_constants_bytes, std::min(driver.max_push_constants_bytes, profile.limits.max_push_constants_bytes));
  EXPECT_EQ(l.min_storage_buffer_offset_alignment,
            std::max(driver.min_storage_buffer_offset_alignment, profile.limits.min_storage_buffer_offset_alignment));
  EXPECT_EQ(dev.features().coherent_readback, profile.coherent_readback);
  expect_bitwise_equal(train(dev), reference_run(), profile.name);
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const vk::LimitsProfile& p : vk::limits_profiles()) names.push_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Profiles, EveryProfile, ::testing::ValuesIn(profile_names()),
                         [](const auto& p) {
                           std::string name = p.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(DeviceLimits, SmallestIsNoLargerThanAnyProfile) {
  const vk::LimitsProfile& smallest = vk::limits_profile("smallest");
  for (const vk::LimitsProfile& p : vk::limits_profiles()) {
    EXPECT_LE(smallest.limits.max_workgroup_invocations, p.limits.max_workgroup_invocations) << p.name;
    EXPECT_LE(smallest.limits.max_storage_buffer_range, p.limits.max_storage_buffer_range) << p.name;
    EXPECT_LE(smallest.limits.max_shared_memory_bytes, p.limits.max_shared_memory_bytes) << p.name;
    EXPECT_LE(smallest.limits.max_storage_buffers_per_stage, p.limits.max_storage_buffers_per_stage) << p.name;
    EXPECT_LE(smallest.limits.max_workgroup_size[2], p.limits.max_workgroup_size[2]) << p.name;
    EXPECT_GE(smallest.limits.min_storage_buffer_offset_alignment, p.limits.min_storage_buffer_offset_alignment)
        << p.name;
    EXPECT_FALSE(p.source.empty()) << p.name;
  }
  EXPECT_FALSE(smallest.coherent_readback);
}

TEST(DeviceLimits, AnUnknownProfileIsAnErrorListingTheKnownOnes) {
  vk::DeviceOptions o = device_options();
  o.limits_profile = "geforce";
  try {
    vk::Device dev(instance(), device_index(), o);
    FAIL() << "accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'geforce'"), std::string::npos) << what;
    EXPECT_NE(what.find("arm-mali"), std::string::npos) << what;
  }
}

// 200 MB: more than lavapipe's (and the Adreno profile's) 128 MiB binding range.
// The range is tightened (as a smaller GPU's would be) so that the variable stays small
// on any device: a driver's own range may be as large as its largest allocation.
TEST(DeviceLimits, AVariableBeyondTheBindingRangeIsAnErrorNamingIt) {
  vk::DeviceOptions options = device_options();
  options.custom_limits = instance().device(device_index()).limits;
  options.custom_limits->max_storage_buffer_range = 1 << 20;
  vk::Device dev(instance(), device_index(), options);
  Graph g(1);
  const Tensor big = get_variable(g, "embedding/W", {300'000}, zeros());  // 1.2 MB
  const Tensor y = reduce_sum(big * 2.0f);
  Session session(g, dev);
  const std::uint64_t before = dev.memory().allocated_bytes();
  try {
    session.run({}, {y});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(what.find("variable 'embedding/W'"), std::string::npos) << what;
    EXPECT_NE(what.find("maxStorageBufferRange"), std::string::npos) << what;
  }
  EXPECT_EQ(dev.memory().allocated_bytes(), before) << "nothing is allocated for a program that cannot run";
}

}  // namespace
}  // namespace vkp::test
