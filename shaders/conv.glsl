// The geometry of a 2-D convolution over NHWC images, shared by im2col and col2im.
// Push constants mirror vkp::vk::ConvPush.
layout(push_constant) uniform Push {
  uint n, h, w, c;          // input [N, H, W, C]
  uint oh, ow;              // output extents
  uint kh, kw;              // window
  uint stride_h, stride_w;
  uint dilation_h, dilation_w;
  uint pad_top, pad_left;
  uint groups;              // C and the output channels split into this many groups
} p;
