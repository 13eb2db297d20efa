#include "vkpack/towers/towers.h"

#include <chrono>

#include "vkpack/core/error.h"
#include "vkpack/core/log.h"
#include "vkpack/engine/graph/autodiff.h"
#include "vkpack/engine/graph/ops.h"
#include "vkpack/engine/graph/variables.h"
#include "vkpack/engine/vk/device.h"
#include "vkpack/towers/host_average.h"

namespace vkp::towers {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const std::string& var_name(const graph::Tensor& v) { return std::get<graph::VariableAttrs>(v.node().attrs).var_name; }

}  // namespace

Reduction parse_reduction(const std::string& name) {
  if (name == "replicated") return Reduction::replicated;
  if (name == "ps" || name == "parameter_server") return Reduction::parameter_server;
  if (name == "async") return Reduction::async;
  throw Error(ErrorCode::invalid_argument, "unknown gradient reduction '" + name + "'; use replicated, ps or async");
}

const char* to_string(Reduction r) {
  switch (r) {
    case Reduction::replicated: return "replicated";
    case Reduction::parameter_server: return "parameter server";
    case Reduction::async: return "async";
  }
  return "?";
}

struct Towers::Replica {
  std::unique_ptr<graph::Graph> graph;
  std::unique_ptr<graph::Session> session;
  Tower tower;
  std::vector<graph::Tensor> gradients;        // by trainable variable
  std::vector<graph::Tensor> updates;          // update ops (BatchNorm averages)
  std::vector<graph::Tensor> gradient_inputs;  // where applying towers take gradients
  std::vector<graph::Tensor> apply_ops;
  // The compiled gradient program and what it was compiled for.
  graph::Program* program = nullptr;
  std::vector<std::vector<std::int64_t>> fed_dims;
  std::vector<int> fetch_ids;
  graph::Program* apply_program = nullptr;
  std::vector<Array> outputs;  // cost, gradients, then the extra fetches
  std::vector<Array> none;
};

Towers::Towers(std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
               TowerOptions options)
    : options_(options) {
  if (devices.empty()) throw Error(ErrorCode::invalid_argument, "Towers: the device list is empty");
  for (std::size_t k = 0; k < devices.size(); ++k) {
    auto r = std::make_unique<Replica>();
    r->graph = std::make_unique<graph::Graph>(options_.seed + k);
    graph::Graph& g = *r->graph;
    {
      graph::TowerContext context(g, "", static_cast<int>(k), true);
      r->tower = build(g, static_cast<int>(k));
    }
    if (!r->tower.cost.valid() || r->tower.cost.type().numel() != 1)
      throw Error(ErrorCode::invalid_argument, "tower " + std::to_string(k) + ": the tower function must return a scalar cost");
    const std::vector<graph::Tensor> vars = g.trainable_variables();
    const std::vector<graph::Tensor> grads = graph::gradients(r->tower.cost, vars);
    std::vector<std::string> names;
    std::vector<graph::GradAndVar> pairs;
    for (std::size_t i = 0; i < vars.size(); ++i) {
      if (!grads[i].valid()) continue;
      names.push_back(var_name(vars[i]));
      r->gradients.push_back(grads[i]);
      pairs.emplace_back(grads[i], vars[i]);
    }
    if (k == 0) {
      if (names.empty()) throw Error(ErrorCode::invalid_argument, "Towers: the cost depends on no trainable variable");
      names_ = names;
    } else if (names != names_) {
      std::size_t i = 0;
      while (i < names.size() && i < names_.size() && names[i] == names_[i]) ++i;
      throw Error(ErrorCode::invalid_argument,
                  "tower " + std::to_string(k) + " differs from tower 0 in its trainable variables: " +
                      (i < names.size() ? "'" + names[i] + "'" : "nothing") + " where tower 0 has " +
                      (i < names_.size() ? "'" + names_[i] + "'" : "nothing"));
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const graph::Tensor& mine = pairs[i].second;
      if (k > 0 && mine.type() != towers_[0]->graph->find_variable(names_[i]).type())
        throw Error(ErrorCode::invalid_argument, "tower " + std::to_string(k) + ": variable " + names_[i] + " is " +
                                                     graph::to_string(mine.type()) + ", in tower 0 " +
                                                     graph::to_string(towers_[0]->graph->find_variable(names_[i]).type()));
    }
    r->updates = g.collection(graph::kUpdateOps);
    // Applying towers take gradients through placeholders: every tower when replicated,
    // only the master (tower 0) otherwise.
    if (options_.reduction == Reduction::replicated || k == 0) {
      std::vector<graph::GradAndVar> fed;
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        r->gradient_inputs.push_back(graph::placeholder(g, "gradient/" + names_[i], pairs[i].second.type()));
        fed.emplace_back(r->gradient_inputs.back(), pairs[i].second);
      }
      r->apply_ops = optimizer(g).apply_gradients(fed);
    }
    r->session = std::make_unique<graph::Session>(g, *devices[k]);
    towers_.push_back(std::move(r));
  }
  for (const std::string& name : names_) {
    const graph::Tensor v = towers_[0]->graph->find_variable(name);
    averaged_.emplace_back(DType::f32, Shape(v.type().dims));
    if (options_.reduction == Reduction::async) scaled_.emplace_back(DType::f32, Shape(v.type().dims));
  }
  broadcast_variables(0);
  log_info("{} towers, {} gradient reduction, {} trainable variables", size(), to_string(options_.reduction),
           names_.size());
}

Towers::~Towers() = default;

graph::Graph& Towers::graph(int k) { return *towers_.at(static_cast<std::size_t>(k))->graph; }
graph::Session& Towers::session(int k) { return *towers_.at(static_cast<std::size_t>(k))->session; }
const Tower& Towers::tower(int k) const { return towers_.at(static_cast<std::size_t>(k))->tower; }

void Towers::broadcast_variables(int from) {
  graph::Session& source = session(from);
  for (const graph::Tensor& v : graph(from).variables()) {
    const std::string& name = var_name(v);
    const Array value = source.variable(name);
    for (int k = 0; k < size(); ++k)
      if (k != from && graph(k).find_variable(name).valid()) session(k).set_variable(name, value);
  }
}

void Towers::broadcast_hyperparameters() {
  graph::Session& master = session(0);
  for (int k = 1; k < size(); ++k)
    for (const auto& [name, initial] : graph(k).hyperparameters()) {
      const float value = master.hyperparameter(name);
      if (session(k).hyperparameter(name) != value) session(k).set_hyperparameter(name, value);
    }
}

graph::Program& Towers::gradient_program(int k, const std::vector<Array>& batch,
                                         const std::vector<graph::Tensor>& fetches) {
  Replica& r = *towers_[static_cast<std::size_t>(k)];
  if (batch.size() != r.tower.inputs.size())
    throw Error(ErrorCode::invalid_argument, "tower " + std::to_string(k) + " takes " +
                                                 std::to_string(r.tower.inputs.size()) + " inputs, its batch has " +
                                                 std::to_string(batch.size()));
  bool same = r.program != nullptr && r.fetch_ids.size() == fetches.size();
  for (std::size_t i = 0; same && i < batch.size(); ++i) same = batch[i].shape().dims() == r.fed_dims[i];
  for (std::size_t i = 0; same && i < fetches.size(); ++i) same = fetches[i].id() == r.fetch_ids[i];
  if (same) return *r.program;

  std::vector<graph::FeedSpec> specs;
  r.fed_dims.clear();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    specs.push_back({r.tower.inputs[i], {batch[i].dtype(), batch[i].shape().dims()}});
    r.fed_dims.push_back(batch[i].shape().dims());
  }
  std::vector<graph::Tensor> all{r.tower.cost};
  all.insert(all.end(), r.gradients.begin(), r.gradients.end());
  all.insert(all.end(), fetches.begin(), fetches.end());
  r.fetch_ids.clear();
  for (const graph::Tensor& t : fetches) r.fetch_ids.push_back(t.id());
  r.program = &r.session->program(specs, all, r.updates);
  return *r.program;
}

void Towers::apply(int k, std::span<const Array> gradients) {
  Replica& r = *towers_[static_cast<std::size_t>(k)];
  if (r.apply_program == nullptr) {
    std::vector<graph::FeedSpec> specs;
    for (const graph::Tensor& p : r.gradient_inputs) specs.push_back({p, p.type()});
    r.apply_program = &r.session->program(specs, {}, r.apply_ops);
  }
  r.apply_program->write_feeds(gradients, 0);
  r.session->submit_program(*r.apply_program, 0);
}

void Towers::set_cross_reduce(CrossReduce reduce) {
  if (reduce && options_.reduction == Reduction::async)
    throw Error(ErrorCode::unsupported, "async towers cannot be reduced across processes");
  cross_reduce_ = std::move(reduce);
}

void Towers::send_parameters() {
  for (const std::string& name : names_) {
    const Array value = session(0).variable(name);
    for (int k = 1; k < size(); ++k) session(k).set_variable(name, value);
  }
}

double Towers::step(std::span<const std::vector<Array>> batches, std::uint64_t global_step) {
  std::vector<Array> none;
  return step(batches, global_step, {}, none);
}

double Towers::step(std::span<const std::vector<Array>> batches, std::uint64_t global_step,
                    const std::vector<graph::Tensor>& fetches, std::vector<Array>& fetched) {
  const int n = size();
  if (static_cast<int>(batches.size()) != n)
    throw Error(ErrorCode::invalid_argument, "Towers::step: " + std::to_string(n) + " towers, " +
                                                 std::to_string(batches.size()) + " batches");
  if (options_.reduction == Reduction::replicated) broadcast_hyperparameters();

  // Forward and backward everywhere at once: submit every tower, then wait for each.
  auto start = Clock::now();
  std::vector<double> samples(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const std::vector<Array>& batch = batches[static_cast<std::size_t>(k)];
    graph::Program& p = gradient_program(k, batch, k == 0 ? fetches : std::vector<graph::Tensor>{});
    samples[static_cast<std::size_t>(k)] =
        batch.empty() || batch[0].shape().rank() == 0 ? 1.0 : static_cast<double>(batch[0].shape()[0]);
    p.write_feeds(batch, 0);
    session(k).set_global_step(global_step);
    session(k).submit_program(p, 0);
  }
  for (int k = 0; k < n; ++k) {
    Replica& r = *towers_[static_cast<std::size_t>(k)];
    r.session->wait_program(*r.program, r.outputs);
  }
  times_.compute = seconds_since(start);

  double total = 0, cost = 0;
  for (double s : samples) total += s;
  weights_.resize(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    weights_[static_cast<std::size_t>(k)] = static_cast<float>(samples[static_cast<std::size_t>(k)] / total);
    cost += samples[static_cast<std::size_t>(k)] / total * towers_[static_cast<std::size_t>(k)]->outputs[0].data<float>()[0];
  }

  start = Clock::now();
  if (options_.reduction != Reduction::async) {
    inputs_.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < names_.size(); ++i) {
      for (int k = 0; k < n; ++k) inputs_[static_cast<std::size_t>(k)] = towers_[static_cast<std::size_t>(k)]->outputs[1 + i].data<float>().data();
      weighted_sum(inputs_, weights_, averaged_[i].data<float>().data(), averaged_[i].shape().numel());
    }
    if (cross_reduce_) cross_reduce_(averaged_, total, cost);
  }
  times_.reduce = seconds_since(start);

  start = Clock::now();
  switch (options_.reduction) {
    case Reduction::replicated:
      for (int k = 0; k < n; ++k) {
        session(k).set_global_step(global_step);
        apply(k, averaged_);
      }
      for (int k = 0; k < n; ++k) {
        Replica& r = *towers_[static_cast<std::size_t>(k)];
        r.session->wait_program(*r.apply_program, r.none);
      }
      break;
    case Reduction::parameter_server:
      session(0).set_global_step(global_step);
      apply(0, averaged_);
      session(0).wait_program(*towers_[0]->apply_program, towers_[0]->none);
      send_parameters();
      break;
    case Reduction::async: {
      const float scale = options_.async_scale;
      const float one = 1.0f;
      for (int k = 0; k < n; ++k) {
        Replica& r = *towers_[static_cast<std::size_t>(k)];
        for (std::size_t i = 0; i < names_.size(); ++i) {
          const float* g = r.outputs[1 + i].data<float>().data();
          weighted_sum(std::span<const float* const>(&g, 1), std::span<const float>(scale == 1.0f ? &one : &scale, 1),
                       scaled_[i].data<float>().data(), scaled_[i].shape().numel());
        }
        session(0).set_global_step(global_step);
        apply(0, scaled_);
        session(0).wait_program(*towers_[0]->apply_program, towers_[0]->none);
      }
      send_parameters();
      break;
    }
  }
  for (int k = 0; k < n; ++k) session(k).set_global_step(global_step + 1);
  times_.apply = seconds_since(start);

  const Replica& first = *towers_[0];
  fetched.resize(fetches.size());
  for (std::size_t i = 0; i < fetches.size(); ++i) fetched[i] = first.outputs[1 + names_.size() + i];
  return cost;
}

}  // namespace vkp::towers
