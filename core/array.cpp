#include "core/array.h"

#include <cmath>
#include <cstring>

#include "core/half.h"

namespace vkp {

Array::Array(DType dtype, Shape shape)
    : dtype_(dtype),
      shape_(std::move(shape)),
      bytes_(static_cast<std::size_t>(shape_.numel()) * size_of(dtype), std::byte{0}) {}

Array::Array(DType dtype, Shape shape, Uninitialized)
    : dtype_(dtype), shape_(std::move(shape)), bytes_(static_cast<std::size_t>(shape_.numel()) * size_of(dtype)) {}

Array Array::uninitialized(DType dtype, Shape shape) { return Array(dtype, std::move(shape), Uninitialized{}); }

Array Array::reshaped(Shape shape) const& {
  Array copy = *this;
  return std::move(copy).reshaped(std::move(shape));
}

Array Array::reshaped(Shape shape) && {
  if (shape.numel() != shape_.numel())
    throw Error(ErrorCode::invalid_argument, "cannot reshape " + describe(*this) + " to " +
                                                 to_string(shape) + ": element counts differ");
  shape_ = std::move(shape);
  return std::move(*this);
}

void Array::check_dtype(DType wanted) const {
  if (wanted != dtype_)
    throw Error(ErrorCode::invalid_argument, "array " + describe(*this) + " read as " +
                                                 std::string(to_string(wanted)));
}

void Array::check_count(std::size_t count) const {
  if (static_cast<std::int64_t>(count) != shape_.numel())
    throw Error(ErrorCode::invalid_argument,
                "array of shape " + to_string(shape_) + " needs " +
                    std::to_string(shape_.numel()) + " values, got " + std::to_string(count));
}

std::int64_t batch_rows(std::span<const Array> batch) {
  return batch.empty() || batch[0].shape().rank() == 0 ? 1 : batch[0].shape()[0];
}

NonFinite non_finite(const Array& a) {
  NonFinite found;
  auto look = [&](std::int64_t i, float v) {
    if (std::isfinite(v)) return;
    if (found.count++ == 0) found.first = i;
  };
  if (a.dtype() == DType::f32) {
    const auto values = a.data<float>();
    for (std::size_t i = 0; i < values.size(); ++i) look(static_cast<std::int64_t>(i), values[i]);
  } else if (a.dtype() == DType::f16) {
    const std::span<const std::byte> bytes = a.bytes();
    for (std::size_t i = 0; i < bytes.size() / 2; ++i) {
      Half h;
      std::memcpy(&h.bits, bytes.data() + 2 * i, 2);
      look(static_cast<std::int64_t>(i), to_float(h));
    }
  }
  return found;
}

std::string describe(const Array& a) {
  return std::string(to_string(a.dtype())) + to_string(a.shape());
}

}  // namespace vkp
