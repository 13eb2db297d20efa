#include "engine/vk/kernels/training.h"

#include <fmt/format.h>

#include "core/error.h"
#include "shaders/embedded.h"

namespace vkp::vk {

void dropout(Recording& recording, std::uint64_t n, const DropoutMask& mask, const BufferSlice& x,
             const BufferSlice& scalars, const BufferSlice& y) {
  const float rate = mask.rate;
  if (!(rate >= 0.0f && rate < 1.0f))
    throw Error(ErrorCode::invalid_argument, fmt::format("dropout: rate {} is outside [0, 1)", rate));
  if (n > UINT32_MAX) throw Error(ErrorCode::unsupported, fmt::format("dropout: {} elements exceed 2^32", n));
  require_elements(x, n, "dropout", "x");
  require_elements(y, n, "dropout", "y");
  const DropoutPush push{static_cast<std::uint32_t>(n),
                         rate,
                         1.0f / (1.0f - rate),
                         mask.key,
                         static_cast<std::uint32_t>(mask.seed),
                         static_cast<std::uint32_t>(mask.seed >> 32)};
  Device& device = recording.device();
  const BufferSlice bindings[] = {x, scalars, y};
  recording.dispatch(storage_kernel(device, shaders::dropout, shaders::dropout_f16, bindings, {}, 0b101), bindings,
                     push, grid_1d((n + 63) / 64, device), "dropout");
}

void optimizer_update(Recording& recording, UpdateRule rule, const OptimizerPush& push, const OptimizerSlices& slices) {
  const BufferSlice &var = slices.var, &grad = slices.grad, &slot1 = slices.slot1, &slot2 = slices.slot2,
                    &scalars = slices.scalars, &guard = slices.guard;
  require_elements(var, push.n, "optimizer", "variable");
  const bool guarded = guard.size > 0;
  if (guarded) require_elements(guard, 2, "optimizer", "guard");
  require_elements(grad, push.n, "optimizer", "gradient");
  if (rule != UpdateRule::sgd) require_elements(slot1, push.n, "optimizer", "slot");
  if (rule == UpdateRule::adam || rule == UpdateRule::adamw) require_elements(slot2, push.n, "optimizer", "slot");
  Device& device = recording.device();
  // Four elements an invocation where every slice it updates starts 16-byte aligned.
  const bool uses_slot1 = rule != UpdateRule::sgd;
  const bool uses_slot2 = rule == UpdateRule::adam || rule == UpdateRule::adamw || rule == UpdateRule::rmsprop;
  const bool vec4 = var.offset % 16 == 0 && grad.offset % 16 == 0 && (!uses_slot1 || slot1.offset % 16 == 0) &&
                    (!uses_slot2 || slot2.offset % 16 == 0);
  // On a CPU device, where all four slices are whole vec4s, the texel build reads them
  // through texel views (bindings 6-9, the same slices) and writes through 0, 2 and 3.
  const BufferSlice bindings[] = {var, grad, slot1, slot2, scalars, guarded ? guard : scalars, var, grad, slot1, slot2};
  const bool texel_shape = vec4 && push.n % 4 == 0;
  const Kernel& kernel =
      texel_kernel(device, shaders::optimizer, texel_shape ? shaders::optimizer_texel : shaders::optimizer,
                   0b1111000000, bindings, {{0, static_cast<std::uint32_t>(rule)}, {1, guarded}, {2, vec4}});
  const std::uint64_t invocations = vec4 ? (std::uint64_t{push.n} + 3) / 4 : push.n;
  recording.dispatch(kernel, std::span(bindings).first(kernel.bindings().size()), push,
                     grid_1d((invocations + 63) / 64, device), "optimizer");
}

}  // namespace vkp::vk
