// The ops sequence models need: gather (embedding lookup) and its deterministic segment
// sum, one_hot, where, clip_by_value, floor and round, stack/unstack/split, reduce_min,
// band_part and the causal mask, layer_norm, batched matmul with broadcasting, and the
// cross entropy over [batch, time, vocab] with a weight mask. Forward against the
// double-precision reference, gradients against finite differences (op_check.h), plus
// the properties a reference cannot show: bit-for-bit determinism, exact selections,
// errors for indices out of range.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/internal/reference.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "op_check.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;
using graph::f32;
using graph::i32;

using Inputs = std::vector<Tensor>;

std::vector<float> values(const Array& a) { return {a.data<float>().begin(), a.data<float>().end()}; }

Array f32_array(Shape shape, const std::vector<float>& v) { return Array::from(std::move(shape), v); }

Array i32_array(Shape shape, const std::vector<std::int32_t>& v) {
  Array a(DType::i32, std::move(shape));
  std::copy(v.begin(), v.end(), a.data<std::int32_t>().begin());
  return a;
}

TEST(SequenceOps, GatherAlongEachAxis) {
  check_op({.name = "gather rows",
            .inputs = {f32({7, 5}), i32({13})},
            .build = [](Inputs& in) { return gather(in[0], in[1]); },
            .label_range = 7});
  check_op({.name = "gather axis 1, 2-D indices",
            .inputs = {f32({3, 6, 4}), i32({2, 5})},
            .build = [](Inputs& in) { return gather(in[0], in[1], 1); },
            .label_range = 6});
  check_op({.name = "gather last axis",
            .inputs = {f32({4, 9}), i32({3})},
            .build = [](Inputs& in) { return gather(in[0], in[1], -1); },
            .label_range = 9});
  // Rows wider than a workgroup (70 > 64) and many repeated indices (640 into 23 rows).
  check_op({.name = "gather wide rows, repeated indices",
            .inputs = {f32({23, 70}), i32({640})},
            .build = [](Inputs& in) { return gather(in[0], in[1]); },
            .label_range = 23,
            .backward_tolerance = 3e-4});
}

// The gradient of an embedding lookup sums the rows of dy that read each table row, in
// the order of their positions: the same float32 sum computed here in that order must
// match bit for bit, and two runs must agree bit for bit.
TEST(SequenceOps, GatherGradientIsAnOrderedSegmentSumBitForBit) {
  const std::int64_t rows = 11, width = 67, count = 500;
  Graph g(1);
  const Tensor table = placeholder(g, "table", f32({rows, width}));
  const Tensor ids = placeholder(g, "ids", i32({count}));
  const Tensor dy = placeholder(g, "dy", f32({count, width}));
  const Tensor dtable = gradients(gather(table, ids), {table}, dy)[0];
  Rng rng(5);
  std::vector<std::int32_t> id(static_cast<std::size_t>(count));
  for (auto& v : id) v = static_cast<std::int32_t>(rng.below(rows - 1));  // the last row stays unread
  const std::vector<float> dyv = random_floats(static_cast<std::size_t>(count * width), 6, -3.0f, 3.0f);
  const Feeds feeds = {{table, f32_array(Shape{rows, width}, random_floats(rows * width, 7))},
                       {ids, i32_array(Shape{count}, id)},
                       {dy, f32_array(Shape{count, width}, dyv)}};
  Session s(g, device());
  const std::vector<float> first = values(s.run(feeds, {dtable})[0]);
  const std::vector<float> second = values(s.run(feeds, {dtable})[0]);
  std::vector<float> want(static_cast<std::size_t>(rows * width), 0.0f);
  for (std::int64_t k = 0; k < count; ++k)
    for (std::int64_t i = 0; i < width; ++i)
      want[static_cast<std::size_t>(id[static_cast<std::size_t>(k)] * width + i)] += dyv[static_cast<std::size_t>(k * width + i)];
  EXPECT_EQ(first, want);
  EXPECT_EQ(second, first);
}

TEST(SequenceOps, AFedIndexOutOfRangeIsAnErrorNamingTheOpAndTheIndex) {
  Graph g(1);
  const Tensor table = placeholder(g, "table", f32({5, 3}));
  const Tensor ids = placeholder(g, "ids", i32({4}));
  const Tensor y = gather(table, reshape(ids, {2, 2}));  // through a view
  Session s(g, device());
  const Array t = f32_array(Shape{5, 3}, random_floats(15, 1));
  EXPECT_NO_THROW(s.run({{table, t}, {ids, i32_array(Shape{4}, {0, 4, 2, 1})}}, {y}));
  for (const std::int32_t bad : {5, -1}) {
    try {
      s.run({{table, t}, {ids, i32_array(Shape{4}, {0, 1, bad, 2})}}, {y});
      ADD_FAILURE() << "index " << bad << " was accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("gather"), std::string::npos) << m;
      EXPECT_NE(m.find("index " + std::to_string(bad) + " at position 2"), std::string::npos) << m;
      EXPECT_NE(m.find("[0, 5)"), std::string::npos) << m;
    }
  }
}

// A computed index (here an argmax over 6 columns into a table of 3 rows) cannot be
// checked before the step: its row comes out NaN, never read from beyond the table.
TEST(SequenceOps, AComputedIndexOutOfRangeGivesNaN) {
  Graph g(1);
  const Tensor table = placeholder(g, "table", f32({3, 2}));
  const Tensor scores = placeholder(g, "scores", f32({2, 6}));
  const Tensor y = gather(table, argmax(scores));
  Session s(g, device());
  const std::vector<float> got =
      values(s.run({{table, f32_array(Shape{3, 2}, {1, 2, 3, 4, 5, 6})},
                    {scores, f32_array(Shape{2, 6}, {0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 9, 0})}},
                   {y})[0]);
  EXPECT_EQ(got[0], 5.0f);
  EXPECT_EQ(got[1], 6.0f);
  EXPECT_TRUE(std::isnan(got[2]) && std::isnan(got[3])) << got[2] << " " << got[3];
}

TEST(SequenceOps, OneHotMatchesTensorFlowIncludingOutOfRangeRows) {
  Graph g(1);
  const Tensor ids = placeholder(g, "ids", i32({2, 3}));
  const Tensor plain = one_hot(ids, 4);
  const Tensor scaled = one_hot(ids, 4, 5.0f, -1.0f);
  Session s(g, device());
  const std::vector<Array> got = s.run({{ids, i32_array(Shape{2, 3}, {0, 3, -1, 2, 4, 1})}}, {plain, scaled});
  EXPECT_EQ(got[0].shape().dims(), (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(values(got[0]), (std::vector<float>{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,  //
                                                0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(values(got[1]), (std::vector<float>{5, -1, -1, -1, -1, -1, -1, 5, -1, -1, -1, -1,  //
                                                -1, -1, 5, -1, -1, -1, -1, -1, -1, 5, -1, -1}));
}

// A fixed 0/1 pattern with some other nonzero values, as a constant condition.
Tensor pattern(Graph& g, std::int64_t rows, std::int64_t cols) {
  Array c(DType::f32, Shape{rows, cols});
  for (std::int64_t i = 0; i < rows * cols; ++i) c.data<float>()[static_cast<std::size_t>(i)] = (i * 7 % 5 < 2) ? 0.0f : (i % 3 == 0 ? -2.0f : 1.0f);
  return constant(g, std::move(c), "condition");
}

TEST(SequenceOps, WhereSelectsAndRoutesGradients) {
  check_op({.name = "where, b broadcast",
            .inputs = {f32({5, 7}), f32({7})},
            .build = [](Inputs& in) { return graph::where(pattern(in[0].graph(), 5, 7), in[0], in[1]); }});
  // Exact selection: infinities and NaN in the branch not taken do not leak.
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({2, 3}));
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor masked = graph::where(causal_mask(g, 3), reshape(x, {2, 1, 3}), scalar(g, -inf));
  const Tensor other = graph::where(constant(g, f32_array(Shape{3}, {1, 0, 1}), "c"), x, scalar(g, nan));
  Session s(g, device());
  const std::vector<Array> got = s.run({{x, f32_array(Shape{2, 3}, {1, 2, 3, 4, 5, 6})}}, {masked, other});
  EXPECT_EQ(values(got[0]), (std::vector<float>{1, -inf, -inf, 1, 2, -inf, 1, 2, 3, 4, -inf, -inf, 4, 5, -inf, 4, 5, 6}));
  const std::vector<float> o = values(got[1]);
  EXPECT_EQ(o[0], 1.0f);
  EXPECT_TRUE(std::isnan(o[1]));
  EXPECT_EQ(o[5], 6.0f);
}

TEST(SequenceOps, ClipReduceMinStackUnstackSplit) {
  check_op({.name = "clip_by_value",
            .inputs = {f32({9, 11})},
            .build = [](Inputs& in) { return clip_by_value(in[0], -0.7f, 1.1f); }});
  check_op({.name = "reduce_min rows",
            .inputs = {f32({6, 13})},
            .build = [](Inputs& in) { return reduce_min(in[0], {1}); }});
  check_op({.name = "reduce_min all",
            .inputs = {f32({5, 3, 4})},
            .build = [](Inputs& in) { return reduce_min(in[0]); }});
  check_op({.name = "stack axis 1",
            .inputs = {f32({3, 5}), f32({3, 5}), f32({3, 5})},
            .build = [](Inputs& in) { return stack({in[0], in[1], in[2]}, 1); }});
  check_op({.name = "unstack then stack reversed",
            .inputs = {f32({4, 3, 2})},
            .build = [](Inputs& in) {
              std::vector<Tensor> parts = unstack(in[0], 1);
              return stack({parts[2] * 3.0f, parts[0], parts[1]}, -1);
            }});
  check_op({.name = "split sizes",
            .inputs = {f32({3, 10})},
            .build = [](Inputs& in) {
              const std::vector<Tensor> p = split(in[0], std::vector<std::int64_t>{2, 5, 3}, 1);
              return concat({p[2] * p[2], p[0], p[1] * 2.0f}, 1);
            }});
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({4, 6}));
  EXPECT_THROW(split(x, 4, 1), Error);
  EXPECT_THROW(split(x, std::vector<std::int64_t>{2, 2}, 1), Error);
  EXPECT_THROW(stack({x, placeholder(g, "y", f32({6, 4}))}), Error);
  EXPECT_THROW(clip_by_value(x, 1.0f, -1.0f), Error);
}

// Slices that tile a tensor along one axis get their gradient back as one concat, not as
// a tensor-sized pad per slice summed (which made unrolled sequences quadratic); slices
// that leave a gap keep the pads. The values are check_op's business above.
TEST(SequenceOps, GradientsOfTilingSlicesAreConcatenatedNotPadded) {
  const auto count_pads = [](bool tile) {
    Graph g(1);
    const Tensor x = placeholder(g, "x", f32({6, 4}));
    Tensor loss = scalar(g, 0.0f);
    for (std::int64_t t = 0; t < (tile ? 6 : 5); ++t) loss = loss + reduce_sum(square(slice(x, {t, 0}, {1, -1})) * float(t + 1));
    const int before = g.size();
    gradients(loss, {x});
    int pads = 0, concats = 0;
    for (int id = before; id < g.size(); ++id) {
      pads += g.node(id).op == OpKind::pad;
      concats += g.node(id).op == OpKind::concat;
    }
    return std::pair{pads, concats};
  };
  EXPECT_EQ(count_pads(true).second, 1);
  EXPECT_EQ(count_pads(false).second, 0);
  EXPECT_EQ(count_pads(false).first, 5);
  check_op({.name = "tiling slices",
            .inputs = {f32({6, 4})},
            .build = [](Inputs& in) {
              Tensor y = slice(in[0], {0, 0}, {1, -1});
              for (std::int64_t t = 1; t < 6; ++t) y = y + slice(in[0], {t, 0}, {1, -1}) * float(t + 1);
              return y;
            }});
}

TEST(SequenceOps, FloorAndRoundWithAndWithoutStraightThrough) {
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({8}));
  const Tensor fl = graph::floor(x), ro = graph::round(x);
  const Tensor ro_st = graph::round(x, true);
  EXPECT_FALSE(gradients(reduce_sum(fl), {x})[0].valid());
  EXPECT_FALSE(gradients(reduce_sum(ro), {x})[0].valid());
  const Tensor w = constant(g, f32_array(Shape{8}, {1, 2, 3, 4, 5, 6, 7, 8}), "w");
  const Tensor dx = gradients(reduce_sum(ro_st * w), {x})[0];
  Session s(g, device());
  const std::vector<Array> got =
      s.run({{x, f32_array(Shape{8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.7f, 3.2f, 7.0f})}}, {fl, ro, dx});
  EXPECT_EQ(values(got[0]), (std::vector<float>{0, 1, 2, -1, -2, -3, 3, 7}));
  EXPECT_EQ(values(got[1]), (std::vector<float>{0, 2, 2, -0.0f, -2, -3, 3, 7}));  // halves to even
  EXPECT_EQ(values(got[2]), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(SequenceOps, BandPartAndCausalMask) {
  for (const auto& [lower, upper] : std::vector<std::pair<int, int>>{{0, 0}, {1, -1}, {-1, 2}, {2, 1}})
    check_op({.name = "band_part " + std::to_string(lower) + " " + std::to_string(upper),
              .inputs = {f32({2, 5, 6})},
              .build = [lower = lower, upper = upper](Inputs& in) { return band_part(in[0], lower, upper); }});
  Graph g(1);
  const Tensor m = causal_mask(g, 3);
  Session s(g, device());
  EXPECT_EQ(values(s.run({}, {m})[0]), (std::vector<float>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
}

TEST(SequenceOps, LayerNorm) {
  check_op({.name = "layer_norm",
            .inputs = {f32({5, 7})},
            .more_inputs = {{f32({3, 4, 129})}, {f32({2, 1})}},
            .build = [](Inputs& in) { return layer_norm(in[0], 1e-5f); },
            .forward_tolerance = 2e-5,
            .gradient_tolerance = 2e-5,
            .backward_tolerance = 2e-4});
  // With a scale and shift (what the LayerNorm layer adds), and a large mean: the two
  // passes keep the variance free of cancellation.
  check_op({.name = "layer_norm scaled, offset",
            .inputs = {f32({6, 33}), f32({33}), f32({33})},
            .build = [](Inputs& in) { return layer_norm(in[0] + 100.0f, 1e-3f) * in[1] + in[2]; },
            .forward_tolerance = 5e-5,
            .gradient_tolerance = 5e-5,
            .backward_tolerance = 5e-4});
}

TEST(SequenceOps, BatchedMatmulBroadcastsLeadingAxes) {
  check_op({.name = "matmul [2, 3, 4, 5] x [3, 5, 6]",
            .inputs = {f32({2, 3, 4, 5}), f32({3, 5, 6})},
            .build = [](Inputs& in) { return matmul(in[0], in[1]); }});
  check_op({.name = "matmul [1, 3, 4, 5] x [2, 1, 6, 5]^T",
            .inputs = {f32({1, 3, 4, 5}), f32({2, 1, 6, 5})},
            .build = [](Inputs& in) { return matmul(in[0], in[1], /*transpose_a=*/false, /*transpose_b=*/true); }});
  Graph g(1);
  EXPECT_THROW(matmul(placeholder(g, "a", f32({2, 3, 4, 5})), placeholder(g, "b", f32({4, 5, 6}))), Error);
}

TEST(SequenceOps, DenseSoftmaxCrossEntropy) {
  check_op({.name = "softmax_cross_entropy",
            .inputs = {f32({4, 7}), f32({4, 7})},
            .more_inputs = {{f32({2, 3, 5}), f32({2, 3, 5})}},
            .build = [](Inputs& in) { return softmax_cross_entropy(in[0], softmax(in[1])); }});
}

TEST(SequenceOps, CrossEntropyOverBatchTimeVocabWithAWeightMask) {
  check_op({.name = "xent [batch, time, vocab]",
            .inputs = {f32({3, 5, 11}), i32({3, 5})},
            .build = [](Inputs& in) { return sparse_softmax_cross_entropy(in[0], in[1]); },
            .label_range = 11});
  check_op({.name = "xent weighted",
            .inputs = {f32({2, 4, 9}), i32({2, 4}), f32({2, 4})},
            .build = [](Inputs& in) { return sparse_softmax_cross_entropy(in[0], in[1], in[2]); },
            .label_range = 9});
  // Masked positions contribute exactly 0, to the loss and to the logits' gradient.
  Graph g(1);
  const Tensor logits = placeholder(g, "logits", f32({1, 3, 4}));
  const Tensor labels = placeholder(g, "labels", i32({1, 3}));
  const Tensor loss = sparse_softmax_cross_entropy(logits, labels, constant(g, f32_array(Shape{1, 3}, {1, 0, 1}), "w"));
  const Tensor dlogits = gradients(reduce_sum(loss), {logits})[0];
  Session s(g, device());
  const std::vector<Array> got = s.run({{logits, f32_array(Shape{1, 3, 4}, random_floats(12, 3))},
                                        {labels, i32_array(Shape{1, 3}, {2, 0, 3})}},
                                       {loss, dlogits});
  EXPECT_EQ(values(got[0])[1], 0.0f);
  EXPECT_GT(values(got[0])[0], 0.0f);
  for (int c = 4; c < 8; ++c) EXPECT_EQ(values(got[1])[static_cast<std::size_t>(c)], 0.0f) << c;
}

}  // namespace
}  // namespace vkp::test
