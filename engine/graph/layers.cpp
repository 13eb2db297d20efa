#include "engine/graph/layers.h"

#include <cmath>
#include <limits>
#include <optional>
#include <regex>

#include "core/error.h"
#include "engine/graph/variables.h"

namespace vkp::graph {
namespace {

Tensor activate(const Activation& activation, Tensor x) { return activation ? activation(x) : x; }

std::int64_t channels(Tensor x, const std::string& layer) {
  const std::int64_t c = x.rank() > 0 ? x.dims().back() : -1;
  if (c < 0)
    throw Error(ErrorCode::invalid_argument, layer + ": input " + x.name() + " " + to_string(x.type()) +
                                                 " needs a known last (channel) dimension");
  return c;
}

std::array<std::int64_t, 2> default_strides(std::array<std::int64_t, 2> strides, std::array<std::int64_t, 2> pool) {
  return strides[0] == 0 ? pool : strides;
}

}  // namespace

Tensor FullyConnected(const std::string& name, Tensor x, std::int64_t units, const FullyConnectedOptions& o) {
  Graph& g = x.graph();
  VariableScope scope(g, name);
  std::optional<FreezeVariables> frozen;
  if (!o.trainable) frozen.emplace(g);
  const Tensor flat = x.rank() == 2 ? x : flatten(x);
  const std::int64_t in = channels(flat, name);
  const Tensor w = get_variable(g, "W", {in, units}, o.kernel_initializer);
  Tensor y = matmul(flat, w);
  if (o.use_bias) y = bias_add(y, get_variable(g, "b", {units}, o.bias_initializer));
  return identity(activate(o.activation, y), "output");
}

Tensor Conv2D(const std::string& name, Tensor x, std::int64_t filters, std::array<std::int64_t, 2> k,
              const Conv2DOptions& o) {
  Graph& g = x.graph();
  VariableScope scope(g, name);
  std::optional<FreezeVariables> frozen;
  if (!o.trainable) frozen.emplace(g);
  const std::int64_t in = channels(x, name);
  if (in % o.groups != 0 || filters % o.groups != 0)
    throw Error(ErrorCode::invalid_argument, name + ": " + std::to_string(in) + " input and " + std::to_string(filters) +
                                                 " output channels must both divide into " + std::to_string(o.groups) +
                                                 " groups");
  const Tensor w = get_variable(g, "W", {k[0], k[1], in / o.groups, filters}, o.kernel_initializer);
  Tensor y = conv2d(x, w, {o.strides, o.dilations, o.padding, o.groups});
  if (o.use_bias) y = bias_add(y, get_variable(g, "b", {filters}, o.bias_initializer));
  return identity(activate(o.activation, y), "output");
}

Tensor Conv2DTranspose(const std::string& name, Tensor x, std::int64_t filters, std::array<std::int64_t, 2> k,
                       const Conv2DOptions& o) {
  Graph& g = x.graph();
  VariableScope scope(g, name);
  std::optional<FreezeVariables> frozen;
  if (!o.trainable) frozen.emplace(g);
  const Tensor w = get_variable(g, "W", {k[0], k[1], filters, channels(x, name)}, o.kernel_initializer);
  Tensor y = conv2d_transpose(x, w, {o.strides, o.dilations, o.padding, 1});
  if (o.use_bias) y = bias_add(y, get_variable(g, "b", {filters}, o.bias_initializer));
  return identity(activate(o.activation, y), "output");
}

Tensor MaxPooling(const std::string& name, Tensor x, std::array<std::int64_t, 2> pool, std::array<std::int64_t, 2> strides,
                  Padding padding) {
  NameScope scope(x.graph(), name);
  return max_pool(x, pool, default_strides(strides, pool), padding);
}

Tensor AvgPooling(const std::string& name, Tensor x, std::array<std::int64_t, 2> pool, std::array<std::int64_t, 2> strides,
                  Padding padding) {
  NameScope scope(x.graph(), name);
  return avg_pool(x, pool, default_strides(strides, pool), padding);
}

Tensor GlobalAvgPooling(const std::string& name, Tensor x) {
  NameScope scope(x.graph(), name);
  return global_avg_pool(x);
}

namespace {

// BatchNorm's and BatchRenorm's variables, tensorpack's names, in the current scope:
// beta and gamma (constants 0 and 1 when not centred or scaled), mean/EMA, variance/EMA.
struct NormVariables {
  Tensor beta, gamma, moving_mean, moving_var;
};
NormVariables norm_variables(Graph& g, std::int64_t c, bool center, bool scale) {
  NormVariables v;
  v.beta = center ? get_variable(g, "beta", {c}, zeros()) : constant(g, Array(DType::f32, Shape{c}), "beta");
  v.gamma = scale ? get_variable(g, "gamma", {c}, ones()) : constant(g, initial_value(ones(), Shape{c}, 0, "gamma"), "gamma");
  {
    VariableScope mean_scope(g, "mean");
    v.moving_mean = get_variable(g, "EMA", {c}, zeros(), false);
  }
  {
    VariableScope var_scope(g, "variance");
    v.moving_var = get_variable(g, "EMA", {c}, ones(), false);
  }
  return v;
}

// The global batch's mean and biased variance [2, C] from a tower's: the towers' means
// of x and x^2 (weighted by their rows), then var = E[x^2] - E[x]^2.
Tensor global_statistics(Tensor stats, std::int64_t c) {
  const Tensor mean = slice(stats, {0, 0}, {1, c}), var = slice(stats, {1, 0}, {1, c});
  const Tensor moments = cross_tower_mean(concat({mean, var + square(mean)}, 0));
  const Tensor global_mean = slice(moments, {0, 0}, {1, c});
  return concat({global_mean, slice(moments, {1, 0}, {1, c}) - square(global_mean)}, 0);
}

// What a training BatchNorm computes: its output, and the statistics its moving averages
// follow.
struct Normalised {
  Tensor y, mean, variance;
};

// TensorFlow's ghost batches: the batch seen as [v, N / v, ...], each virtual batch
// normalised by its own statistics (biased variance); the averages follow their means.
Normalised over_virtual_batches(const std::string& name, Tensor x, Tensor gamma, Tensor beta,
                                const BatchNormOptions& o) {
  const std::int64_t v = o.virtual_batch_size, c = x.dims().back();
  if (x.dims()[0] > 0 && x.dims()[0] % v != 0)
    throw Error(ErrorCode::invalid_argument, name + ": a batch of " + std::to_string(x.dims()[0]) +
                                                 " is not a multiple of virtual_batch_size " + std::to_string(v));
  std::vector<std::int64_t> ghost{v, -1}, back{-1};
  std::vector<int> axes{0};
  for (int i = 1; i < x.rank(); ++i) {
    if (x.dims()[i] < 0)
      throw Error(ErrorCode::invalid_argument, name +
                                                   ": virtual_batch_size needs every dimension but the first "
                                                   "known, not " +
                                                   to_string(x.type()));
    ghost.push_back(x.dims()[i]);
    back.push_back(x.dims()[i]);
    if (i + 1 < x.rank()) axes.push_back(i + 1);
  }
  const Tensor grouped = reshape(x, ghost);
  const Tensor mean = reduce_mean(grouped, axes, true);
  const Tensor centred = grouped - mean;
  const Tensor variance = reduce_mean(square(centred), axes, true);
  Tensor z = centred * rsqrt(variance + o.epsilon) * gamma + beta;
  if (o.relu) z = relu(z);
  return {reshape(z, back), reshape(reduce_mean(mean, {1}), {c}), reshape(reduce_mean(variance, {1}), {c})};
}

// The batch's statistics, or with sync_statistics the global batch's. As tensorpack's
// BatchNorm (TensorFlow's fused batch norm) and PyTorch's: x is normalised with the
// biased batch variance, the moving variance follows the unbiased one, M / (M - 1) times
// it.
Normalised over_the_batch(Tensor x, Tensor gamma, Tensor beta, const BatchNormOptions& o) {
  const std::int64_t c = x.dims().back();
  Tensor stats = bn_stats(x);
  if (o.sync_statistics) stats = global_statistics(stats, c);
  const Tensor y =
      batch_norm(x, stats, gamma, beta,
                 {.epsilon = o.epsilon, .batch_stats = true, .relu = o.relu, .sync_statistics = o.sync_statistics});
  return {y, reshape(slice(stats, {0, 0}, {1, c}), {c}), reshape(slice(stats, {1, 0}, {1, c}), {c}) * bn_bessel(x)};
}

}  // namespace

Tensor BatchNorm(const std::string& name, Tensor x, const BatchNormOptions& o) {
  Graph& g = x.graph();
  VariableScope scope(g, name);
  std::optional<FreezeVariables> frozen;
  if (!o.trainable) frozen.emplace(g);
  const std::int64_t c = channels(x, name);
  const auto [beta, gamma, moving_mean, moving_var] = norm_variables(g, c, o.center, o.scale);
  if (o.sync_statistics && o.virtual_batch_size > 0)
    throw Error(ErrorCode::invalid_argument,
                name + ": sync_statistics and virtual_batch_size exclude each other (global or ghost batches)");
  Tensor y;
  std::vector<Tensor> updates;  // of the moving averages, after the step
  if (g.tower().is_training && !g.frozen()) {
    const Normalised n =
        o.virtual_batch_size > 0 ? over_virtual_batches(name, x, gamma, beta, o) : over_the_batch(x, gamma, beta, o);
    y = n.y;
    if (o.ema_update != EmaUpdate::skip) {
      updates.push_back(assign(moving_mean, moving_mean * o.momentum + n.mean * (1.0f - o.momentum)));
      updates.push_back(assign(moving_var, moving_var * o.momentum + n.variance * (1.0f - o.momentum)));
    }
  } else {
    const Tensor stats = concat({reshape(moving_mean, {1, c}), reshape(moving_var, {1, c})}, 0);
    y = batch_norm(x, stats, gamma, beta, {.epsilon = o.epsilon, .batch_stats = false, .relu = o.relu});
  }
  const Tensor out = identity(y, "output");
  for (const Tensor& u : updates) {
    if (o.ema_update == EmaUpdate::internal)
      g.attach_effect(out, u);
    else
      g.add_to_collection(kUpdateOps, u);
  }
  return out;
}

Tensor BatchRenorm(const std::string& name, Tensor x, float rmax, float dmax, const BatchRenormOptions& o) {
  Graph& g = x.graph();
  if (!(rmax >= 1.0f) || !(dmax >= 0.0f))
    throw Error(ErrorCode::invalid_argument, name + ": BatchRenorm needs rmax >= 1 and dmax >= 0, not " +
                                                 std::to_string(rmax) + " and " + std::to_string(dmax));
  if (x.rank() < 2)
    throw Error(ErrorCode::invalid_argument, name + ": BatchRenorm needs a batch dimension and channels, not " +
                                                 to_string(x.type()));
  VariableScope scope(g, name);
  const std::int64_t c = channels(x, name);
  const auto [beta, gamma, moving_mean, moving_var] = norm_variables(g, c, o.center, o.scale);
  const Tensor renorm_mean = get_variable(g, "renorm_mean", {c}, zeros(), false);
  const Tensor renorm_stddev = get_variable(g, "renorm_stddev", {c}, ones(), false);
  if (!g.tower().is_training || g.frozen())
    return identity((x - moving_mean) * rsqrt(moving_var + o.epsilon) * gamma + beta, "output");
  std::vector<int> batch_axes;
  for (int i = 0; i + 1 < x.rank(); ++i) batch_axes.push_back(i);
  const Tensor mean = reduce_mean(x, batch_axes);
  const Tensor centred = x - mean;
  const Tensor variance = reduce_mean(square(centred), batch_axes);  // biased, as tf.nn.moments
  const Tensor stddev = sqrt(variance + o.epsilon);
  const Tensor sd_r = clip_by_value(renorm_stddev, std::sqrt(o.epsilon), std::numeric_limits<float>::max());
  const Tensor r = stop_gradient(clip_by_value(stddev / sd_r, 1.0f / rmax, rmax));
  const Tensor d = stop_gradient(clip_by_value((mean - renorm_mean) / sd_r, -dmax, dmax));
  const Tensor y = centred / stddev * (r * gamma) + (d * gamma + beta);
  const auto average = [&](Tensor v, Tensor value, float momentum) {
    g.add_to_collection(kUpdateOps, assign(v, v * momentum + value * (1.0f - momentum)));
  };
  average(renorm_mean, mean, o.renorm_momentum);
  average(renorm_stddev, stddev, o.renorm_momentum);
  average(moving_mean, mean, o.momentum);
  average(moving_var, variance, o.momentum);
  return identity(y, "output");
}

Tensor BNReLU(const std::string& name, Tensor x, BatchNormOptions options) {
  options.relu = true;
  return BatchNorm(name, x, options);
}

Tensor InstanceNorm(const std::string& name, Tensor x, float epsilon, bool affine) {
  Graph& g = x.graph();
  if (x.rank() != 4)
    throw Error(ErrorCode::invalid_argument, name + ": InstanceNorm takes NHWC images, not " + to_string(x.type()));
  VariableScope scope(g, name);
  const std::int64_t c = channels(x, name);
  const Tensor centred = x - reduce_mean(x, {1, 2}, true);
  const Tensor variance = reduce_mean(square(centred), {1, 2}, true);
  Tensor y = centred * rsqrt(variance + epsilon);
  if (affine) {
    y = y * reshape(get_variable(g, "gamma", {c}, ones()), {1, 1, 1, c});
    y = y + reshape(get_variable(g, "beta", {c}, zeros()), {1, 1, 1, c});
  }
  return identity(y, "output");
}

Tensor Dropout(const std::string& name, Tensor x, float rate) {
  NameScope scope(x.graph(), name);
  return dropout(x, rate);
}

Tensor regularize_cost(Graph& graph, const std::string& pattern, const std::function<Tensor(Tensor)>& regularizer) {
  const std::regex re(pattern);
  Tensor total;
  for (const Tensor& v : graph.trainable_variables()) {
    if (!std::regex_match(std::get<VariableAttrs>(v.node().attrs).var_name, re)) continue;
    const Tensor cost = regularizer(v);
    graph.add_to_collection(kRegularizationLosses, cost);
    total = total.valid() ? add(total, cost) : cost;
  }
  return total.valid() ? identity(total, "regularize_cost") : scalar(graph, 0.0f);
}

Tensor regularize_cost_from_collection(Graph& graph, const std::string& name) {
  if (!graph.tower().is_training) return identity(scalar(graph, 0.0f), "empty_" + name);  // as tensorpack's
  Tensor total;
  for (const Tensor& cost : graph.collection(kRegularizationLosses)) total = total.valid() ? add(total, cost) : cost;
  return total.valid() ? identity(total, name) : scalar(graph, 0.0f);
}

std::function<Tensor(Tensor)> l2_regularizer(float scale) {
  return [scale](Tensor w) { return l2_loss(w) * scale; };
}

std::function<Tensor(Tensor)> l1_regularizer(float scale) {
  return [scale](Tensor w) { return reduce_sum(abs(w)) * scale; };
}

Tensor PReLU(const std::string& name, Tensor x, float init) {
  Graph& g = x.graph();
  VariableScope scope(g, name);
  const Tensor alpha = get_variable(g, "alpha", {}, constant(init));
  return identity(relu(x) - alpha * relu(neg(x)), "output");
}

Tensor FixedUnPooling(const std::string& name, Tensor x, std::array<std::int64_t, 2> shape,
                      std::optional<Array> unpool_mat) {
  Graph& g = x.graph();
  const std::vector<std::int64_t>& dims = x.dims();
  if (x.rank() != 4 || dims[1] < 0 || dims[2] < 0 || dims[3] < 0)
    throw Error(ErrorCode::invalid_argument, name + ": FixedUnPooling takes NHWC images with H, W and C known, not " +
                                                 to_string(x.type()));
  if (shape[0] < 1 || shape[1] < 1)
    throw Error(ErrorCode::invalid_argument, name + ": FixedUnPooling's shape must be positive, not " +
                                                 std::to_string(shape[0]) + " x " + std::to_string(shape[1]));
  if (!unpool_mat) {
    unpool_mat = Array(DType::f32, Shape{shape[0], shape[1]});
    unpool_mat->data<float>()[0] = 1.0f;
  }
  if (unpool_mat->dtype() != DType::f32 || unpool_mat->shape() != Shape{shape[0], shape[1]})
    throw Error(ErrorCode::invalid_argument, name + ": FixedUnPooling's unpool_mat must be float32 [" +
                                                 std::to_string(shape[0]) + ", " + std::to_string(shape[1]) +
                                                 "], not " + describe(*unpool_mat));
  NameScope scope(g, name);
  const Tensor mat = reshape(constant(g, *unpool_mat, "unpool_mat"), {1, 1, shape[0], 1, shape[1], 1});
  const Tensor blocks = reshape(x, {-1, dims[1], 1, dims[2], 1, dims[3]}) * mat;
  return identity(reshape(blocks, {-1, dims[1] * shape[0], dims[2] * shape[1], dims[3]}), "output");
}

Tensor Maxout(Tensor x, std::int64_t num_unit) {
  if (x.rank() < 2)
    throw Error(ErrorCode::invalid_argument, "Maxout: input " + x.name() + " " + to_string(x.type()) +
                                                 " needs a batch dimension and channels");
  const std::int64_t c = channels(x, "Maxout");
  const std::vector<std::int64_t>& dims = x.dims();
  if (num_unit < 1 || c % num_unit != 0)
    throw Error(ErrorCode::invalid_argument, "Maxout: " + std::to_string(c) + " channels of " + x.name() +
                                                 " are not groups of " + std::to_string(num_unit));
  std::vector<std::int64_t> grouped{-1};
  for (std::size_t i = 1; i + 1 < dims.size(); ++i) {
    if (dims[i] < 0)
      throw Error(ErrorCode::invalid_argument, "Maxout: input " + x.name() + " " + to_string(x.type()) +
                                                   " needs every dimension but the first known");
    grouped.push_back(dims[i]);
  }
  grouped.push_back(c / num_unit);
  grouped.push_back(num_unit);
  return reduce_max(reshape(x, grouped), {static_cast<int>(grouped.size()) - 1});
}

}  // namespace vkp::graph
