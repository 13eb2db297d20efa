#include "infogan_model.h"

#include <cmath>
#include <optional>

#include "models.h"

namespace vkp::examples {

using namespace vkp::graph;

namespace {

Activation leaky() {
  return [](Tensor t) { return leaky_relu(t, 0.2f); };
}

void fill_uniform(Rng& rng, Array& a) {
  for (float& v : a.data<float>()) v = rng.uniform(-1, 1);
}

}  // namespace

std::vector<train::InputSpec> InfoGan::inputs() const {
  return {{"image", f32({batch_, 28, 28, 1})},
          {"category", f32({batch_, kCategories})},
          {"style", f32({batch_, kContinuous})},
          {"noise", f32({batch_, kInfoNoise})}};
}

// The conditional DCGAN's generator (examples/gan), narrower than tensorpack's (one fully
// connected layer of 7 x 7 x 64 instead of 1024 and 7 x 7 x 128 units, 32 filters
// instead of 64), so that a CPU driver trains it in minutes.
Tensor InfoGan::generator(Tensor category, Tensor style, Tensor noise) {
  Graph& g = category.graph();
  VariableScope scope(g, "gen");
  Tensor t = FullyConnected("fc1", concat({category, style, noise}, 1), 7 * 7 * 64, {.use_bias = false});
  t = reshape(BNReLU("fc1_bn", t), {batch_, 7, 7, 64});
  t = Conv2DTranspose("deconv0", t, 32, {5, 5}, {.strides = {2, 2}, .use_bias = false});
  t = BNReLU("deconv0_bn", t);
  t = Conv2DTranspose("deconv1", t, 1, {5, 5}, {.strides = {2, 2}});
  return identity(sigmoid(t), "image");
}

// The conditional DCGAN's discriminator (without the class), with a fully connected layer
// of 128 units (tensorpack has 1,024, batch-normalised: with BatchNorm there, real and
// fake batches normalised apart, the generator made noise on a light background within
// 150 steps here) whose features give the realness logit and the Q head.
std::array<Tensor, 2> InfoGan::discriminator(Tensor image) {
  Tensor t = Conv2D("conv0", image, 32, {5, 5}, {.strides = {2, 2}, .activation = leaky()});
  t = Conv2D("conv1", t, 64, {5, 5}, {.strides = {2, 2}, .use_bias = false});
  t = leaky_relu(BatchNorm("conv1_bn", t), 0.2f);
  t = FullyConnected("fc0", t, 128, {.activation = leaky()});
  return {FullyConnected("logits", t, 1), t};
}

// The Q head: one linear layer on the discriminator's features (tensorpack: a batch-
// normalised hidden layer of 128 first; with it, or on the convolutions' features, the
// head read the category from detail the eye and a classifier do not see).
std::array<Tensor, 2> InfoGan::q_head(Tensor features) {
  const Tensor q = FullyConnected("q_codes", features, kCategories + kContinuous);
  return {slice(q, {0, 0}, {batch_, kCategories}), slice(q, {0, kCategories}, {batch_, kContinuous})};
}

Tensor InfoGan::build_graph(const std::vector<Tensor>& in) {
  Graph& g = in[0].graph();
  const Tensor category = in[1], style = in[2];
  const Tensor fake = generator(category, style, in[3]);
  Tensor real_logits, fake_logits;
  std::array<Tensor, 2> q_gen, q_discrim;
  {
    VariableScope d(g, "discrim");
    real_logits = discriminator(in[0])[0];
  }
  {
    VariableScope d(g, "discrim", Reuse::automatic);
    const auto [logits, features] = discriminator(fake);
    fake_logits = logits;
    // The generator's loss reads the codes through the discriminator's features; the
    // discriminator's trains the Q head alone, so that its features stay those that
    // tell real from fake, and the generator has to make the codes visible in them.
    q_gen = q_head(features);
    q_discrim = q_head(stop_gradient(features));
  }
  const Tensor ones = broadcast_to(scalar(g, 1.0f), {batch_, 1}), zeros = broadcast_to(scalar(g, 0.0f), {batch_, 1});
  const Tensor d_gan =
      reduce_mean(sigmoid_cross_entropy(real_logits, ones)) + reduce_mean(sigmoid_cross_entropy(fake_logits, zeros));
  const Tensor g_gan = reduce_mean(sigmoid_cross_entropy(fake_logits, ones));
  // The Q head's loss: -log Q(category | image), and -log N(style; mean, 1) less its
  // constant, both averaged over the batch.
  auto info_loss = [&](const std::array<Tensor, 2>& q) {
    return std::array<Tensor, 2>{reduce_mean(softmax_cross_entropy(q[0], category)),
                                 reduce_mean(reduce_sum(square(style - q[1]), {1})) * 0.5f};
  };
  const auto [category_xent, style_nll] = info_loss(q_gen);
  const auto [d_category_xent, d_style_nll] = info_loss(q_discrim);
  const Tensor mutual_info = identity(-category_xent + static_cast<float>(std::log(10.0)), "mutual_info");
  const Tensor d_loss = identity(d_gan + (d_category_xent + d_style_nll) * lambda_, "discrim_loss");
  const Tensor g_loss = identity(g_gan + (category_xent + style_nll) * lambda_, "gen_loss");
  callbacks::add_moving_summary({g_loss, d_loss, mutual_info, identity(style_nll, "style_nll")});
  return set_losses(g_loss, d_loss);
}

Optimizer InfoGan::optimizer(Graph& graph) { return adam(graph, lr_, 0.5f); }

dataflow::DataFlowPtr infogan_batches(std::int64_t batch, std::uint64_t seed, const std::string& dir) {
  auto count = std::make_shared<std::uint64_t>(0);
  return std::make_unique<dataflow::MapData>(
      fashion_mnist_batches(true, batch, seed, dir), [batch, seed, count](dataflow::Datapoint dp) {
        Rng rng(seed, (*count)++);
        Array category(DType::f32, Shape{batch, kCategories}), style(DType::f32, Shape{batch, kContinuous}),
            noise(DType::f32, Shape{batch, kInfoNoise});
        for (std::int64_t i = 0; i < batch; ++i)
          category.data<float>()[static_cast<std::size_t>(i * kCategories +
                                                          static_cast<std::int64_t>(rng.below(kCategories)))] = 1;
        fill_uniform(rng, style);
        fill_uniform(rng, noise);
        return std::optional<dataflow::Datapoint>(dataflow::Datapoint{dp[0], category, style, noise});
      });
}

std::vector<Array> code_grid(int axis, std::uint64_t seed) {
  Rng rng(seed);
  Array one(DType::f32, Shape{kInfoNoise});
  fill_uniform(rng, one);
  Array category(DType::f32, Shape{100, kCategories}), style(DType::f32, Shape{100, kContinuous}),
      noise(DType::f32, Shape{100, kInfoNoise});
  for (std::int64_t r = 0; r < 10; ++r) {
    for (std::int64_t c = 0; c < 10; ++c) {
      const std::int64_t i = r * 10 + c;
      category.data<float>()[static_cast<std::size_t>(i * kCategories + r)] = 1;
      style.data<float>()[static_cast<std::size_t>(i * kContinuous + axis)] = -1.0f + 2.0f * static_cast<float>(c) / 9;
      for (std::int64_t k = 0; k < kInfoNoise; ++k)
        noise.data<float>()[static_cast<std::size_t>(i * kInfoNoise + k)] =
            one.data<float>()[static_cast<std::size_t>(k)];
    }
  }
  return {category, style, noise};
}

std::vector<Array> noise_grid(std::uint64_t seed) {
  Rng rng(seed);
  Array draws(DType::f32, Shape{10, kInfoNoise});
  fill_uniform(rng, draws);
  Array category(DType::f32, Shape{100, kCategories}), style(DType::f32, Shape{100, kContinuous}),
      noise(DType::f32, Shape{100, kInfoNoise});
  for (std::int64_t i = 0; i < 100; ++i) {
    const std::int64_t r = i / 10, c = i % 10;
    category.data<float>()[static_cast<std::size_t>(i * kCategories + r)] = 1;
    for (std::int64_t k = 0; k < kInfoNoise; ++k)
      noise.data<float>()[static_cast<std::size_t>(i * kInfoNoise + k)] =
          draws.data<float>()[static_cast<std::size_t>(c * kInfoNoise + k)];
  }
  return {category, style, noise};
}

std::vector<Array> codes_by_category(std::int64_t count, std::uint64_t seed) {
  Rng rng(seed);
  Array category(DType::f32, Shape{count, kCategories}), style(DType::f32, Shape{count, kContinuous}),
      noise(DType::f32, Shape{count, kInfoNoise});
  for (std::int64_t i = 0; i < count; ++i)
    category.data<float>()[static_cast<std::size_t>(i * kCategories + i % 10)] = 1;
  fill_uniform(rng, style);
  fill_uniform(rng, noise);
  return {category, style, noise};
}

CodeAgreement code_agreement(const std::array<std::array<std::int64_t, 10>, 10>& table) {
  // best[mask]: the most images matched when categories 0 .. popcount(mask) - 1 take the
  // labels in `mask`, one each (1,024 subsets: exact, no search heuristics).
  constexpr int kSubsets = 1 << 10;
  std::array<std::int64_t, kSubsets> best{};
  std::array<int, kSubsets> last{};  // the label the last category took in best[mask]
  best.fill(-1);
  best[0] = 0;
  for (int mask = 0; mask < kSubsets; ++mask) {
    if (best[static_cast<std::size_t>(mask)] < 0) continue;
    const int category = __builtin_popcount(static_cast<unsigned>(mask));
    if (category == 10) continue;
    for (int label = 0; label < 10; ++label) {
      if (mask & (1 << label)) continue;
      const int next = mask | (1 << label);
      const std::int64_t score = best[static_cast<std::size_t>(mask)] +
                                 table[static_cast<std::size_t>(category)][static_cast<std::size_t>(label)];
      if (score > best[static_cast<std::size_t>(next)]) {
        best[static_cast<std::size_t>(next)] = score;
        last[static_cast<std::size_t>(next)] = label;
      }
    }
  }
  CodeAgreement out;
  std::int64_t total = 0;
  std::array<std::int64_t, 10> by_category{}, by_label{};
  for (std::size_t c = 0; c < 10; ++c) {
    for (std::size_t l = 0; l < 10; ++l) {
      total += table[c][l];
      by_category[c] += table[c][l];
      by_label[l] += table[c][l];
    }
  }
  if (total == 0) return out;
  out.matched_accuracy = static_cast<double>(best[kSubsets - 1]) / static_cast<double>(total);
  for (int mask = kSubsets - 1, category = 9; category >= 0; --category) {
    const int label = last[static_cast<std::size_t>(mask)];
    out.matched_label[static_cast<std::size_t>(category)] = label;
    mask &= ~(1 << label);
  }
  for (std::size_t c = 0; c < 10; ++c) {
    for (std::size_t l = 0; l < 10; ++l) {
      if (table[c][l] == 0) continue;
      const double p = static_cast<double>(table[c][l]) / static_cast<double>(total);
      const double independent = static_cast<double>(by_category[c]) * static_cast<double>(by_label[l]) /
                                 (static_cast<double>(total) * static_cast<double>(total));
      out.mutual_information += p * std::log(p / independent);
    }
  }
  return out;
}

}  // namespace vkp::examples
