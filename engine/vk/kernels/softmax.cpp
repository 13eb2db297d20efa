#include "engine/vk/kernels/softmax.h"

#include "shaders/embedded.h"

namespace vkp::vk {

void row_op(Recording& recording, RowOp op, std::uint32_t rows, std::uint32_t cols, const RowOperands& operands,
            std::uint32_t k) {
  const BufferSlice &x = operands.x, &labels = operands.labels, &dy = operands.dy, &out = operands.out;
  const std::uint64_t elements = std::uint64_t{rows} * cols;
  const bool per_row = op == RowOp::xent || op == RowOp::in_top_k;
  const bool uses_labels = op == RowOp::xent || op == RowOp::xent_grad || op == RowOp::in_top_k;
  require_elements(x, elements, "softmax", "x");
  if (uses_labels) require_elements(labels, rows, "softmax", "labels");
  if (op == RowOp::xent_grad) require_elements(dy, rows, "softmax", "dy");
  require_elements(out, per_row ? rows : elements, "softmax", "out");
  if (rows == 0) return;
  Device& device = recording.device();
  const BufferSlice bindings[] = {x, uses_labels ? labels : x, op == RowOp::xent_grad ? dy : x, out};
  const Kernel& kernel = texel_kernel(device, shaders::softmax, shaders::softmax_texel, 0b0101, bindings,
                                      {{0, static_cast<std::uint32_t>(op)}});
  recording.dispatch(kernel, bindings, SoftmaxPush{rows, cols, k}, grid_1d((rows + 63) / 64, device), "softmax");
}

}  // namespace vkp::vk
