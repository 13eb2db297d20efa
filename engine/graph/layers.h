// Layers with tensorpack's names and variable naming: each builds under a variable scope
// of its name, so FullyConnected("fc0", ...) creates fc0/W and fc0/b, BatchNorm("bn",
// ...) creates bn/gamma, bn/beta, bn/mean/EMA and bn/variance/EMA. Layers read the
// tower context (training or inference).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/graph/graph.h"
#include "engine/graph/initializer.h"
#include "engine/graph/ops.h"

namespace vkp::graph {

using Activation = std::function<Tensor(Tensor)>;  // empty: identity

struct FullyConnectedOptions {
  bool use_bias = true;
  Activation activation;
  Initializer kernel_initializer = variance_scaling(2.0f, Initializer::Fan::in, Initializer::Distribution::normal);
  Initializer bias_initializer = zeros();
  bool trainable = true;  // false: as inside FreezeVariables
};
// x [N, ...] (flattened) -> [N, units]; variables W [in, units], b [units].
Tensor FullyConnected(const std::string& name, Tensor x, std::int64_t units, const FullyConnectedOptions& options = {});

struct Conv2DOptions {
  std::array<std::int64_t, 2> strides{1, 1};
  Padding padding = Padding::same;
  std::array<std::int64_t, 2> dilations{1, 1};
  std::int64_t groups = 1;
  bool use_bias = true;
  Activation activation;
  Initializer kernel_initializer = variance_scaling(2.0f, Initializer::Fan::in, Initializer::Distribution::normal);
  Initializer bias_initializer = zeros();
  bool trainable = true;  // false: as inside FreezeVariables
};
// x NHWC -> [N, OH, OW, filters]; W [KH, KW, C / groups, filters], b [filters].
Tensor Conv2D(const std::string& name, Tensor x, std::int64_t filters, std::array<std::int64_t, 2> kernel_size,
              const Conv2DOptions& options = {});
// x NHWC -> [N, H * stride, W * stride, filters] (same); W [KH, KW, filters, C].
Tensor Conv2DTranspose(const std::string& name, Tensor x, std::int64_t filters, std::array<std::int64_t, 2> kernel_size,
                       const Conv2DOptions& options = {});

Tensor MaxPooling(const std::string& name, Tensor x, std::array<std::int64_t, 2> pool_size,
                  std::array<std::int64_t, 2> strides = {0, 0}, Padding padding = Padding::valid);
Tensor AvgPooling(const std::string& name, Tensor x, std::array<std::int64_t, 2> pool_size,
                  std::array<std::int64_t, 2> strides = {0, 0}, Padding padding = Padding::valid);
Tensor GlobalAvgPooling(const std::string& name, Tensor x);

// tensorpack's ema_update: how the moving averages follow the batch statistics.
enum class EmaUpdate {
  collection,  // update ops in the update-ops collection, run after each step (tensorpack's default)
  // Attached to the layer's output (Graph::attach_effect): every training program that
  // computes it updates the averages, whether or not it runs the update-ops collection
  // (a GAN's discriminator called in both nets' steps updates in each, as in tensorpack).
  internal,
  skip,  // never updated: the averages keep what they were given (restored, or initial)
};

struct BatchNormOptions {
  float momentum = 0.9f;   // of the moving averages
  float epsilon = 1e-5f;
  bool center = true;      // beta
  bool scale = true;       // gamma
  bool relu = false;       // max(0, y) in the same kernel (BNReLU)
  bool trainable = true;   // false: as inside FreezeVariables (moving statistics, kept)
  // Ghost batches, as TensorFlow's (which tensorpack's passes it to): in training the
  // batch of N is seen as [virtual_batch_size, N / virtual_batch_size, ...], so virtual
  // batch j holds samples j, j + N / v, j + 2 N / v, ...; each is normalised by its own
  // statistics (biased variance), and the moving averages follow the virtual batches'
  // mean statistics (biased variance, as TensorFlow's non-fused path). N must be a
  // multiple of it; 0: the whole batch.
  std::int64_t virtual_batch_size = 0;
  EmaUpdate ema_update = EmaUpdate::collection;
  // tensorpack's sync_statistics: in training, the statistics of the global batch of a
  // synchronous multi-tower step (and across MPI ranks), not the tower's own; the towers
  // exchange their moments through the host in forward and two sums in backward
  // (cross_tower_mean). Every tower then normalises alike and the moving averages follow
  // the global batch (the variance's Bessel factor stays the tower's M_k / (M_k - 1)).
  // One tower: the same as without.
  bool sync_statistics = false;
};
// Over the last axis (channels). Training: batch statistics (biased variance), and
// moving-average updates of the mean and the unbiased variance (as tensorpack's) added
// to the update-ops collection; inference, or frozen: the averages.
Tensor BatchNorm(const std::string& name, Tensor x, const BatchNormOptions& options = {});
// tensorpack's BNReLU: relu(BatchNorm(name, x)), one kernel for both (the variables are
// BatchNorm's: name/gamma, name/beta, name/mean/EMA, name/variance/EMA).
Tensor BNReLU(const std::string& name, Tensor x, BatchNormOptions options = {});

struct BatchRenormOptions {
  float momentum = 0.9f;          // of the moving mean and variance used in inference
  float epsilon = 1e-5f;
  bool center = true;             // beta
  bool scale = true;              // gamma
  float renorm_momentum = 0.99f;  // of the averages r and d correct towards (TensorFlow's)
};
// tensorpack's BatchRenorm (Ioffe 2017, through TensorFlow's renorm): in training,
//   y = ((x - mean_B) / sd_B * r + d) * gamma + beta,   sd_B = sqrt(var_B + epsilon),
//   r = clip(sd_B / sd_R, 1 / rmax, rmax),   d = clip((mean_B - mean_R) / sd_R, -dmax, dmax),
// over the last axis, with no gradient through r and d; mean_R and sd_R (name/renorm_mean,
// name/renorm_stddev, from 0 and 1; sd_R at least sqrt(epsilon)) average the batch's mean and
// sd with renorm_momentum. Inference uses the moving mean and (biased) variance, name/mean/EMA
// and name/variance/EMA, averaged with `momentum`. All four averages are update ops, run
// after the step. rmax = 1 and dmax = 0 make it BatchNorm with the biased moving variance.
Tensor BatchRenorm(const std::string& name, Tensor x, float rmax, float dmax, const BatchRenormOptions& options = {});

// Identity in inference.
Tensor Dropout(const std::string& name, Tensor x, float rate);

// tensorpack's InstanceNorm (for generators): each image's each channel normalised over
// its own H x W, (x - mean) / sqrt(variance + epsilon) (biased variance), then times
// gamma plus beta per channel when `affine` (variables gamma [C], beta [C]). The same in
// training and inference; no moving statistics. x NHWC.
Tensor InstanceNorm(const std::string& name, Tensor x, float epsilon = 1e-5f, bool affine = true);

// The sum over trainable variables whose name matches `pattern` (a regular expression,
// matched in full) of regularizer(variable), also added to the regularization-losses
// collection; 0 when none matches.
Tensor regularize_cost(Graph& graph, const std::string& pattern, const std::function<Tensor(Tensor)>& regularizer);
// tensorpack's regularize_cost_from_collection: the sum of every loss in the
// regularization-losses collection (what regularize_cost added), named `name`; 0 when
// the collection is empty, and ("empty_<name>") outside a training tower.
Tensor regularize_cost_from_collection(Graph& graph, const std::string& name = "regularize_cost");
// scale * l2_loss(w), as tf.contrib.layers.l2_regularizer.
std::function<Tensor(Tensor)> l2_regularizer(float scale);
// scale * sum(|w|), as tf.contrib.layers.l1_regularizer.
std::function<Tensor(Tensor)> l1_regularizer(float scale);

// tensorpack's PReLU: max(x, 0) + alpha * min(x, 0), alpha a trainable scalar variable
// "<name>/alpha" starting at `init`.
Tensor PReLU(const std::string& name, Tensor x, float init = 0.001f);
// tensorpack's FixedUnPooling: every value of x (NHWC) becomes a shape[0] x shape[1] block,
// the value times `unpool_mat` ([shape[0], shape[1]] float32: the Kronecker product with
// it); without a matrix the value fills the block's top-left corner and the rest is zero.
// [N, H, W, C] -> [N, H * shape[0], W * shape[1], C]; H, W and C must be known.
Tensor FixedUnPooling(const std::string& name, Tensor x, std::array<std::int64_t, 2> shape,
                      std::optional<Array> unpool_mat = std::nullopt);
// tensorpack's Maxout: the last dimension C in groups of `num_unit` consecutive channels,
// each group's maximum: [..., C] -> [..., C / num_unit]. Every dimension but the first
// must be known and C divisible by num_unit (Error otherwise).
Tensor Maxout(Tensor x, std::int64_t num_unit);

}  // namespace vkp::graph
