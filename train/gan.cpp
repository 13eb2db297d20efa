#include "train/gan.h"

#include "core/error.h"
#include "core/log.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"

namespace vkp::train {
namespace {

// The trainable variables whose names start with scope + "/".
std::vector<graph::Tensor> variables_under(graph::Graph& g, const std::string& scope) {
  std::vector<graph::Tensor> out;
  for (const graph::Tensor& v : g.trainable_variables())
    if (std::get<graph::VariableAttrs>(v.node().attrs).var_name.rfind(scope + "/", 0) == 0) out.push_back(v);
  return out;
}

}  // namespace

graph::Tensor GANModelDesc::set_losses(graph::Tensor g_loss, graph::Tensor d_loss, std::string g_scope,
                                       std::string d_scope) {
  for (const auto& [loss, what] : {std::pair{g_loss, "g_loss"}, std::pair{d_loss, "d_loss"}})
    if (!loss.valid() || loss.type().numel() != 1)
      throw Error(ErrorCode::invalid_argument, std::string("GANModelDesc::set_losses: ") + what + " must be a scalar");
  g_loss_ = identity(g_loss, "g_loss");
  d_loss_ = identity(d_loss, "d_loss");
  g_scope_ = std::move(g_scope);
  d_scope_ = std::move(d_scope);
  return identity(g_loss_ + d_loss_, "total_loss");
}

GANTrainer::GANTrainer(vk::Device& device, std::shared_ptr<GANModelDesc> model, std::uint64_t seed, int d_period,
                       int g_period)
    : TowerTrainer(device, seed), model_(std::move(model)), d_period_(d_period), g_period_(g_period) {
  if (!model_) throw Error(ErrorCode::invalid_argument, "GANTrainer: the model is null");
  if (d_period < 1 || g_period < 1)
    throw Error(ErrorCode::invalid_argument, "GANTrainer: d_period and g_period must be >= 1");
}

void GANTrainer::setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                             OptimizerFn optimizer) {
  specs_ = inputs;
  tower_ = std::move(tower);
  graph::Graph& g = graph();
  placeholders_.clear();
  for (const InputSpec& s : specs_) placeholders_.push_back(graph::placeholder(g, s.name, s.type));
  {
    graph::TowerContext training(g, "", 0, true);
    cost_ = tower_(placeholders_);
  }
  const graph::Tensor g_loss = model_->g_loss(), d_loss = model_->d_loss();
  if (!g_loss.valid() || !d_loss.valid() || &g_loss.graph() != &g)
    throw Error(ErrorCode::invalid_argument, "GANTrainer: the model's build_graph must call set_losses");
  g_vars_ = variables_under(g, model_->g_scope());
  d_vars_ = variables_under(g, model_->d_scope());
  if (g_vars_.empty() || d_vars_.empty())
    throw Error(ErrorCode::invalid_argument, "GANTrainer: no trainable variable under '" +
                                                 (g_vars_.empty() ? model_->g_scope() : model_->d_scope()) +
                                                 "/' (set_losses names the scopes)");
  const graph::Optimizer opt = optimizer(g);
  if (loss_scale_) {
    const graph::LossScaleOptions& o = *loss_scale_;
    d_train_ = graph::minimize_with_loss_scaling(opt, d_loss, d_vars_,
                                                 graph::loss_scale_state(g, o, kDiscriminatorLossScale), o)
                   .train_op;
    g_train_ =
        graph::minimize_with_loss_scaling(opt, g_loss, g_vars_, graph::loss_scale_state(g, o, kGeneratorLossScale), o)
            .train_op;
  } else {
    d_train_ = opt.minimize(d_loss, d_vars_, {});
    g_train_ = opt.minimize(g_loss, g_vars_, {});
  }
  // As the training tower made them (a predictor's tower, built later, adds none to run).
  updates_ = g.collection(graph::kUpdateOps);
  log_info("GAN: {} generator and {} discriminator variables; discriminator every {} step(s), generator every {}",
           g_vars_.size(), d_vars_.size(), d_period_, g_period_);
  set_step(placeholders_, std::move(source), {}, cost_);
}

void GANTrainer::run_step() {
  const std::vector<Array> batch = input_source().next_batch();
  if (batch.size() != placeholders_.size())
    throw Error(ErrorCode::invalid_argument, "GANTrainer: the input gives " + std::to_string(batch.size()) +
                                                 " components, the model takes " + std::to_string(placeholders_.size()));
  graph::Feeds feeds;
  for (std::size_t i = 0; i < batch.size(); ++i) feeds.emplace_back(placeholders_[i], batch[i]);
  const std::int64_t step = global_step();
  const bool train_d = step % d_period_ == 0, train_g = step % g_period_ == 0;
  std::vector<graph::Tensor> d_targets, g_targets;
  if (train_d) d_targets = d_train_;
  if (train_g) g_targets = g_train_;
  // The moving averages (batch norm) update once a step, with the last update that runs.
  if (train_d || train_g) {
    std::vector<graph::Tensor>& last = train_g ? g_targets : d_targets;
    last.insert(last.end(), updates_.begin(), updates_.end());
  }
  if (!d_targets.empty()) session().run(feeds, {}, d_targets);
  // The callbacks' fetches come from this run: after the discriminator's update.
  const std::vector<Array> cost = run_hooked(feeds, {cost_}, g_targets);
  set_step_result({batch_rows(batch), static_cast<double>(cost[0].data<float>()[0])});
}

MultiDeviceGANTrainer::MultiDeviceGANTrainer(const vk::Instance& instance, const std::vector<int>& devices,
                                             std::shared_ptr<GANModelDesc> model, GANTowerOptions options,
                                             PerDeviceOptions device_options)
    : MultiDeviceTrainer(instance, devices, {.reduction = options.reduction, .seed = options.seed},
                         std::move(device_options)),
      model_(std::move(model)),
      d_period_(options.d_period),
      g_period_(options.g_period) {
  if (!model_) throw Error(ErrorCode::invalid_argument, "MultiDeviceGANTrainer: the model is null");
  if (options.reduction == towers::Reduction::async)
    throw Error(ErrorCode::unsupported, "MultiDeviceGANTrainer: async towers train one cost; use replicated or ps");
  if (d_period_ < 1 || g_period_ < 1 || (d_period_ > 1 && g_period_ > 1))
    throw Error(ErrorCode::invalid_argument, "MultiDeviceGANTrainer: d_period and g_period must be >= 1, and one of "
                                             "them 1 (every step trains a net)");
}

towers::Tower MultiDeviceGANTrainer::build_tower(graph::Graph& g, int k) {
  towers::Tower t = MultiDeviceTrainer::build_tower(g, k);
  const graph::Tensor g_loss = model_->g_loss(), d_loss = model_->d_loss();
  if (!g_loss.valid() || !d_loss.valid() || &g_loss.graph() != &g)
    throw Error(ErrorCode::invalid_argument, "MultiDeviceGANTrainer: the model's build_graph must call set_losses");
  std::vector<graph::Tensor> g_vars = variables_under(g, model_->g_scope()), d_vars = variables_under(g, model_->d_scope());
  if (g_vars.empty() || d_vars.empty())
    throw Error(ErrorCode::invalid_argument, "MultiDeviceGANTrainer: no trainable variable under '" +
                                                 (g_vars.empty() ? model_->g_scope() : model_->d_scope()) + "/'");
  t.objectives = {{d_loss, std::move(d_vars), kDiscriminatorLossScale},
                  {g_loss, std::move(g_vars), kGeneratorLossScale}};
  if (k == 0)
    log_info("GAN on towers: discriminator every {} step(s), generator every {}", d_period_, g_period_);
  return t;
}

double MultiDeviceGANTrainer::step_towers(std::span<const std::vector<Array>> batches,
                                          std::span<const std::vector<Array>>, std::vector<Array>& fetched) {
  towers::Towers& t = towers();
  const auto step = static_cast<std::uint64_t>(global_step());
  const bool train_d = step % static_cast<std::uint64_t>(d_period_) == 0;
  const bool train_g = step % static_cast<std::uint64_t>(g_period_) == 0;
  double cost = 0;
  const std::vector<graph::Tensor>& fetches = hooks().step_fetches();
  // The callbacks' fetches come from the step's last objective; the update ops run once.
  if (train_d)
    cost += t.step({.batches = batches,
                    .global_step = step,
                    .fetches = train_g ? nullptr : &fetches,
                    .fetched = train_g ? &none_ : &fetched,
                    .objective = kDiscriminator,
                    .run_updates = !train_g});
  if (train_g)
    cost += t.step(
        {.batches = batches, .global_step = step, .fetches = &fetches, .fetched = &fetched, .objective = kGenerator});
  return cost;
}

}  // namespace vkp::train
