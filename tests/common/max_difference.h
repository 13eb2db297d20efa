// The largest absolute difference between two f32 arrays of one size, for tests that
// compare results within a tolerance.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/array.h"

namespace vkp::test {

inline float max_difference(const Array& a, const Array& b) {
  float worst = 0;
  const auto x = a.data<float>(), y = b.data<float>();
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return x.size() == y.size() ? worst : INFINITY;
}

}  // namespace vkp::test
