#include "embedding_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace vkp::examples {

using namespace vkp::graph;

Metric parse_metric(const std::string& name) {
  if (name == "siamese") return Metric::siamese;
  if (name == "triplet") return Metric::triplet;
  throw Error(ErrorCode::invalid_argument, "unknown algorithm '" + name + "'; choose siamese or triplet");
}

std::vector<train::InputSpec> EmbeddingModel::inputs() const {
  const TensorType image = f32({kUnknown, 28, 28, 1});
  if (metric_ == Metric::siamese) return {{"left", image}, {"right", image}, {"same", f32({kUnknown})}};
  return {{"anchor", image}, {"positive", image}, {"negative", image}};
}

// tensorpack's embedding network: two convolutions with max pooling, a hidden layer.
Tensor EmbeddingModel::embed(Tensor image, bool reuse) {
  VariableScope scope(image.graph(), "embed", reuse ? Reuse::yes : Reuse::inherit);
  const Activation relu_fn = [](Tensor t) { return relu(t); };
  Tensor t = Conv2D("conv0", image, 32, {5, 5}, {.activation = relu_fn});
  t = MaxPooling("pool0", t, {2, 2});
  t = Conv2D("conv1", t, 64, {5, 5}, {.activation = relu_fn});
  t = MaxPooling("pool1", t, {2, 2});
  t = FullyConnected("fc0", t, 256, {.activation = relu_fn});
  return FullyConnected("emb", t, dim_);
}

Tensor EmbeddingModel::build_graph(const std::vector<Tensor>& in) {
  const Tensor first = identity(embed(in[0], false), "embedding");
  const Tensor second = embed(in[1], true);
  const auto squared_distance = [](Tensor a, Tensor b) { return reduce_sum(square(a - b), {1}); };
  Tensor cost, like, unlike;
  if (metric_ == Metric::siamese) {
    const Tensor same = in[2], d = sqrt(squared_distance(first, second) + 1e-10f);
    const Tensor apart = relu(-d + margin_);
    cost = reduce_mean(same * square(d) + (-same + 1.0f) * square(apart)) * 0.5f;
    // Means over the pairs of each kind (each batch holds both).
    like = reduce_sum(same * d) / reduce_sum(same);
    unlike = reduce_sum((-same + 1.0f) * d) / reduce_sum(-same + 1.0f);
  } else {
    const Tensor negative = embed(in[2], true);
    const Tensor d_pos = squared_distance(first, second), d_neg = squared_distance(first, negative);
    cost = reduce_mean(relu(d_pos - d_neg + margin_));
    like = reduce_mean(sqrt(d_pos + 1e-10f));
    unlike = reduce_mean(sqrt(d_neg + 1e-10f));
  }
  cost = identity(cost, "cost");
  callbacks::add_moving_summary({cost, identity(like, "like_distance"), identity(unlike, "unlike_distance")});
  return cost;
}

Optimizer EmbeddingModel::optimizer(Graph& graph) { return adam(graph, lr_); }

ImagesByClass images_by_class(dataflow::Split split, const std::string& dir, std::int64_t limit) {
  const dataflow::ImageFlowOptions options{.shuffle = false, .dtype = DType::f32};
  auto flow = dir.empty() ? std::make_unique<dataflow::FashionMnist>(split, options)
                          : std::make_unique<dataflow::FashionMnist>(split, options, dir);
  const auto available = static_cast<std::int64_t>(*flow->size());
  const std::int64_t count = limit < 0 ? available : std::min(limit, available);
  ImagesByClass out;
  out.images = Array(DType::f32, Shape{count, 28, 28, 1});
  out.members.resize(10);
  flow->reset_state();
  for (std::int64_t i = 0; i < count; ++i) {
    const dataflow::Datapoint dp = *flow->next();
    std::memcpy(out.images.bytes().data() + static_cast<std::size_t>(i) * 784 * 4, dp[0].bytes().data(), 784 * 4);
    const std::int32_t label = dp[1].data<std::int32_t>()[0];
    out.labels.push_back(label);
    out.members.at(static_cast<std::size_t>(label)).push_back(i);
  }
  for (std::size_t c = 0; c < 10; ++c)
    if (out.members[c].empty())
      throw Error(ErrorCode::invalid_argument,
                  "metric learning needs images of every class; class " + std::to_string(c) + " has none");
  return out;
}

namespace {

// Copies image `index` of `data` into row `row` of `batch`.
void put(const ImagesByClass& data, std::int64_t index, Array& batch, std::int64_t row) {
  std::memcpy(batch.bytes().data() + static_cast<std::size_t>(row) * 784 * 4,
              data.images.bytes().data() + static_cast<std::size_t>(index) * 784 * 4, 784 * 4);
}

std::int64_t member(const ImagesByClass& data, std::size_t label, Rng& rng) {
  const auto& list = data.members[label];
  return list[static_cast<std::size_t>(rng.below(list.size()))];
}

dataflow::Datapoint draw_batch(Metric metric, const ImagesByClass& data, std::int64_t batch, Rng& rng) {
  const Shape images{batch, 28, 28, 1};
  Array a(DType::f32, images), b(DType::f32, images),
      third(DType::f32, metric == Metric::siamese ? Shape{batch} : images);
  for (std::int64_t i = 0; i < batch; ++i) {
    const auto first = static_cast<std::size_t>(rng.below(10));
    auto other = static_cast<std::size_t>(rng.below(9));
    if (other >= first) ++other;  // uniform over the 9 other classes
    put(data, member(data, first, rng), a, i);
    if (metric == Metric::siamese) {
      const bool same = i % 2 == 0;
      put(data, member(data, same ? first : other, rng), b, i);
      third.data<float>()[static_cast<std::size_t>(i)] = same ? 1.0f : 0.0f;
    } else {
      put(data, member(data, first, rng), b, i);
      put(data, member(data, other, rng), third, i);
    }
  }
  return {a, b, third};
}

}  // namespace

dataflow::DataFlowPtr metric_batches(Metric metric, std::shared_ptr<const ImagesByClass> data, std::int64_t batch,
                                     std::int64_t steps, std::uint64_t seed) {
  auto count = std::make_shared<std::uint64_t>(0);
  return std::make_unique<dataflow::DataFromGenerator>(
      [=]() -> dataflow::DataFromGenerator::Generator {
        auto left = std::make_shared<std::int64_t>(steps);
        return [=]() -> std::optional<dataflow::Datapoint> {
          if ((*left)-- <= 0) return std::nullopt;
          Rng rng(seed, (*count)++);
          return draw_batch(metric, *data, batch, rng);
        };
      },
      static_cast<std::size_t>(steps));
}

double nearest_neighbour_accuracy(const Array& references, const std::vector<std::int32_t>& reference_labels,
                                  const Array& queries, const std::vector<std::int32_t>& query_labels) {
  const std::int64_t dim = references.shape()[1], n = references.shape()[0], q = queries.shape()[0];
  const std::span<const float> r = references.data<float>(), x = queries.data<float>();
  std::int64_t right = 0;
#pragma omp parallel for reduction(+ : right) schedule(static)
  for (std::int64_t i = 0; i < q; ++i) {
    double best = std::numeric_limits<double>::infinity();
    std::int64_t nearest = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      double d = 0;
      for (std::int64_t k = 0; k < dim; ++k) {
        const double diff = static_cast<double>(x[static_cast<std::size_t>(i * dim + k)]) -
                            static_cast<double>(r[static_cast<std::size_t>(j * dim + k)]);
        d += diff * diff;
      }
      if (d < best) {
        best = d;
        nearest = j;
      }
    }
    right += reference_labels[static_cast<std::size_t>(nearest)] == query_labels[static_cast<std::size_t>(i)];
  }
  return q == 0 ? 0.0 : static_cast<double>(right) / static_cast<double>(q);
}

namespace {

// The unit eigenvector of the largest eigenvalue of the symmetric `c` [dim x dim] with
// `skip` (a unit vector, or empty) projected out, by power iteration; its sign chosen so
// that its largest component is positive (the picture's orientation is then fixed).
std::vector<double> principal_axis(const std::vector<double>& c, std::size_t dim, const std::vector<double>& skip) {
  double trace = 0;
  for (std::size_t k = 0; k < dim; ++k) trace += c[k * dim + k];
  // Projects `skip` out of u (twice: once leaves rounding along it) and scales u to unit
  // length; false when less than 1e-9 of the spread is left beside `skip`.
  const auto normalise = [&](std::vector<double>& u, double least) {
    for (int pass = 0; pass < 2 && !skip.empty(); ++pass) {
      double along = 0;
      for (std::size_t k = 0; k < dim; ++k) along += u[k] * skip[k];
      for (std::size_t k = 0; k < dim; ++k) u[k] -= along * skip[k];
    }
    double norm = 0;
    for (double e : u) norm += e * e;
    norm = std::sqrt(norm);
    if (!(norm > least)) return false;
    for (double& e : u) e /= norm;
    return true;
  };
  std::vector<double> v(dim);
  for (std::size_t k = 0; k < dim; ++k) v[k] = 1.0 + 0.1 * static_cast<double>(k);
  normalise(v, 0.0);
  for (int iteration = 0; iteration < 500; ++iteration) {
    std::vector<double> next(dim, 0.0);
    for (std::size_t a = 0; a < dim; ++a)
      for (std::size_t b = 0; b < dim; ++b) next[a] += c[a * dim + b] * v[b];
    if (!normalise(next, 1e-9 * trace)) break;  // no spread left: v is as good as any
    v = next;
  }
  const auto largest =
      std::max_element(v.begin(), v.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
  if (*largest < 0)
    for (double& e : v) e = -e;
  return v;
}

}  // namespace

Array embedding_picture(const Array& points, const std::vector<std::int32_t>& labels, int size) {
  static constexpr std::uint8_t kColours[10][3] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                                   {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                                   {188, 189, 34},  {23, 190, 207}};
  const auto n = static_cast<std::size_t>(points.shape()[0]), dim = static_cast<std::size_t>(points.shape()[1]);
  const std::span<const float> p = points.data<float>();
  std::vector<double> mean(dim, 0.0), c(dim * dim, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < dim; ++k) mean[k] += p[i * dim + k] / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t a = 0; a < dim; ++a)
      for (std::size_t b = 0; b < dim; ++b) c[a * dim + b] += (p[i * dim + a] - mean[a]) * (p[i * dim + b] - mean[b]);
  const std::vector<double> first = principal_axis(c, dim, {}), second = principal_axis(c, dim, first);
  std::vector<double> across(n), up(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < dim; ++k) {
      across[i] += (p[i * dim + k] - mean[k]) * first[k];
      up[i] += (p[i * dim + k] - mean[k]) * second[k];
    }
  }
  // Both axes at one scale (distances stay as they are), centred, the 1st to 99th
  // percentiles of the wider one filling 90% of the side.
  const auto range = [n](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return std::pair{values[n / 100], values[n - 1 - n / 100]};
  };
  const auto [x0, x1] = range(across);
  const auto [y0, y1] = range(up);
  const double width = std::max({x1 - x0, y1 - y0, 1e-30}), cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  Array image(DType::u8, Shape{size, size, 3});
  std::fill(image.data<std::uint8_t>().begin(), image.data<std::uint8_t>().end(), std::uint8_t{255});
  const std::span<std::uint8_t> pixels = image.data<std::uint8_t>();
  const double scale = 0.9 * size / width;
  for (std::size_t i = 0; i < n; ++i) {
    const int x = static_cast<int>(std::floor(size / 2.0 + (across[i] - cx) * scale));
    const int y = static_cast<int>(std::floor(size / 2.0 - (up[i] - cy) * scale));
    for (int dy = 0; dy < 2; ++dy) {
      for (int dx = 0; dx < 2; ++dx) {
        const int px = std::clamp(x + dx, 0, size - 1), py = std::clamp(y + dy, 0, size - 1);
        std::memcpy(&pixels[static_cast<std::size_t>((py * size + px) * 3)],
                    kColours[static_cast<std::size_t>(labels[i]) % 10], 3);
      }
    }
  }
  return image;
}

}  // namespace vkp::examples
