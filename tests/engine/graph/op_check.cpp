#include "op_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "checker.h"
#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/internal/reference.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using graph::RefTensor;
using graph::Tensor;

RefTensor random_input(const graph::TensorType& type, const OpCheck& c, std::uint64_t seed) {
  RefTensor t = RefTensor::zeros(type);
  Rng rng(seed);
  for (double& v : t.values)
    v = type.dtype == DType::i32 ? static_cast<double>(rng.below(static_cast<std::uint64_t>(c.label_range)))
                                 : static_cast<double>(rng.uniform(c.low, c.high));
  return t;
}

// Compares a device result with the reference.
void expect_close(const Array& got, const RefTensor& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.shape().dims(), want.type.dims) << what;
  std::vector<float> values;  // i32 results too, as values (exact below 2^24)
  for (double v : RefTensor::from(got).values) values.push_back(static_cast<float>(v));
  EXPECT_EQ(compare(values, want.values, relative_tolerances(want.values, tolerance)), "") << what;
}

void check_one(const OpCheck& c);

}  // namespace

std::vector<double> relative_tolerances(const std::vector<double>& want, double tolerance) {
  std::vector<double> out;
  out.reserve(want.size());
  for (double w : want) out.push_back(tolerance * std::max(1.0, std::abs(w)));
  return out;
}

void check_op(const OpCheck& c) {
  check_one(c);
  for (const std::vector<graph::TensorType>& inputs : c.more_inputs) {
    OpCheck other = c;
    other.inputs = inputs;
    other.more_inputs.clear();
    check_one(other);
  }
}

namespace {

void check_one(const OpCheck& c) {
  std::string shapes;
  for (const graph::TensorType& t : c.inputs) shapes += " " + graph::to_string(t);
  SCOPED_TRACE(c.name + ":" + shapes);
  graph::Graph g(c.seed);
  std::vector<Tensor> inputs;
  std::map<int, RefTensor> feeds;
  graph::Feeds device_feeds;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(graph::placeholder(g, "in" + std::to_string(i), c.inputs[i]));
    RefTensor value = random_input(c.inputs[i], c, c.seed * 100 + i);
    device_feeds.emplace_back(inputs.back(), value.to_array());
    // The reference sees exactly the f32 values the device sees.
    feeds[inputs.back().id()] = RefTensor::from(device_feeds.back().second);
  }
  std::vector<Tensor> placeholders = inputs;
  const Tensor y = c.build(placeholders);
  graph::RefState state = graph::RefState::initial(g);
  const RefTensor want = graph::evaluate_reference(g, feeds, {y}, {}, state)[0];
  graph::Session session(g, device());
  expect_close(session.run(device_feeds, {y})[0], want, c.forward_tolerance, "forward");
  if (!c.check_gradients) return;

  // loss = sum(y * w); gradients for every f32 input.
  RefTensor w = random_input(graph::f32(want.type.dims), c, c.seed + 7);
  for (double& v : w.values) v = static_cast<double>(static_cast<float>(v));
  const Tensor loss = graph::reduce_sum(graph::mul(y, graph::constant(g, w.to_array(), "w")));
  std::vector<Tensor> xs;
  for (const Tensor& t : inputs)
    if (t.dtype() == DType::f32) xs.push_back(t);
  const std::vector<Tensor> grads = graph::gradients(loss, xs);
  std::vector<Tensor> fetched;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    ASSERT_TRUE(grads[i].valid()) << "no gradient for input " << i;
    fetched.push_back(grads[i]);
  }
  // Random ops draw from the global step: the reference uses the device run's.
  auto state_at_run = [&] {
    graph::RefState s = graph::RefState::initial(g);
    s.scalars[graph::Graph::kStepWord] = static_cast<double>(session.global_step());
    return s;
  };
  graph::RefState grad_state = state_at_run();
  const std::vector<RefTensor> ref_grads = graph::evaluate_reference(g, feeds, fetched, {}, grad_state);

  // Central differences of the reference loss, on up to 24 elements of each input.
  const double h = 1e-6;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    RefTensor& x = feeds[xs[k].id()];
    const std::size_t n = x.values.size(), stride = std::max<std::size_t>(1, n / 24);
    for (std::size_t i = 0; i < n; i += stride) {
      const double saved = x.values[i];
      x.values[i] = saved + h;
      graph::RefState s1 = state_at_run();
      const double up = graph::evaluate_reference(g, feeds, {loss}, {}, s1)[0].values[0];
      x.values[i] = saved - h;
      graph::RefState s2 = state_at_run();
      const double down = graph::evaluate_reference(g, feeds, {loss}, {}, s2)[0].values[0];
      x.values[i] = saved;
      const double fd = (up - down) / (2 * h), analytic = ref_grads[k].values[i];
      EXPECT_LE(std::abs(fd - analytic), c.gradient_tolerance * std::max(1.0, std::abs(fd)))
          << "d loss / d input" << k << "[" << i << "]: finite differences " << fd << ", gradient rule " << analytic;
    }
  }
  const std::vector<Array> device_grads = session.run(device_feeds, fetched);
  for (std::size_t k = 0; k < xs.size(); ++k)
    expect_close(device_grads[k], ref_grads[k], c.backward_tolerance, "backward of input " + std::to_string(k));
}

}  // namespace

}  // namespace vkp::test
