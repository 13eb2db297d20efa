// The graph-to-ONNX translation: one ONNX node (or a few) per vkpack node that depends on
// an input, in the graph's order; input-free values folded into initializers. Each
// translated value remembers whether it is in vkpack's layout or, for 4-D tensors that
// went through a convolution or pooling, in NCHW; a consumer that needs the other
// layout gets a Transpose, made once per value.
#include "vkpack/train/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "vkpack/core/atomic_file.h"
#include "vkpack/core/error.h"
#include "vkpack/engine/graph/op_def.h"
#include "vkpack/train/predictor.h"

namespace vkp::train {
namespace {

using graph::Node;
using graph::OpKind;

int onnx_type(DType t) {
  switch (t) {
    case DType::f32: return onnx::TensorProto::FLOAT;
    case DType::f16: return onnx::TensorProto::FLOAT16;
    case DType::i32: return onnx::TensorProto::INT32;
    case DType::i64: return onnx::TensorProto::INT64;
    case DType::u8: return onnx::TensorProto::UINT8;
  }
  return onnx::TensorProto::UNDEFINED;
}

// vkpack's NHWC axis a is NCHW axis kToNchw[a].
constexpr int kToNchw[4] = {0, 2, 3, 1};

class Exporter {
 public:
  Exporter(graph::Session& session, const OnnxExportOptions& options) : session_(session), g_(session.graph()) {
    model_.set_ir_version(onnx::IR_VERSION);
    model_.set_producer_name("vkpack");
    model_.set_model_version(1);
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(options.opset);
    graph_ = model_.mutable_graph();
    graph_->set_name(options.graph_name);
  }

  onnx::ModelProto translate(const std::vector<graph::Tensor>& inputs, const std::vector<graph::Tensor>& outputs) {
    for (const graph::Tensor& t : inputs) {
      if (t.node().op != OpKind::placeholder)
        throw Error(ErrorCode::invalid_argument, "export_onnx: input " + t.name() + " is not a placeholder");
      add_graph_input(t);
    }
    std::vector<int> order;  // the needed nodes that depend on an input, inputs first
    std::set<int> seen;
    for (const graph::Tensor& t : outputs) visit(t.id(), order, seen);
    fold_constants();
    for (int id : order) translate_node(id);
    for (const graph::Tensor& t : outputs) {
      const std::string value = vkpack_layout(t.id());
      add_node("Identity", {value}, t.name(), "output/" + t.name());
      auto* out = graph_->add_output();
      out->set_name(t.name());
      set_type(*out, t.type());
    }
    return model_;
  }

 private:
  struct Value {
    std::string name;
    bool nchw = false;  // a 4-D tensor held in NCHW
  };

  const Node& node(int id) const { return g_.tensor(id).node(); }
  const graph::TensorType& type(int id) const { return g_.tensor(id).type(); }

  [[noreturn]] void unsupported(int id, const std::string& why) const {
    throw Error(ErrorCode::unsupported, "export_onnx: " + std::string(graph::op_def(node(id).op).name) + " '" +
                                            node(id).name + "' " + why);
  }

  // --- walking the graph ---

  bool depends_on_input(int id) {
    const auto known = depends_.find(id);
    if (known != depends_.end()) return known->second;
    const Node& n = node(id);
    bool depends = n.op == OpKind::placeholder;
    for (int in : n.inputs) depends = depends_on_input(in) || depends;
    depends_[id] = depends;
    return depends;
  }

  // Post-order over the nodes `id` needs that depend on an input.
  void visit(int id, std::vector<int>& order, std::set<int>& seen) {
    if (!seen.insert(id).second) return;
    if (!depends_on_input(id)) {
      constants_.insert(id);
      return;
    }
    if (node(id).op == OpKind::placeholder) {
      if (!values_.count(id)) unsupported(id, "is needed by the outputs but not among the inputs given");
      return;
    }
    for (int in : node(id).inputs) visit(in, order, seen);
    order.push_back(id);
  }

  // Every input-free value an exported node reads, computed by the session at once.
  void fold_constants() {
    std::vector<graph::Tensor> fetches;
    for (int id : constants_) fetches.push_back(g_.tensor(id));
    const std::vector<Array> values = session_.run({}, fetches);
    std::size_t i = 0;
    for (int id : constants_) folded_[id] = values[i++];
  }

  // --- values ---

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  std::string constant_name(int id) const {
    const Node& n = node(id);
    if (n.op == OpKind::variable) return std::get<graph::VariableAttrs>(n.attrs).var_name;
    return n.name;
  }

  // An initializer of `value` with `dims` (its own when empty).
  std::string add_initializer(const std::string& base, const Array& value, std::vector<std::int64_t> dims = {}) {
    if (dims.empty() && value.shape().rank() > 0) dims = value.shape().dims();
    const std::string name = fresh(base);
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx_type(value.dtype()));
    for (std::int64_t d : dims) t->add_dims(d);
    t->set_raw_data(value.bytes().data(), value.nbytes());
    return name;
  }

  std::string int64s(const std::string& base, const std::vector<std::int64_t>& values) {
    Array a(DType::i64, Shape{static_cast<std::int64_t>(values.size())});
    std::copy(values.begin(), values.end(), a.data<std::int64_t>().begin());
    return add_initializer(base, a);
  }

  onnx::NodeProto& add_node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                            const std::string& name) {
    auto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(output);
    return *n;
  }

  static void attr(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t x : v) a->add_ints(x);
  }

  void set_type(onnx::ValueInfoProto& info, const graph::TensorType& t) {
    auto* tensor = info.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx_type(t.dtype));
    auto* shape = tensor->mutable_shape();
    for (std::size_t i = 0; i < t.dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (t.dims[i] >= 0) d->set_dim_value(t.dims[i]);
      else d->set_dim_param(i == 0 ? "batch" : "d" + std::to_string(i));
    }
  }

  void add_graph_input(const graph::Tensor& t) {
    auto* in = graph_->add_input();
    in->set_name(fresh(t.name()));
    set_type(*in, t.type());
    values_[t.id()] = {in->name(), false};
  }

  // Value `id` as ONNX holds it (a folded constant in vkpack's layout).
  Value value(int id) {
    const auto it = values_.find(id);
    if (it != values_.end()) return it->second;
    const auto c = folded_.find(id);
    if (c == folded_.end()) unsupported(id, "was not translated before its use");
    Value v{add_initializer(constant_name(id), c->second), false};
    values_[id] = v;
    return v;
  }

  std::string transposed(const Value& v, bool to_nchw) {
    const std::string key = v.name + (to_nchw ? "|nchw" : "|nhwc");
    const auto it = transposes_.find(key);
    if (it != transposes_.end()) return it->second;
    const std::string out = fresh(v.name + (to_nchw ? "/NCHW" : "/NHWC"));
    attr(add_node("Transpose", {v.name}, out, out), "perm",
         to_nchw ? std::vector<std::int64_t>{0, 3, 1, 2} : std::vector<std::int64_t>{0, 2, 3, 1});
    transposes_[key] = out;
    return out;
  }

  std::string vkpack_layout(int id) {
    const Value v = value(id);
    return v.nchw ? transposed(v, false) : v.name;
  }

  std::string nchw(int id) {
    const Value v = value(id);
    if (v.nchw) return v.name;
    if (type(id).rank() != 4) unsupported(id, "feeds an NHWC op with a tensor that is not 4-D");
    return transposed(v, true);
  }

  const Array& folded(int id, int consumer, const char* what) {
    const auto it = folded_.find(id);
    if (it == folded_.end()) unsupported(consumer, std::string("needs its ") + what + " to be fixed (not computed from an input)");
    return it->second;
  }

  void set(int id, const std::string& name, bool in_nchw = false) { values_[id] = {name, in_nchw}; }
  std::string output_name(int id) { return fresh(node(id).name); }

  // --- ops ---

  void translate_node(int id);
  void unary(int id);
  void binary(int id);
  void matmul(int id);
  void reduce(int id);
  void conv2d(int id);
  void pool(int id);
  void batch_norm(int id);
  void resize(int id);
  void conv2d_transpose(int id);
  std::vector<std::int64_t> same_pads(int id, std::array<std::int64_t, 2> window, std::array<std::int64_t, 2> strides,
                                      std::array<std::int64_t, 2> dilations, graph::Padding padding);

  graph::Session& session_;
  graph::Graph& g_;
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
  std::map<int, bool> depends_;
  std::set<int> constants_;
  std::map<int, Array> folded_;
  std::map<int, Value> values_;
  std::map<std::string, std::string> transposes_;
  std::set<std::string> used_;
};

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
    case OpKind::stop_gradient: values_[id] = value(in(0)); return;
    case OpKind::reshape: {
      const auto& dims = std::get<graph::DimsAttrs>(n.attrs).dims;
      const std::string out = output_name(id);
      add_node("Reshape", {vkpack_layout(in(0)), int64s(n.name + "/shape", dims)}, out, n.name);
      return set(id, out);
    }
    case OpKind::transpose: {
      const auto& perm = std::get<graph::TransposeAttrs>(n.attrs).perm;
      const std::string out = output_name(id);
      attr(add_node("Transpose", {vkpack_layout(in(0))}, out, n.name), "perm", std::vector<std::int64_t>(perm.begin(), perm.end()));
      return set(id, out);
    }
    case OpKind::slice: {
      const auto& a = std::get<graph::SliceAttrs>(n.attrs);
      std::vector<std::int64_t> ends, axes;
      for (std::size_t i = 0; i < a.begin.size(); ++i) {
        ends.push_back(a.size[i] < 0 ? std::numeric_limits<std::int64_t>::max() : a.begin[i] + a.size[i]);
        axes.push_back(static_cast<std::int64_t>(i));
      }
      const std::string out = output_name(id);
      add_node("Slice", {vkpack_layout(in(0)), int64s(n.name + "/starts", a.begin), int64s(n.name + "/ends", ends),
                         int64s(n.name + "/axes", axes)},
               out, n.name);
      return set(id, out);
    }
    case OpKind::concat: {
      std::vector<std::string> parts;
      for (int i : n.inputs) parts.push_back(vkpack_layout(i));
      const std::string out = output_name(id);
      attr(add_node("Concat", parts, out, n.name), "axis", std::int64_t{std::get<graph::AxisAttrs>(n.attrs).axis});
      return set(id, out);
    }
    case OpKind::broadcast_to: {
      const std::string out = output_name(id);
      add_node("Expand", {vkpack_layout(in(0)), int64s(n.name + "/shape", std::get<graph::DimsAttrs>(n.attrs).dims)}, out,
               n.name);
      return set(id, out);
    }
    case OpKind::pad: {
      const auto& a = std::get<graph::PadAttrs>(n.attrs);
      std::vector<std::int64_t> pads = a.before;
      pads.insert(pads.end(), a.after.begin(), a.after.end());
      const std::string out = output_name(id);
      add_node("Pad", {vkpack_layout(in(0)), int64s(n.name + "/pads", pads)}, out, n.name);
      return set(id, out);
    }
    case OpKind::cast: {
      const std::string out = output_name(id);
      const Value v = value(in(0));
      attr(add_node("Cast", {v.name}, out, n.name), "to", std::int64_t{onnx_type(std::get<graph::CastAttrs>(n.attrs).to)});
      return set(id, out, v.nchw);
    }
    case OpKind::softmax: {
      const std::string out = output_name(id);
      attr(add_node(std::get<graph::SoftmaxAttrs>(n.attrs).log ? "LogSoftmax" : "Softmax", {vkpack_layout(in(0))}, out,
                    n.name),
           "axis", std::int64_t{-1});
      return set(id, out);
    }
    case OpKind::argmax: {
      const std::string index = fresh(n.name + "/int64");
      auto& arg = add_node("ArgMax", {vkpack_layout(in(0))}, index, n.name + "/ArgMax");
      attr(arg, "axis", std::int64_t{std::get<graph::AxisAttrs>(n.attrs).axis});
      attr(arg, "keepdims", std::int64_t{0});
      const std::string out = output_name(id);
      attr(add_node("Cast", {index}, out, n.name), "to", std::int64_t{onnx::TensorProto::INT32});
      return set(id, out);
    }
    case OpKind::resize: return resize(id);
    case OpKind::conv2d_backprop_input: return conv2d_transpose(id);
    default: unsupported(id, "has no ONNX mapping (a training op, not part of an inference graph)");
  }
}

void Exporter::unary(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::UnaryAttrs>(n.attrs);
  const Value x = value(n.inputs[0]);
  const std::string out = output_name(id);
  using vk::UnaryOp;
  const auto simple = [&](const char* op) { return &add_node(op, {x.name}, out, n.name); };
  switch (a.fn) {
    case UnaryOp::relu: simple("Relu"); break;
    case UnaryOp::sigmoid: simple("Sigmoid"); break;
    case UnaryOp::tanh: simple("Tanh"); break;
    case UnaryOp::exp: simple("Exp"); break;
    case UnaryOp::log: simple("Log"); break;
    case UnaryOp::sqrt: simple("Sqrt"); break;
    case UnaryOp::neg: simple("Neg"); break;
    case UnaryOp::abs: simple("Abs"); break;
    case UnaryOp::square: add_node("Mul", {x.name, x.name}, out, n.name); break;
    case UnaryOp::leaky_relu: attr(*simple("LeakyRelu"), "alpha", a.alpha); break;
    case UnaryOp::elu: attr(*simple("Elu"), "alpha", a.alpha); break;
    case UnaryOp::rsqrt: {
      const std::string root = fresh(n.name + "/sqrt");
      add_node("Sqrt", {x.name}, root, n.name + "/Sqrt");
      add_node("Reciprocal", {root}, out, n.name);
      break;
    }
  }
  set(id, out, x.nchw);  // elementwise: either layout
}

void Exporter::binary(int id) {
  const Node& n = node(id);
  using vk::BinaryOp;
  const BinaryOp fn = std::get<graph::BinaryAttrs>(n.attrs).fn;
  const char* op = nullptr;
  bool compare = false;
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
    default: unsupported(id, "computes " + std::string(vk::to_string(fn)) + ", which has no ONNX mapping (a gradient)");
  }
  // A 4-D operand in NCHW with a per-channel constant (bias_add after a convolution)
  // stays in NCHW: the constant becomes [C, 1, 1].
  const Value a = value(n.inputs[0]);
  const bool per_channel = a.nchw && folded_.count(n.inputs[1]) && type(n.inputs[1]).rank() == 1;
  std::string lhs, rhs;
  if (per_channel) {
    lhs = a.name;
    const Array& c = folded_.at(n.inputs[1]);
    rhs = add_initializer(constant_name(n.inputs[1]), c, {c.shape()[0], 1, 1});
  } else {
    lhs = vkpack_layout(n.inputs[0]);
    rhs = vkpack_layout(n.inputs[1]);
  }
  const std::string out = output_name(id);
  if (!compare) {
    add_node(op, {lhs, rhs}, out, n.name);
    return set(id, out, per_channel);
  }
  const std::string truth = fresh(n.name + "/bool");
  add_node(op, {lhs, rhs}, truth, n.name + "/" + op);
  attr(add_node("Cast", {truth}, out, n.name), "to", std::int64_t{onnx_type(type(id).dtype)});
  set(id, out, per_channel);
}

void Exporter::matmul(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::MatmulAttrs>(n.attrs);
  const auto operand = [&](int input, bool transpose) {
    const std::string v = vkpack_layout(input);
    if (!transpose) return v;
    const int rank = type(input).rank();
    std::vector<std::int64_t> perm;
    for (int i = 0; i < rank; ++i) perm.push_back(i);
    std::swap(perm[static_cast<std::size_t>(rank - 2)], perm[static_cast<std::size_t>(rank - 1)]);
    const std::string t = fresh(v + "/T");
    attr(add_node("Transpose", {v}, t, t), "perm", perm);
    return t;
  };
  const std::string lhs = operand(n.inputs[0], a.transpose_a), rhs = operand(n.inputs[1], a.transpose_b);
  const std::string out = output_name(id);
  add_node("MatMul", {lhs, rhs}, out, n.name);
  set(id, out);
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
  const Value x = value(n.inputs[0]);
  bool in_nchw = x.nchw;
  bool out_nchw = false;
  if (in_nchw) {
    std::vector<int> left_vkpack, left_nchw;
    for (int i = 0; i < 4; ++i) {
      if (std::find(axes.begin(), axes.end(), i) == axes.end()) left_vkpack.push_back(i);
      const int vk_axis = static_cast<int>(std::find(kToNchw, kToNchw + 4, i) - kToNchw);
      if (std::find(axes.begin(), axes.end(), vk_axis) == axes.end()) left_nchw.push_back(vk_axis);
    }
    if (a.keep_dims) out_nchw = true;
    else if (left_vkpack != left_nchw) in_nchw = false;
  }
  std::vector<std::int64_t> onnx_axes;
  for (int axis : axes) onnx_axes.push_back(in_nchw ? kToNchw[axis] : axis);
  const std::string input = in_nchw ? x.name : vkpack_layout(n.inputs[0]);
  const std::string out = output_name(id);
  onnx::NodeProto* r = nullptr;
  switch (a.fn) {
    case graph::ReduceFn::sum:  // opset 13 takes ReduceSum's axes as an input
      r = &add_node("ReduceSum", {input, int64s(n.name + "/axes", onnx_axes)}, out, n.name);
      break;
    case graph::ReduceFn::mean: attr(*(r = &add_node("ReduceMean", {input}, out, n.name)), "axes", onnx_axes); break;
    case graph::ReduceFn::max: attr(*(r = &add_node("ReduceMax", {input}, out, n.name)), "axes", onnx_axes); break;
  }
  attr(*r, "keepdims", std::int64_t{a.keep_dims ? 1 : 0});
  set(id, out, out_nchw);
}

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
  const Array& w = folded(n.inputs[1], id, "filter");
  const std::int64_t kh = w.shape()[0], kw = w.shape()[1], ci = w.shape()[2], co = w.shape()[3];
  Array oihw(w.dtype(), Shape{co, ci, kh, kw});
  const std::size_t bytes = size_of(w.dtype());
  for (std::int64_t y = 0; y < kh; ++y)
    for (std::int64_t x = 0; x < kw; ++x)
      for (std::int64_t i = 0; i < ci; ++i)
        for (std::int64_t o = 0; o < co; ++o)
          std::memcpy(oihw.bytes().data() + static_cast<std::size_t>(((o * ci + i) * kh + y) * kw + x) * bytes,
                      w.bytes().data() + static_cast<std::size_t>(((y * kw + x) * ci + i) * co + o) * bytes, bytes);
  const std::string filter = add_initializer(constant_name(n.inputs[1]), oihw);
  const std::string out = output_name(id);
  auto& conv = add_node("Conv", {nchw(n.inputs[0]), filter}, out, n.name);
  attr(conv, "kernel_shape", std::vector<std::int64_t>{kh, kw});
  attr(conv, "strides", std::vector<std::int64_t>{a.strides[0], a.strides[1]});
  attr(conv, "dilations", std::vector<std::int64_t>{a.dilations[0], a.dilations[1]});
  attr(conv, "pads", same_pads(id, {kh, kw}, a.strides, a.dilations, a.padding));
  attr(conv, "group", a.groups);
  set(id, out, true);
}

void Exporter::pool(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::PoolAttrs>(n.attrs);
  const bool max = a.fn == graph::PoolFn::max;
  const std::string out = output_name(id);
  auto& p = add_node(max ? "MaxPool" : "AveragePool", {nchw(n.inputs[0])}, out, n.name);
  attr(p, "kernel_shape", std::vector<std::int64_t>{a.window[0], a.window[1]});
  attr(p, "strides", std::vector<std::int64_t>{a.strides[0], a.strides[1]});
  attr(p, "pads", same_pads(id, a.window, a.strides, {1, 1}, a.padding));
  if (!max) attr(p, "count_include_pad", std::int64_t{0});  // TensorFlow averages over the window's real part
  set(id, out, true);
}

void Exporter::batch_norm(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::BatchNormAttrs>(n.attrs);
  if (a.batch_stats) unsupported(id, "normalises with batch statistics (a training tower); export the inference tower");
  const Array& stats = folded(n.inputs[1], id, "moving statistics");
  const std::int64_t c = stats.shape()[1];
  Array mean(DType::f32, Shape{c}), variance(DType::f32, Shape{c});
  std::memcpy(mean.bytes().data(), stats.bytes().data(), mean.nbytes());
  std::memcpy(variance.bytes().data(), stats.bytes().data() + mean.nbytes(), variance.nbytes());
  const int rank = type(n.inputs[0]).rank();
  const std::string x = rank == 4 ? nchw(n.inputs[0]) : vkpack_layout(n.inputs[0]);
  if (rank != 2 && rank != 4) unsupported(id, "normalises a tensor of rank " + std::to_string(rank) + " (2 or 4 export)");
  const std::string scope = n.name.substr(0, n.name.rfind('/'));
  const std::string normalised = a.relu ? fresh(n.name + "/normalised") : output_name(id);
  auto& bn = add_node("BatchNormalization",
                      {x, vkpack_layout(n.inputs[2]), vkpack_layout(n.inputs[3]), add_initializer(scope + "/mean/EMA", mean),
                       add_initializer(scope + "/variance/EMA", variance)},
                      normalised, n.name);
  attr(bn, "epsilon", a.epsilon);
  std::string out = normalised;
  if (a.relu) {
    out = output_name(id);
    add_node("Relu", {normalised}, out, n.name + "/relu");
  }
  set(id, out, rank == 4);
}

// conv2d_transpose (conv2d_backprop_input in an inference graph) as ONNX's ConvTranspose:
// the filter [KH, KW, out, in] to [in, out, KH, KW]; the padding of the convolution it
// transposes (SAME as TensorFlow pads the output-sized input), and output_padding for
// what the pads leave short of the output size.
void Exporter::conv2d_transpose(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::Conv2DAttrs>(n.attrs);
  if (a.groups != 1) unsupported(id, "has groups; the export takes conv2d_transpose with one group");
  const Array& w = folded(n.inputs[1], id, "filter");
  const std::int64_t kh = w.shape()[0], kw = w.shape()[1], co = w.shape()[2], ci = w.shape()[3];
  Array iohw(w.dtype(), Shape{ci, co, kh, kw});
  const std::size_t bytes = size_of(w.dtype());
  for (std::int64_t y = 0; y < kh; ++y)
    for (std::int64_t x = 0; x < kw; ++x)
      for (std::int64_t o = 0; o < co; ++o)
        for (std::int64_t i = 0; i < ci; ++i)
          std::memcpy(iohw.bytes().data() + static_cast<std::size_t>(((i * co + o) * kh + y) * kw + x) * bytes,
                      w.bytes().data() + static_cast<std::size_t>(((y * kw + x) * co + o) * ci + i) * bytes, bytes);
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
  const std::string filter = add_initializer(constant_name(n.inputs[1]), iohw);
  std::string value = fresh(n.name + "/full");
  auto& conv = add_node("ConvTranspose", {nchw(n.inputs[0]), filter}, value, n.name);
  attr(conv, "kernel_shape", std::vector<std::int64_t>{kh, kw});
  attr(conv, "strides", std::vector<std::int64_t>{a.strides[0], a.strides[1]});
  attr(conv, "dilations", std::vector<std::int64_t>{a.dilations[0], a.dilations[1]});
  attr(conv, "pads", std::vector<std::int64_t>{pads[0], pads[1], pads[0], pads[1]});
  if (slice) {
    const std::string cut = fresh(n.name + "/cut");
    add_node("Slice", {value, int64s(n.name + "/starts", {0, 0}), int64s(n.name + "/ends", {outs[0], outs[1]}),
                       int64s(n.name + "/axes", {2, 3})},
             cut, cut);
    value = cut;
  }
  if (pad) {
    const std::string padded = fresh(n.name + "/padded");
    const auto more = [&](std::size_t d) { return std::max<std::int64_t>(outs[d] - std::min(full[d], outs[d]), 0); };
    add_node("Pad", {value, int64s(n.name + "/pads", {0, 0, 0, 0, 0, 0, more(0), more(1)})}, padded, padded);
    value = padded;
  }
  const std::string out = output_name(id);
  add_node("Identity", {value}, out, n.name + "/output");
  set(id, out, true);
}

// ONNX's Resize in NCHW, TensorFlow 1's sampling as "asymmetric" coordinates (input
// position = output position * in / out) with floor for nearest. Opset 13 wants the whole
// output shape: the batch and channels of the input (Shape, Slice) then [OH, OW].
void Exporter::resize(int id) {
  const Node& n = node(id);
  const auto& a = std::get<graph::ResizeAttrs>(n.attrs);
  const std::string x = nchw(n.inputs[0]);
  const std::string shape = fresh(n.name + "/input_shape"), leading = fresh(n.name + "/batch_and_channels"),
                    sizes = fresh(n.name + "/sizes");
  add_node("Shape", {x}, shape, shape);
  add_node("Slice", {shape, int64s(n.name + "/zero", {0}), int64s(n.name + "/two", {2})}, leading, leading);
  attr(add_node("Concat", {leading, int64s(n.name + "/size", {a.size[0], a.size[1]})}, sizes, sizes), "axis",
       std::int64_t{0});
  const std::string out = output_name(id);
  auto& r = add_node("Resize", {x, "", "", sizes}, out, n.name);
  const auto text = [&](const char* name, const char* value) {
    auto* at = r.add_attribute();
    at->set_name(name);
    at->set_type(onnx::AttributeProto::STRING);
    at->set_s(value);
  };
  text("mode", a.method == graph::ResizeMethod::nearest ? "nearest" : "linear");
  text("coordinate_transformation_mode", "asymmetric");
  if (a.method == graph::ResizeMethod::nearest) text("nearest_mode", "floor");
  set(id, out, true);
}

}  // namespace

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
