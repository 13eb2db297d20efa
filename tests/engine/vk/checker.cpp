#include "checker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace vkp::test {

std::string compare(std::span<const float> got, std::span<const double> want, std::span<const double> tolerance) {
  if (got.size() != want.size() || tolerance.size() != want.size())
    return "sizes differ: " + std::to_string(got.size()) + " results, " + std::to_string(want.size()) +
           " references, " + std::to_string(tolerance.size()) + " tolerances";
  std::ostringstream first;
  first.precision(9);
  std::size_t outside = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool ok = std::isnan(w) ? std::isnan(g) : std::abs(g - w) <= tolerance[i];
    if (ok) continue;
    if (++outside <= 5) first << "\n  [" << i << "] " << g << ", reference " << w << ", tolerance " << tolerance[i];
  }
  if (outside == 0) return "";
  return std::to_string(outside) + " of " + std::to_string(got.size()) + " elements outside their tolerance:" +
         first.str();
}

std::string compare_gemm(std::span<const float> got, std::span<const float> c0, std::span<const double> want,
                         std::span<const double> magnitude, const std::function<double(double magnitude, double want)>& tolerance) {
  std::vector<float> result;
  std::vector<double> result_want, bound;
  std::string outside;
  for (std::size_t i = 0; i < c0.size(); ++i) {
    if (magnitude[i] < 0) {
      if (!(got[i] == c0[i] || (std::isnan(got[i]) && std::isnan(c0[i]))) && outside.empty())
        outside = "C[" + std::to_string(i) + "] outside the result changed to " + std::to_string(got[i]) + "; ";
      continue;
    }
    result.push_back(got[i]);
    result_want.push_back(want[i]);
    bound.push_back(tolerance(magnitude[i], want[i]));
  }
  return outside + compare(result, result_want, bound);
}

void expect_checker_rejects(std::span<const double> want, std::span<const double> tolerance, std::size_t rows,
                            std::size_t cols, const std::string& what) {
  SCOPED_TRACE(what);
  std::vector<float> rounded(want.begin(), want.end());
  EXPECT_EQ(compare(rounded, want, tolerance), "") << "the reference itself, rounded to f32, is rejected";

  const std::vector<float> zeros(want.size(), 0.0f);
  EXPECT_NE(compare(zeros, want, tolerance), "") << "a result of zeros passes";

  std::size_t largest = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::abs(want[i]) > std::abs(want[largest])) largest = i;
  std::vector<float> off = rounded;
  float moved = static_cast<float>(want[largest] + tolerance[largest]);
  while (static_cast<double>(moved) <= want[largest] + tolerance[largest]) moved = std::nextafter(moved, INFINITY);
  for (int ulp = 1; ulp < 4; ++ulp) moved = std::nextafter(moved, INFINITY);
  off[largest] = moved;
  EXPECT_NE(compare(off, want, tolerance), "") << "element " << largest << " moved 4 ulps beyond its tolerance passes";

  if (rows > 1 && cols > 1) {
    ASSERT_EQ(rows * cols, want.size());
    std::vector<float> transposed(want.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) transposed[c * rows + r] = rounded[r * cols + c];
    EXPECT_NE(compare(transposed, want, tolerance), "") << "the result transposed passes";
  }
}

}  // namespace vkp::test
