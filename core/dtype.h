// Element types of Arrays and tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vkp {

enum class DType : std::uint8_t { f32, f16, i32, i64, u8 };

constexpr std::size_t size_of(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
  }
  return 0;
}

std::string_view to_string(DType t);
// Parses "f32", "float32", "f16", "float16", "i32", "int32", "i64", "int64", "u8", "uint8";
// throws Error(invalid_argument) for anything else.
DType parse_dtype(std::string_view name);

// The DType that stores a C++ element type; a compile error for types without one.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::u8; }

}  // namespace vkp
