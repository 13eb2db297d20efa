// Array: a host n-d array that owns its contiguous, row-major bytes.
//
// The datapoint of a DataFlow is std::vector<Array>; feeds and fetches are Arrays.
// Copying an Array copies its bytes; moving it is cheap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "vkpack/core/dtype.h"
#include "vkpack/core/error.h"
#include "vkpack/core/shape.h"

namespace vkp {

class Array {
 public:
  Array() = default;  // an empty f32 array of shape [0]
  // Zero-filled.
  Array(DType dtype, Shape shape);

  // Copies `values`, whose length must equal shape.numel().
  template <class T>
  static Array from(Shape shape, std::span<const T> values) {
    Array a(dtype_of<T>(), std::move(shape));
    a.check_count(values.size());
    std::copy(values.begin(), values.end(), a.data<T>().begin());
    return a;
  }
  template <class T>
  static Array from(Shape shape, const std::vector<T>& values) {
    return from(std::move(shape), std::span<const T>(values));
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t numel() const { return shape_.numel(); }
  std::size_t nbytes() const { return bytes_.size(); }

  std::span<std::byte> bytes() { return bytes_; }
  std::span<const std::byte> bytes() const { return bytes_; }

  // Typed views; throw Error(invalid_argument) when T does not match dtype().
  template <class T>
  std::span<T> data() {
    check_dtype(dtype_of<T>());
    return {reinterpret_cast<T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  template <class T>
  std::span<const T> data() const {
    check_dtype(dtype_of<T>());
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }

  // Same bytes, another shape with the same number of elements.
  Array reshaped(Shape shape) const&;
  Array reshaped(Shape shape) &&;

 private:
  void check_dtype(DType wanted) const;
  void check_count(std::size_t count) const;

  DType dtype_ = DType::f32;
  Shape shape_{0};
  // 64-byte aligned storage would matter for SIMD host code; std::vector<std::byte> gives
  // the allocator's alignment (16 on x86-64), enough for every dtype here.
  std::vector<std::byte> bytes_;
};

// "f32[2, 3]"
std::string describe(const Array& a);

}  // namespace vkp
