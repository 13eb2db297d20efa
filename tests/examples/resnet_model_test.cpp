// examples/resnet's model keeps what its help promises: `--depth D` is D weight layers
// (6n + 2: conv0, two convolutions in each of n units of three stages, the linear layer),
// the second and third stages halve the resolution and double the filters, CIFAR-10 images
// go through as Fashion-MNIST ones do; and --data finds CIFAR-10's binary files where a
// user points, itself or its cifar-10-batches-bin folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "resnet_model.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace graph;

struct Built {
  int weight_layers = 0;
  std::vector<std::int64_t> before_pooling, logits;
};

// The training tower of the model for `images` with n units a stage, at batch 3.
Built build(const examples::ImageSet& images, int n) {
  Graph g(1);
  examples::PreactResNet model(images, n, 0.1f);
  std::vector<Tensor> in;
  for (const train::InputSpec& s : model.inputs()) in.push_back(placeholder(g, s.name, s.type));
  {
    TowerContext training(g, "", 0, true);
    model.build_graph(in);
  }
  Built b;
  for (const Tensor& v : g.trainable_variables())
    if (std::regex_match(std::get<VariableAttrs>(v.node().attrs).var_name, std::regex(".*/W"))) ++b.weight_layers;
  b.before_pooling = g.find("bnlast_output").dims();
  b.logits = g.find("logits").dims();
  return b;
}

TEST(ResNetExample, DepthCountsTheWeightLayersAndStagesHalveTheResolution) {
  for (int n : {1, 2, 3}) {
    const Built fashion = build(examples::find_image_set({}), n);
    EXPECT_EQ(fashion.weight_layers, 6 * n + 2) << "n = " << n;
    EXPECT_EQ(fashion.before_pooling, (std::vector<std::int64_t>{kUnknown, 7, 7, 64}));
    EXPECT_EQ(fashion.logits, (std::vector<std::int64_t>{kUnknown, 10}));
  }
  examples::ImageSet cifar;
  cifar.kind = examples::ImageSet::Kind::cifar10;
  cifar.height = cifar.width = 32;
  cifar.channels = 3;
  const Built c = build(cifar, 2);
  EXPECT_EQ(c.weight_layers, 14);
  EXPECT_EQ(c.before_pooling, (std::vector<std::int64_t>{kUnknown, 8, 8, 64}));
}

TEST(ResNetExample, DataFindsCifarTenWhereTheUserPoints) {
  const std::string dir = temp_dir("resnet-data");
  EXPECT_EQ(examples::find_image_set({}).kind, examples::ImageSet::Kind::fashion_mnist);
  EXPECT_EQ(examples::find_image_set(dir).kind, examples::ImageSet::Kind::fashion_mnist);
  std::filesystem::create_directories(dir + "/cifar-10-batches-bin");
  std::ofstream(dir + "/cifar-10-batches-bin/data_batch_1.bin").put('\0');
  for (const std::string& where : {dir, dir + "/cifar-10-batches-bin"}) {
    const examples::ImageSet set = examples::find_image_set(where);
    EXPECT_EQ(set.kind, examples::ImageSet::Kind::cifar10) << where;
    EXPECT_EQ(set.height * set.width * set.channels, 32 * 32 * 3);
    EXPECT_EQ(set.train_size(), 50000);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
