#include "engine/graph/initializer.h"

#include <cmath>

#include "core/rng.h"

namespace vkp::graph {
namespace {

// FNV-1a of the name: variables get independent streams, whatever their creation order.
std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

// |z| <= 2 by redrawing.
float truncated(Rng& rng) {
  for (;;) {
    const float z = rng.normal();
    if (std::abs(z) <= 2.0f) return z;
  }
}

}  // namespace

Initializer zeros() { return constant(0.0f); }
Initializer ones() { return constant(1.0f); }

Initializer constant(float value) {
  Initializer i;
  i.kind = Initializer::Kind::constant;
  i.value = value;
  return i;
}

Initializer uniform(float low, float high) {
  Initializer i;
  i.kind = Initializer::Kind::uniform;
  i.low = low;
  i.high = high;
  return i;
}

Initializer normal(float stddev, float mean) {
  Initializer i;
  i.kind = Initializer::Kind::normal;
  i.stddev = stddev;
  i.mean = mean;
  return i;
}

Initializer truncated_normal(float stddev, float mean) {
  Initializer i = normal(stddev, mean);
  i.kind = Initializer::Kind::truncated_normal;
  return i;
}

Initializer variance_scaling(float scale, Initializer::Fan fan, Initializer::Distribution distribution) {
  Initializer i;
  i.kind = Initializer::Kind::variance_scaling;
  i.scale = scale;
  i.fan = fan;
  i.distribution = distribution;
  return i;
}

Initializer he_normal() {
  return variance_scaling(2.0f, Initializer::Fan::in, Initializer::Distribution::truncated_normal);
}

Initializer glorot_uniform() {
  return variance_scaling(1.0f, Initializer::Fan::avg, Initializer::Distribution::uniform);
}

Array initial_value(const Initializer& init, const Shape& shape, std::uint64_t seed, const std::string& name) {
  Array out(DType::f32, shape);
  Rng rng(seed, name_hash(name));
  auto values = out.data<float>();
  switch (init.kind) {
    case Initializer::Kind::constant:
      for (float& v : values) v = init.value;
      break;
    case Initializer::Kind::uniform:
      for (float& v : values) v = rng.uniform(init.low, init.high);
      break;
    case Initializer::Kind::normal:
      for (float& v : values) v = init.mean + init.stddev * rng.normal();
      break;
    case Initializer::Kind::truncated_normal:
      for (float& v : values) v = init.mean + init.stddev * truncated(rng);
      break;
    case Initializer::Kind::variance_scaling: {
      const int rank = shape.rank();
      double field = 1;
      for (int i = 0; i + 2 < rank; ++i) field *= static_cast<double>(shape[i]);
      const double fan_in = rank >= 2 ? static_cast<double>(shape[rank - 2]) * field : rank == 1 ? shape[0] : 1;
      const double fan_out = rank >= 1 ? static_cast<double>(shape[rank - 1]) * field : 1;
      const double fan = init.fan == Initializer::Fan::in    ? fan_in
                         : init.fan == Initializer::Fan::out ? fan_out
                                                             : (fan_in + fan_out) / 2;
      const double variance = init.scale / std::max(1.0, fan);
      switch (init.distribution) {
        case Initializer::Distribution::uniform: {
          const float limit = static_cast<float>(std::sqrt(3.0 * variance));
          for (float& v : values) v = rng.uniform(-limit, limit);
          break;
        }
        case Initializer::Distribution::normal:
          for (float& v : values) v = static_cast<float>(std::sqrt(variance)) * rng.normal();
          break;
        case Initializer::Distribution::truncated_normal: {
          // The stddev of N(0,1) truncated to [-2, 2] is 0.87962566; TF divides by it.
          const float stddev = static_cast<float>(std::sqrt(variance) / 0.87962566103423978);
          for (float& v : values) v = stddev * truncated(rng);
          break;
        }
      }
      break;
    }
  }
  return out;
}

}  // namespace vkp::graph
