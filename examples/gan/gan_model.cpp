#include "gan_model.h"

#include "models.h"

namespace vkp::examples {

using namespace vkp::graph;

std::vector<train::InputSpec> ConditionalGan::inputs() const {
  return {{"image", f32({batch_, 28, 28, 1})}, {"onehot", f32({batch_, kClasses})}, {"z", f32({batch_, kNoise})}};
}

Tensor ConditionalGan::generator(Tensor z, Tensor onehot) {
  Graph& g = z.graph();
  VariableScope scope(g, "gen");
  Tensor t = FullyConnected("fc0", concat({z, onehot}, 1), 7 * 7 * 64, {.use_bias = false});
  t = reshape(BNReLU("fc0_bn", t), {batch_, 7, 7, 64});
  t = Conv2DTranspose("deconv0", t, 32, {5, 5}, {.strides = {2, 2}, .use_bias = false});
  t = BNReLU("deconv0_bn", t);
  t = Conv2DTranspose("deconv1", t, 1, {5, 5}, {.strides = {2, 2}});
  return identity(sigmoid(t), "image");
}

Tensor ConditionalGan::discriminator(Tensor image, Tensor onehot) {
  const Activation leaky = [](Tensor t) { return leaky_relu(t, 0.2f); };
  // The class as 10 constant channels beside the image.
  const Tensor classes = broadcast_to(reshape(onehot, {batch_, 1, 1, kClasses}), {batch_, 28, 28, kClasses});
  Tensor t = Conv2D("conv0", concat({image, classes}, 3), 32, {5, 5}, {.strides = {2, 2}, .activation = leaky});
  t = Conv2D("conv1", t, 64, {5, 5}, {.strides = {2, 2}, .use_bias = false});
  t = leaky_relu(BatchNorm("conv1_bn", t), 0.2f);
  return FullyConnected("logits", t, 1);
}

Tensor ConditionalGan::build_graph(const std::vector<Tensor>& in) {
  Graph& g = in[0].graph();
  const Tensor fake = generator(in[2], in[1]);
  Tensor real_logits, fake_logits;
  {
    VariableScope d(g, "discrim");
    real_logits = discriminator(in[0], in[1]);
  }
  {
    VariableScope d(g, "discrim", Reuse::yes);
    fake_logits = discriminator(fake, in[1]);
  }
  const Tensor ones = broadcast_to(scalar(g, 1.0f), {batch_, 1}), zeros = broadcast_to(scalar(g, 0.0f), {batch_, 1});
  const Tensor d_loss = identity(reduce_mean(sigmoid_cross_entropy(real_logits, ones)) +
                                     reduce_mean(sigmoid_cross_entropy(fake_logits, zeros)),
                                 "discrim_loss");
  const Tensor g_loss = identity(reduce_mean(sigmoid_cross_entropy(fake_logits, ones)), "gen_loss");
  callbacks::add_moving_summary({g_loss, d_loss});
  return set_losses(g_loss, d_loss);
}

Optimizer ConditionalGan::optimizer(Graph& graph) { return adam(graph, lr_, 0.5f); }

std::vector<Array> noise_and_classes(std::int64_t count, std::uint64_t seed) {
  Rng rng(seed);
  Array onehot(DType::f32, Shape{count, kClasses}), z(DType::f32, Shape{count, kNoise});
  for (std::int64_t i = 0; i < count; ++i) onehot.data<float>()[static_cast<std::size_t>(i * kClasses + i % kClasses)] = 1;
  for (float& v : z.data<float>()) v = rng.uniform(-1, 1);
  return {onehot, z};
}

dataflow::DataFlowPtr gan_batches(std::int64_t batch, std::uint64_t seed, const std::string& dir) {
  auto count = std::make_shared<std::uint64_t>(0);
  return std::make_unique<dataflow::MapData>(
      fashion_mnist_batches(true, batch, seed, dir), [batch, seed, count](dataflow::Datapoint dp) {
        Rng rng(seed, (*count)++);
        Array onehot(DType::f32, Shape{batch, kClasses}), z(DType::f32, Shape{batch, kNoise});
        for (std::int64_t i = 0; i < batch; ++i)
          onehot.data<float>()[static_cast<std::size_t>(i * kClasses + dp[1].data<std::int32_t>()[static_cast<std::size_t>(i)])] = 1;
        for (float& v : z.data<float>()) v = rng.uniform(-1, 1);
        return std::optional<dataflow::Datapoint>(dataflow::Datapoint{dp[0], onehot, z});
      });
}

}  // namespace vkp::examples
