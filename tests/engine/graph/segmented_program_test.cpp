// Programs cut into segments (CompileOptions::segments): each bucket of fetches arrives
// in the order the schedule computes it (backward: late layers first), with bitwise the
// values an uncut program fetches, while the rest of the program still runs; BatchNorm
// updates, variants and timestamps work across the cuts; bad segment options are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "test_models.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;

// A model with the gradients of its trainable variables: fetch 0 is the loss, fetch
// 1 + i the gradient of variable i.
struct Net {
  std::unique_ptr<Graph> graph = std::make_unique<Graph>(7);
  Model model;
  std::vector<std::string> names;  // trainable variables
  std::vector<Tensor> fetches;
  FetchSegments gradients_in_buckets(std::size_t bucket_bytes) const {
    FetchSegments s{{}, bucket_bytes};
    for (std::size_t i = 0; i < names.size(); ++i) s.fetches.push_back(1 + static_cast<int>(i));
    return s;
  }
};

Net make_net(Model (*build)(Graph&, std::int64_t)) {
  Net n;
  n.model = build(*n.graph, kUnknown);
  const std::vector<Tensor> vars = n.graph->trainable_variables();
  const std::vector<Tensor> grads = gradients(n.model.loss, vars);
  n.fetches.push_back(n.model.loss);
  for (std::size_t i = 0; i < vars.size(); ++i) {
    n.names.push_back(std::get<VariableAttrs>(vars[i].node().attrs).var_name);
    n.fetches.push_back(grads[i]);
  }
  return n;
}

std::vector<FeedSpec> specs_for(const Model& m, const std::vector<Array>& batch) {
  return {{m.x, {batch[0].dtype(), batch[0].shape().dims()}}, {m.labels, {batch[1].dtype(), batch[1].shape().dims()}}};
}

std::vector<Array> batch_of(std::pair<Array, Array> p) { return {std::move(p.first), std::move(p.second)}; }

void expect_bitwise(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape().dims(), want.shape().dims()) << what;
  EXPECT_EQ(std::memcmp(got.bytes().data(), want.bytes().data(), want.nbytes()), 0) << what;
}

// Runs `cut` on `batch` segment by segment, checking each bucket against `want` as it
// arrives and that every segmented fetch arrives exactly once.
void expect_segments_match(Program& cut, const std::vector<Array>& batch, const std::vector<Array>& want,
                           const FetchSegments& segments) {
  cut.write_feeds(batch, 0);
  cut.submit(0);
  std::vector<Array> got;
  std::vector<int> arrivals(want.size(), 0);
  for (int s = 0; s < cut.segment_count(); ++s) {
    cut.wait_segment(s, got);
    ASSERT_EQ(got.size(), want.size());
    for (int i : cut.segment_fetches(s)) {
      expect_bitwise(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)],
                     "fetch " + std::to_string(i) + " in segment " + std::to_string(s));
      ++arrivals[static_cast<std::size_t>(i)];
    }
  }
  for (int i : segments.fetches) EXPECT_EQ(arrivals[static_cast<std::size_t>(i)], 1) << "fetch " << i;
  cut.wait(got);
  for (std::size_t i = 0; i < want.size(); ++i)
    expect_bitwise(got[i], want[i], "fetch " + std::to_string(i) + " at the end");
}

TEST(SegmentedProgram, EachBucketHoldsTheValuesOfAnUncutProgram) {
  const Net net = make_net(mlp);
  const std::size_t n = net.names.size();
  // Gradient bytes: fc0/W 2048, fc0/b 128, fc1/W 512, fc1/b 16.
  for (const std::size_t bucket_bytes : {std::size_t{1}, std::size_t{600}, std::size_t{1} << 30}) {
    SCOPED_TRACE("bucket_bytes " + std::to_string(bucket_bytes));
    Session session(*net.graph, device());
    const std::vector<Array> first = batch_of(mlp_batch(24, 0));
    Program& whole = session.program(specs_for(net.model, first), net.fetches);
    const FetchSegments segments = net.gradients_in_buckets(bucket_bytes);
    Program& cut = session.program(specs_for(net.model, first), net.fetches, {}, 1, segments);
    EXPECT_EQ(whole.segment_count(), 0);
    const int buckets = bucket_bytes == 1 ? static_cast<int>(n) : bucket_bytes == 600 ? 2 : 1;
    EXPECT_EQ(cut.segment_count(), buckets);
    EXPECT_EQ(cut.dispatch_count(), whole.dispatch_count());
    // Another batch every run: a segment read too early would show the last run's values.
    for (std::uint64_t step = 0; step < 3; ++step) {
      const std::vector<Array> batch = batch_of(mlp_batch(24, step));
      std::vector<Array> want;
      whole.run(batch, want);
      expect_segments_match(cut, batch, want, segments);
    }
  }
}

TEST(SegmentedProgram, BucketsFollowBackwardLateLayersFirst) {
  const Net net = make_net(mlp);
  Session session(*net.graph, device());
  const std::vector<Array> batch = batch_of(mlp_batch(8, 0));
  Program& cut = session.program(specs_for(net.model, batch), net.fetches, {}, 1, net.gradients_in_buckets(1));
  ASSERT_EQ(cut.segment_count(), 4);
  auto layer_of = [&](int s) {
    const std::vector<int>& fetches = cut.segment_fetches(s);
    EXPECT_EQ(fetches.size(), 1u);
    return net.names[static_cast<std::size_t>(fetches[0] - 1)].substr(0, 3);
  };
  EXPECT_EQ(layer_of(0), "fc1");
  EXPECT_EQ(layer_of(1), "fc1");
  EXPECT_EQ(layer_of(2), "fc0");
  EXPECT_EQ(layer_of(3), "fc0");
}

TEST(SegmentedProgram, ABucketArrivesWhileTheRestStillRuns) {
  Net net = make_net(mlp);
  // A tail of dependent 320x320 products, created (so scheduled) after the gradients:
  // tens of milliseconds or more on any device, so when the last bucket of gradients
  // arrives the program cannot have finished unless the segments were not cut.
  Graph& g = *net.graph;
  const std::vector<float> values = random_floats(320 * 320, 3, -0.1f, 0.1f);
  Array w(DType::f32, Shape{320, 320});
  std::memcpy(w.bytes().data(), values.data(), w.nbytes());
  Tensor t = constant(g, w, "tail_w");
  const Tensor weights = t;
  for (int i = 0; i < 48; ++i) t = tanh(matmul(t, weights));
  net.fetches.push_back(t);
  Session session(g, device());
  const std::vector<Array> batch = batch_of(mlp_batch(16, 1));
  const FetchSegments segments = net.gradients_in_buckets(1);
  Program& whole = session.program(specs_for(net.model, batch), net.fetches);
  Program& cut = session.program(specs_for(net.model, batch), net.fetches, {}, 1, segments);
  std::vector<Array> want;
  whole.run(batch, want);
  for (int run = 0; run < 2; ++run) {
    cut.write_feeds(batch, 0);
    cut.submit(0);
    std::vector<Array> got;
    for (int s = 0; s < cut.segment_count(); ++s) cut.wait_segment(s, got);
    EXPECT_FALSE(cut.finished()) << "every gradient bucket arrived only once the whole program had run";
    cut.wait(got);
    EXPECT_TRUE(cut.finished());
    for (std::size_t i = 0; i < want.size(); ++i) expect_bitwise(got[i], want[i], "fetch " + std::to_string(i));
  }
}

TEST(SegmentedProgram, BatchNormUpdatesAndVariantsMatchAnUncutProgram) {
  const Net net = make_net(convnet);
  const std::vector<Tensor>& updates = net.graph->collection(kUpdateOps);
  ASSERT_FALSE(updates.empty());
  // Two sessions from the same initial values; the updates change their variables.
  Session plain(*net.graph, device()), segmented(*net.graph, device());
  const std::vector<Array> first = batch_of(image_batch(12, 0));
  Program& whole = plain.program(specs_for(net.model, first), net.fetches, updates);
  const FetchSegments segments = net.gradients_in_buckets(200);
  Program& cut = segmented.program(specs_for(net.model, first), net.fetches, updates, 2, segments);
  EXPECT_GT(cut.segment_count(), 1);
  for (std::uint64_t step = 0; step < 4; ++step) {
    const std::vector<Array> batch = batch_of(image_batch(12, step));
    std::vector<Array> want, got;
    plain.run_program(whole, batch, want);
    const int variant = static_cast<int>(step % 2);
    cut.write_feeds(batch, variant);
    segmented.submit_program(cut, variant);
    for (int s = 0; s < cut.segment_count(); ++s) {
      cut.wait_segment(s, got);
      for (int i : cut.segment_fetches(s))
        expect_bitwise(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)],
                       "fetch " + std::to_string(i));
    }
    segmented.wait_program(cut, got);
    for (std::size_t i = 0; i < want.size(); ++i) expect_bitwise(got[i], want[i], "fetch " + std::to_string(i));
  }
  for (const Tensor& v : net.graph->variables()) {
    const std::string& name = std::get<VariableAttrs>(v.node().attrs).var_name;
    expect_bitwise(segmented.variable(name), plain.variable(name), name);
  }
}

TEST(SegmentedProgram, TimestampsCoverEverySegment) {
  const Net net = make_net(mlp);
  Session session(*net.graph, device(), {.timestamps = true});
  const std::vector<Array> batch = batch_of(mlp_batch(8, 0));
  Program& cut = session.program(specs_for(net.model, batch), net.fetches, {}, 1, net.gradients_in_buckets(1));
  std::vector<Array> got;
  cut.run(batch, got);
  if (!device().limits().timestamps) GTEST_SKIP() << "no timestamps on this device";
  const std::vector<vk::KernelTime> times = cut.kernel_times();
  const auto kernels = std::count_if(times.begin(), times.end(), [](const vk::KernelTime& t) { return !t.copy; });
  EXPECT_EQ(static_cast<std::size_t>(kernels), cut.dispatch_count());
  // One clock over the segments: each command begins where the one before it ended or
  // later (a segment's first after its submission's start), and each names its node.
  for (std::size_t i = 0; i < times.size(); ++i) {
    EXPECT_NO_THROW(net.graph->find(times[i].node)) << times[i].label << " of no node: '" << times[i].node << "'";
    if (i > 0) {
      const double end = times[i - 1].begin_ns + times[i - 1].ns;
      EXPECT_GE(times[i].begin_ns, end - 1e-9 * end - 1e-3) << times[i].node;  // a fractional period rounds
    }
  }
}

// The message of the Error that compiling `segments` throws, or "" when none.
std::string refusal(const Net& net, const std::vector<Tensor>& fetches, const FetchSegments& segments) {
  Session session(*net.graph, device());
  const std::vector<Array> batch = batch_of(mlp_batch(8, 0));
  try {
    session.program(specs_for(net.model, batch), fetches, {}, 1, segments);
  } catch (const Error& e) {
    EXPECT_EQ(session.program_count(), 0u) << "a refused program was kept";
    return e.what();
  }
  return "";
}

TEST(SegmentedProgram, RefusesBadSegments) {
  const Net net = make_net(mlp);
  EXPECT_NE(refusal(net, net.fetches, {{1, 2}, 0}).find("bucket_bytes is 0"), std::string::npos);
  EXPECT_NE(refusal(net, net.fetches, {{}, 64}).find("no fetch is segmented"), std::string::npos);
  EXPECT_NE(refusal(net, net.fetches, {{1, 9}, 64}).find("fetch index 9 is out of range (the program has 5 fetches)"),
            std::string::npos);
  EXPECT_NE(refusal(net, net.fetches, {{2, 1, 2}, 64}).find("is listed twice"), std::string::npos);
  const Tensor variable = net.graph->find_variable(net.names[0]);
  const std::string stored = refusal(net, {net.model.loss, variable}, {{1}, 64});
  EXPECT_NE(stored.find("'" + variable.name() + "' is a variable's storage"), std::string::npos) << stored;
}

}  // namespace
}  // namespace vkp::test
