#include "engine/vk/kernels/cast.h"

#include <fmt/format.h>

#include "core/error.h"
#include "shaders/embedded.h"

namespace vkp::vk {

void cast(Recording& recording, DType from, DType to, std::uint64_t n, const BufferSlice& src, const BufferSlice& dst) {
  std::uint32_t mode = 0;
  if (from == DType::f32 && to == DType::i32) mode = 0;
  else if (from == DType::i32 && to == DType::f32) mode = 1;
  else if (from == DType::u8 && to == DType::f32) mode = 2;
  else if (from == to && size_of(from) == 4) mode = 3;
  else
    throw Error(ErrorCode::unsupported, fmt::format("cast from {} to {} is not implemented", to_string(from), to_string(to)));
  if (n > UINT32_MAX) throw Error(ErrorCode::unsupported, fmt::format("cast: {} elements exceed 2^32", n));
  require_elements(src, mode == 2 ? (n + 3) / 4 : n, "cast", "src");
  require_elements(dst, n, "cast", "dst");
  constexpr std::uint32_t kWorkgroup = 64;
  Device& device = recording.device();
  const Kernel& kernel = device.kernel(shaders::cast, {{0, kWorkgroup}, {1, mode}});
  recording.dispatch(kernel, {src, dst}, CastPush{static_cast<std::uint32_t>(n)},
                     grid_1d((n + kWorkgroup - 1) / kWorkgroup, device), "cast");
}

}  // namespace vkp::vk
