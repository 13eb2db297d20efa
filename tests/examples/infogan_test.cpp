// The InfoGAN example's measures and codes: code_agreement against a search of every
// one of the 10! matchings and the mutual information of tables whose value is known;
// the grids' codes as docs/guide.md describes them; which variables the Q head's loss
// moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "infogan_model.h"
#include "vk_test_env.h"

namespace vkp::examples {
namespace {

using Table = std::array<std::array<std::int64_t, 10>, 10>;

// The best matching by trying all 3,628,800 permutations.
std::int64_t best_by_permutations(const Table& t) {
  std::array<int, 10> label;
  std::iota(label.begin(), label.end(), 0);
  std::int64_t best = -1;
  do {
    std::int64_t sum = 0;
    for (std::size_t c = 0; c < 10; ++c) sum += t[c][static_cast<std::size_t>(label[c])];
    best = std::max(best, sum);
  } while (std::next_permutation(label.begin(), label.end()));
  return best;
}

TEST(InfoGanCodeAgreement, MatchesTheBestOfEveryPermutationOnRandomTables) {
  Rng rng(7);
  for (int trial = 0; trial < 3; ++trial) {
    Table t{};
    std::int64_t total = 0;
    for (auto& row : t) {
      for (auto& v : row) {
        v = static_cast<std::int64_t>(rng.below(trial == 0 ? 3 : 200));
        total += v;
      }
    }
    const CodeAgreement a = code_agreement(t);
    EXPECT_DOUBLE_EQ(a.matched_accuracy, static_cast<double>(best_by_permutations(t)) / static_cast<double>(total));
    // The matching it reports is one-to-one and scores what it claims.
    std::array<bool, 10> used{};
    std::int64_t scored = 0;
    for (std::size_t c = 0; c < 10; ++c) {
      const auto l = static_cast<std::size_t>(a.matched_label[c]);
      ASSERT_LT(l, 10u);
      EXPECT_FALSE(used[l]) << "label " << l << " matched twice";
      used[l] = true;
      scored += t[c][l];
    }
    EXPECT_DOUBLE_EQ(a.matched_accuracy, static_cast<double>(scored) / static_cast<double>(total));
  }
}

TEST(InfoGanCodeAgreement, KnownTables) {
  // Each category one class, shuffled: everything matched, log 10 nats.
  const std::array<int, 10> shuffle = {3, 7, 0, 9, 1, 4, 8, 2, 6, 5};
  Table permuted{};
  for (std::size_t c = 0; c < 10; ++c) permuted[c][static_cast<std::size_t>(shuffle[c])] = 100;
  const CodeAgreement p = code_agreement(permuted);
  EXPECT_DOUBLE_EQ(p.matched_accuracy, 1.0);
  EXPECT_EQ(p.matched_label, shuffle);
  EXPECT_NEAR(p.mutual_information, std::log(10.0), 1e-12);
  // Labels independent of the category: no information, a tenth matched.
  Table uniform{};
  for (auto& row : uniform) row.fill(5);
  const CodeAgreement u = code_agreement(uniform);
  EXPECT_NEAR(u.mutual_information, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(u.matched_accuracy, 0.1);
  // Two categories labelled as one class, another class never named: I = log 10 - 0.2 log 2
  // (the label is known from the category; H(label) loses the merge).
  Table merged{};
  for (std::size_t c = 0; c < 10; ++c) merged[c][c] = 100;
  merged[1][1] = 0;
  merged[1][0] = 100;
  const CodeAgreement m = code_agreement(merged);
  EXPECT_DOUBLE_EQ(m.matched_accuracy, 0.9);
  EXPECT_NEAR(m.mutual_information, std::log(10.0) - 0.2 * std::log(2.0), 1e-12);
}

TEST(InfoGanCodes, GridRowsAreCategoriesAndColumnsSweepOneStyleWithTheNoiseFixed) {
  for (int axis = 0; axis < 2; ++axis) {
    const std::vector<Array> rows = code_grid(axis, 3);
    ASSERT_EQ(rows.size(), 3u);
    const auto category = rows[0].data<float>(), style = rows[1].data<float>(), noise = rows[2].data<float>();
    for (std::size_t i = 0; i < 100; ++i) {
      const std::size_t r = i / 10, c = i % 10;
      for (std::size_t k = 0; k < 10; ++k) EXPECT_EQ(category[i * 10 + k], k == r ? 1.0f : 0.0f);
      EXPECT_FLOAT_EQ(style[i * 2 + static_cast<std::size_t>(axis)], -1.0f + 2.0f * static_cast<float>(c) / 9.0f);
      EXPECT_EQ(style[i * 2 + static_cast<std::size_t>(1 - axis)], 0.0f);
      for (std::size_t k = 0; k < static_cast<std::size_t>(kInfoNoise); ++k) EXPECT_EQ(noise[i * 62 + k], noise[k]);
    }
  }
}

TEST(InfoGanCodes, NoiseGridRowsAreCategoriesAndColumnsShareOneNoiseDrawEach) {
  const std::vector<Array> rows = noise_grid(5);
  ASSERT_EQ(rows.size(), 3u);
  const auto category = rows[0].data<float>(), style = rows[1].data<float>(), noise = rows[2].data<float>();
  const auto n = static_cast<std::size_t>(kInfoNoise);
  for (std::size_t i = 0; i < 100; ++i) {
    const std::size_t r = i / 10, c = i % 10;
    for (std::size_t k = 0; k < 10; ++k) EXPECT_EQ(category[i * 10 + k], k == r ? 1.0f : 0.0f);
    EXPECT_EQ(style[i * 2], 0.0f);
    EXPECT_EQ(style[i * 2 + 1], 0.0f);
    for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(noise[i * n + k], noise[c * n + k]) << "cell " << i;
  }
  // The ten columns are ten draws: no two alike, each within [-1, 1].
  for (std::size_t a = 0; a < 10; ++a) {
    for (std::size_t k = 0; k < n; ++k) EXPECT_LE(std::abs(noise[a * n + k]), 1.0f);
    for (std::size_t b = a + 1; b < 10; ++b) EXPECT_NE(noise[a * n], noise[b * n]) << "columns " << a << ", " << b;
  }
}

// The gradients of the discriminator's loss for its first convolution and the Q head's
// output layer, and of the generator's loss for its first layer, at one batch, for
// info weight `lambda` (the same initial values whatever it is).
std::vector<Array> info_gradients(float lambda) {
  using namespace graph;
  Graph g(5);
  InfoGan gan(8, 2e-4f, lambda);
  std::vector<Tensor> in;
  for (const train::InputSpec& s : gan.inputs()) in.push_back(placeholder(g, s.name, s.type));
  {
    TowerContext training(g, "", 0, true);
    gan.build_graph(in);
  }
  const Tensor trunk = g.find_variable("discrim/conv0/W"), q = g.find_variable("discrim/q_codes/W"),
               gen = g.find_variable("gen/fc1/W");
  EXPECT_TRUE(trunk.valid() && q.valid() && gen.valid());
  std::vector<Tensor> wanted = gradients(gan.d_loss(), {trunk, q});
  wanted.push_back(gradients(gan.g_loss(), {gen})[0]);
  Rng rng(11);
  Feeds feeds;
  for (std::size_t i = 0; i < in.size(); ++i) {
    Array a(DType::f32, Shape(in[i].dims()));
    for (float& v : a.data<float>()) v = i == 0 ? rng.uniform(0, 1) : rng.uniform(-1, 1);
    if (i == 1) {  // one-hot categories
      for (float& v : a.data<float>()) v = 0;
      for (std::int64_t r = 0; r < 8; ++r) a.data<float>()[static_cast<std::size_t>(r * kCategories + r % 10)] = 1;
    }
    feeds.emplace_back(in[i], a);
  }
  Session session(g, test::device());
  return session.run(feeds, wanted);
}

double largest_difference(const Array& a, const Array& b) {
  double most = 0;
  for (std::size_t i = 0; i < a.data<float>().size(); ++i)
    most = std::max(most, static_cast<double>(std::abs(a.data<float>()[i] - b.data<float>()[i])));
  return most;
}

double largest_magnitude(const Array& a) {
  double most = 0;
  for (float v : a.data<float>()) most = std::max(most, static_cast<double>(std::abs(v)));
  return most;
}

// The discriminator's loss trains the Q head on the discriminator's features without
// moving those features (so that the generator must make the codes visible in what tells
// real from fake), while the generator's loss carries the Q head's loss into the
// generator.
TEST(InfoGanModel, TheQLossMovesTheQHeadAndTheGeneratorButNotTheDiscriminatorsFeatures) {
  const std::vector<Array> without = info_gradients(0.0f), with = info_gradients(3.0f);
  ASSERT_EQ(without.size(), 3u);
  ASSERT_GT(largest_magnitude(without[0]), 0.0);
  EXPECT_LE(largest_difference(with[0], without[0]), 1e-5 * largest_magnitude(without[0]))
      << "the Q head's loss reached the discriminator's convolution";
  EXPECT_EQ(largest_magnitude(without[1]), 0.0);
  EXPECT_GT(largest_magnitude(with[1]), 0.0) << "the Q head is not trained";
  EXPECT_GT(largest_difference(with[2], without[2]), 1e-3 * largest_magnitude(without[2]))
      << "the Q head's loss does not reach the generator";
}

}  // namespace
}  // namespace vkp::examples
