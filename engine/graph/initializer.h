// Initializers of variables, run on the host from a seed (deterministic: a variable's
// initial value depends only on the seed, its name and its shape).
#pragma once

#include <cstdint>
#include <string>

#include "core/array.h"

namespace vkp::graph {

struct Initializer {
  enum class Kind : std::uint8_t {
    constant,           // every element = value
    uniform,            // U[low, high)
    normal,             // N(mean, stddev)
    truncated_normal,   // N(mean, stddev) redrawn beyond 2 stddev
    variance_scaling,   // scale / fan, as TF's VarianceScaling
  };
  enum class Fan : std::uint8_t { in, out, avg };
  enum class Distribution : std::uint8_t { truncated_normal, normal, uniform };

  Kind kind = Kind::constant;
  float value = 0.0f;                    // constant
  float low = -0.05f, high = 0.05f;      // uniform
  float mean = 0.0f, stddev = 1.0f;      // normal, truncated_normal
  float scale = 1.0f;                    // variance_scaling
  Fan fan = Fan::in;
  Distribution distribution = Distribution::truncated_normal;
};

Initializer zeros();
Initializer ones();
Initializer constant(float value);
Initializer uniform(float low, float high);
Initializer normal(float stddev, float mean = 0.0f);
Initializer truncated_normal(float stddev, float mean = 0.0f);
Initializer variance_scaling(float scale, Initializer::Fan fan, Initializer::Distribution distribution);
// He et al.: variance_scaling(2, fan_in, truncated normal), tensorpack's conv default.
Initializer he_normal();
// Glorot & Bengio: variance_scaling(1, fan_avg, uniform), TF's dense default.
Initializer glorot_uniform();

// The initial f32 value of a variable. Fans follow TF: the last axis is the output,
// the one before it the input, and the leading axes (a conv kernel's window) a
// receptive field that multiplies both.
Array initial_value(const Initializer& init, const Shape& shape, std::uint64_t seed, const std::string& name);

}  // namespace vkp::graph
