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

}  // namespace vkp
