#include "resnet_model.h"

#include <filesystem>

namespace vkp::examples {

using namespace vkp::graph;

ImageSet find_image_set(const std::string& dir) {
  ImageSet set;
  set.dir = dir;
  if (dir.empty()) return set;
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(dir) / "data_batch_1.bin") || fs::exists(fs::path(dir) / "cifar-10-batches-bin" / "data_batch_1.bin")) {
    set.kind = ImageSet::Kind::cifar10;
    set.height = set.width = 32;
    set.channels = 3;
  }
  return set;
}

std::int64_t ImageSet::train_size() const {
  if (kind == Kind::cifar10) return 50000;
  return dataflow::fashion_mnist_images(dataflow::Split::train, dir.empty() ? dataflow::kFashionMnistDir : dir);
}

PreactResNet::PreactResNet(const ImageSet& images, int units_per_stage, float learning_rate, bool sync_statistics)
    : images_(images), n_(units_per_stage), learning_rate_(learning_rate), sync_statistics_(sync_statistics) {
  if (n_ < 1) throw Error(ErrorCode::invalid_argument, "a residual network needs at least one unit per stage");
}

std::vector<train::InputSpec> PreactResNet::inputs() const {
  return {{"input", f32({kUnknown, images_.height, images_.width, images_.channels})}, {"label", i32({kUnknown})}};
}

namespace {

// He's initialization over fan-out, as tensorpack's cifar10-resnet.
Conv2DOptions conv_options(std::int64_t stride = 1) {
  return {.strides = {stride, stride},
          .use_bias = false,
          .kernel_initializer = variance_scaling(2.0f, Initializer::Fan::out, Initializer::Distribution::normal)};
}

// A pre-activation unit: BN-relu (skipped by the first unit, whose input conv0 has just
// been through BN-relu), conv, BN-relu, conv, plus the shortcut. `increase`: stride 2 and
// twice the channels; the shortcut is then 2 x 2 average pooling, zero-padded to them.
Tensor residual(const std::string& name, Tensor x, bool increase, bool first, const BatchNormOptions& bn) {
  const std::int64_t in_channels = x.dims().back();
  const std::int64_t out_channels = increase ? in_channels * 2 : in_channels;
  const Tensor b1 = first ? x : BNReLU(name + "/preact", x, bn);
  Tensor c1 = Conv2D(name + "/conv1", b1, out_channels, {3, 3}, conv_options(increase ? 2 : 1));
  c1 = BNReLU(name + "/conv1_bn", c1, bn);
  const Tensor c2 = Conv2D(name + "/conv2", c1, out_channels, {3, 3}, conv_options());
  Tensor shortcut = x;
  if (increase) {
    shortcut = AvgPooling(name + "/pool", x, {2, 2}, {2, 2}, Padding::same);
    shortcut = pad(shortcut, {0, 0, 0, in_channels / 2}, {0, 0, 0, in_channels / 2});
  }
  return c2 + shortcut;
}

}  // namespace

Tensor PreactResNet::build_graph(const std::vector<Tensor>& in) {
  const Tensor image = in[0], label = in[1];
  Tensor t = Conv2D("conv0", image * 2.0f + -1.0f, 16, {3, 3}, conv_options());
  const BatchNormOptions bn{.sync_statistics = sync_statistics_};
  t = BNReLU("conv0_bn", t, bn);
  for (int stage = 1; stage <= 3; ++stage)
    for (int k = 0; k < n_; ++k)
      t = residual("res" + std::to_string(stage) + "." + std::to_string(k), t, stage > 1 && k == 0,
                   stage == 1 && k == 0, bn);
  // Its histogram, zero fraction and rms go to TensorBoard once an epoch.
  t = callbacks::add_activation_summary(identity(BNReLU("bnlast", t, bn), "bnlast_output"));
  t = GlobalAvgPooling("gap", t);
  const Tensor logits = identity(FullyConnected("linear", t, 10), "logits");
  const Tensor xent = identity(reduce_mean(sparse_softmax_cross_entropy(logits, label)), "cross_entropy_loss");
  const Tensor correct = in_top_k(logits, label, 1);
  identity(scalar(image.graph(), 1.0f) - correct, "incorrect_vector");
  const Tensor accuracy = identity(reduce_mean(correct), "accuracy");
  const Tensor wd = identity(regularize_cost(image.graph(), ".*/W", l2_regularizer(2e-4f)), "wd_cost");
  const Tensor cost = identity(xent + wd, "cost");
  callbacks::add_moving_summary({cost, accuracy, wd});
  return cost;
}

Optimizer PreactResNet::optimizer(Graph& graph) { return momentum(graph, learning_rate_, 0.9f); }

dataflow::DataFlowPtr resnet_batches(const ImageSet& images, bool train, std::int64_t batch, std::uint64_t seed,
                                     bool augment) {
  using namespace vkp::dataflow;
  const ImageFlowOptions options{.shuffle = train, .dtype = DType::f32, .seed = seed};
  const Split split = train ? Split::train : Split::test;
  DataFlowPtr df;
  if (images.kind == ImageSet::Kind::cifar10)
    df = std::make_unique<Cifar10>(images.dir, split, options);
  else if (images.dir.empty())
    df = std::make_unique<FashionMnist>(split, options);
  else
    df = std::make_unique<FashionMnist>(split, options, images.dir);
  if (train && augment) {
    std::vector<AugmentorPtr> augmentors{std::make_shared<Shift>(4, images.height, images.width),
                                         std::make_shared<Flip>(FlipAxis::horizontal)};
    df = std::make_unique<AugmentImageComponent>(std::move(df), std::move(augmentors), 0, seed);
  }
  return std::make_unique<BatchData>(std::move(df), static_cast<std::size_t>(batch), !train);
}

}  // namespace vkp::examples
