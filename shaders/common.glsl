// Helpers shared by vkpack's compute shaders.

// Large 1-D launches use a 3-D grid (each dimension is capped by maxComputeWorkGroupCount,
// 65535 on many devices; grid_1d in engine/vk/kernels/launch.cpp): the linear workgroup
// index is (z * num_y + y) * num_x + x.
uint linear_group() {
  return (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
