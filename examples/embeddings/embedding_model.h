// The metric-learning example of examples/embeddings (tensorpack's SimilarityLearning,
// mnist-embeddings, on Fashion-MNIST): a convnet maps an image to a point of a few
// dimensions, trained on pairs (siamese, contrastive loss) or triplets (triplet loss) so
// that images of one class land near each other and images of different classes apart;
// the pairs and triplets that feed it; the nearest-neighbour accuracy that measures it
// and the picture that shows it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkpack/vkpack.h"

namespace vkp::examples {

enum class Metric { siamese, triplet };
Metric parse_metric(const std::string& name);  // "siamese", "triplet"

// siamese: inputs "left", "right" f32 [?, 28, 28, 1] and "same" f32 [?] (1 for a pair of
// one class, 0 otherwise); the contrastive loss (Hadsell, Chopra and LeCun 2006) of
// d = |e(left) - e(right)|: mean(same d^2 + (1 - same) max(margin - d, 0)^2) / 2.
// triplet: inputs "anchor", "positive" (the anchor's class) and "negative" (another);
// the triplet loss (Schroff et al. 2015) of squared distances:
// mean(max(|e(a) - e(p)|^2 - |e(a) - e(n)|^2 + margin, 0)).
// Either way the first input's embedding is "embedding" [?, dim], what a predictor
// fetches (feeding "left" or "anchor"); the moving summaries are "cost" and the mean
// distances of like and unlike images, "like_distance" and "unlike_distance".
class EmbeddingModel : public train::ModelDesc {
 public:
  EmbeddingModel(Metric metric, std::int64_t dim, float margin, float learning_rate)
      : metric_(metric), dim_(dim), margin_(margin), lr_(learning_rate) {}
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
  graph::Optimizer optimizer(graph::Graph& graph) override;
  // The input a predictor feeds images to: "left" or "anchor".
  std::string image_input() const { return metric_ == Metric::siamese ? "left" : "anchor"; }

 private:
  graph::Tensor embed(graph::Tensor image, bool reuse);
  Metric metric_;
  std::int64_t dim_;
  float margin_, lr_;
};

// Fashion-MNIST's images by class, read once: what the pair and triplet batches draw from.
struct ImagesByClass {
  Array images;                                    // f32 [N, 28, 28, 1] in [0, 1]
  std::vector<std::int32_t> labels;                // [N]
  std::vector<std::vector<std::int64_t>> members;  // by class: the indices of its images
};
ImagesByClass images_by_class(dataflow::Split split, const std::string& dir = {}, std::int64_t limit = -1);

// `steps` batches an epoch of `batch` pairs (half of one class, half of two; classes
// uniform) or triplets (anchor and positive of one class, negative of another), drawn
// from Rng(seed, batch number) so that a resumed run replays the same batches.
dataflow::DataFlowPtr metric_batches(Metric metric, std::shared_ptr<const ImagesByClass> data, std::int64_t batch,
                                     std::int64_t steps, std::uint64_t seed);

// The share of `queries` whose nearest neighbour among `references` (Euclidean, rows of
// [N, dim]) has the query's label.
double nearest_neighbour_accuracy(const Array& references, const std::vector<std::int32_t>& reference_labels,
                                  const Array& queries, const std::vector<std::int32_t>& query_labels);

// Points [N, dim] coloured by label (0 .. 9, tab10's colours) on a white `size` x `size`
// u8 RGB image, the first two principal axes of the points across and up (for dim 2, the
// plane itself, rotated; each axis's largest component positive) at one scale, centred,
// the 1st to 99th percentiles of the wider axis filling 90% of the side.
Array embedding_picture(const Array& points, const std::vector<std::int32_t>& labels, int size = 512);

}  // namespace vkp::examples
