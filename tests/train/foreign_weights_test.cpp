// Weights from other frameworks: NumPy (write_torch_weights.py, run in Debian's Python)
// writes an MLP's and a convolution's weights under PyTorch's names and layouts, and the
// outputs it computes from them in float64; vkpack restores them through a WeightMap
// (ignore, rename, layouts) and must compute the same outputs. A map that does not fit
// names every problem in one error; ChainInit combines sources.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <filesystem>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "core/npz.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"
#include "train/foreign_weights.h"

namespace vkp::test {
namespace {

using namespace graph;

class ForeignWeights : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir("foreign-weights");
    const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_WRITE_TORCH_WEIGHTS + " " + dir_;
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
    io_ = read_npz(dir_ + "/io.npz");
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string dir_;
  static std::map<std::string, Array> io_;
};
std::string ForeignWeights::dir_;
std::map<std::string, Array> ForeignWeights::io_;

Tensor mlp(Tensor x) {
  const Tensor h = FullyConnected("fc0", x, 8, {.activation = [](Tensor t) { return relu(t); }});
  return FullyConnected("fc1", h, 3);
}

train::WeightMap torch_mlp_map() {
  train::WeightMap map;
  map.ignore = {R"(.*num_batches_tracked)"};
  map.strip_prefix = "net.";
  map.rename = {{R"(^0\.)", "fc0/"}, {R"(^2\.)", "fc1/"}, {R"(weight$)", "W"}, {R"(bias$)", "b"}};
  map.layouts = {{R"(fc\d/W)", train::Layout::torch_linear}};
  return map;
}

void expect_close(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape().dims(), want.shape().dims()) << what;
  for (std::size_t i = 0; i < got.data<float>().size(); ++i) {
    const float w = want.data<float>()[i];
    EXPECT_NEAR(got.data<float>()[i], w, 1e-5f * (1 + std::abs(w))) << what << " [" << i << "]";
  }
}

TEST_F(ForeignWeights, ATorchMlpFromNpzComputesWhatNumpyComputes) {
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({kUnknown, 6}));
  const Tensor y = mlp(x);
  Session s(g, device());
  train::WeightsRestore(dir_ + "/torch_mlp.npz", torch_mlp_map()).init(s);
  expect_close(s.run({{x, io_.at("x")}}, {y})[0], io_.at("mlp"), "mlp");
}

TEST_F(ForeignWeights, ATorchConvolutionFromSafetensorsComputesWhatNumpyComputes) {
  Graph g(1);
  const Tensor image = placeholder(g, "image", f32({kUnknown, 5, 5, 2}));
  const Tensor y = Conv2D("conv", image, 4, {3, 3});
  Session s(g, device());
  train::WeightMap map;
  map.rename = {{R"(^conv\.weight$)", "conv/W"}, {R"(^conv\.bias$)", "conv/b"}};
  map.layouts = {{"conv/W", train::Layout::torch_conv}};
  train::WeightsRestore(dir_ + "/torch_conv.safetensors", map).init(s);
  expect_close(s.run({{image, io_.at("image")}}, {y})[0], io_.at("conv"), "conv");
}

TEST_F(ForeignWeights, AMapThatDoesNotFitNamesEveryProblemAtOnce) {
  Graph g(1);
  mlp(placeholder(g, "x", f32({kUnknown, 6})));
  Session s(g, device());
  train::WeightMap map = torch_mlp_map();
  map.rename.erase(map.rename.begin() + 1);  // net.2.* stays "2.W", "2.b": unexpected; fc1 missing
  map.layouts.clear();                        // fc0/W stays [8, 6]: mis-shaped
  try {
    train::WeightsRestore(dir_ + "/torch_mlp.npz", map).init(s);
    FAIL() << "restored through a map that does not fit";
  } catch (const Error& e) {
    const std::string m = e.what();
    for (const char* part : {"5 problem(s)", "unexpected: 2.W (from 'net.2.weight')", "unexpected: 2.b", "missing: fc1/W",
                             "missing: fc1/b", "mis-shaped: fc0/W is f32[6, 8]"})
      EXPECT_NE(m.find(part), std::string::npos) << "'" << part << "' not in: " << m;
  }
  // Nothing was restored: fc0/b keeps its initial zeros.
  const Array bias = s.variable("fc0/b");
  for (float v : bias.data<float>()) EXPECT_EQ(v, 0.0f);
}

TEST_F(ForeignWeights, ChainInitTakesABackboneFromOneSourceAndAHeadFromAnother) {
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({kUnknown, 6}));
  const Tensor y = mlp(x);
  Session s(g, device());
  train::WeightMap backbone = torch_mlp_map();
  backbone.ignore.push_back(R"(net\.2\..*)");
  backbone.allow_missing = true;
  const std::map<std::string, Array> all = train::map_weights(train::read_weights(dir_ + "/torch_mlp.npz"), torch_mlp_map());
  train::ChainInit({std::make_shared<train::WeightsRestore>(dir_ + "/torch_mlp.npz", backbone),
                    std::make_shared<train::DictRestore>(std::map<std::string, Array>{{"fc1/W", all.at("fc1/W")},
                                                                                      {"fc1/b", all.at("fc1/b")}})})
      .init(s);
  expect_close(s.run({{x, io_.at("x")}}, {y})[0], io_.at("mlp"), "mlp from two sources");
}

}  // namespace
}  // namespace vkp::test
