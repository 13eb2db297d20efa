// tensorpack's LinearWrap: a chain of layers written in the order they run,
//   Tensor logits = LinearWrap(image)
//                       .Conv2D("conv0", 32, {3, 3}, {.activation = relu})
//                       .MaxPooling("pool0", {2, 2})
//                       .FullyConnected("fc0", 10)();
// Each named method is the layer of layers.h with the wrapped tensor as its input; apply
// takes any function of the tensor (and more arguments), as tensorpack's apply does.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "core/log.h"
#include "engine/graph/layers.h"

namespace vkp::graph {

class LinearWrap {
 public:
  explicit LinearWrap(Tensor t) : t_(t) {}
  Tensor operator()() const { return t_; }
  Tensor tensor() const { return t_; }

  // f(tensor, args...), which returns the next tensor.
  template <class F, class... Args>
  LinearWrap apply(F&& f, Args&&... args) const {
    return LinearWrap(std::invoke(std::forward<F>(f), t_, std::forward<Args>(args)...));
  }
  // Logs the tensor's name and type (tensorpack's print_tensor) and passes it on.
  LinearWrap print_tensor() const {
    log_info("LinearWrap: {} {}", t_.name(), to_string(t_.type()));
    return *this;
  }

  LinearWrap FullyConnected(const std::string& name, std::int64_t units, const FullyConnectedOptions& o = {}) const {
    return LinearWrap(graph::FullyConnected(name, t_, units, o));
  }
  LinearWrap Conv2D(const std::string& name, std::int64_t filters, std::array<std::int64_t, 2> kernel_size,
                    const Conv2DOptions& o = {}) const {
    return LinearWrap(graph::Conv2D(name, t_, filters, kernel_size, o));
  }
  LinearWrap Conv2DTranspose(const std::string& name, std::int64_t filters, std::array<std::int64_t, 2> kernel_size,
                             const Conv2DOptions& o = {}) const {
    return LinearWrap(graph::Conv2DTranspose(name, t_, filters, kernel_size, o));
  }
  LinearWrap MaxPooling(const std::string& name, std::array<std::int64_t, 2> pool_size,
                        std::array<std::int64_t, 2> strides = {0, 0}, Padding padding = Padding::valid) const {
    return LinearWrap(graph::MaxPooling(name, t_, pool_size, strides, padding));
  }
  LinearWrap AvgPooling(const std::string& name, std::array<std::int64_t, 2> pool_size,
                        std::array<std::int64_t, 2> strides = {0, 0}, Padding padding = Padding::valid) const {
    return LinearWrap(graph::AvgPooling(name, t_, pool_size, strides, padding));
  }
  LinearWrap GlobalAvgPooling(const std::string& name) const { return LinearWrap(graph::GlobalAvgPooling(name, t_)); }
  LinearWrap BatchNorm(const std::string& name, const BatchNormOptions& o = {}) const {
    return LinearWrap(graph::BatchNorm(name, t_, o));
  }
  LinearWrap BNReLU(const std::string& name, const BatchNormOptions& o = {}) const {
    return LinearWrap(graph::BNReLU(name, t_, o));
  }
  LinearWrap InstanceNorm(const std::string& name, float epsilon = 1e-5f, bool affine = true) const {
    return LinearWrap(graph::InstanceNorm(name, t_, epsilon, affine));
  }
  LinearWrap Dropout(const std::string& name, float rate) const { return LinearWrap(graph::Dropout(name, t_, rate)); }
  LinearWrap PReLU(const std::string& name, float init = 0.001f) const {
    return LinearWrap(graph::PReLU(name, t_, init));
  }
  LinearWrap Maxout(std::int64_t num_unit) const { return LinearWrap(graph::Maxout(t_, num_unit)); }
  LinearWrap FixedUnPooling(const std::string& name, std::array<std::int64_t, 2> shape,
                            std::optional<Array> unpool_mat = std::nullopt) const {
    return LinearWrap(graph::FixedUnPooling(name, t_, shape, std::move(unpool_mat)));
  }

 private:
  Tensor t_;
};

}  // namespace vkp::graph
