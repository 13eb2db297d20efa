// The InfoGAN of examples/infogan (tensorpack's InfoGAN-mnist, on Fashion-MNIST): a
// generator from noise and latent codes (one categorical of 10 values, two continuous in
// [-1, 1]) to a 28 x 28 image, and a discriminator that also recovers the codes from the
// image (the Q head); the data that feeds them, and the measures of what the categorical
// code learned.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vkpack/vkpack.h"

namespace vkp::examples {

inline constexpr std::int64_t kCategories = 10, kContinuous = 2, kInfoNoise = 62;

// Inputs (batch fixed): "image" f32 [B, 28, 28, 1] in [0, 1], "category" f32 [B, 10]
// one-hot, "style" f32 [B, 2] and "noise" f32 [B, 62], both uniform in [-1, 1]. The
// generator's image is "gen/image" (sigmoid, [0, 1]).
//
// Losses (InfoGAN, Chen et al. 2016, as tensorpack writes them): the DCGAN's two, each
// plus lambda times the Q head's loss on the generated batch: the cross entropy of the
// category it recovers and, for the style, the negative log-likelihood of a Gaussian of
// unit variance around the mean it recovers. Unlike tensorpack's, the discriminator's
// loss trains only the Q head with it, not the features the head reads (build_graph). "mutual_info": log(10) minus that
// cross entropy, the lower bound on I(category; image) that the training raises (at most log 10 = 2.303 nats, reached
// when the category is recovered from every image).
class InfoGan : public train::GANModelDesc {
 public:
  InfoGan(std::int64_t batch, float learning_rate, float info_weight = 2.0f)
      : batch_(batch), lr_(learning_rate), lambda_(info_weight) {}
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
  graph::Optimizer optimizer(graph::Graph& graph) override;

 private:
  graph::Tensor generator(graph::Tensor category, graph::Tensor style, graph::Tensor noise);
  // The image's realness logit [B, 1] and the features it is read from.
  std::array<graph::Tensor, 2> discriminator(graph::Tensor image);
  // The Q head on the discriminator's features: category logits [B, 10], style means [B, 2].
  std::array<graph::Tensor, 2> q_head(graph::Tensor features);
  std::int64_t batch_;
  float lr_, lambda_;
};

// Fashion-MNIST's train split as batches {image, category, style, noise} (the labels are
// not used: InfoGAN is unsupervised): shuffled from `seed`, the codes and noise drawn from
// Rng(seed, batch number), so a resumed run replays the same draws.
dataflow::DataFlowPtr infogan_batches(std::int64_t batch, std::uint64_t seed, const std::string& dir = {});

// Rows {category, style, noise} for a 10 x 10 grid: row r has category r, column c has
// style[axis] running from -1 to 1 and the other style 0; the noise is one draw from
// Rng(seed) shared by every cell, so only the codes change across the grid.
std::vector<Array> code_grid(int axis, std::uint64_t seed);

// Rows {category, style, noise} for a 10 x 10 grid: row r has category r, column c the
// c-th of ten noise draws from Rng(seed), shared by its column, and both styles 0. Across
// a row the samples show how varied the generator is; down a column, what the category
// changes.
std::vector<Array> noise_grid(std::uint64_t seed);

// `count` rows with category i % 10 for row i, the style and noise drawn from Rng(seed).
std::vector<Array> codes_by_category(std::int64_t count, std::uint64_t seed);

// What a classifier's labels of images generated per category say about the code.
// `table[code][label]`: how many images of category `code` were labelled `label`.
struct CodeAgreement {
  // The share of images whose label is the one their category is matched to, under the
  // one-to-one matching of the 10 categories to the 10 labels that maximises it (an
  // unsupervised code has no order of its own).
  double matched_accuracy = 0;
  std::array<int, 10> matched_label{};  // by category
  // I(category; label) of the table in nats (at most log 10 = 2.303).
  double mutual_information = 0;
};
CodeAgreement code_agreement(const std::array<std::array<std::int64_t, 10>, 10>& table);

}  // namespace vkp::examples
