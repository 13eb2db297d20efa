// batch_norm_reduce against double-precision sums on the host: the statistics (mean and
// biased variance) and the gradient sums (sum dy, sum dy * xhat, with and without the
// fused ReLU's mask), at shapes that put pass 0's chunks and pass 1's runs at their edges:
// one row; fewer chunks than pass 1's 64 invocations; rows not a multiple of the 4 a
// pass-0 loop loads at once; channels one at a time and in vec4 lanes; a ResNet's 16
// channels over a CIFAR batch (4096 chunks, 64 a pass-1 invocation). Each with both ways of
// merging the partial sums (BatchNormMerge), whatever the device.
#include "engine/vk/kernels/batch_norm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "checker.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

class BatchNormReduce : public VkTest {};

struct Shape {
  std::uint64_t m;
  std::uint32_t c;
};

// Per channel: mean, biased variance; then with `dy`: sum dy and sum dy * xhat, dy
// counted as 0 where a ReLU after the normalization (gamma, beta) saw a value <= 0. The
// device decides that from its own statistics in float32: where xhat * gamma + beta lies
// within 1e-3 of 0 it may decide otherwise, so those terms are summed apart (near_*) to
// widen the tolerance by.
struct Reference {
  std::vector<double> mean, var, sum_dy, sum_dy_xhat, abs_dy, abs_dy_xhat, near_dy, near_dy_xhat;
};

Reference reference(const Shape& s, const std::vector<float>& x, const std::vector<float>& dy, float eps,
                    const std::vector<float>* gamma, const std::vector<float>* beta) {
  Reference r;
  r.mean.assign(s.c, 0.0), r.var.assign(s.c, 0.0), r.sum_dy.assign(s.c, 0.0), r.sum_dy_xhat.assign(s.c, 0.0);
  r.abs_dy.assign(s.c, 0.0), r.abs_dy_xhat.assign(s.c, 0.0), r.near_dy.assign(s.c, 0.0),
      r.near_dy_xhat.assign(s.c, 0.0);
  for (std::uint64_t i = 0; i < s.m; ++i)
    for (std::uint32_t ch = 0; ch < s.c; ++ch) r.mean[ch] += x[i * s.c + ch];
  for (double& v : r.mean) v /= static_cast<double>(s.m);
  for (std::uint64_t i = 0; i < s.m; ++i)
    for (std::uint32_t ch = 0; ch < s.c; ++ch) r.var[ch] += std::pow(x[i * s.c + ch] - r.mean[ch], 2);
  for (double& v : r.var) v /= static_cast<double>(s.m);
  for (std::uint64_t i = 0; i < s.m; ++i)
    for (std::uint32_t ch = 0; ch < s.c; ++ch) {
      const double xhat = (x[i * s.c + ch] - r.mean[ch]) / std::sqrt(r.var[ch] + eps);
      double g = dy[i * s.c + ch];
      if (gamma && std::abs(xhat * (*gamma)[ch] + (*beta)[ch]) < 1e-3)
        r.near_dy[ch] += std::abs(g), r.near_dy_xhat[ch] += std::abs(g * xhat);
      if (gamma && !(xhat * (*gamma)[ch] + (*beta)[ch] > 0)) g = 0;
      r.sum_dy[ch] += g, r.sum_dy_xhat[ch] += g * xhat;
      r.abs_dy[ch] += std::abs(g), r.abs_dy_xhat[ch] += std::abs(g * xhat);
    }
  return r;
}

// [first | second]: the kernels' [2, c] layout.
std::vector<double> joined(const std::vector<double>& first, const std::vector<double>& second) {
  std::vector<double> v = first;
  v.insert(v.end(), second.begin(), second.end());
  return v;
}

TEST_F(BatchNormReduce, StatisticsAndGradientSumsMatchTheHostAtEdgeShapes) {
  const Shape shapes[] = {{1, 3}, {5, 8}, {70, 67}, {1001, 1}, {4099, 12}, {131075, 16}, {100003, 1}};
  const float eps = 1e-3f;
  for (const Shape& s : shapes) {
    const std::size_t n = s.m * s.c;
    // An offset mean, so that a one-pass sum of squares would lose the variance.
    const std::vector<float> x = random_floats(n, 40 + s.c, 2.0f, 5.0f), dy = random_floats(n, 41 + s.c);
    const std::vector<float> gamma = random_floats(s.c, 42, 0.5f, 1.5f), beta = random_floats(s.c, 43, -0.5f, 0.5f);
    const Reference plain = reference(s, x, dy, eps, nullptr, nullptr);
    const Reference relu = reference(s, x, dy, eps, &gamma, &beta);
    const vk::BufferSlice dx = upload(x), ddy = upload(dy), dgamma = upload(gamma), dbeta = upload(beta);
    const vk::BufferSlice work = arena().allocate(vk::batch_norm_workspace_bytes(s.m, s.c), "workspace");
    // Both second passes on any device: the tree merge (GPUs) and the serial one (CPUs).
    for (const vk::BatchNormMerge merge : {vk::BatchNormMerge::serial, vk::BatchNormMerge::tree}) {
      SCOPED_TRACE(fmt::format("m {} c {}, {} merge", s.m, s.c, merge == vk::BatchNormMerge::tree ? "tree" : "serial"));
      const vk::BufferSlice stats = scratch(2 * s.c), sums = scratch(2 * s.c), masked = scratch(2 * s.c);
      vk::Recording recording(device(), {.name = "batch norm reduce test"});
      vk::BatchNormArgs args{
          .m = s.m, .c = s.c, .eps = eps, .x = dx, .stats = stats, .dy = ddy, .sums = sums, .merge = merge};
      vk::batch_norm_stats(recording, args, work);
      vk::batch_norm_grad_sums(recording, args, work);
      args.gamma = dgamma, args.beta = dbeta, args.sums = masked, args.relu = true;
      vk::batch_norm_grad_sums(recording, args, work);
      recording.finish();
      recording.run();

      // Float32 sums of m terms in chunks, merged in order or in a tree: a few hundred
      // roundings of the terms' magnitude at most (the mean's terms are below 5, the
      // variance's below 9).
      const double e = 400 * std::ldexp(1.0, -24);
      std::vector<double> tol_stats(2 * s.c);
      for (std::uint32_t ch = 0; ch < s.c; ++ch) tol_stats[ch] = e * 5, tol_stats[s.c + ch] = e * 9;
      EXPECT_EQ(compare(download(stats, 2 * s.c), joined(plain.mean, plain.var), tol_stats), "") << "statistics";
      // The gradient sums take xhat from the device's statistics: their error, times the
      // terms, comes on top.
      for (const auto& [name, got, want] :
           {std::tuple{"sums", sums, &plain}, std::tuple{"masked sums", masked, &relu}}) {
        std::vector<double> tol(2 * s.c);
        for (std::uint32_t ch = 0; ch < s.c; ++ch)
          tol[ch] = e * want->abs_dy[ch] + want->near_dy[ch] + 1e-6,
          tol[s.c + ch] = 4 * e * want->abs_dy_xhat[ch] + want->near_dy_xhat[ch] + 1e-6;
        EXPECT_EQ(compare(download(got, 2 * s.c), joined(want->sum_dy, want->sum_dy_xhat), tol), "") << name;
      }
    }
  }
}

}  // namespace
}  // namespace vkp::test
