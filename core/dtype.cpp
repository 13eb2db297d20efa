#include "core/dtype.h"

#include <string>

#include "core/error.h"

namespace vkp {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  if (name == "f32" || name == "float32") return DType::f32;
  if (name == "f16" || name == "float16") return DType::f16;
  if (name == "i32" || name == "int32") return DType::i32;
  if (name == "i64" || name == "int64") return DType::i64;
  if (name == "u8" || name == "uint8") return DType::u8;
  throw Error(ErrorCode::invalid_argument,
              "unknown dtype '" + std::string(name) + "'; expected one of f32, f16, i32, i64, u8");
}

}  // namespace vkp
