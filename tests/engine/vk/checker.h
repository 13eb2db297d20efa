// The comparison every kernel test makes, and the proof that it can fail.
//
// compare() holds a kernel's output against its double-precision reference element by
// element, |got - want| <= tolerance[i] (NaN matches only NaN), and describes the first
// few elements outside. Each kernel family's tolerance is a function of its own test,
// derived there; expect_checker_rejects() feeds compare() results that are wrong in the
// ways a broken kernel is wrong and fails unless every one is rejected, so a tolerance
// too loose to see a bug is itself a test failure.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace vkp::test {

// "" when every element is within its tolerance; otherwise the count of elements outside
// and the first few, each with its value, reference and tolerance.
std::string compare(std::span<const float> got, std::span<const double> want, std::span<const double> tolerance);

// compare() for a GEMM's C as gemm_reference() describes it: elements whose magnitude is
// negative lie outside the result and must still hold their starting value c0 (NaN
// stays NaN); the others must lie within tolerance(magnitude, want) of want.
std::string compare_gemm(std::span<const float> got, std::span<const float> c0, std::span<const double> want,
                         std::span<const double> magnitude, const std::function<double(double magnitude, double want)>& tolerance);

// The wrong results a checker must reject, made from the reference:
//   zeros                 every element 0 (a kernel that wrote nothing, into zeroed memory)
//   one element off       the reference rounded to f32, one element (the one with the
//                         largest reference) moved 4 ulps beyond its tolerance
//   transposed            the reference read as [cols, rows] (rows, cols > 1 and distinct
//                         values); skipped when rows or cols is 0
// Also checks that the reference rounded to f32 passes, so the checker is not rejecting
// everything. `what` names the family in messages.
void expect_checker_rejects(std::span<const double> want, std::span<const double> tolerance, std::size_t rows,
                            std::size_t cols, const std::string& what);

}  // namespace vkp::test
