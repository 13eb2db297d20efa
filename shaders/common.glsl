// Helpers shared by vkpack's compute shaders.

// Large 1-D launches use a 2-D grid (x is capped by maxComputeWorkGroupCount[0], 65535 on
// many devices): the linear workgroup index is y * num_x + x.
uint linear_group() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
