// The harness every op test uses. For an op built on placeholders of given shapes:
//   forward   the device output against the double-precision reference;
//   gradient  the reference's gradient graph against central finite differences of the
//             reference in double (this checks the gradient rule);
//   backward  the device gradients against the reference gradients (this checks the
//             lowering of the gradient ops).
// The gradient is of loss = sum(y * w) with a fixed random w, so every output element
// matters. Each of `inputs` and `more_inputs` is checked: an op's small shapes test its
// edges, its large ones the loops a kernel only takes at size (chunked reductions, rows
// longer than a workgroup). Comparisons go through compare() (checker.h), whose power
// OpChecker tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace vkp::test {

struct OpCheck {
  std::string name;
  std::vector<graph::TensorType> inputs;  // concrete; f32 inputs are random, i32 ones labels
  std::vector<std::vector<graph::TensorType>> more_inputs;  // further shapes, each checked the same way
  std::function<graph::Tensor(std::vector<graph::Tensor>&)> build;
  float low = -2.0f, high = 2.0f;         // range of the random f32 inputs
  std::int64_t label_range = 0;           // i32 inputs in [0, label_range)
  double forward_tolerance = 1e-5;        // |device - reference| <= tol * max(1, |reference|)
  double gradient_tolerance = 1e-5;       // finite differences against the reference gradient
  double backward_tolerance = 1e-4;       // device gradients against the reference gradients
  bool check_gradients = true;
  std::uint64_t seed = 1;
};

void check_op(const OpCheck& check);

// Per element, tolerance * max(1, |reference|): the rule of every comparison above.
std::vector<double> relative_tolerances(const std::vector<double>& want, double tolerance);

}  // namespace vkp::test
