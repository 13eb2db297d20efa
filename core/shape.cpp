#include "core/shape.h"

#include <algorithm>

#include "core/error.h"

namespace vkp {
namespace {

// "[2, ?, 3]": unknown (negative) extents as "?".
std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + (dims[i] < 0 ? "?" : std::to_string(dims[i]));
  return text + "]";
}

// Extents are >= 0, and the product of the nonzero ones fits in 64 bits, so that numel()
// and strides() never overflow (a zero extent makes numel() 0 but not the strides before
// it: a file's header may declare [0, 2^60, 4000]).
void check_dims(const std::vector<std::int64_t>& dims) {
  std::int64_t product = 1;
  for (std::int64_t d : dims) {
    if (d < 0) {
      std::string text = "[";
      for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
      throw Error(ErrorCode::invalid_argument, "shape " + text + "] has a negative extent; extents must be >= 0");
    }
    if (d != 0 && __builtin_mul_overflow(product, d, &product))
      throw Error(ErrorCode::invalid_argument, "shape " + dims_text(dims) + " has more than 2^63 elements");
  }
}

}  // namespace

Shape::Shape(std::initializer_list<std::int64_t> dims) : dims_(dims) { check_dims(dims_); }

Shape::Shape(std::vector<std::int64_t> dims) : dims_(std::move(dims)) { check_dims(dims_); }

std::int64_t Shape::operator[](int i) const {
  const int r = rank();
  const int j = i < 0 ? i + r : i;
  if (j < 0 || j >= r)
    throw Error(ErrorCode::invalid_argument,
                "axis " + std::to_string(i) + " is out of range for shape " + to_string(*this));
  return dims_[static_cast<std::size_t>(j)];
}

std::int64_t Shape::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : dims_) n *= d;
  return n;
}

std::vector<std::int64_t> Shape::strides() const {
  std::vector<std::int64_t> s(dims_.size());
  std::int64_t step = 1;
  for (std::size_t i = dims_.size(); i-- > 0;) {
    s[i] = step;
    step *= dims_[i];
  }
  return s;
}

std::vector<std::int64_t> broadcast_dims(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0) {
      out[i] = db;
    } else if (db < 0 || da == db) {
      out[i] = da;
    } else {
      throw Error(ErrorCode::invalid_argument,
                  "shapes " + dims_text(a) + " and " + dims_text(b) + " do not broadcast: axis " +
                      std::to_string(static_cast<std::int64_t>(i) - static_cast<std::int64_t>(rank)) + " has " +
                      std::to_string(da) + " and " + std::to_string(db));
    }
  }
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) { return Shape(broadcast_dims(a.dims(), b.dims())); }

std::string to_string(const Shape& shape) {
  std::string text = "[";
  for (int i = 0; i < shape.rank(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace vkp
