// The discrete-GPU memory path (MemoryMode::staged): training through staging copies
// is bit for bit training through mappings, and moving many variables costs one
// submission.
#include <gtest/gtest.h>

#include <cstring>

#include "test_models.h"
#include "vk_test_env.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "engine/vk/transfer.h"

namespace vkp::test {
namespace {

using namespace graph;

vk::DeviceOptions with_memory(vk::MemoryMode mode) {
  vk::DeviceOptions o = device_options();
  o.memory = mode;
  return o;
}

std::uint64_t staging_submissions(vk::Device& dev) { return dev.lock_staging().ring.submissions(); }

std::vector<std::string> names_of(Graph& g) {
  std::vector<std::string> names;
  for (const Tensor& v : g.variables()) names.push_back(std::get<VariableAttrs>(v.node().attrs).var_name);
  return names;
}

// Ten Adam steps of the convnet (batch norm, moving averages, slots) on a device.
std::vector<Array> train(vk::Device& dev) {
  Graph g(11);
  const Model m = convnet(g, 12);
  const std::vector<Tensor> step = adam(g, 1e-2f).minimize(m.loss);
  Session session(g, dev);
  Program& program = session.program({{m.x, f32({12, 8, 8, 1})}, {m.labels, i32({12})}}, {m.loss}, step);
  std::vector<Array> outputs;
  for (std::uint64_t i = 0; i < 10; ++i) {
    auto [x, labels] = image_batch(12, i);
    const std::vector<Array> feeds = {std::move(x), std::move(labels)};
    session.run_program(program, feeds, outputs);
  }
  std::vector<Array> values = session.variable_values(names_of(g));
  values.push_back(outputs[0]);
  return values;
}

TEST(StagedMemory, TrainingIsBitwiseTheMappedRun) {
  vk::Device staged(instance(), device_index(), with_memory(vk::MemoryMode::staged));
  ASSERT_FALSE(staged.memory().mapped());
  const std::vector<Array> got = train(staged);
  // The reference: mapped memory where the device has it, else the same staged path
  // on a second device (then this only checks reproducibility).
  vk::Device other(instance(), device_index(),
                   with_memory(device().memory().mapped() ? vk::MemoryMode::mapped : vk::MemoryMode::staged));
  const std::vector<Array> want = train(other);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), want[i].nbytes());
    EXPECT_EQ(std::memcmp(got[i].bytes().data(), want[i].bytes().data(), got[i].nbytes()), 0) << "value " << i;
  }
  EXPECT_GT(got.back().data<float>()[0], 0.0f);  // a loss, not an untouched buffer
}

TEST(StagedMemory, ManyVariablesMoveInOneSubmission) {
  vk::Device dev(instance(), device_index(), with_memory(vk::MemoryMode::staged));
  Graph g(3);
  const Model m = mlp(g, 8);
  const std::vector<Tensor> step = momentum(g, 0.1f, 0.9f).minimize(m.loss);
  Session session(g, dev);
  const std::vector<std::string> names = names_of(g);
  ASSERT_GE(names.size(), 8u);  // weights, biases and their momentum slots

  std::uint64_t before = staging_submissions(dev);
  session.program({{m.x, f32({8, 16})}, {m.labels, i32({8})}}, {m.loss}, step);
  EXPECT_EQ(staging_submissions(dev) - before, 1u) << "compile: constants and initial values of every variable";

  before = staging_submissions(dev);
  std::vector<Array> values = session.variable_values(names);
  EXPECT_EQ(staging_submissions(dev) - before, 1u);

  for (Array& v : values)
    for (std::int64_t i = 0; i < v.numel(); ++i) v.data<float>()[i] = static_cast<float>(i % 7) - 2.5f;
  before = staging_submissions(dev);
  session.set_variables(names, values);
  EXPECT_EQ(staging_submissions(dev) - before, 1u);
  const std::vector<Array> back = session.variable_values(names);
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(std::memcmp(back[i].bytes().data(), values[i].bytes().data(), values[i].nbytes()), 0) << names[i];
}

}  // namespace
}  // namespace vkp::test
