// The metric-learning example's parts on the host: the pairs and triplets it draws, the
// nearest-neighbour accuracy against a direct count, and the picture's placement.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "embedding_model.h"

namespace vkp::examples {
namespace {

// Five images of each class, image i filled with 10 * label + i % 5 (so a batch's image
// tells its class and which one it is).
std::shared_ptr<const ImagesByClass> labelled_images() {
  auto data = std::make_shared<ImagesByClass>();
  data->images = Array(DType::f32, Shape{50, 28, 28, 1});
  data->members.resize(10);
  for (std::int64_t i = 0; i < 50; ++i) {
    const auto label = static_cast<std::int32_t>(i / 5);
    for (std::size_t k = 0; k < 784; ++k)
      data->images.data<float>()[static_cast<std::size_t>(i) * 784 + k] = static_cast<float>(10 * label + i % 5);
    data->labels.push_back(label);
    data->members[static_cast<std::size_t>(label)].push_back(i);
  }
  return data;
}

int class_of(const Array& batch, std::int64_t row) {
  return static_cast<int>(batch.data<float>()[static_cast<std::size_t>(row) * 784]) / 10;
}

TEST(EmbeddingBatches, PairsAreHalfOfOneClassAndTripletsTakeTheirNegativeElsewhere) {
  const auto data = labelled_images();
  for (const Metric metric : {Metric::siamese, Metric::triplet}) {
    dataflow::DataFlowPtr flow = metric_batches(metric, data, 64, 3, 5);
    flow->reset_state();
    int batches = 0;
    std::set<int> anchors;
    while (const auto dp = flow->next()) {
      ++batches;
      ASSERT_EQ(dp->size(), 3u);
      for (std::int64_t i = 0; i < 64; ++i) {
        anchors.insert(class_of((*dp)[0], i));
        if (metric == Metric::siamese) {
          const bool same = (*dp)[2].data<float>()[static_cast<std::size_t>(i)] == 1.0f;
          EXPECT_EQ(same, i % 2 == 0);
          EXPECT_EQ(class_of((*dp)[0], i) == class_of((*dp)[1], i), same) << "pair " << i;
        } else {
          EXPECT_EQ(class_of((*dp)[0], i), class_of((*dp)[1], i)) << "triplet " << i;
          EXPECT_NE(class_of((*dp)[0], i), class_of((*dp)[2], i)) << "triplet " << i;
        }
      }
    }
    EXPECT_EQ(batches, 3);
    EXPECT_EQ(anchors.size(), 10u) << "192 draws should reach every class";
  }
}

TEST(EmbeddingBatches, ReplayTheSameDrawsFromTheSeed) {
  const auto data = labelled_images();
  dataflow::DataFlowPtr a = metric_batches(Metric::triplet, data, 8, 2, 9),
                        b = metric_batches(Metric::triplet, data, 8, 2, 9);
  a->reset_state();
  b->reset_state();
  for (int i = 0; i < 2; ++i) {
    const auto x = a->next(), y = b->next();
    for (std::size_t k = 0; k < 3; ++k)
      EXPECT_TRUE(std::equal((*x)[k].bytes().begin(), (*x)[k].bytes().end(), (*y)[k].bytes().begin()));
  }
}

TEST(EmbeddingNearestNeighbour, CountsTheQueriesWhoseNearestReferenceSharesTheirLabel) {
  Rng rng(3);
  const std::int64_t n = 40, q = 25, dim = 3;
  Array refs(DType::f32, Shape{n, dim}), queries(DType::f32, Shape{q, dim});
  for (float& v : refs.data<float>()) v = rng.uniform(-1, 1);
  for (float& v : queries.data<float>()) v = rng.uniform(-1, 1);
  std::vector<std::int32_t> ref_labels, query_labels;
  for (std::int64_t i = 0; i < n; ++i) ref_labels.push_back(static_cast<std::int32_t>(rng.below(3)));
  for (std::int64_t i = 0; i < q; ++i) query_labels.push_back(static_cast<std::int32_t>(rng.below(3)));
  // Direct: the distance to every reference, the smallest's label.
  int right = 0;
  for (std::int64_t i = 0; i < q; ++i) {
    std::vector<double> d;
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < dim; ++k)
        s += std::pow(queries.data<float>()[static_cast<std::size_t>(i * dim + k)] -
                          refs.data<float>()[static_cast<std::size_t>(j * dim + k)],
                      2);
      d.push_back(s);
    }
    const auto nearest = std::min_element(d.begin(), d.end()) - d.begin();
    right += ref_labels[static_cast<std::size_t>(nearest)] == query_labels[static_cast<std::size_t>(i)];
  }
  EXPECT_DOUBLE_EQ(nearest_neighbour_accuracy(refs, ref_labels, queries, query_labels), right / 25.0);
  // Queries equal to references take their labels.
  EXPECT_DOUBLE_EQ(nearest_neighbour_accuracy(refs, ref_labels, refs, ref_labels), 1.0);
}

TEST(EmbeddingPicture, DrawsTheLongestSpreadAcrossAndColoursByClass) {
  // Points of class 0 at t (1, 2, 2) / 3 for t in [-1, 0) and of class 3 for t in (0, 1],
  // in three dimensions: the first principal axis is that line, pointing to positive t
  // (its largest component positive), so class 0 lands left and class 3 right; nothing
  // spreads along the second, so both lie on the middle rows.
  const std::int64_t n = 200;
  Array points(DType::f32, Shape{n, 3});
  std::vector<std::int32_t> labels;
  for (std::int64_t i = 0; i < n; ++i) {
    const float t = i < n / 2 ? -1.0f + static_cast<float>(i) / 100.0f : static_cast<float>(i - n / 2 + 1) / 100.0f;
    for (int k = 0; k < 3; ++k)
      points.data<float>()[static_cast<std::size_t>(i * 3 + k)] = t * (k == 0 ? 1.0f : 2.0f) / 3.0f;
    labels.push_back(i < n / 2 ? 0 : 3);
  }
  const Array picture = embedding_picture(points, labels, 100);
  ASSERT_EQ(picture.shape(), (Shape{100, 100, 3}));
  const auto colour_at = [&](int x, int y) {
    const std::uint8_t* p = picture.data<std::uint8_t>().data() + (y * 100 + x) * 3;
    return std::array<int, 3>{p[0], p[1], p[2]};
  };
  int left_blue = 0, right_red = 0, elsewhere = 0;
  for (int y = 0; y < 100; ++y) {
    for (int x = 0; x < 100; ++x) {
      const auto c = colour_at(x, y);
      if (c == std::array<int, 3>{255, 255, 255}) continue;
      const bool middle_rows = std::abs(y - 50) <= 3;
      if (c == std::array<int, 3>{31, 119, 180} && middle_rows)
        ++(x < 50 ? left_blue : elsewhere);
      else if (c == std::array<int, 3>{214, 39, 40} && middle_rows)
        ++(x >= 50 ? right_red : elsewhere);
      else
        ++elsewhere;
    }
  }
  EXPECT_GT(left_blue, 40);
  EXPECT_GT(right_red, 40);
  EXPECT_EQ(elsewhere, 0);
}

}  // namespace
}  // namespace vkp::examples
