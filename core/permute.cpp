#include "core/permute.h"

#include <cstring>

namespace vkp {

Array permute_axes(const Array& a, const std::vector<int>& perm) {
  const std::vector<std::int64_t>& in = a.shape().dims();
  const std::size_t rank = in.size();
  std::vector<std::int64_t> out_dims(rank), in_strides(rank, 1);
  for (std::size_t k = rank; k-- > 1;) in_strides[k - 1] = in_strides[k] * in[k];
  for (std::size_t k = 0; k < rank; ++k) out_dims[k] = in[static_cast<std::size_t>(perm[k])];
  Array out(a.dtype(), Shape(out_dims));
  const std::size_t bytes = size_of(a.dtype());
  const std::size_t count = static_cast<std::size_t>(a.shape().numel());
  std::vector<std::int64_t> index(rank, 0);
  for (std::size_t o = 0; o < count; ++o) {
    std::int64_t from = 0;
    for (std::size_t k = 0; k < rank; ++k) from += index[k] * in_strides[static_cast<std::size_t>(perm[k])];
    std::memcpy(out.bytes().data() + o * bytes, a.bytes().data() + static_cast<std::size_t>(from) * bytes, bytes);
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < out_dims[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace vkp
