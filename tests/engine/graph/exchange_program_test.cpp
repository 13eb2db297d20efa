// Programs with exchanges (cross_tower_mean, Program::wait_exchange / resume_exchange): a
// submitted run stops after each exchange's input is computed, hands it to the host and
// goes on with the value the host writes, in order; a run left alone takes each input as
// its value; calls out of order are refused.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;

Array random_values(std::vector<std::int64_t> dims, std::uint64_t seed) {
  Array a(DType::f32, Shape(dims));
  Rng rng(seed);
  for (float& v : a.data<float>()) v = rng.normal();
  return a;
}

// a = mean(2 x) over the towers, b = mean(column sums of a), y = b + 1.
struct Net {
  Graph g{1};
  Tensor x = placeholder(g, "x", f32({3, 5}));
  Tensor a = cross_tower_mean(x * 2.0f);
  Tensor b = cross_tower_mean(reduce_sum(a, {0}));
  Tensor y = b + 1.0f;
};

void expect_values(const Array& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.data<float>().size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got.data<float>()[i], want[i]) << what << " " << i;
}

std::vector<double> column_sums(const Array& a, double scale) {
  std::vector<double> sums(5, 0.0);
  for (std::size_t i = 0; i < a.data<float>().size(); ++i) sums[i % 5] += scale * a.data<float>()[i];
  return sums;
}

TEST(ExchangeProgram, TheRunStopsAtEachExchangeAndGoesOnWithTheHostsValue) {
  Net n;
  Session s(n.g, device());
  Program& p = s.program({{n.x, f32({3, 5})}}, {n.y, n.a});
  ASSERT_EQ(p.exchange_count(), 2);
  const Array x = random_values({3, 5}, 1), w = random_values({3, 5}, 2), z = random_values({5}, 3);
  p.write_feeds(std::vector<Array>{x}, 0);
  s.submit_program(p, 0);
  EXPECT_FALSE(p.finished());
  Array got;
  EXPECT_THROW(p.wait_exchange(1, got), Error);  // exchange 0 comes first
  p.wait_exchange(0, got);
  std::vector<double> twice;
  for (float v : x.data<float>()) twice.push_back(2.0 * v);
  expect_values(got, twice, "exchange 0's input");
  EXPECT_THROW(p.resume_exchange(0, z), Error);  // [5] for a [3, 5] value
  p.resume_exchange(0, w);
  p.wait_exchange(1, got);
  expect_values(got, column_sums(w, 1.0), "exchange 1's input: the column sums of the value written at 0");
  p.resume_exchange(1, z);
  EXPECT_THROW(p.resume_exchange(1, z), Error);  // once a run
  std::vector<Array> out;
  s.wait_program(p, out);
  std::vector<double> plus_one;
  for (float v : z.data<float>()) plus_one.push_back(v + 1.0);
  expect_values(out[0], plus_one, "y from exchange 1's value");
  std::vector<double> written(w.data<float>().begin(), w.data<float>().end());
  expect_values(out[1], written, "a fetched: exchange 0's value");
}

TEST(ExchangeProgram, ARunLeftAloneIsItsOnlyTower) {
  Net n;
  Session s(n.g, device());
  const Array x = random_values({3, 5}, 4);
  const std::vector<Array> out = s.run({{n.x, x}}, {n.y});
  std::vector<double> want = column_sums(x, 2.0);
  for (double& v : want) v += 1.0;
  expect_values(out[0], want, "y");
}

TEST(ExchangeProgram, ASecondSubmitIsRefusedUntilTheExchangesAreDone) {
  Net n;
  Session s(n.g, device());
  Program& p = s.program({{n.x, f32({3, 5})}}, {n.y});
  p.write_feeds(std::vector<Array>{random_values({3, 5}, 5)}, 0);
  s.submit_program(p, 0);
  EXPECT_THROW(p.submit(0), Error);
  std::vector<Array> out;
  s.wait_program(p, out);  // completes both exchanges
  EXPECT_TRUE(p.finished());
}

}  // namespace
}  // namespace vkp::test
