// Array: a host n-d array that owns its contiguous, row-major bytes.
//
// The datapoint of a DataFlow is std::vector<Array>; feeds and fetches are Arrays.
// Copying an Array copies its bytes; moving it is cheap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"

namespace vkp {

class Array {
 public:
  Array() = default;  // an empty f32 array of shape [0]
  // Zero-filled.
  Array(DType dtype, Shape shape);
  // Bytes left unwritten, for code that overwrites every byte anyway: reading one
  // before writing it is undefined.
  static Array uninitialized(DType dtype, Shape shape);

  // Copies `values`, whose length must equal shape.numel().
  template <class T>
  static Array from(Shape shape, std::span<const T> values) {
    Array a = uninitialized(dtype_of<T>(), std::move(shape));
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
  // std::allocator, except that value-initialisation without arguments (what
  // vector(n) and resize(n) do) leaves the elements default-initialised: for bytes, unwritten.
  template <class T>
  class DefaultInitAllocator : public std::allocator<T> {
   public:
    template <class U>
    struct rebind {
      using other = DefaultInitAllocator<U>;
    };
    DefaultInitAllocator() = default;
    template <class U>
    DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
      ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  };
  struct Uninitialized {};

  Array(DType dtype, Shape shape, Uninitialized);
  void check_dtype(DType wanted) const;
  void check_count(std::size_t count) const;

  DType dtype_ = DType::f32;
  Shape shape_{0};
  // 64-byte aligned storage would matter for SIMD host code; the vector gives the
  // allocator's alignment (16 on x86-64), enough for every dtype here.
  std::vector<std::byte, DefaultInitAllocator<std::byte>> bytes_;
};

// "f32[2, 3]"
std::string describe(const Array& a);

// The samples in a batch (a datapoint of batched components): the first dimension of its
// first array; 1 for an empty batch or a scalar first component.
std::int64_t batch_rows(std::span<const Array> batch);

// Elements that are NaN or infinite (floating-point dtypes; 0 for the others), and the
// index of the first of them (-1 when none).
struct NonFinite {
  std::int64_t count = 0, first = -1;
};
NonFinite non_finite(const Array& a);

}  // namespace vkp
