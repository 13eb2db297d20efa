// The graph-to-ONNX translation: one ONNX node (or a few) per vkpack node that depends on
// an input, in the graph's order; input-free values folded into initializers. Each
// translated value remembers whether it is in vkpack's layout or, for 4-D tensors that
// went through a convolution or pooling, in NCHW; a consumer that needs the other
// layout gets a Transpose, made once per value.
#include "train/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "engine/graph/graph.h"
#include "train/internal/onnx_exporter.h"
#include "train/predictor.h"

namespace vkp::train {
namespace onnx_detail {

void Exporter::translate_node(int id) {
  const Node& n = node(id);
  const auto in = [&](std::size_t i) { return n.inputs[i]; };
  switch (n.op) {
    case OpKind::unary: return unary(id);
    case OpKind::binary: return binary(id);
    case OpKind::matmul: return matmul(id);
    case OpKind::reduce: return reduce(id);
    case OpKind::conv2d: return conv2d(id);
    case OpKind::pool: return pool(id);
    case OpKind::batch_norm: return batch_norm(id);
    case OpKind::identity:
    case OpKind::stop_gradient: {
      const Value v = values_.value(in(0));
      return values_.set(id, v.name, v.nchw);
    }
    case OpKind::reshape:
    case OpKind::transpose:
    case OpKind::slice:
    case OpKind::concat:
    case OpKind::broadcast_to:
    case OpKind::pad: return shape_op(id);
    case OpKind::cast: {
      const std::string out = output_name(id);
      const Value v = values_.value(in(0));
      OnnxWriter::attr(out_.add_node("Cast", {v.name}, out, n.name), "to",
                       std::int64_t{onnx_type(std::get<graph::CastAttrs>(n.attrs).to)});
      return values_.set(id, out, v.nchw);
    }
    case OpKind::softmax: {
      const std::string out = output_name(id);
      OnnxWriter::attr(out_.add_node(std::get<graph::SoftmaxAttrs>(n.attrs).log ? "LogSoftmax" : "Softmax",
                                     {values_.vkpack_layout(in(0))}, out, n.name),
                       "axis", std::int64_t{-1});
      return values_.set(id, out);
    }
    case OpKind::argmax: {
      const std::string index = out_.fresh(n.name + "/int64");
      auto& arg = out_.add_node("ArgMax", {values_.vkpack_layout(in(0))}, index, n.name + "/ArgMax");
      OnnxWriter::attr(arg, "axis", std::int64_t{std::get<graph::AxisAttrs>(n.attrs).axis});
      OnnxWriter::attr(arg, "keepdims", std::int64_t{0});
      const std::string out = output_name(id);
      OnnxWriter::attr(out_.add_node("Cast", {index}, out, n.name), "to", std::int64_t{onnx::TensorProto::INT32});
      return values_.set(id, out);
    }
    case OpKind::resize: return resize(id);
    case OpKind::conv2d_backprop_input: return conv2d_transpose(id);
    default: unsupported(id, "has no ONNX mapping (a training op, not part of an inference graph)");
  }
}

void Exporter::shape_op(int id) {
  const Node& n = node(id);
  const auto in = [&](std::size_t i) { return n.inputs[i]; };
  switch (n.op) {
    case OpKind::reshape: {
      const auto& dims = std::get<graph::DimsAttrs>(n.attrs).dims;
      const std::string out = output_name(id);
      out_.add_node("Reshape", {values_.vkpack_layout(in(0)), out_.int64s(n.name + "/shape", dims)}, out, n.name);
      return values_.set(id, out);
    }
    case OpKind::transpose: {
      const auto& perm = std::get<graph::TransposeAttrs>(n.attrs).perm;
      const std::string out = output_name(id);
      OnnxWriter::attr(out_.add_node("Transpose", {values_.vkpack_layout(in(0))}, out, n.name), "perm",
                       std::vector<std::int64_t>(perm.begin(), perm.end()));
      return values_.set(id, out);
    }
    case OpKind::slice: {
      const auto& a = std::get<graph::SliceAttrs>(n.attrs);
      std::vector<std::int64_t> ends, axes;
      for (std::size_t i = 0; i < a.begin.size(); ++i) {
        ends.push_back(a.size[i] < 0 ? std::numeric_limits<std::int64_t>::max() : a.begin[i] + a.size[i]);
        axes.push_back(static_cast<std::int64_t>(i));
      }
      const std::string out = output_name(id);
      out_.add_node("Slice",
                    {values_.vkpack_layout(in(0)), out_.int64s(n.name + "/starts", a.begin),
                     out_.int64s(n.name + "/ends", ends), out_.int64s(n.name + "/axes", axes)},
                    out, n.name);
      return values_.set(id, out);
    }
    case OpKind::concat: {
      std::vector<std::string> parts;
      for (int i : n.inputs) parts.push_back(values_.vkpack_layout(i));
      const std::string out = output_name(id);
      OnnxWriter::attr(out_.add_node("Concat", parts, out, n.name), "axis",
                       std::int64_t{std::get<graph::AxisAttrs>(n.attrs).axis});
      return values_.set(id, out);
    }
    case OpKind::broadcast_to: {
      const std::string out = output_name(id);
      out_.add_node(
          "Expand",
          {values_.vkpack_layout(in(0)), out_.int64s(n.name + "/shape", std::get<graph::DimsAttrs>(n.attrs).dims)}, out,
          n.name);
      return values_.set(id, out);
    }
    case OpKind::pad: {
      const auto& a = std::get<graph::PadAttrs>(n.attrs);
      std::vector<std::int64_t> pads = a.before;
      pads.insert(pads.end(), a.after.begin(), a.after.end());
      const std::string out = output_name(id);
      out_.add_node("Pad", {values_.vkpack_layout(in(0)), out_.int64s(n.name + "/pads", pads)}, out, n.name);
      return values_.set(id, out);
    }
    default: unsupported(id, "is not a shape op");
  }
}

void Exporter::unary(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::UnaryAttrs>(n.attrs);
  const Value x = values_.value(n.inputs[0]);
  const std::string out = output_name(id);
  using shaders::UnaryOp;
  const auto simple = [&](const char* op) { return &out_.add_node(op, {x.name}, out, n.name); };
  switch (a.fn) {
    case UnaryOp::relu: simple("Relu"); break;
    case UnaryOp::sigmoid: simple("Sigmoid"); break;
    case UnaryOp::tanh: simple("Tanh"); break;
    case UnaryOp::exp: simple("Exp"); break;
    case UnaryOp::log: simple("Log"); break;
    case UnaryOp::sqrt: simple("Sqrt"); break;
    case UnaryOp::neg: simple("Neg"); break;
    case UnaryOp::abs: simple("Abs"); break;
    case UnaryOp::floor: simple("Floor"); break;
    case UnaryOp::round: simple("Round"); break;  // halves to even, as here
    case UnaryOp::square: out_.add_node("Mul", {x.name, x.name}, out, n.name); break;
    case UnaryOp::leaky_relu: OnnxWriter::attr(*simple("LeakyRelu"), "alpha", a.alpha); break;
    case UnaryOp::elu: OnnxWriter::attr(*simple("Elu"), "alpha", a.alpha); break;
    case UnaryOp::gelu: {  // x (1 + erf(x / sqrt 2)) / 2: ONNX's Gelu needs opset 20
      Array root_half(DType::f32, Shape{});
      root_half.data<float>()[0] = 0.70710678f;
      Array one(DType::f32, Shape{}), half(DType::f32, Shape{});
      one.data<float>()[0] = 1.0f;
      half.data<float>()[0] = 0.5f;
      const std::string scaled = out_.fresh(n.name + "/scaled"), erf = out_.fresh(n.name + "/erf");
      const std::string plus = out_.fresh(n.name + "/plus_one"), times = out_.fresh(n.name + "/times_x");
      out_.add_node("Mul", {x.name, out_.add_initializer(n.name + "/rsqrt2", root_half)}, scaled, n.name + "/Scale");
      out_.add_node("Erf", {scaled}, erf, n.name + "/Erf");
      out_.add_node("Add", {erf, out_.add_initializer(n.name + "/one", one)}, plus, n.name + "/PlusOne");
      out_.add_node("Mul", {plus, x.name}, times, n.name + "/TimesX");
      out_.add_node("Mul", {times, out_.add_initializer(n.name + "/half", half)}, out, n.name);
      break;
    }
    case UnaryOp::rsqrt: {
      const std::string root = out_.fresh(n.name + "/sqrt");
      out_.add_node("Sqrt", {x.name}, root, n.name + "/Sqrt");
      out_.add_node("Reciprocal", {root}, out, n.name);
      break;
    }
  }
  values_.set(id, out, x.nchw);  // elementwise: either layout
}

void Exporter::binary(int id) {
  const Node& n = node(id);
  using shaders::BinaryOp;
  const BinaryOp fn = std::get<graph::BinaryAttrs>(n.attrs).fn;
  const char* op = nullptr;
  bool compare = false;
  if (fn == BinaryOp::keep) return keep(id);
  switch (fn) {
    case BinaryOp::add: op = "Add"; break;
    case BinaryOp::sub: op = "Sub"; break;
    case BinaryOp::mul: op = "Mul"; break;
    case BinaryOp::div: op = "Div"; break;
    case BinaryOp::max: op = "Max"; break;
    case BinaryOp::min: op = "Min"; break;
    case BinaryOp::pow: op = "Pow"; break;
    case BinaryOp::greater_equal: op = "GreaterOrEqual", compare = true; break;
    case BinaryOp::equal: op = "Equal", compare = true; break;
    default:
      unsupported(id, "computes " + std::string(shaders::to_string(fn)) + ", which has no ONNX mapping (a gradient)");
  }
  // A 4-D operand in NCHW with a per-channel constant (bias_add after a convolution)
  // stays in NCHW: the constant becomes [C, 1, 1].
  const Value a = values_.value(n.inputs[0]);
  const bool per_channel = a.nchw && values_.constant(n.inputs[1]) && type(n.inputs[1]).rank() == 1;
  std::string lhs, rhs;
  if (per_channel) {
    lhs = a.name;
    const Array& c = *values_.constant(n.inputs[1]);
    rhs = out_.add_initializer(values_.constant_name(n.inputs[1]), c, {c.shape()[0], 1, 1});
  } else {
    lhs = values_.vkpack_layout(n.inputs[0]);
    rhs = values_.vkpack_layout(n.inputs[1]);
  }
  const std::string out = output_name(id);
  if (!compare) {
    out_.add_node(op, {lhs, rhs}, out, n.name);
    return values_.set(id, out, per_channel);
  }
  const std::string truth = out_.fresh(n.name + "/bool");
  out_.add_node(op, {lhs, rhs}, truth, n.name + "/" + op);
  OnnxWriter::attr(out_.add_node("Cast", {truth}, out, n.name), "to", std::int64_t{onnx_type(type(id).dtype)});
  values_.set(id, out, per_channel);
}

// a where mask != 0, else 0: Where(Cast(mask, bool), a, 0).
void Exporter::keep(int id) {
  const Node& n = node(id);
  Array zero(DType::f32, Shape{});
  zero.data<float>()[0] = 0.0f;
  const std::string truth = out_.fresh(n.name + "/bool"), out = output_name(id);
  OnnxWriter::attr(out_.add_node("Cast", {values_.vkpack_layout(n.inputs[1])}, truth, n.name + "/Cast"), "to",
                   std::int64_t{onnx::TensorProto::BOOL});
  out_.add_node("Where", {truth, values_.vkpack_layout(n.inputs[0]), out_.add_initializer(n.name + "/zero", zero)}, out,
                n.name);
  values_.set(id, out, false);
}

void Exporter::matmul(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::MatmulAttrs>(n.attrs);
  const auto operand = [&](int input, bool transpose) {
    const std::string v = values_.vkpack_layout(input);
    if (!transpose) return v;
    const int rank = type(input).rank();
    std::vector<std::int64_t> perm;
    for (int i = 0; i < rank; ++i) perm.push_back(i);
    std::swap(perm[static_cast<std::size_t>(rank - 2)], perm[static_cast<std::size_t>(rank - 1)]);
    const std::string t = out_.fresh(v + "/T");
    OnnxWriter::attr(out_.add_node("Transpose", {v}, t, t), "perm", perm);
    return t;
  };
  const std::string lhs = operand(n.inputs[0], a.transpose_a), rhs = operand(n.inputs[1], a.transpose_b);
  const std::string out = output_name(id);
  out_.add_node("MatMul", {lhs, rhs}, out, n.name);
  values_.set(id, out);
}

void Exporter::reduce(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::ReduceAttrs>(n.attrs);
  const int rank = type(n.inputs[0]).rank();
  std::vector<int> axes;
  if (a.axis_count == 0 && a.first_axis == 0)
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  else
    for (int i = 0; i < a.axis_count; ++i) axes.push_back(a.first_axis + i);
  // Over an NCHW tensor the axes map across; the result keeps vkpack's order when what
  // remains is in the same order in both (global average pooling: [N, C]).
  const Value x = values_.value(n.inputs[0]);
  bool in_nchw = x.nchw;
  bool out_nchw = false;
  if (in_nchw) {
    std::vector<int> left_vkpack, left_nchw;
    for (int i = 0; i < 4; ++i) {
      if (std::find(axes.begin(), axes.end(), i) == axes.end()) left_vkpack.push_back(i);
      const int vk_axis = static_cast<int>(std::find(kToNchw, kToNchw + 4, i) - kToNchw);
      if (std::find(axes.begin(), axes.end(), vk_axis) == axes.end()) left_nchw.push_back(vk_axis);
    }
    if (a.keep_dims)
      out_nchw = true;
    else if (left_vkpack != left_nchw)
      in_nchw = false;
  }
  std::vector<std::int64_t> onnx_axes;
  for (int axis : axes) onnx_axes.push_back(in_nchw ? kToNchw[axis] : axis);
  const std::string input = in_nchw ? x.name : values_.vkpack_layout(n.inputs[0]);
  const std::string out = output_name(id);
  onnx::NodeProto* r = nullptr;
  switch (a.fn) {
    case graph::ReduceFn::sum:  // opset 13 takes ReduceSum's axes as an input
      r = &out_.add_node("ReduceSum", {input, out_.int64s(n.name + "/axes", onnx_axes)}, out, n.name);
      break;
    case graph::ReduceFn::mean:
      OnnxWriter::attr(*(r = &out_.add_node("ReduceMean", {input}, out, n.name)), "axes", onnx_axes);
      break;
    case graph::ReduceFn::max:
      OnnxWriter::attr(*(r = &out_.add_node("ReduceMax", {input}, out, n.name)), "axes", onnx_axes);
      break;
    case graph::ReduceFn::count_nonfinite:
      throw Error(ErrorCode::unsupported, n.name + ": count_nonfinite (a training-only check) has no ONNX form");
  }
  OnnxWriter::attr(*r, "keepdims", std::int64_t{a.keep_dims ? 1 : 0});
  values_.set(id, out, out_nchw);
}

}  // namespace onnx_detail

using onnx_detail::Exporter;

void export_onnx(graph::Session& session, const std::vector<graph::Tensor>& inputs,
                 const std::vector<graph::Tensor>& outputs, const std::string& path, const OnnxExportOptions& options) {
  if (outputs.empty()) throw Error(ErrorCode::invalid_argument, "export_onnx: no outputs to export");
  onnx::ModelProto model = Exporter(session, options).translate(inputs, outputs);
  try {
    onnx::checker::check_model(model);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions{/*check_type=*/true, /*error_mode=*/1});
  } catch (const std::exception& e) {
    throw Error(ErrorCode::bad_data, std::string("export_onnx: the model fails ONNX's checks: ") + e.what());
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw Error(ErrorCode::io, "export_onnx: the model did not serialize");
  write_file_atomically(path, bytes);
}

void export_onnx(OfflinePredictor& predictor, const std::string& path, const OnnxExportOptions& options) {
  export_onnx(predictor.session(), predictor.inputs(), predictor.outputs(), path, options);
}

}  // namespace vkp::train
