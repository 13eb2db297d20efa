// ONNX export checked by engines that are not vkpack's: each bundled classifier (the
// Fashion-MNIST MLP and convnet, examples/resnet's ResNet), trained a few steps (so that
// batch norm's moving statistics are not their initial values) and saved, is exported from its checkpoint; OpenCV's dnn module (python3-opencv) runs the
// file on 256 test images and must give vkpack's predictor's logits within 1e-4 and the
// same classes, after ONNX's own full check (check_onnx.py). An op with no mapping is
// refused by name.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <functional>

#include "models.h"
#include "resnet_model.h"
#include "train_fixtures.h"
#include "vk_test_env.h"
#include "callbacks/saver.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "train/onnx_export.h"
#include "train/predictor.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

using ModelFactory = std::function<std::shared_ptr<train::ModelDesc>()>;

ModelFactory fashion_mnist_model(examples::Architecture arch) {
  return [arch] { return std::make_shared<examples::FashionMnistModel>(arch, 1e-3f); };
}

// A checkpoint of the model after `steps` training steps, in a fresh directory.
std::string trained(const ModelFactory& make, const std::string& name, std::int64_t steps) {
  const std::string dir = temp_dir(name);
  train::TrainConfig config;
  config.model = make();
  config.data = std::make_shared<train::FeedInput>(examples::fashion_mnist_batches(true, 32, 3));
  config.steps_per_epoch = steps;
  config.max_epoch = 1;
  config.logger_dir = dir;
  config.extra_callbacks = std::vector<callbacks::CallbackPtr>{};
  config.monitors = std::vector<callbacks::MonitorPtr>{};
  config.callbacks = {std::make_shared<callbacks::ModelSaver>()};
  train::SimpleTrainer trainer(device(), 5);
  train::launch_train_with_config(std::move(config), trainer);
  return dir;
}

void write_floats(const std::string& path, const Array& a) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(a.bytes().data()), static_cast<std::streamsize>(a.nbytes()));
  ASSERT_TRUE(out.good()) << path;
}

// check_onnx.py runs `onnx` in OpenCV's dnn on the n inputs of `shape` in
// dir/images.f32 and compares with dir/logits.f32 within `tolerance`.
void expect_check_onnx_passes(const std::string& onnx, const std::string& dir, int n, const std::string& shape,
                              const std::string& tolerance) {
  const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_CHECK_ONNX + " " + onnx + " " + dir +
                              "/images.f32 " + dir + "/logits.f32 " + std::to_string(n) + " " + shape + " " + tolerance;
  std::fflush(stdout);
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), 0) << command;
}

void expect_opencv_agrees(const ModelFactory& make, const std::string& name) {
  const std::string dir = trained(make, name, 15);
  train::OfflinePredictor predictor(make(), dir, device(), {"input"}, {"logits"});
  const std::string onnx = dir + "/model.onnx";
  train::export_onnx(predictor, onnx);

  dataflow::DataFlowPtr test = examples::fashion_mnist_batches(false, 256, 0);
  test->reset_state();
  const Array images = test->next()->at(0);
  ASSERT_EQ(images.shape().dims(), (std::vector<std::int64_t>{256, 28, 28, 1}));
  const Array logits = predictor({images})[0];
  write_floats(dir + "/images.f32", images);
  write_floats(dir + "/logits.f32", logits);
  expect_check_onnx_passes(onnx, dir, 256, "28,28,1", "1e-4");
  std::filesystem::remove_all(dir);
}

TEST(OnnxExport, OpenCvRunsTheExportedMlpAsVkpackDoes) {
  expect_opencv_agrees(fashion_mnist_model(examples::Architecture::mlp), "onnx-mlp");
}

// examples/resnet's ResNet-8: average-pool shortcuts zero-padded over channels, global
// average pooling, pre-activation batch norms.
TEST(OnnxExport, OpenCvRunsTheExportedResNetAsVkpackDoes) {
  expect_opencv_agrees([] { return std::make_shared<examples::PreactResNet>(examples::find_image_set({}), 1, 0.1f); },
                       "onnx-resnet");
}

TEST(OnnxExport, OpenCvRunsTheExportedConvnetAsVkpackDoes) {
  expect_opencv_agrees(fashion_mnist_model(examples::Architecture::convnet), "onnx-conv");
}

TEST(OnnxExport, ResizedImagesComeOutOfOpenCvAsOutOfVkpack) {
  // Bilinear up (5 x 6 to 8 x 10, awkward factors) then nearest down: TensorFlow 1's
  // sampling as ONNX's "asymmetric" coordinates.
  graph::Graph g(1);
  const graph::Tensor x = graph::placeholder(g, "x", graph::f32({graph::kUnknown, 5, 6, 2}));
  const graph::Tensor y = graph::identity(
      graph::resize(graph::resize(x, {8, 10}), {3, 7}, graph::ResizeMethod::nearest), "resized");
  graph::Session session(g, device());
  const std::string dir = temp_dir("onnx-resize");
  train::export_onnx(session, {x}, {y}, dir + "/resize.onnx");
  Array images(DType::f32, Shape{8, 5, 6, 2});
  for (std::size_t i = 0; i < images.data<float>().size(); ++i)
    images.data<float>()[i] = static_cast<float>((i * 37) % 101) / 100.0f;
  write_floats(dir + "/images.f32", images);
  write_floats(dir + "/logits.f32", session.run({{x, images}}, {y})[0]);
  expect_check_onnx_passes(dir + "/resize.onnx", dir, 8, "5,6,2", "1e-5");
  std::filesystem::remove_all(dir);
}

TEST(OnnxExport, TransposedConvolutionsComeOutOfOpenCvAsOutOfVkpack) {
  // A DCGAN generator's upsampling: 5 x 5 SAME at stride 2 (7 -> 14), then 3 x 3 VALID
  // at stride 2 (14 -> 29), and 2 x 2 SAME at stride 3 (fewer taps than the stride).
  graph::Graph g(1);
  const graph::Tensor x = graph::placeholder(g, "x", graph::f32({graph::kUnknown, 7, 7, 3}));
  graph::Tensor t = graph::Conv2DTranspose("deconv0", x, 4, {5, 5}, {.strides = {2, 2}});
  t = graph::Conv2DTranspose("deconv1", t, 2, {3, 3}, {.strides = {2, 2}, .padding = graph::Padding::valid});
  t = graph::Conv2DTranspose("deconv2", t, 1, {2, 2}, {.strides = {3, 3}, .use_bias = false});
  const graph::Tensor y = graph::identity(t, "upsampled");
  graph::Session session(g, device());
  const std::string dir = temp_dir("onnx-deconv");
  train::export_onnx(session, {x}, {y}, dir + "/deconv.onnx");
  Array images(DType::f32, Shape{4, 7, 7, 3});
  for (std::size_t i = 0; i < images.data<float>().size(); ++i)
    images.data<float>()[i] = static_cast<float>((i * 53) % 97) / 96.0f - 0.5f;
  const Array want = session.run({{x, images}}, {y})[0];
  ASSERT_EQ(want.shape().dims(), (std::vector<std::int64_t>{4, 87, 87, 1}));
  write_floats(dir + "/images.f32", images);
  write_floats(dir + "/logits.f32", want);
  expect_check_onnx_passes(dir + "/deconv.onnx", dir, 4, "7,7,3", "1e-4");
  std::filesystem::remove_all(dir);
}

TEST(OnnxExport, GeluComesOutOfOpenCvAsOutOfVkpack) {
  // ONNX has Gelu from opset 20 only: the export writes x (1 + erf(x / sqrt 2)) / 2.
  graph::Graph g(3);
  const graph::Tensor x = graph::placeholder(g, "x", graph::f32({graph::kUnknown, 6}));
  graph::Tensor t = graph::FullyConnected("fc0", x, 5, {.activation = [](graph::Tensor v) { return graph::gelu(v); }});
  const graph::Tensor y = graph::identity(graph::FullyConnected("fc1", t, 3), "out");
  graph::Session session(g, device());
  const std::string dir = temp_dir("onnx-gelu");
  train::export_onnx(session, {x}, {y}, dir + "/gelu.onnx");
  Array inputs(DType::f32, Shape{7, 6});
  for (std::size_t i = 0; i < inputs.data<float>().size(); ++i)
    inputs.data<float>()[i] = static_cast<float>((i * 29) % 41) / 8.0f - 2.5f;
  write_floats(dir + "/images.f32", inputs);
  write_floats(dir + "/logits.f32", session.run({{x, inputs}}, {y})[0]);
  expect_check_onnx_passes(dir + "/gelu.onnx", dir, 7, "6", "1e-5");
  std::filesystem::remove_all(dir);
}

TEST(OnnxExport, AnOpWithNoMappingIsRefusedByName) {
  // The inference tower's loss is a fused softmax cross entropy, which only training needs.
  const std::string dir = trained(fashion_mnist_model(examples::Architecture::mlp), "onnx-refused", 1);
  auto model = std::make_shared<examples::FashionMnistModel>(examples::Architecture::mlp, 1e-3f);
  train::OfflinePredictor predictor(model, dir, device(), {"input", "label"}, {"cross_entropy_loss"});
  try {
    train::export_onnx(predictor, dir + "/loss.onnx");
    FAIL() << "a graph with a training op was exported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("softmax_xent"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/loss.onnx"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
