#include "models.h"

#include "vkpack/vkpack.h"

namespace vkp::examples {

using namespace vkp::graph;

Architecture parse_architecture(const std::string& name) {
  if (name == "mlp") return Architecture::mlp;
  if (name == "conv" || name == "convnet") return Architecture::convnet;
  throw Error(ErrorCode::invalid_argument, "unknown model '" + name + "'; choose mlp or conv");
}

FashionMnistModel::FashionMnistModel(Architecture architecture, float learning_rate, bool freeze_convolutions)
    : architecture_(architecture), learning_rate_(learning_rate), freeze_convolutions_(freeze_convolutions) {}

std::vector<train::InputSpec> FashionMnistModel::inputs() const {
  return {{"input", f32({kUnknown, 28, 28, 1})}, {"label", i32({kUnknown})}};
}

Tensor FashionMnistModel::build_graph(const std::vector<Tensor>& in) {
  const Tensor image = in[0], label = in[1];
  const Activation relu_fn = [](Tensor t) { return relu(t); };
  Tensor logits;
  if (architecture_ == Architecture::mlp) {
    Tensor t = FullyConnected("fc0", image, 256, {.activation = relu_fn});
    t = FullyConnected("fc1", t, 256, {.activation = relu_fn});
    logits = FullyConnected("linear", t, 10);
  } else {
    Tensor t = image;
    for (const auto& [name, filters] : {std::pair{"conv0", 32}, std::pair{"conv1", 64}}) {
      t = Conv2D(name, t, filters, {3, 3}, {.use_bias = false, .trainable = !freeze_convolutions_});
      t = BNReLU(std::string(name) + "_bn", t, {.trainable = !freeze_convolutions_});
      t = MaxPooling(std::string(name) + "_pool", t, {2, 2});
    }
    t = FullyConnected("fc0", t, 128, {.activation = relu_fn});
    t = Dropout("dropout", t, 0.3f);
    logits = FullyConnected("linear", t, 10);
  }
  identity(logits, "logits");
  const Tensor xent = identity(reduce_mean(sparse_softmax_cross_entropy(logits, label)), "cross_entropy_loss");
  const Tensor correct = in_top_k(logits, label, 1);
  identity(scalar(image.graph(), 1.0f) - correct, "incorrect_vector");
  const Tensor acc = identity(reduce_mean(correct), "accuracy");
  const Tensor wd = regularize_cost(image.graph(), ".*/W", l2_regularizer(1e-5f));
  const Tensor cost = identity(xent + wd, "cost");
  callbacks::add_moving_summary({cost, acc});
  return cost;
}

Optimizer FashionMnistModel::optimizer(Graph& graph) { return adam(graph, learning_rate_); }

dataflow::DataFlowPtr fashion_mnist_batches(bool train, std::int64_t batch, std::uint64_t seed, const std::string& dir) {
  const dataflow::ImageFlowOptions options{.shuffle = train, .dtype = DType::f32, .seed = seed};
  const dataflow::Split split = train ? dataflow::Split::train : dataflow::Split::test;
  auto images = dir.empty() ? std::make_unique<dataflow::FashionMnist>(split, options)
                            : std::make_unique<dataflow::FashionMnist>(split, options, dir);
  return std::make_unique<dataflow::BatchData>(std::move(images), static_cast<std::size_t>(batch), !train);
}

}  // namespace vkp::examples
