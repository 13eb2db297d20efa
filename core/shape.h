// The shape of an n-d array: a list of non-negative extents, outermost first.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace vkp {

class Shape {
 public:
  Shape() = default;  // rank 0: a scalar with one element
  Shape(std::initializer_list<std::int64_t> dims);
  explicit Shape(std::vector<std::int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  // Extent of axis `i`; negative i counts from the end, as in numpy.
  std::int64_t operator[](int i) const;
  std::int64_t numel() const;
  const std::vector<std::int64_t>& dims() const { return dims_; }

  // Row-major strides in elements.
  std::vector<std::int64_t> strides() const;

  bool operator==(const Shape&) const = default;

 private:
  std::vector<std::int64_t> dims_;
};

// "[2, 3, 4]"; "[]" for a scalar.
std::string to_string(const Shape& shape);

// numpy broadcasting, the one rule the graph's shape inference and the kernels' launch
// share: extents are aligned from the last axis; an axis of extent 1 takes the other's.
// An extent below 0 is unknown (a graph's batch axis): unknown with n is n, with 1 or
// unknown it stays unknown. Error(invalid_argument) naming both lists and the axis where
// known extents differ and neither is 1.
std::vector<std::int64_t> broadcast_dims(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b);
// The same for known shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace vkp
