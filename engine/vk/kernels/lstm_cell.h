// One step of TensorFlow's LSTMCell on preactivations, and its two gradients. Kernel:
// lstm_cell (shaders/lstm_cell.comp has the formulas).
#pragma once

#include <cstdint>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/lstm_cell.comp.
struct LstmCellPush {
  std::uint32_t batch, units;
  float forget_bias;
};
static_assert(sizeof(LstmCellPush) == 12);

// Values are the shader's kMode.
enum class LstmCellPart : std::uint32_t { step, gates_grad, state_grad };

// step: out = the next state [batch, 2 units] (c, h) from z [batch, 4 units] and state.
// gates_grad: out = dz [batch, 4 units]; state_grad: out = dstate [batch, 2 units]; both
// from ds, the gradient of the next state (bind anything of its size for step).
struct LstmCellBuffers {
  BufferSlice z, state, ds, out;
};
void lstm_cell(Recording& recording, LstmCellPart part, const LstmCellPush& shape, const LstmCellBuffers& buffers);

}  // namespace vkp::vk
