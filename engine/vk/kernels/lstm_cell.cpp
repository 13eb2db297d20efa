#include "engine/vk/kernels/lstm_cell.h"

#include "shaders/embedded.h"

namespace vkp::vk {

void lstm_cell(Recording& recording, LstmCellPart part, const LstmCellPush& shape, const LstmCellBuffers& buffers) {
  const auto& [z, state, ds, out] = buffers;
  const std::uint64_t cells = std::uint64_t{shape.batch} * shape.units;
  require_elements(z, 4 * cells, "lstm_cell", "z");
  require_elements(state, 2 * cells, "lstm_cell", "state");
  require_elements(ds, part == LstmCellPart::step ? 0 : 2 * cells, "lstm_cell", "ds");
  require_elements(out, (part == LstmCellPart::gates_grad ? 4 : 2) * cells, "lstm_cell", "out");
  Device& device = recording.device();
  const BufferSlice bindings[] = {z, state, ds, out};
  const Kernel& kernel = texel_kernel(device, shaders::lstm_cell, shaders::lstm_cell_texel, 0b0111, bindings,
                                      {{0, static_cast<std::uint32_t>(part)}});
  constexpr const char* names[] = {"lstm_cell", "lstm_cell_gates_grad", "lstm_cell_state_grad"};
  recording.dispatch(kernel, bindings, shape, grid_1d((cells + 63) / 64, device),
                     names[static_cast<std::size_t>(part)]);
}

}  // namespace vkp::vk
