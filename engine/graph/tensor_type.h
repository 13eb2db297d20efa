// TensorType: the dtype and static shape of a symbolic tensor. Extents may be
// kUnknown (-1) while the graph is built, typically the batch dimension; compile()
// makes every extent concrete from the input shapes it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace vkp {
class Array;
}  // namespace vkp

namespace vkp::graph {

constexpr std::int64_t kUnknown = -1;

struct TensorType {
  DType dtype = DType::f32;
  std::vector<std::int64_t> dims;

  int rank() const { return static_cast<int>(dims.size()); }
  // Extent of axis i; negative i counts from the end.
  std::int64_t dim(int i) const { return dims[static_cast<std::size_t>(i < 0 ? i + rank() : i)]; }
  bool known() const;
  // Elements, or kUnknown when an extent is unknown.
  std::int64_t numel() const;
  // The concrete Shape; throws Error(invalid_argument) when an extent is unknown.
  Shape shape() const;
  bool operator==(const TensorType&) const = default;
};

TensorType f32(std::vector<std::int64_t> dims);
TensorType i32(std::vector<std::int64_t> dims);

// "f32[?, 784]"
std::string to_string(const TensorType& type);
// "[?, 784]"
std::string dims_string(const std::vector<std::int64_t>& dims);

// Whether `value` has `type`'s dtype and extents.
bool has_type(const Array& value, const TensorType& type);
// Copies a value of `type` (every extent known) from host memory at `src` into `out`,
// which is reallocated only when it does not already have that type.
void copy_value(const TensorType& type, const std::byte* src, Array& out);

}  // namespace vkp::graph
