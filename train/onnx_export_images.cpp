// The exporter's ops that work on images: convolutions (and their transposes), pooling,
// batch norm and resizing, in ONNX's NCHW (onnx_exporter.h).
#include <algorithm>
#include <cstring>

#include "core/permute.h"
#include "train/internal/onnx_exporter.h"

namespace vkp::train::onnx_detail {

// TensorFlow's SAME padding: the total pad that keeps ceil(extent / stride) outputs,
// the odd one after. [top, left, bottom, right] as ONNX orders it.
std::vector<std::int64_t> Exporter::same_pads(int id, std::array<std::int64_t, 2> window,
                                              std::array<std::int64_t, 2> strides,
                                              std::array<std::int64_t, 2> dilations, graph::Padding padding) {
  if (padding == graph::Padding::valid) return {0, 0, 0, 0};
  const auto& dims = type(node(id).inputs[0]).dims;
  std::vector<std::int64_t> before(2), after(2);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t extent = dims[1 + i];
    if (extent < 0) unsupported(id, "pads SAME over an unknown spatial extent");
    const std::int64_t out = (extent + strides[i] - 1) / strides[i];
    const std::int64_t total =
        std::max<std::int64_t>((out - 1) * strides[i] + (window[i] - 1) * dilations[i] + 1 - extent, 0);
    before[i] = total / 2;
    after[i] = total - before[i];
  }
  return {before[0], before[1], after[0], after[1]};
}

void Exporter::conv2d(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::Conv2DAttrs>(n.attrs);
  // HWIO -> OIHW
  const Array& w = values_.folded(n.inputs[1], id, "filter");
  const std::int64_t kh = w.shape()[0], kw = w.shape()[1];
  const Array oihw = permute_axes(w, {3, 2, 0, 1});
  const std::string filter = out_.add_initializer(values_.constant_name(n.inputs[1]), oihw);
  const std::string out = output_name(id);
  auto& conv = out_.add_node("Conv", {values_.nchw(n.inputs[0]), filter}, out, n.name);
  OnnxWriter::attr(conv, "kernel_shape", std::vector<std::int64_t>{kh, kw});
  OnnxWriter::attr(conv, "strides", std::vector<std::int64_t>{a.strides[0], a.strides[1]});
  OnnxWriter::attr(conv, "dilations", std::vector<std::int64_t>{a.dilations[0], a.dilations[1]});
  OnnxWriter::attr(conv, "pads", same_pads(id, {kh, kw}, a.strides, a.dilations, a.padding));
  OnnxWriter::attr(conv, "group", a.groups);
  values_.set(id, out, true);
}

void Exporter::pool(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::PoolAttrs>(n.attrs);
  const bool max = a.fn == graph::PoolFn::max;
  const std::string out = output_name(id);
  auto& p = out_.add_node(max ? "MaxPool" : "AveragePool", {values_.nchw(n.inputs[0])}, out, n.name);
  OnnxWriter::attr(p, "kernel_shape", std::vector<std::int64_t>{a.window[0], a.window[1]});
  OnnxWriter::attr(p, "strides", std::vector<std::int64_t>{a.strides[0], a.strides[1]});
  OnnxWriter::attr(p, "pads", same_pads(id, a.window, a.strides, {1, 1}, a.padding));
  if (!max)
    OnnxWriter::attr(p, "count_include_pad", std::int64_t{0});  // TensorFlow averages over the window's real part
  values_.set(id, out, true);
}

void Exporter::batch_norm(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::BatchNormAttrs>(n.attrs);
  if (a.batch_stats) unsupported(id, "normalises with batch statistics (a training tower); export the inference tower");
  const Array& stats = values_.folded(n.inputs[1], id, "moving statistics");
  const std::int64_t c = stats.shape()[1];
  Array mean(DType::f32, Shape{c}), variance(DType::f32, Shape{c});
  std::memcpy(mean.bytes().data(), stats.bytes().data(), mean.nbytes());
  std::memcpy(variance.bytes().data(), stats.bytes().data() + mean.nbytes(), variance.nbytes());
  const int rank = type(n.inputs[0]).rank();
  const std::string x = rank == 4 ? values_.nchw(n.inputs[0]) : values_.vkpack_layout(n.inputs[0]);
  if (rank != 2 && rank != 4) unsupported(id, "normalises a tensor of rank " + std::to_string(rank) + " (2 or 4 export)");
  const std::string scope = n.name.substr(0, n.name.rfind('/'));
  const std::string normalised = a.relu ? out_.fresh(n.name + "/normalised") : output_name(id);
  auto& bn = out_.add_node(
      "BatchNormalization",
      {x, values_.vkpack_layout(n.inputs[2]), values_.vkpack_layout(n.inputs[3]),
       out_.add_initializer(scope + "/mean/EMA", mean), out_.add_initializer(scope + "/variance/EMA", variance)},
      normalised, n.name);
  OnnxWriter::attr(bn, "epsilon", a.epsilon);
  std::string out = normalised;
  if (a.relu) {
    out = output_name(id);
    out_.add_node("Relu", {normalised}, out, n.name + "/relu");
  }
  values_.set(id, out, rank == 4);
}

// conv2d_transpose (conv2d_backprop_input in an inference graph) as ONNX's ConvTranspose:
// the filter [KH, KW, out, in] to [in, out, KH, KW]; the padding of the convolution it
// transposes (SAME as TensorFlow pads the output-sized input), and output_padding for
// what the pads leave short of the output size.
void Exporter::conv2d_transpose(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::Conv2DAttrs>(n.attrs);
  if (a.groups != 1) unsupported(id, "has groups; the export takes conv2d_transpose with one group");
  // [KH, KW, out, in] -> [in, out, KH, KW]
  const Array& w = values_.folded(n.inputs[1], id, "filter");
  const std::int64_t kh = w.shape()[0], kw = w.shape()[1];
  const Array iohw = permute_axes(w, {3, 2, 0, 1});
  // Per axis: the convolution's padding p_b, p_a (p_b <= p_a); ConvTranspose takes the
  // symmetric min(p_b, p_a) = p_b (engines such as OpenCV take no other), which leaves
  // p_a - p_b extra outputs at the end, sliced off; where the output is longer than the
  // taps reach (fewer taps than the stride), zeros are padded at the end.
  const auto& in = type(n.inputs[0]).dims;
  std::vector<std::int64_t> pads(2), full(2), outs(2);
  const std::int64_t k[2] = {kh, kw};
  bool slice = false, pad = false;
  for (std::size_t d = 0; d < 2; ++d) {
    const std::int64_t s = a.strides[d], span = (k[d] - 1) * a.dilations[d] + 1, x = in[1 + d];
    outs[d] = a.input_hw[d];
    const std::int64_t total =
        a.padding == graph::Padding::same ? std::max<std::int64_t>((x - 1) * s + span - outs[d], 0) : 0;
    pads[d] = total / 2;
    full[d] = (x - 1) * s + span - 2 * pads[d];
    slice = slice || full[d] > outs[d];
    pad = pad || full[d] < outs[d];
  }
  const std::string filter = out_.add_initializer(values_.constant_name(n.inputs[1]), iohw);
  std::string value = out_.fresh(n.name + "/full");
  auto& conv = out_.add_node("ConvTranspose", {values_.nchw(n.inputs[0]), filter}, value, n.name);
  OnnxWriter::attr(conv, "kernel_shape", std::vector<std::int64_t>{kh, kw});
  OnnxWriter::attr(conv, "strides", std::vector<std::int64_t>{a.strides[0], a.strides[1]});
  OnnxWriter::attr(conv, "dilations", std::vector<std::int64_t>{a.dilations[0], a.dilations[1]});
  OnnxWriter::attr(conv, "pads", std::vector<std::int64_t>{pads[0], pads[1], pads[0], pads[1]});
  if (slice) {
    const std::string cut = out_.fresh(n.name + "/cut");
    out_.add_node("Slice",
                  {value, out_.int64s(n.name + "/starts", {0, 0}), out_.int64s(n.name + "/ends", {outs[0], outs[1]}),
                   out_.int64s(n.name + "/axes", {2, 3})},
                  cut, cut);
    value = cut;
  }
  if (pad) {
    const std::string padded = out_.fresh(n.name + "/padded");
    const auto more = [&](std::size_t d) { return std::max<std::int64_t>(outs[d] - std::min(full[d], outs[d]), 0); };
    out_.add_node("Pad", {value, out_.int64s(n.name + "/pads", {0, 0, 0, 0, 0, 0, more(0), more(1)})}, padded, padded);
    value = padded;
  }
  const std::string out = output_name(id);
  out_.add_node("Identity", {value}, out, n.name + "/output");
  values_.set(id, out, true);
}

// ONNX's Resize in NCHW, TensorFlow 1's sampling as "asymmetric" coordinates (input
// position = output position * in / out) with floor for nearest. Opset 13 wants the whole
// output shape: the batch and channels of the input (Shape, Slice) then [OH, OW].
void Exporter::resize(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::ResizeAttrs>(n.attrs);
  const std::string x = values_.nchw(n.inputs[0]);
  const std::string shape = out_.fresh(n.name + "/input_shape"), leading = out_.fresh(n.name + "/batch_and_channels"),
                    sizes = out_.fresh(n.name + "/sizes");
  out_.add_node("Shape", {x}, shape, shape);
  out_.add_node("Slice", {shape, out_.int64s(n.name + "/zero", {0}), out_.int64s(n.name + "/two", {2})}, leading,
                leading);
  OnnxWriter::attr(
      out_.add_node("Concat", {leading, out_.int64s(n.name + "/size", {a.size[0], a.size[1]})}, sizes, sizes), "axis",
      std::int64_t{0});
  const std::string out = output_name(id);
  auto& r = out_.add_node("Resize", {x, "", "", sizes}, out, n.name);
  const auto text = [&](const char* name, const char* value) {
    auto* at = r.add_attribute();
    at->set_name(name);
    at->set_type(onnx::AttributeProto::STRING);
    at->set_s(value);
  };
  text("mode", a.method == graph::ResizeMethod::nearest ? "nearest" : "linear");
  text("coordinate_transformation_mode", "asymmetric");
  if (a.method == graph::ResizeMethod::nearest) text("nearest_mode", "floor");
  values_.set(id, out, true);
}

}  // namespace vkp::train::onnx_detail
