#version 450
// transpose: dst[b][c][r] = src[b][r][c] for a batch of rows x cols matrices (32-bit
// words), through a kTile x kTile shared-memory tile so that both the read and the write
// are contiguous across the workgroup (the GPU path; CPU devices use copy).
// Push constants mirror vkp::vk::TransposePush. Launch: (ceil(cols/kTile), ceil(rows/kTile), batch).
layout(local_size_x_id = 0, local_size_y_id = 0) in;  // kTile x kTile
layout(constant_id = 0) const uint kTile = 16;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint rows;
  uint cols;
} p;

shared uint tile[kTile][kTile + 1];  // +1: no bank conflicts on the transposed read

void main() {
  const uint matrix = gl_WorkGroupID.z * p.rows * p.cols;
  const uint r0 = gl_WorkGroupID.y * kTile, c0 = gl_WorkGroupID.x * kTile;
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  if (r0 + ty < p.rows && c0 + tx < p.cols) tile[ty][tx] = src[matrix + (r0 + ty) * p.cols + c0 + tx];
  barrier();
  // Thread (tx, ty) writes dst row c0+ty, column r0+tx.
  if (c0 + ty < p.cols && r0 + tx < p.rows) dst[matrix + (c0 + ty) * p.rows + r0 + tx] = tile[tx][ty];
}
