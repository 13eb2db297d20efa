#include "vkpack/engine/graph/program.h"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "vkpack/core/error.h"
#include "vkpack/engine/graph/lower.h"
#include "vkpack/engine/graph/op_def.h"
#include "vkpack/engine/vk/device.h"

namespace vkp::graph {
namespace {

bool is_effect(const Graph& graph, int id) { return op_def(graph.node(id).op).side_effect; }

// The variable inputs an effect writes: assign writes input 0; an optimizer update its
// variable (0) and its slots (2, 3).
std::vector<int> written_variables(const Node& node) {
  std::vector<int> out{node.inputs[0]};
  for (std::size_t i = 2; i < node.inputs.size(); ++i) out.push_back(node.inputs[i]);
  return out;
}

// Execution order: what the fetches and targets need, in creation order (topological),
// then each effect placed as early as it may run: after its inputs, and after every
// other op that reads a variable it writes.
std::vector<int> schedule_nodes(const Graph& graph, const std::vector<Tensor>& fetches,
                                const std::vector<Tensor>& targets) {
  std::vector<char> needed(static_cast<std::size_t>(graph.size()), 0);
  std::vector<int> stack;
  for (const Tensor& t : fetches) stack.push_back(t.id());
  for (const Tensor& t : targets) stack.push_back(t.id());
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (needed[static_cast<std::size_t>(id)]) continue;
    needed[static_cast<std::size_t>(id)] = 1;
    for (int input : graph.node(id).inputs) stack.push_back(input);
  }
  std::vector<int> order;
  std::vector<int> effects;
  for (int id = 0; id < graph.size(); ++id) {
    if (!needed[static_cast<std::size_t>(id)]) continue;
    (is_effect(graph, id) ? effects : order).push_back(id);
  }
  // Position of the last reader of each node among the ordinary ops.
  std::map<int, int> position, last_reader;
  for (int p = 0; p < static_cast<int>(order.size()); ++p) {
    position[order[static_cast<std::size_t>(p)]] = p;
    for (int input : graph.node(order[static_cast<std::size_t>(p)]).inputs) last_reader[input] = p;
  }
  // Insert each effect after the latest of those positions (stable among effects).
  std::vector<std::pair<int, int>> slots;  // (after position, effect id)
  for (int e : effects) {
    int after = -1;
    for (int input : graph.node(e).inputs)
      if (position.count(input)) after = std::max(after, position[input]);
    for (int v : written_variables(graph.node(e)))
      if (last_reader.count(v)) after = std::max(after, last_reader[v]);
    slots.emplace_back(after, e);
  }
  std::stable_sort(slots.begin(), slots.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<int> schedule;
  std::size_t next = 0;
  for (int p = -1; p < static_cast<int>(order.size()); ++p) {
    if (p >= 0) schedule.push_back(order[static_cast<std::size_t>(p)]);
    while (next < slots.size() && slots[next].first == p) schedule.push_back(slots[next++].second);
  }
  return schedule;
}

// Concrete types of the scheduled nodes from the feeds' shapes.
std::vector<TensorType> concrete_types(const Graph& graph, const std::vector<int>& schedule,
                                       const std::vector<FeedSpec>& feeds) {
  std::vector<TensorType> types(static_cast<std::size_t>(graph.size()));
  std::map<int, const FeedSpec*> fed;
  for (const FeedSpec& f : feeds) {
    if (f.placeholder.node().op != OpKind::placeholder)
      throw Error(ErrorCode::invalid_argument, "cannot feed '" + f.placeholder.name() + "': only placeholders are fed");
    fed[f.placeholder.id()] = &f;
  }
  for (int id : schedule) {
    const Node& node = graph.node(id);
    if (node.op == OpKind::placeholder) {
      const auto it = fed.find(id);
      if (it == fed.end())
        throw Error(ErrorCode::invalid_argument, "placeholder '" + node.name + "' " + to_string(node.type) +
                                                     " is needed but not fed");
      const TensorType& want = node.type;
      const TensorType& got = it->second->type;
      bool fits = got.dtype == want.dtype && got.rank() == want.rank() && got.known();
      for (int i = 0; fits && i < want.rank(); ++i) fits = want.dims[static_cast<std::size_t>(i)] < 0 || want.dims[static_cast<std::size_t>(i)] == got.dims[static_cast<std::size_t>(i)];
      if (!fits)
        throw Error(ErrorCode::invalid_argument, "feed for '" + node.name + "' is " + to_string(got) +
                                                     "; the placeholder takes " + to_string(want));
      types[static_cast<std::size_t>(id)] = got;
      continue;
    }
    std::vector<TensorType> in;
    for (int input : node.inputs) in.push_back(types[static_cast<std::size_t>(input)]);
    try {
      types[static_cast<std::size_t>(id)] = op_def(node.op).infer(node, in);
    } catch (const Error& e) {
      throw Error(e.code(), node.name + ": " + e.what());
    }
  }
  return types;
}

std::uint64_t bytes_of(const TensorType& t) {
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(t.numel()) * size_of(t.dtype), 4);
}

}  // namespace

std::unique_ptr<Program> compile(const Graph& graph, const std::vector<FeedSpec>& feeds,
                                 const std::vector<Tensor>& fetches, const std::vector<Tensor>& targets,
                                 vk::Device& device, VariableStore& variables, const vk::BufferSlice& scalars,
                                 const CompileOptions& options) {
  auto foreign = [&](const Tensor& t, const char* what) {
    if (!t.valid() || &t.graph() != &graph)
      throw Error(ErrorCode::invalid_argument, std::string(what) + " '" + (t.valid() ? t.name() : "(empty)") +
                                                   "' is not a tensor of this graph");
  };
  for (const Tensor& t : fetches) foreign(t, "fetch");
  for (const Tensor& t : targets) foreign(t, "target");
  for (const FeedSpec& f : feeds) foreign(f.placeholder, "feed");

  std::unique_ptr<Program> p(new Program());
  p->schedule_ = schedule_nodes(graph, fetches, targets);
  const std::vector<TensorType> types = concrete_types(graph, p->schedule_, feeds);
  const std::vector<int>& schedule = p->schedule_;
  const int steps = static_cast<int>(schedule.size());

  // Storage: views share their input's; planned tensors and scratch get lifetimes.
  std::vector<int> owner(static_cast<std::size_t>(graph.size()), -1);
  std::map<int, std::size_t> tensor_at, workspace_at;  // node -> index in lifetimes
  std::vector<Lifetime> lifetimes;
  std::vector<std::uint64_t> workspace_bytes(static_cast<std::size_t>(graph.size()), 0);
  for (int step = 0; step < steps; ++step) {
    const int id = schedule[static_cast<std::size_t>(step)];
    const Node& node = graph.node(id);
    const OpDef& def = op_def(node.op);
    owner[static_cast<std::size_t>(id)] = def.view ? owner[static_cast<std::size_t>(node.inputs[0])] : id;
    const bool persistent = node.op == OpKind::variable || node.op == OpKind::constant;
    if (!def.view && !persistent && !def.side_effect) {
      tensor_at[id] = lifetimes.size();
      lifetimes.push_back({node.op == OpKind::placeholder ? 0 : step, step, bytes_of(types[static_cast<std::size_t>(id)])});
    }
    if (def.workspace) {
      std::vector<TensorType> in;
      for (int input : node.inputs) in.push_back(types[static_cast<std::size_t>(input)]);
      const std::uint64_t bytes = def.workspace(node, in, types[static_cast<std::size_t>(id)], device);
      if (bytes > 0) {
        workspace_bytes[static_cast<std::size_t>(id)] = bytes;
        workspace_at[id] = lifetimes.size();
        lifetimes.push_back({step, step, bytes});
      }
    }
    for (int input : node.inputs)
      if (const auto it = tensor_at.find(owner[static_cast<std::size_t>(input)]); it != tensor_at.end())
        lifetimes[it->second].last = std::max(lifetimes[it->second].last, step);
  }
  for (const Tensor& t : fetches)
    if (const auto it = tensor_at.find(owner[static_cast<std::size_t>(t.id())]); it != tensor_at.end())
      lifetimes[it->second].last = steps;
  const std::uint64_t range = device.limits().max_storage_buffer_range;
  for (const auto& [id, index] : tensor_at)
    if (lifetimes[index].bytes > range)
      throw Error(ErrorCode::unsupported,
                  fmt::format("tensor '{}' {} needs {} bytes; {} binds at most {} (maxStorageBufferRange): use a "
                              "smaller batch",
                              graph.node(id).name, to_string(types[static_cast<std::size_t>(id)]), lifetimes[index].bytes,
                              device.label(), range));
  p->plan_ = plan_memory(lifetimes, vk::Arena::kAlignment);

  vk::BufferSlice base;
  if (p->plan_.arena_bytes > 0) {
    p->activations_ = std::make_unique<vk::Arena>(device, vk::MemoryUse::device, options.name, p->plan_.arena_bytes);
    base = p->activations_->allocate(p->plan_.arena_bytes, "activations");
  }
  p->constants_ = std::make_unique<vk::Arena>(device, vk::MemoryUse::device, options.name + " constants");
  std::map<int, vk::BufferSlice> persistent;
  for (int id : schedule) {
    const Node& node = graph.node(id);
    if (node.op == OpKind::variable) persistent[id] = variables.storage(node);
    if (node.op == OpKind::constant) {
      const Array& value = std::get<ConstantAttrs>(node.attrs).value;
      const vk::BufferSlice slice = p->constants_->allocate(std::max<std::size_t>(value.nbytes(), 4), node.name);
      vk::upload(device, slice, value.bytes());
      persistent[id] = slice;
    }
  }
  auto slice_of = [&](int id) -> vk::BufferSlice {
    const int o = owner[static_cast<std::size_t>(id)];
    if (const auto it = persistent.find(o); it != persistent.end()) return it->second;
    const std::size_t index = tensor_at.at(o);
    return base.sub(p->plan_.offsets[index], lifetimes[index].bytes);
  };

  p->recording_ = std::make_unique<vk::Recording>(device, vk::RecordingOptions{options.name, options.timestamps});
  vk::Recording& rec = *p->recording_;
  // Feeds and fetches: through their mapping, or through staging copies at the ends.
  const bool mapped = base.host != nullptr || p->plan_.arena_bytes == 0;
  std::uint64_t feed_bytes = 0, fetch_bytes = 0;
  for (const FeedSpec& f : feeds) feed_bytes += bytes_of(f.type) + vk::Arena::kAlignment;
  for (const Tensor& t : fetches) fetch_bytes += bytes_of(types[static_cast<std::size_t>(t.id())]) + vk::Arena::kAlignment;
  if (!mapped && !feeds.empty())
    p->upload_ = std::make_unique<vk::Arena>(device, vk::MemoryUse::upload, options.name + " feeds", feed_bytes);
  if (!mapped && !fetches.empty())
    p->readback_ = std::make_unique<vk::Arena>(device, vk::MemoryUse::readback, options.name + " fetches", fetch_bytes);
  for (const FeedSpec& f : feeds) {
    p->feeds_.push_back(f);
    p->feed_names_.push_back(f.placeholder.name());
    const bool used = owner[static_cast<std::size_t>(f.placeholder.id())] >= 0;
    const vk::BufferSlice dst = used ? slice_of(f.placeholder.id()) : vk::BufferSlice{};
    if (!used) {
      p->feed_host_.push_back(nullptr);  // fed but not needed: accepted and ignored
    } else if (mapped) {
      p->feed_host_.push_back(dst.host);
    } else {
      const vk::BufferSlice stage = p->upload_->allocate(dst.size, f.placeholder.name());
      rec.copy(stage, dst);
      p->feed_host_.push_back(stage.host);
    }
  }
  for (int step = 0; step < steps; ++step) {
    const int id = schedule[static_cast<std::size_t>(step)];
    const Node& node = graph.node(id);
    const OpDef& def = op_def(node.op);
    if (def.lower == nullptr) continue;
    std::vector<TensorType> in_types;
    std::vector<vk::BufferSlice> in;
    for (int input : node.inputs) {
      in_types.push_back(types[static_cast<std::size_t>(input)]);
      in.push_back(slice_of(input));
    }
    const vk::BufferSlice out = def.side_effect ? vk::BufferSlice{} : slice_of(id);
    const vk::BufferSlice workspace =
        workspace_at.count(id) ? base.sub(p->plan_.offsets[workspace_at[id]], workspace_bytes[static_cast<std::size_t>(id)])
                               : vk::BufferSlice{};
    LowerContext ctx{rec, graph, node, in_types, types[static_cast<std::size_t>(id)], in, out, workspace, scalars};
    try {
      def.lower(ctx);
    } catch (const Error& e) {
      throw Error(e.code(), node.name + ": " + e.what());
    }
    if (node.op == OpKind::apply_optimizer) p->updates_variables_ = true;
  }
  for (const Tensor& t : fetches) {
    const TensorType& type = types[static_cast<std::size_t>(t.id())];
    p->fetch_types_.push_back(type);
    const vk::BufferSlice src = slice_of(t.id());
    if (src.host != nullptr) {
      p->fetch_host_.push_back(src.host);
    } else {
      if (!p->readback_)
        p->readback_ = std::make_unique<vk::Arena>(device, vk::MemoryUse::readback, options.name + " fetches", fetch_bytes);
      const vk::BufferSlice stage = p->readback_->allocate(src.size, t.name());
      rec.copy(src, stage);
      p->fetch_host_.push_back(stage.host);
    }
  }
  rec.finish();
  return p;
}

void Program::run(std::span<const Array> feeds, std::vector<Array>& outputs) {
  if (feeds.size() != feeds_.size())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("program takes {} feeds, got {}", feeds_.size(), feeds.size()));
  for (std::size_t i = 0; i < feeds.size(); ++i) {
    const Array& a = feeds[i];
    const TensorType& want = feeds_[i].type;
    if (a.dtype() != want.dtype || a.shape().dims() != want.dims)
      throw Error(ErrorCode::invalid_argument, "feed for '" + feed_names_[i] + "' is " + describe(a) +
                                                   "; this program was compiled for " + to_string(want));
    if (feed_host_[i] != nullptr) std::memcpy(feed_host_[i], a.bytes().data(), a.nbytes());
  }
  recording_->run();
  outputs.resize(fetch_types_.size());
  for (std::size_t i = 0; i < fetch_types_.size(); ++i) {
    const TensorType& t = fetch_types_[i];
    if (outputs[i].dtype() != t.dtype || outputs[i].shape().dims() != t.dims) outputs[i] = Array(t.dtype, t.shape());
    std::memcpy(outputs[i].bytes().data(), fetch_host_[i], outputs[i].nbytes());
  }
}

}  // namespace vkp::graph
