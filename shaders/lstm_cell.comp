#version 450
// lstm_cell: TensorFlow's LSTMCell step on preactivations z [batch, 4 units] (gates in
// TensorFlow's order i, j, f, o: input, new input, forget, output) and the state
// s [batch, 2 units] = (c, h) per row:
//   c' = sigmoid(f + forget_bias) c + sigmoid(i) tanh(j),   h' = sigmoid(o) tanh(c')
//   kMode 0: out = s' = (c', h')
//   kMode 1: out = dz from ds' = (dc', dh'):
//            dc = dc' + dh' sigmoid(o) (1 - tanh(c')^2)  (the total gradient of c')
//            di = dc tanh(j) si (1 - si), dj = dc si (1 - tanh(j)^2),
//            df = dc c sf (1 - sf), do = dh' tanh(c') so (1 - so)
//   kMode 2: out = ds = (dc sigmoid(f + forget_bias), 0): the gradient of the previous
//            state (its h reaches z only through the recurrent matmul, whose gradient
//            autodiff adds separately)
// One invocation per (row, unit); c' is recomputed in the gradients rather than read.
// Push constants mirror vkp::vk::LstmCellPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "elementwise_ops.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;

#include "f16_storage.glsl"
#include "texel_input.glsl"
// Texel buffers in the _texel build (on lavapipe a storage-buffer load is a loop over the lanes).
VKP_TEXEL_INPUT4(0, Z, z)
VKP_TEXEL_INPUT4(1, State, s)  // the previous state
VKP_TEXEL_INPUT4(2, Ds, ds)    // kMode 1, 2
layout(std430, binding = 3) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint batch, units;
  float forget_bias;
} p;

float tanh_safe(float v) { return unary_value(2, v, 0.0); }

void main() {
  const uint e = linear_group() * 64 + gl_LocalInvocationID.x;
  if (e >= p.batch * p.units) return;
  const uint b = e / p.units, u = e % p.units, zr = b * 4 * p.units, sr = b * 2 * p.units;
  const float si = sigmoid(load_z(zr + u)), tj = tanh_safe(load_z(zr + p.units + u));
  const float sf = sigmoid(load_z(zr + 2 * p.units + u) + p.forget_bias), so = sigmoid(load_z(zr + 3 * p.units + u));
  const float c_prev = load_s(sr + u);
  const float c = sf * c_prev + si * tj;
  const float tc = tanh_safe(c);
  if (kMode == 0) {
    out_[sr + u] = c;
    out_[sr + p.units + u] = so * tc;
    return;
  }
  const float dh = load_ds(sr + p.units + u);
  const float dc = load_ds(sr + u) + dh * so * (1.0 - tc * tc);
  if (kMode == 1) {
    out_[zr + u] = dc * tj * si * (1.0 - si);
    out_[zr + p.units + u] = dc * si * (1.0 - tj * tj);
    out_[zr + 2 * p.units + u] = dc * c_prev * sf * (1.0 - sf);
    out_[zr + 3 * p.units + u] = dh * tc * so * (1.0 - so);
  } else {
    out_[sr + u] = dc * sf;
    out_[sr + p.units + u] = 0.0;
  }
}
