#include "towers/internal/replicas.h"

#include <algorithm>

#include "core/error.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"
#include "engine/vk/device.h"
#include "towers/host_average.h"

namespace vkp::towers {
namespace {

const std::string& var_name(const graph::Tensor& v) { return std::get<graph::VariableAttrs>(v.node().attrs).var_name; }

}  // namespace

Replicas::Replicas(std::vector<vk::Device*> devices, const Towers::BuildFn& build, const Towers::OptimizerFn& optimizer,
                   ReplicaPlan plan)
    : plan_(std::move(plan)) {
  if (devices.empty()) throw Error(ErrorCode::invalid_argument, "Towers: the device list is empty");
  for (std::size_t k = 0; k < devices.size(); ++k) add_replica(static_cast<int>(k), *devices[k], build, optimizer);
}

namespace {

// Each objective's gradients of its variables (of scale * cost with loss scaling, from a
// copy of the scale: loss_scale.h), by trainable variable: owner[i], the objective that
// trains trainables[i] (-1: none has a gradient for it), and gradient[i]. Error for a
// cost that is not a scalar, a variable that is not trainable, or one two objectives train.
struct OwnedGradients {
  std::vector<int> owner;
  std::vector<graph::Tensor> gradient;
};
OwnedGradients objective_gradients(int k, const std::vector<graph::Tensor>& trainables,
                                   const std::vector<Objective>& objectives,
                                   const std::vector<graph::LossScaleState>& scales) {
  OwnedGradients out{std::vector<int>(trainables.size(), -1), std::vector<graph::Tensor>(trainables.size())};
  for (std::size_t o = 0; o < objectives.size(); ++o) {
    const Objective& objective = objectives[o];
    const std::string which = "tower " + std::to_string(k) + ", objective " + std::to_string(o);
    if (!objective.cost.valid() || objective.cost.type().numel() != 1)
      throw Error(ErrorCode::invalid_argument, which + ": the cost must be a scalar");
    const std::vector<graph::Tensor> grads =
        scales.empty() ? graph::gradients(objective.cost, objective.variables)
                       : graph::gradients(objective.cost, objective.variables, scales[o].scale * 1.0f);
    for (std::size_t j = 0; j < grads.size(); ++j) {
      if (!grads[j].valid()) continue;
      const auto at = std::find_if(trainables.begin(), trainables.end(),
                                   [&](const graph::Tensor& t) { return t.id() == objective.variables[j].id(); });
      if (at == trainables.end())
        throw Error(ErrorCode::invalid_argument, which + ": " + var_name(objective.variables[j]) + " is not trainable");
      const auto i = static_cast<std::size_t>(at - trainables.begin());
      if (out.owner[i] >= 0 && out.owner[i] != static_cast<int>(o))
        throw Error(ErrorCode::invalid_argument, which + ": objectives " + std::to_string(out.owner[i]) + " and " +
                                                     std::to_string(o) + " both train " + var_name(*at) +
                                                     "; objectives train disjoint variables");
      out.owner[i] = static_cast<int>(o);
      out.gradient[i] = grads[j];
    }
  }
  return out;
}

// Objective o's loss scale's name (Objective::loss_scale).
std::string loss_scale_name(const std::vector<Objective>& objectives, std::size_t o) {
  if (!objectives[o].loss_scale.empty()) return objectives[o].loss_scale;
  return objectives.size() == 1 ? "loss_scale" : "loss_scale_" + std::to_string(o);
}

// The variables some objective trains, in the graph's order: their names, and by
// objective the indices of its variables and their gradients.
struct TrainedVariables {
  std::vector<std::string> names;
  std::vector<graph::Tensor> vars;
  std::vector<std::vector<int>> objective_vars;
  std::vector<std::vector<graph::Tensor>> gradients;
};
TrainedVariables trained_variables(const std::vector<graph::Tensor>& trainables, const OwnedGradients& owned,
                                   std::size_t objectives) {
  TrainedVariables out;
  out.objective_vars.resize(objectives);
  out.gradients.resize(objectives);
  for (std::size_t i = 0; i < trainables.size(); ++i) {
    if (owned.owner[i] < 0) continue;
    const auto o = static_cast<std::size_t>(owned.owner[i]);
    out.objective_vars[o].push_back(static_cast<int>(out.names.size()));
    out.gradients[o].push_back(owned.gradient[i]);
    out.names.push_back(var_name(trainables[i]));
    out.vars.push_back(trainables[i]);
  }
  return out;
}

// The gradient placeholders of objective `indices` (into vars and names) in an applying
// tower, and the updates that apply what is fed to them: through the loss scale's guard
// with `scaling`.
struct FedUpdates {
  std::vector<graph::Tensor> inputs, apply_ops;
};
struct Scaling {
  const graph::LossScaleState& state;
  const graph::LossScaleOptions& options;
};
FedUpdates fed_updates(graph::Graph& g, const std::vector<int>& indices, const std::vector<graph::Tensor>& vars,
                       const std::vector<std::string>& names, const graph::Optimizer& o, const Scaling* scaling) {
  FedUpdates out;
  std::vector<graph::GradAndVar> fed;
  for (int i : indices) {
    const graph::Tensor& v = vars[static_cast<std::size_t>(i)];
    out.inputs.push_back(graph::placeholder(g, "gradient/" + names[static_cast<std::size_t>(i)], v.type()));
    fed.emplace_back(out.inputs.back(), v);
  }
  out.apply_ops = scaling ? graph::apply_with_loss_scaling(o, fed, scaling->state, scaling->options).train_op
                          : o.apply_gradients(fed);
  return out;
}

}  // namespace
// Tower k: its graph (the tower function, gradients of the trainable variables, the
// apply ops or parameter assigns the plan asks for) and a session on `device`.
void Replicas::add_replica(int k, vk::Device& device, const Towers::BuildFn& build,
                           const Towers::OptimizerFn& optimizer) {
  auto r = std::make_unique<Replica>();
  r->graph = std::make_unique<graph::Graph>(plan_.seed + static_cast<std::uint64_t>(k));
  graph::Graph& g = *r->graph;
  {
    graph::TowerContext context(g, "", k, true);
    r->tower = build(g, k);
  }
  if (!r->tower.cost.valid() || r->tower.cost.type().numel() != 1)
    throw Error(ErrorCode::invalid_argument,
                "tower " + std::to_string(k) + ": the tower function must return a scalar cost");
  const std::vector<graph::Tensor> trainables = g.trainable_variables();
  std::vector<Objective> objectives = r->tower.objectives;
  if (objectives.empty()) objectives.push_back({r->tower.cost, trainables});
  const std::optional<graph::LossScaleOptions>& scaled = plan_.loss_scale;
  std::vector<graph::LossScaleState> loss_scales;  // by objective, with loss scaling
  if (scaled)
    for (std::size_t o = 0; o < objectives.size(); ++o)
      loss_scales.push_back(graph::loss_scale_state(g, *scaled, loss_scale_name(objectives, o)));
  const TrainedVariables trained =
      trained_variables(trainables, objective_gradients(k, trainables, objectives, loss_scales), objectives.size());
  const std::vector<graph::Tensor>& vars = trained.vars;
  r->parts.resize(objectives.size());
  for (std::size_t o = 0; o < objectives.size(); ++o) r->parts[o].gradients = trained.gradients[o];
  for (std::size_t o = 0; o < objectives.size(); ++o) {
    r->parts[o].cost = objectives[o].cost;
    if (scaled) r->parts[o].scale = loss_scales[o].scale;
  }
  check_same_variables(k, trained.names, vars, trained.objective_vars);
  r->updates = g.collection(graph::kUpdateOps);
  // Applying towers take gradients through placeholders: every tower when replicated,
  // only tower 0 otherwise (a host master leaves its apply ops unused; they make its slot
  // variables). Gradient processors run on the host (process_on_host).
  if (plan_.every_tower_applies || k == 0) {
    const graph::Optimizer given = optimizer(g);
    const graph::Optimizer o = given.without_processors();
    if (k == 0) {
      kind_ = o.kind();
      processors_ = given.processors();
      graph::require_host_forms(processors_, "a trainer of several towers");
    }
    for (std::size_t objective = 0; objective < objectives.size(); ++objective) {
      const std::optional<Scaling> scaling =
          scaled ? std::optional<Scaling>(Scaling{loss_scales[objective], *scaled}) : std::nullopt;
      FedUpdates fed = fed_updates(g, layout_.objective_variables(objective), vars, layout_.names(), o,
                                   scaling ? &*scaling : nullptr);
      r->parts[objective].gradient_inputs = std::move(fed.inputs);
      r->parts[objective].apply_ops = std::move(fed.apply_ops);
    }
  }
  if (plan_.receives_parameters) {
    // The trainable variables, then the loss scales' state, which tower 0's update moves.
    std::vector<graph::Tensor> sent = vars;
    for (const graph::LossScaleState& s : loss_scales)
      sent.insert(sent.end(), {s.scale, s.good_steps, s.skipped_steps});
    for (const graph::Tensor& v : sent) {
      r->sent.push_back(v);
      r->parameter_inputs.push_back(graph::placeholder(g, "parameter/" + var_name(v), v.type()));
      r->assigns.push_back(graph::assign(v, r->parameter_inputs.back()));
    }
  }
  r->session = std::make_unique<graph::Session>(g, device, graph::SessionOptions{.f16_storage = scaled.has_value()});
  replicas_.push_back(std::move(r));
}

VariableLayout::VariableLayout(std::vector<std::string> names, std::vector<std::vector<int>> objective_vars)
    : names_(std::move(names)), objective_vars_(std::move(objective_vars)) {
  position_.assign(objective_vars_.size(), std::vector<int>(names_.size(), -1));
  for (std::size_t o = 0; o < objective_vars_.size(); ++o)
    for (std::size_t j = 0; j < objective_vars_[o].size(); ++j)
      position_[o][static_cast<std::size_t>(objective_vars_[o][j])] = static_cast<int>(j);
}

// Tower 0 sets the trainable variables (the layout); every later tower must have the
// same ones, of the same types, in the same order.
void Replicas::check_same_variables(int k, const std::vector<std::string>& names,
                                    const std::vector<graph::Tensor>& vars,
                                    const std::vector<std::vector<int>>& objective_vars) {
  if (k == 0) {
    if (names.empty()) throw Error(ErrorCode::invalid_argument, "Towers: the cost depends on no trainable variable");
    for (std::size_t o = 0; o < objective_vars.size(); ++o)
      if (objective_vars[o].empty())
        throw Error(ErrorCode::invalid_argument,
                    "Towers: objective " + std::to_string(o) + "'s cost depends on none of its variables");
    layout_ = VariableLayout(names, objective_vars);
    return;
  }
  const std::vector<std::string>& first_names = layout_.names();
  if (names != first_names) {
    std::size_t i = 0;
    while (i < names.size() && i < first_names.size() && names[i] == first_names[i]) ++i;
    throw Error(ErrorCode::invalid_argument,
                "tower " + std::to_string(k) + " differs from tower 0 in its trainable variables: " +
                    (i < names.size() ? "'" + names[i] + "'" : "nothing") + " where tower 0 has " +
                    (i < first_names.size() ? "'" + first_names[i] + "'" : "nothing"));
  }
  bool same_objectives = static_cast<int>(objective_vars.size()) == layout_.objective_count();
  for (std::size_t o = 0; same_objectives && o < objective_vars.size(); ++o)
    same_objectives = objective_vars[o] == layout_.objective_variables(static_cast<int>(o));
  if (!same_objectives)
    throw Error(ErrorCode::invalid_argument,
                "tower " + std::to_string(k) + " differs from tower 0 in which variables its objectives train");
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const graph::TensorType& mine = vars[i].type();
    const graph::TensorType& first = graph(0).find_variable(first_names[i]).type();
    if (mine != first)
      throw Error(ErrorCode::invalid_argument, "tower " + std::to_string(k) + ": variable " + first_names[i] + " is " +
                                                   graph::to_string(mine) + ", in tower 0 " + graph::to_string(first));
  }
}

void Replicas::process_on_host(std::span<const int> variables, std::span<Array> gradients, float loss_scale) {
  if (processors_.empty()) return;
  if (loss_scale != 1.0f) multiply(gradients, variables, 1.0f / loss_scale);
  std::vector<graph::HostGradient> grads;
  grads.reserve(variables.size());
  for (int i : variables)
    grads.push_back(
        {layout_.names()[static_cast<std::size_t>(i)], gradients[static_cast<std::size_t>(i)].data<float>()});
  graph::process_gradients_on_host(processors_, grads);
  if (loss_scale != 1.0f) multiply(gradients, variables, loss_scale);
}

// One transfer out of tower `from` and one into each other tower.
void Replicas::broadcast_variables(int from) {
  std::vector<std::string> names;
  for (const graph::Tensor& v : graph(from).variables()) names.push_back(var_name(v));
  std::vector<Array> values;
  on_tower(from, [&] { values = session(from).variable_values(names); });
  for (int k = 0; k < size(); ++k) {
    if (k == from) continue;
    std::vector<std::string> present;
    std::vector<Array> those;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (graph(k).find_variable(names[i]).valid()) {
        present.push_back(names[i]);
        those.push_back(values[i]);
      }
    on_tower(k, [&] { session(k).set_variables(present, those); });
  }
}

void Replicas::broadcast_hyperparameters() {
  graph::Session& master = session(0);
  for (int k = 1; k < size(); ++k)
    for (const auto& [name, initial] : graph(k).hyperparameters()) {
      const float value = master.hyperparameter(name);
      if (session(k).hyperparameter(name) != value) session(k).set_hyperparameter(name, value);
    }
}

void Replicas::discard_staged() {
  for (auto& r : replicas_)
    for (Part& p : r->parts) p.stager.reset();
}

void Replicas::set_timestamps(bool on) {
  for (auto& r : replicas_) {
    if (r->session->timestamps() == on) continue;
    r->session->set_timestamps(on);
    for (Part& p : r->parts) {
      p.program = p.apply_program = nullptr;
      p.stager.reset();
    }
    r->receive_program = r->read_program = nullptr;
  }
}

void Replicas::follow_global_step(const std::shared_ptr<const graph::StepClock>& clock) {
  for (int k = 0; k < size(); ++k) session(k).follow_global_step(clock);
  follows_clock_ = clock != nullptr;
}

void Replicas::set_step(int k, std::uint64_t step) {
  if (!follows_clock_) session(k).set_global_step(step);
}

graph::Program& Replicas::gradient_program(int k, int o, bool updates, const std::vector<Array>& batch,
                                           const std::vector<graph::Tensor>& fetches) {
  Replica& r = at(k);
  Part& p = part(k, o);
  if (batch.size() != r.tower.inputs.size())
    throw Error(ErrorCode::invalid_argument, "tower " + std::to_string(k) + " takes " +
                                                 std::to_string(r.tower.inputs.size()) + " inputs, its batch has " +
                                                 std::to_string(batch.size()));
  bool same = p.program != nullptr && p.with_updates == updates && p.fetch_ids.size() == fetches.size();
  for (std::size_t i = 0; same && i < batch.size(); ++i) same = batch[i].shape().dims() == p.fed_dims[i];
  for (std::size_t i = 0; same && i < fetches.size(); ++i) same = fetches[i].id() == p.fetch_ids[i];
  if (same) return *p.program;

  std::vector<graph::FeedSpec> specs;
  p.fed_dims.clear();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    specs.push_back({r.tower.inputs[i], {batch[i].dtype(), batch[i].shape().dims()}});
    p.fed_dims.push_back(batch[i].shape().dims());
  }
  std::vector<graph::Tensor> all{p.cost};
  all.insert(all.end(), p.gradients.begin(), p.gradients.end());
  all.insert(all.end(), fetches.begin(), fetches.end());
  if (plan_.fetch_scale) all.push_back(p.scale);
  p.fetch_ids.clear();
  for (const graph::Tensor& t : fetches) p.fetch_ids.push_back(t.id());
  // Gradients are fetches 1 .. gradients.size(); with buckets they arrive in segments.
  graph::FetchSegments segments;
  if (plan_.bucket_bytes > 0) {
    for (std::size_t i = 0; i < p.gradients.size(); ++i) segments.fetches.push_back(1 + static_cast<int>(i));
    segments.bucket_bytes = plan_.bucket_bytes;
  }
  // The session keeps what it compiled: going back to a program compiled before (the
  // other objective, with or without the update ops) finds it again.
  p.program = &r.session->program(specs, all, updates ? r.updates : std::vector<graph::Tensor>{},
                                  std::max(1, plan_.staging_buffers), segments);
  p.with_updates = updates;
  p.stager.reset();
  const std::vector<int>& vars = layout_.objective_variables(o);
  p.segment_of.assign(layout_.names().size(), -1);
  for (int s = 0; s < p.program->segment_count(); ++s)
    for (int f : p.program->segment_fetches(s))
      p.segment_of[static_cast<std::size_t>(vars[static_cast<std::size_t>(f - 1)])] = s;
  return *p.program;
}

graph::Program& Replicas::apply_program(int k, int o) {
  Part& p = part(k, o);
  if (p.apply_program == nullptr) {
    std::vector<graph::FeedSpec> specs;
    for (const graph::Tensor& input : p.gradient_inputs) specs.push_back({input, input.type()});
    p.apply_program = &session(k).program(specs, {}, p.apply_ops);
  }
  return *p.apply_program;
}

void Replicas::receive_parameters(int k, std::span<const Array> values) {
  Replica& r = at(k);
  on_tower(k, [&] {
    if (r.receive_program == nullptr) {
      std::vector<graph::FeedSpec> specs;
      for (const graph::Tensor& p : r.parameter_inputs) specs.push_back({p, p.type()});
      r.receive_program = &r.session->program(specs, {}, r.assigns);
    }
    r.receive_program->write_feeds(values, 0);
    r.session->submit_program(*r.receive_program, 0);
  });
}

void Replicas::send_parameters(std::span<const Array> values, int first) {
  // Every receiving tower's copies run at once; then each is waited for.
  for (int k = first; k < size(); ++k) receive_parameters(k, values);
  for (int k = first; k < size(); ++k) {
    Replica& r = at(k);
    on_tower(k, [&] { r.session->wait_program(*r.receive_program, r.none); });
  }
}

std::span<const Array> Replicas::read_sent() {
  Replica& r = at(0);
  on_tower(0, [&] {
    if (r.read_program == nullptr) r.read_program = &r.session->program({}, r.sent, {});
    r.read_program->run({}, r.outputs_of_read);
  });
  return r.outputs_of_read;
}

}  // namespace vkp::towers
