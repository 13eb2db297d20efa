// The exporter behind export_onnx (onnx_export.h), shared by onnx_export.cpp (the walk,
// values, layouts, elementwise, matmul and reductions) and onnx_export_images.cpp
// (convolutions, pooling, batch norm, resizing). Internal to train/.
#pragma once

#include <onnx/onnx_pb.h>

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/session.h"
#include "train/onnx_export.h"

namespace vkp::train::onnx_detail {

using graph::Node;
using graph::OpKind;

inline int onnx_type(DType t) {
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

// The model an export writes: initializers, nodes with their attributes, typed inputs
// and outputs, each value under a name no other has (fresh).
class OnnxWriter {
 public:
  OnnxWriter(std::int64_t opset, const std::string& graph_name) {
    model_.set_ir_version(onnx::IR_VERSION);
    model_.set_producer_name("vkpack");
    model_.set_model_version(1);
    auto* import = model_.add_opset_import();
    import->set_domain("");
    import->set_version(opset);
    graph_ = model_.mutable_graph();
    graph_->set_name(graph_name);
  }
  OnnxWriter(const OnnxWriter&) = delete;
  OnnxWriter& operator=(const OnnxWriter&) = delete;

  const onnx::ModelProto& model() const { return model_; }
  onnx::GraphProto& graph() { return *graph_; }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

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

  static void set_type(onnx::ValueInfoProto& info, const graph::TensorType& t) {
    auto* tensor = info.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx_type(t.dtype));
    auto* shape = tensor->mutable_shape();
    for (std::size_t i = 0; i < t.dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (t.dims[i] >= 0)
        d->set_dim_value(t.dims[i]);
      else
        d->set_dim_param(i == 0 ? "batch" : "d" + std::to_string(i));
    }
  }

 private:
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
  std::set<std::string> used_;
};

// Error(unsupported) naming node `n` of an export and why it cannot be written.
[[noreturn]] inline void unsupported(const Node& n, const std::string& why) {
  throw Error(ErrorCode::unsupported, "export_onnx: " + std::string(graph::op_name(n.op)) + " '" + n.name + "' " + why);
}

// The nodes an export needs, found from its outputs: those that depend on an input, in
// post-order (inputs first), and the input-free values they read (constants, folded).
class ExportWalk {
 public:
  ExportWalk(const graph::Graph& g, std::set<int> inputs) : g_(g), inputs_(std::move(inputs)) {}

  // Adds what `id` needs; Error(unsupported) for a placeholder it needs that is not an input.
  void visit(int id) {
    if (!seen_.insert(id).second) return;
    if (!depends_on_input(id)) {
      constants_.insert(id);
      return;
    }
    const Node& n = g_.node(id);
    if (n.op == OpKind::placeholder) {
      if (!inputs_.count(id)) unsupported(n, "is needed by the outputs but not among the inputs given");
      return;
    }
    for (int in : n.inputs) visit(in);
    order_.push_back(id);
  }
  const std::vector<int>& order() const { return order_; }
  const std::set<int>& constants() const { return constants_; }

 private:
  bool depends_on_input(int id) {
    const auto known = depends_.find(id);
    if (known != depends_.end()) return known->second;
    const Node& n = g_.node(id);
    bool depends = n.op == OpKind::placeholder;
    for (int in : n.inputs) depends = depends_on_input(in) || depends;
    depends_[id] = depends;
    return depends;
  }

  const graph::Graph& g_;
  std::set<int> inputs_;
  std::set<int> seen_;
  std::map<int, bool> depends_;
  std::vector<int> order_;
  std::set<int> constants_;
};

// What each graph tensor is in the model being written: the ONNX value holding it and
// whether that value is NCHW (the output of a convolution-like op, which ONNX lays out
// so), the constants folded before the walk (an initializer each, written when first
// used), and the layout transposes made so far, each made once.
class OnnxValues {
 public:
  struct Value {
    std::string name;
    bool nchw = false;  // a 4-D tensor held in NCHW
  };

  OnnxValues(const graph::Graph& g, OnnxWriter& out) : g_(g), out_(out) {}

  void set(int id, const std::string& name, bool in_nchw = false) { values_[id] = {name, in_nchw}; }
  void set_folded(int id, Array value) { folded_[id] = std::move(value); }

  // Tensor `id`'s value; a folded constant becomes an initializer here. Error(unsupported)
  // for a tensor neither translated nor folded.
  Value value(int id) {
    const auto it = values_.find(id);
    if (it != values_.end()) return it->second;
    const auto c = folded_.find(id);
    if (c == folded_.end()) unsupported(g_.node(id), "was not translated before its use");
    Value v{out_.add_initializer(constant_name(id), c->second), false};
    values_[id] = v;
    return v;
  }
  // The value in vkpack's layout (NHWC for 4-D), or in NCHW (a 4-D tensor only).
  std::string vkpack_layout(int id) {
    const Value v = value(id);
    return v.nchw ? transposed(v, false) : v.name;
  }
  std::string nchw(int id) {
    const Value v = value(id);
    if (v.nchw) return v.name;
    if (g_.node(id).type.rank() != 4) unsupported(g_.node(id), "feeds an NHWC op with a tensor that is not 4-D");
    return transposed(v, true);
  }

  // The folded value of `id`, or null when it is computed from an input.
  const Array* constant(int id) const {
    const auto it = folded_.find(id);
    return it == folded_.end() ? nullptr : &it->second;
  }
  // The same where `consumer` needs it fixed (its `what`): Error(unsupported) otherwise.
  const Array& folded(int id, int consumer, const char* what) const {
    const Array* c = constant(id);
    if (!c)
      unsupported(g_.node(consumer), std::string("needs its ") + what + " to be fixed (not computed from an input)");
    return *c;
  }
  // The name an initializer of constant `id` starts from: a variable's own.
  std::string constant_name(int id) const {
    const Node& n = g_.node(id);
    if (n.op == OpKind::variable) return std::get<graph::VariableAttrs>(n.attrs).var_name;
    return n.name;
  }

 private:
  std::string transposed(const Value& v, bool to_nchw) {
    const std::string key = v.name + (to_nchw ? "|nchw" : "|nhwc");
    const auto it = transposes_.find(key);
    if (it != transposes_.end()) return it->second;
    const std::string out = out_.fresh(v.name + (to_nchw ? "/NCHW" : "/NHWC"));
    OnnxWriter::attr(out_.add_node("Transpose", {v.name}, out, out), "perm",
                     to_nchw ? std::vector<std::int64_t>{0, 3, 1, 2} : std::vector<std::int64_t>{0, 2, 3, 1});
    transposes_[key] = out;
    return out;
  }

  const graph::Graph& g_;
  OnnxWriter& out_;
  std::map<int, Value> values_;
  std::map<int, Array> folded_;
  std::map<std::string, std::string> transposes_;
};

class Exporter {
 public:
  Exporter(graph::Session& session, const OnnxExportOptions& options)
      : session_(session), g_(session.graph()), out_(options.opset, options.graph_name), values_(g_, out_) {}

  onnx::ModelProto translate(const std::vector<graph::Tensor>& inputs, const std::vector<graph::Tensor>& outputs) {
    std::set<int> input_ids;
    for (const graph::Tensor& t : inputs) {
      if (t.node().op != OpKind::placeholder)
        throw Error(ErrorCode::invalid_argument, "export_onnx: input " + t.name() + " is not a placeholder");
      add_graph_input(t);
      input_ids.insert(t.id());
    }
    ExportWalk walk(g_, input_ids);
    for (const graph::Tensor& t : outputs) walk.visit(t.id());
    fold_constants(walk.constants());
    for (int id : walk.order()) translate_node(id);
    for (const graph::Tensor& t : outputs) {
      const std::string value = values_.vkpack_layout(t.id());
      out_.add_node("Identity", {value}, t.name(), "output/" + t.name());
      auto* out = out_.graph().add_output();
      out->set_name(t.name());
      OnnxWriter::set_type(*out, t.type());
    }
    return out_.model();
  }

 private:
  using Value = OnnxValues::Value;

  const Node& node(int id) const { return g_.tensor(id).node(); }
  const graph::TensorType& type(int id) const { return g_.tensor(id).type(); }

  [[noreturn]] void unsupported(int id, const std::string& why) const { onnx_detail::unsupported(node(id), why); }

  // Every input-free value an exported node reads, computed by the session at once.
  void fold_constants(const std::set<int>& constants) {
    std::vector<graph::Tensor> fetches;
    for (int id : constants) fetches.push_back(g_.tensor(id));
    const std::vector<Array> values = session_.run({}, fetches);
    std::size_t i = 0;
    for (int id : constants) values_.set_folded(id, values[i++]);
  }

  void add_graph_input(const graph::Tensor& t) {
    auto* in = out_.graph().add_input();
    in->set_name(out_.fresh(t.name()));
    OnnxWriter::set_type(*in, t.type());
    values_.set(t.id(), in->name());
  }

  // A fresh ONNX name for node `id`'s output.
  std::string output_name(int id) { return out_.fresh(node(id).name); }

  // --- ops ---

  void translate_node(int id);
  void shape_op(int id);  // reshape, transpose, slice, concat, broadcast_to, pad
  void unary(int id);
  void binary(int id);
  void keep(int id);
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
  OnnxWriter out_;
  OnnxValues values_;  // after out_, which it writes into
};

}  // namespace vkp::train::onnx_detail
