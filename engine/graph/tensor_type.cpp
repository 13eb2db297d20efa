#include "engine/graph/tensor_type.h"

#include <cstring>

#include "core/array.h"
#include "core/error.h"

namespace vkp::graph {

bool TensorType::known() const {
  for (std::int64_t d : dims)
    if (d < 0) return false;
  return true;
}

std::int64_t TensorType::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : dims) {
    if (d < 0) return kUnknown;
    n *= d;
  }
  return n;
}

Shape TensorType::shape() const {
  if (!known()) throw Error(ErrorCode::invalid_argument, "shape " + dims_string(dims) + " is not fully known");
  return Shape(dims);
}

TensorType f32(std::vector<std::int64_t> dims) { return {DType::f32, std::move(dims)}; }
TensorType i32(std::vector<std::int64_t> dims) { return {DType::i32, std::move(dims)}; }

std::string dims_string(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return text + "]";
}

std::string to_string(const TensorType& type) { return std::string(to_string(type.dtype)) + dims_string(type.dims); }

bool has_type(const Array& value, const TensorType& type) {
  return value.dtype() == type.dtype && value.shape().dims() == type.dims;
}

void copy_value(const TensorType& type, const std::byte* src, Array& out) {
  if (!has_type(out, type)) out = Array(type.dtype, type.shape());
  std::memcpy(out.bytes().data(), src, out.nbytes());
}

}  // namespace vkp::graph
