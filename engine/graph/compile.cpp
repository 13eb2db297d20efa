// compile(): a graph, its feeds, fetches and targets into a Program, in the stages of
// ProgramBuilder (schedule, plan storage, allocate, upload, record).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/internal/f16_storage.h"
#include "engine/graph/internal/fusion.h"
#include "engine/graph/internal/lower.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/internal/schedule.h"
#include "engine/graph/program.h"
#include "engine/vk/device.h"
#include "engine/vk/transfer.h"

namespace vkp::graph {

// compile()'s stages, in order; each reads what the earlier ones left here:
//   schedule        execution order and concrete types from the feeds; GEMM epilogues
//                   and elementwise chains fused (fusion.h) unless CompileOptions::fuse
//                   is off
//   plan_storage    which node owns each tensor's storage, lifetimes of planned tensors
//                   and workspaces; which of them are float16 (f16_storage.h) when
//                   CompileOptions::f16_storage is on; binding ranges checked
//   allocate        the activation arena, constants and new variables (one transfer),
//                   input buffers per variant, fetch read-back
//   record          one command stream per variant (one per segment with segments)
class ProgramBuilder {
 public:
  ProgramBuilder(const ProgramRequest& what, const ProgramHome& where, const CompileOptions& options)
      : graph_(what.graph),
        feeds_(what.feeds),
        fetches_(what.fetches),
        targets_(what.targets),
        device_(where.device),
        variables_(where.variables),
        scalars_(where.scalars),
        options_(options),
        variants_(std::max(1, options.variants)),
        p_(new Program()) {}

  std::unique_ptr<Program> build() {
    check_graph();
    schedule();
    plan_storage();
    plan_f16();
    check_binding_ranges();
    allocate_activations();
    upload_constants_and_variables();
    allocate_inputs();
    allocate_exchanges();
    allocate_fetches();
    for (int variant = 0; variant < variants_; ++variant) record(variant);
    return std::move(p_);
  }

 private:
  std::size_t at(int id) const { return static_cast<std::size_t>(id); }
  const TensorType& type_of(int id) const { return types_[at(id)]; }

  void check_graph() const {
    auto foreign = [&](const Tensor& t, const char* what) {
      if (!t.valid() || &t.graph() != &graph_)
        throw Error(ErrorCode::invalid_argument, std::string(what) + " '" + (t.valid() ? t.name() : "(empty)") +
                                                     "' is not a tensor of this graph");
    };
    for (const Tensor& t : fetches_) foreign(t, "fetch");
    for (const Tensor& t : targets_) foreign(t, "target");
    for (const FeedSpec& f : feeds_) foreign(f.placeholder, "feed");
  }

  void schedule() {
    p_->plan_.timed = options_.timestamps && device_.limits().timestamps;
    p_->plan_.schedule = schedule_nodes(graph_, fetches_, targets_);
    types_ = concrete_types(graph_, p_->plan_.schedule, feeds_);
    absorbed_.assign(at(graph_.size()), 0);
    if (!options_.fuse) return;
    fusions_ = plan_fusions(graph_, p_->plan_.schedule, types_, fetches_);
    for (const auto& [tail, f] : fusions_) {
      for (int id : f.absorbed) absorbed_[at(id)] = 1;
      // The fused dispatch runs at this node's step and computes `tail`.
      const int at_node = f.at_matmul ? f.matmul : tail;
      runs_fused_[at_node] = tail;
      if (f.at_matmul) absorbed_[at(tail)] = 1;  // its step passes; its storage was planned earlier
    }
  }

  // The inputs a node's dispatch reads: a fused chain's last node reads the chain's.
  std::vector<int> inputs_of(int id) const {
    if (const auto it = fusions_.find(id); it != fusions_.end()) return it->second.inputs(graph_);
    return graph_.node(id).inputs;
  }

  // Views share their input's storage; planned tensors and scratch get lifetimes.
  void plan_storage() {
    const std::vector<int>& schedule = p_->plan_.schedule;
    const int steps = static_cast<int>(schedule.size());
    owner_.assign(at(graph_.size()), -1);
    workspace_bytes_.assign(at(graph_.size()), 0);
    for (int step = 0; step < steps; ++step) {
      int id = schedule[at(step)];
      if (const auto it = runs_fused_.find(id); it != runs_fused_.end()) id = it->second;  // the chain's output
      else if (absorbed_[at(id)]) continue;  // computed by its chain's fused dispatch, never stored
      const Node& node = graph_.node(id);
      const OpDef& def = op_def(node.op);
      owner_[at(id)] = def.view ? owner_[at(node.inputs[0])] : id;
      // Variables, constants, feeds and exchanged values have storage of their own; the
      // rest is planned.
      const bool own_storage = node.op == OpKind::variable || node.op == OpKind::constant ||
                               node.op == OpKind::placeholder || node.op == OpKind::cross_tower_mean;
      if (!def.view && !own_storage && !def.side_effect) {
        tensor_at_[id] = lifetimes_.size();
        lifetimes_.push_back({step, step, bytes_of(type_of(id))});
      }
      // A fused chain's workspace is its matmul's.
      const auto fused = fusions_.find(id);
      const int worker_id = fused != fusions_.end() && !fused->second.chain ? fused->second.matmul : id;
      const Node& worker = graph_.node(worker_id);
      const OpDef& worker_def = op_def(worker.op);
      if (worker_def.workspace) {
        std::vector<TensorType> in;
        for (int input : worker.inputs) in.push_back(type_of(input));
        const std::uint64_t bytes = worker_def.workspace(worker, in, type_of(worker_id), device_);
        if (bytes > 0) {
          workspace_bytes_[at(id)] = bytes;
          workspace_at_[id] = lifetimes_.size();
          lifetimes_.push_back({step, step, bytes});
        }
      }
      for (int input : inputs_of(id))
        if (const auto it = tensor_at_.find(owner_[at(input)]); it != tensor_at_.end())
          lifetimes_[it->second].last = std::max(lifetimes_[it->second].last, step);
    }
    for (const Tensor& t : fetches_)
      if (const auto it = tensor_at_.find(owner_[at(t.id())]); it != tensor_at_.end()) lifetimes_[it->second].last = steps;
    segments_ = plan_segments(graph_, schedule, fetches_, types_, owner_, options_.segments);
    p_->fetches_.set_buckets(segments_.buckets);
    segmented_.assign(fetches_.size(), 0);
    for (const std::vector<int>& bucket : segments_.buckets)
      for (int i : bucket) segmented_[at(i)] = 1;
  }

  // Planned float tensors kept as float16, where every kernel touching them can.
  void plan_f16() {
    f16_.assign(at(graph_.size()), 0);
    if (!options_.f16_storage) return;
    std::vector<int> planned;
    for (const auto& [id, index] : tensor_at_) planned.push_back(id);
    f16_ = plan_f16_storage({graph_, p_->plan_.schedule, types_, fusions_, runs_fused_, absorbed_, owner_, fetches_},
                            planned);
    for (const auto& [id, index] : tensor_at_) {
      if (!f16_[at(id)]) continue;
      // Whole 32-bit words, which a fill of float16 values writes two at a time.
      lifetimes_[index].bytes = std::max<std::uint64_t>((static_cast<std::uint64_t>(type_of(id).numel()) + 1) / 2 * 4, 4);
      p_->plan_.f16_tensors += 1;
      p_->plan_.f16_bytes += lifetimes_[index].bytes;
    }
  }

  // Every tensor a kernel binds whole: planned ones, variables, constants and feeds.
  // Checked before anything is allocated, so the error names the tensor rather than a
  // kernel's binding.
  void check_binding_ranges() const {
    const std::uint64_t range = device_.limits().max_storage_buffer_range;
    for (int id : p_->plan_.schedule) {
      const Node& node = graph_.node(id);
      if (owner_[at(id)] != id || op_def(node.op).side_effect) continue;
      const TensorType& type = type_of(id);
      if (bytes_of(type) <= range) continue;
      const bool planned = tensor_at_.count(id) > 0;
      throw Error(ErrorCode::unsupported,
                  fmt::format("{} '{}' {} needs {} bytes; {} binds at most {} bytes (maxStorageBufferRange){}",
                              node.op == OpKind::variable      ? "variable"
                              : node.op == OpKind::placeholder ? "feed"
                                                               : "tensor",
                              node.op == OpKind::variable ? std::get<VariableAttrs>(node.attrs).var_name : node.name,
                              to_string(type), bytes_of(type), device_.label(), range,
                              planned || node.op == OpKind::placeholder ? ": use a smaller batch"
                                                                        : ": split it into several variables"));
    }
  }

  void allocate_activations() {
    p_->plan_.memory = plan_memory(lifetimes_, vk::Arena::kAlignment);
    if (p_->plan_.memory.arena_bytes == 0) return;
    p_->activations_ =
        std::make_unique<vk::Arena>(device_, vk::MemoryUse::device, options_.name, p_->plan_.memory.arena_bytes);
    base_ = p_->activations_->allocate(p_->plan_.memory.arena_bytes, "activations");
  }

  // Constants and the initial values of variables new to the store: one transfer.
  void upload_constants_and_variables() {
    std::uint64_t constant_bytes = 0;
    for (int id : p_->plan_.schedule)
      if (graph_.node(id).op == OpKind::constant)
        constant_bytes += std::get<ConstantAttrs>(graph_.node(id).attrs).value.nbytes() + 2 * vk::Arena::kAlignment;
    p_->constants_ = std::make_unique<vk::Arena>(device_, vk::MemoryUse::device, options_.name + " constants",
                                                 std::max<std::uint64_t>(constant_bytes, vk::Arena::kAlignment));
    vk::TransferBatch transfers(device_);
    for (int id : p_->plan_.schedule) {
      const Node& node = graph_.node(id);
      if (node.op == OpKind::variable) persistent_[id] = variables_.storage(node);
      if (node.op == OpKind::constant) {
        const Array& value = std::get<ConstantAttrs>(node.attrs).value;
        const vk::BufferSlice slice = p_->constants_->allocate(std::max<std::size_t>(value.nbytes(), 4), node.name);
        transfers.upload(slice, value.bytes());
        persistent_[id] = slice;
      }
    }
    variables_.upload_initial_values(transfers);
    transfers.run();
  }

  // Input buffers, one set per variant; written through their mapping, or through
  // staging copies recorded at the start of each variant.
  void allocate_inputs() {
    for (std::size_t i = 0; i < feeds_.size(); ++i) feed_index_[feeds_[i].placeholder.id()] = i;
    for (const FeedSpec& f : feeds_) feed_bytes_ += bytes_of(f.type) + vk::Arena::kAlignment;
    inputs_.resize(at(variants_));
    if (!feeds_.empty()) {
      p_->inputs_ = std::make_unique<vk::Arena>(device_, vk::MemoryUse::device, options_.name + " inputs",
                                                feed_bytes_ * static_cast<std::uint64_t>(variants_));
      for (auto& set : inputs_)
        for (const FeedSpec& f : feeds_) set.push_back(p_->inputs_->allocate(bytes_of(f.type), f.placeholder.name()));
    }
    mapped_ = !p_->inputs_ || p_->inputs_->host_visible();
    feeds_on_transfer_ = !mapped_ && variants_ > 1 && device_.queues().has_transfer_queue();
    if (!mapped_)
      p_->upload_ = std::make_unique<vk::Arena>(device_, vk::MemoryUse::upload, options_.name + " feeds",
                                                feed_bytes_ * static_cast<std::uint64_t>(variants_));
    p_->feeds_.set_checks(FeedChecks(feeds_, graph_, p_->plan_.schedule, types_));
  }

  // Where the host reads each fetch: its mapping, or a read-back copy made at the end.
  void allocate_fetches() {
    std::uint64_t fetch_bytes = 0;
    for (const Tensor& t : fetches_) fetch_bytes += bytes_of(type_of(t.id())) + vk::Arena::kAlignment;
    fetch_stage_.resize(fetches_.size());
    for (std::size_t i = 0; i < fetches_.size(); ++i) {
      const Tensor& t = fetches_[i];
      const vk::BufferSlice src = slice_of(t.id(), 0);
      const bool direct = src.host != nullptr && feed_index_.count(owner_[at(t.id())]) == 0;
      if (direct) {
        p_->fetches_.add(type_of(t.id()), src.host);
        continue;
      }
      // A feed fetched back, or device memory the host cannot map: copy it out at the end.
      if (!p_->readback_)
        p_->readback_ =
            std::make_unique<vk::Arena>(device_, vk::MemoryUse::readback, options_.name + " fetches", fetch_bytes);
      fetch_stage_[i] = p_->readback_->allocate(src.size, t.name());
      p_->fetches_.add(type_of(t.id()), fetch_stage_[i].host);
    }
  }

  // Each cross_tower_mean: a read-back copy of its input and host-written storage for its
  // value, shared by the variants (one runs at a time).
  void allocate_exchanges() {
    std::uint64_t bytes = 0;
    for (int id : p_->plan_.schedule)
      if (graph_.node(id).op == OpKind::cross_tower_mean) bytes += bytes_of(type_of(id)) + vk::Arena::kAlignment;
    if (bytes == 0) return;
    p_->exchange_in_ =
        std::make_unique<vk::Arena>(device_, vk::MemoryUse::readback, options_.name + " exchanges", bytes);
    p_->exchange_out_ =
        std::make_unique<vk::Arena>(device_, vk::MemoryUse::upload, options_.name + " exchanged", bytes);
    for (int id : p_->plan_.schedule) {
      if (graph_.node(id).op != OpKind::cross_tower_mean) continue;
      const std::string& name = graph_.node(id).name;
      const vk::BufferSlice in = p_->exchange_in_->allocate(bytes_of(type_of(id)), name);
      const vk::BufferSlice out = p_->exchange_out_->allocate(bytes_of(type_of(id)), name);
      exchange_copy_[id] = in;
      persistent_[id] = out;
      p_->exchanges_.add(type_of(id), in.host, out.host);
    }
  }

  vk::BufferSlice slice_of(int id, int variant) const {
    const int o = owner_[at(id)];
    if (const auto it = persistent_.find(o); it != persistent_.end()) return it->second;
    if (const auto it = feed_index_.find(o); it != feed_index_.end()) return inputs_[at(variant)][it->second];
    const std::size_t index = tensor_at_.at(o);
    vk::BufferSlice slice = base_.sub(p_->plan_.memory.offsets[index], lifetimes_[index].bytes);
    slice.f16 = f16_[at(o)] != 0;
    return slice;
  }

  // The feed copies of a variant (staged memory), on its first recording or on a
  // transfer-queue recording of their own; where the host writes each feed.
  void record_feed_copies(int variant, vk::Recording& first) {
    std::vector<std::byte*> hosts;
    std::unique_ptr<vk::Recording> upload;
    if (feeds_on_transfer_)
      upload = std::make_unique<vk::Recording>(
          device_,
          vk::RecordingOptions{.name = options_.name + " feeds variant " + std::to_string(variant), .transfer = true});
    vk::Recording* copies = upload ? upload.get() : &first;
    for (std::size_t i = 0; i < feeds_.size(); ++i) {
      const vk::BufferSlice dst = inputs_[at(variant)][i];
      if (mapped_) {
        hosts.push_back(dst.host);
      } else {
        const vk::BufferSlice stage = p_->upload_->allocate(dst.size, feeds_[i].placeholder.name());
        copies->set_node(feeds_[i].placeholder.name());
        copies->copy(stage, dst, "feed");
        hosts.push_back(stage.host);
      }
    }
    if (upload) upload->finish();
    p_->feeds_.add_variant(std::move(hosts), std::move(upload));
  }

  void lower_node(int id, int variant, vk::Recording& rec) {
    if (const auto it = runs_fused_.find(id); it != runs_fused_.end()) {
      rec.set_node(graph_.node(it->second).name);  // a fusion is named by its last node
      lower_fused(it->second, fusions_.at(it->second), variant, rec);
      return;
    }
    if (absorbed_[at(id)]) return;
    const Node& node = graph_.node(id);
    rec.set_node(node.name);
    const OpDef& def = op_def(node.op);
    if (def.lower == nullptr) return;
    std::vector<TensorType> in_types;
    std::vector<vk::BufferSlice> in;
    for (int input : node.inputs) {
      in_types.push_back(type_of(input));
      in.push_back(slice_of(input, variant));
    }
    const vk::BufferSlice out = def.side_effect ? vk::BufferSlice{} : slice_of(id, variant);
    const auto ws = workspace_at_.find(id);
    const vk::BufferSlice workspace = ws != workspace_at_.end()
                                          ? base_.sub(p_->plan_.memory.offsets[ws->second], workspace_bytes_[at(id)])
                                          : vk::BufferSlice{};
    LowerContext ctx{rec, graph_, node, in_types, type_of(id), in, out, workspace, scalars_};
    try {
      def.lower(ctx);
    } catch (const Error& e) {
      throw Error(e.code(), node.name + ": " + e.what());
    }
    if (node.op == OpKind::apply_optimizer) p_->plan_.updates_variables = true;
  }

  // The fusion ending at `tail` as one dispatch into tail's storage: an elementwise
  // chain, or its GEMM-like op with an epilogue.
  void lower_fused(int tail, const Fusion& f, int variant, vk::Recording& rec) {
    if (f.chain) {
      std::vector<vk::BufferSlice> inputs;
      for (int input : f.chain_inputs) inputs.push_back(slice_of(input, variant));
      const TensorType& out = type_of(tail);
      try {
        vk::elementwise_chain(
            rec, f.steps, inputs, f.modes,
            {static_cast<std::uint64_t>(out.numel()), static_cast<std::uint32_t>(out.rank() > 0 ? out.dims.back() : 1)},
            slice_of(tail, variant));
      } catch (const Error& e) {
        throw Error(e.code(), graph_.node(tail).name + " (an elementwise chain): " + e.what());
      }
      return;
    }
    const Node& node = graph_.node(f.matmul);
    std::vector<TensorType> in_types;
    std::vector<vk::BufferSlice> in;
    for (int input : node.inputs) {
      in_types.push_back(type_of(input));
      in.push_back(slice_of(input, variant));
    }
    const auto ws = workspace_at_.find(tail);
    const vk::BufferSlice workspace = ws != workspace_at_.end()
                                          ? base_.sub(p_->plan_.memory.offsets[ws->second], workspace_bytes_[at(tail)])
                                          : vk::BufferSlice{};
    LowerContext ctx{rec, graph_, node, in_types, type_of(f.matmul), in, slice_of(tail, variant), workspace, scalars_};
    vk::GemmEpilogue epilogue;
    if (f.bias >= 0) epilogue.bias = slice_of(f.bias, variant);
    if (f.residual >= 0) epilogue.residual = slice_of(f.residual, variant);
    if (f.gate >= 0) epilogue.gate = slice_of(f.gate, variant);
    epilogue.activation = f.activation;
    epilogue.activation_alpha = f.activation_alpha;
    epilogue.gate_fn = f.gate_fn;
    epilogue.gate_alpha = f.gate_alpha;
    try {
      op_def(node.op).lower_with_epilogue(ctx, epilogue);
    } catch (const Error& e) {
      throw Error(e.code(), graph_.node(tail).name + " (fused with " + node.name + "): " + e.what());
    }
  }

  void record(int variant) {
    auto& recordings = p_->recordings_.emplace_back();
    auto start_recording = [&] {
      std::string name = options_.name;
      if (variants_ > 1) name += " variant " + std::to_string(variant);
      if (!segments_.buckets.empty() || p_->exchanges_.count() > 0)
        name += " part " + std::to_string(recordings.size());
      recordings.push_back(std::make_unique<vk::Recording>(device_, vk::RecordingOptions{name, options_.timestamps}));
      return recordings.back().get();
    };
    vk::Recording* rec = start_recording();
    auto copy_out = [&](std::size_t i) {
      if (fetch_stage_[i].buffer == VK_NULL_HANDLE) return;
      rec->set_node(fetches_[i].name());
      rec->copy(slice_of(fetches_[i].id(), variant), fetch_stage_[i], "fetch");
    };
    record_feed_copies(variant, *rec);
    std::size_t bucket = 0;
    const std::vector<int>& schedule = p_->plan_.schedule;
    for (int step = 0; step < static_cast<int>(schedule.size()); ++step) {
      const int id = schedule[at(step)];
      lower_node(id, variant, *rec);
      // A bucket is complete: end its segment with the copies of its fetches (its
      // submission signals the timeline) and go on in the next command buffer.
      for (; bucket < segments_.end_step.size() && segments_.end_step[bucket] == step; ++bucket) {
        for (int i : segments_.buckets[bucket]) copy_out(at(i));
        rec->finish();
        if (variant == 0) p_->fetches_.end_bucket(static_cast<int>(recordings.size()) - 1);
        rec = start_recording();
      }
      // An exchange: the run stops here for the host, which reads the input's copy and
      // writes the value before the next command buffer is submitted.
      if (graph_.node(id).op == OpKind::cross_tower_mean) {
        rec->set_node(graph_.node(id).name);
        rec->copy(slice_of(graph_.node(id).inputs[0], variant), exchange_copy_.at(id), "exchange");
        rec->finish();
        if (variant == 0) p_->exchanges_.end_at(static_cast<int>(recordings.size()) - 1);
        rec = start_recording();
      }
    }
    for (std::size_t i = 0; i < fetches_.size(); ++i)
      if (!segmented_[i]) copy_out(i);
    rec->finish();
    auto& in_order = p_->in_order_.emplace_back();
    for (const auto& r : recordings) in_order.push_back(r.get());
  }

  const Graph& graph_;
  const std::vector<FeedSpec>& feeds_;
  const std::vector<Tensor>& fetches_;
  const std::vector<Tensor>& targets_;
  vk::Device& device_;
  VariableStore& variables_;
  const vk::BufferSlice& scalars_;
  const CompileOptions& options_;
  const int variants_;
  std::unique_ptr<Program> p_;

  std::vector<TensorType> types_;                      // by node id, concrete
  std::map<int, Fusion> fusions_;                      // by the id of each chain's last node
  std::vector<char> absorbed_;                         // by node id: lowered within a fusion
  std::vector<char> f16_;                              // by node id: planned storage is float16
  std::map<int, int> runs_fused_;                      // node whose step runs a fusion -> its last node
  std::vector<int> owner_;                             // node whose storage each node uses
  std::map<int, std::size_t> tensor_at_, workspace_at_;  // node -> index in lifetimes_
  std::vector<Lifetime> lifetimes_;
  std::vector<std::uint64_t> workspace_bytes_;  // by node id
  SegmentPlan segments_;
  std::vector<char> segmented_;  // by fetch
  vk::BufferSlice base_;         // the activation arena
  std::map<int, vk::BufferSlice> persistent_;  // variables and constants
  std::map<int, std::size_t> feed_index_;      // placeholder -> feed index
  std::uint64_t feed_bytes_ = 0;
  std::vector<std::vector<vk::BufferSlice>> inputs_;  // by variant, by feed
  bool mapped_ = true, feeds_on_transfer_ = false;
  std::vector<vk::BufferSlice> fetch_stage_;  // by fetch: its read-back copy, if any
  std::map<int, vk::BufferSlice> exchange_copy_;  // cross_tower_mean -> its input's read-back copy
};

std::unique_ptr<Program> compile(const ProgramRequest& what, const ProgramHome& where, const CompileOptions& options) {
  return ProgramBuilder(what, where, options).build();
}

}  // namespace vkp::graph
