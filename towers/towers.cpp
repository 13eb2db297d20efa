#include "towers/towers.h"

#include "core/error.h"
#include "core/log.h"
#include "towers/async_towers.h"
#include "towers/host_master.h"
#include "towers/internal/replicas.h"
#include "towers/sync_towers.h"

namespace vkp::towers {

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

void check_tower_options(const TowerOptions& o) {
  const std::string reduction = to_string(o.reduction);
  const auto refuse = [&](const std::string& what) {
    throw Error(ErrorCode::unsupported, "Towers: " + what + ", not with " + reduction + " reduction");
  };
  const bool async = o.reduction == Reduction::async;
  if (o.bucket_bytes > 0 && async)
    refuse("bucket_bytes needs synchronous towers (async applies each tower's gradients whole, without averaging)");
  if (o.master == Master::device && o.reduction != Reduction::parameter_server)
    refuse("Master::device places a parameter server's master");
  if (!async && (o.async_scale != 1.0f || o.async_max_lead >= 0))
    refuse("async_scale and async_max_lead are for async towers");
  if (async && o.time_towers) refuse("time_towers times synchronous steps");
  if (o.staging_buffers < 1 || o.staging_buffers > 2)
    throw Error(ErrorCode::invalid_argument,
                "Towers: staging_buffers is " + std::to_string(o.staging_buffers) + "; use 1 or 2");
}

Towers::Towers(Reduction own, std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
               TowerOptions options)
    : options_(std::move(options)) {
  if (options_.reduction != own)
    throw Error(ErrorCode::invalid_argument, std::string("Towers: these towers use ") + to_string(own) +
                                                 " reduction, the options ask for " + to_string(options_.reduction) +
                                                 " (make_towers picks the class from the options)");
  check_tower_options(options_);
  ReplicaPlan plan{.seed = options_.seed,
                   .every_tower_applies = own == Reduction::replicated,
                   .receives_parameters = own != Reduction::replicated,
                   .loss_scale = options_.loss_scale,
                   .staging_buffers = options_.staging_buffers,
                   .bucket_bytes = options_.bucket_bytes,
                   .fetch_scale = options_.loss_scale && own != Reduction::async};
  replicas_ = std::make_unique<Replicas>(std::move(devices), build, optimizer, std::move(plan));
  if (objective_count() > 1 && (own == Reduction::async || options_.bucket_bytes > 0))
    throw Error(ErrorCode::unsupported,
                "Towers: towers of several objectives (a GAN's) need synchronous towers without bucket_bytes");
  broadcast_variables(0);
  const bool on_host =
      own == Reduction::async || (own == Reduction::parameter_server && options_.master == Master::host);
  if (on_host) master_ = std::make_unique<HostMaster>(*replicas_, options_.loss_scale);
  log_info("{} towers, {} gradient reduction{}, {} trainable variables", size(), to_string(own),
           on_host ? " (master on the host)" : "", trainable_names().size());
}

Towers::~Towers() = default;

int Towers::size() const { return replicas_->size(); }
graph::Graph& Towers::graph(int k) { return replicas_->graph(k); }
graph::Session& Towers::session(int k) { return replicas_->session(k); }
const Tower& Towers::tower(int k) const { return replicas_->tower(k); }
const std::vector<std::string>& Towers::trainable_names() const { return replicas_->layout().names(); }
int Towers::objective_count() const { return replicas_->layout().objective_count(); }
const std::vector<int>& Towers::objective_variables(int o) const { return replicas_->layout().objective_variables(o); }
const std::vector<graph::GradProcPtr>& Towers::processors() const { return replicas_->processors(); }
void Towers::broadcast_variables(int from) { replicas_->broadcast_variables(from); }
void Towers::discard_staged() { replicas_->discard_staged(); }
void Towers::set_timestamps(bool on) { replicas_->set_timestamps(on); }
void Towers::follow_global_step(std::shared_ptr<const graph::StepClock> clock) {
  replicas_->follow_global_step(std::move(clock));
}
float Towers::hyperparameter(const std::string& name) { return session(0).hyperparameter(name); }
void Towers::set_hyperparameter(const std::string& name, float value) { session(0).set_hyperparameter(name, value); }

HostMaster& Towers::master(const char* what) const {
  if (!master_)
    throw Error(ErrorCode::invalid_argument,
                std::string("Towers::") + what + ": these towers keep no host master (" +
                    to_string(options_.reduction) + " reduction" +
                    (options_.reduction == Reduction::parameter_server ? ", master on the device)" : ")"));
  return *master_;
}

namespace {

void check_batch_count(int towers, std::size_t batches) {
  if (static_cast<int>(batches) != towers)
    throw Error(ErrorCode::invalid_argument,
                "Towers::step: " + std::to_string(towers) + " towers, " + std::to_string(batches) + " batches");
}

}  // namespace

double Towers::step(std::span<const std::vector<Array>> batches, std::uint64_t global_step) {
  return step({.batches = batches, .global_step = global_step});
}

double Towers::step(const StepRequest& r) {
  const int n = size();
  if (!r.objective && objective_count() > 1)
    throw Error(ErrorCode::invalid_argument, "Towers::step: these towers have " + std::to_string(objective_count()) +
                                                 " objectives; name the one to step (StepRequest::objective)");
  const int objective = r.objective.value_or(0);
  if (objective < 0 || objective >= objective_count())
    throw Error(ErrorCode::invalid_argument,
                "Towers::step: objective " + std::to_string(objective) + " of " + std::to_string(objective_count()));
  if (!r.next.empty() &&
      (options_.staging_buffers < 2 || static_cast<int>(r.next.size()) != n || objective_count() > 1))
    throw Error(ErrorCode::invalid_argument,
                "Towers::step: next batches need staging_buffers = 2, one batch per tower and one objective");
  if (r.fetches && !r.fetched)
    throw Error(ErrorCode::invalid_argument, "Towers::step: fetches without a vector to fetch them into");
  check_batch_count(n, r.batches.size());
  static const std::vector<graph::Tensor> kNoFetches;
  std::vector<Array> unused;
  return run_step({objective, r.run_updates, r.batches, r.next, r.global_step, r.fetches ? *r.fetches : kNoFetches,
                   r.fetched ? *r.fetched : unused});
}

std::unique_ptr<Towers> make_towers(std::vector<vk::Device*> devices, const Towers::BuildFn& build,
                                    const Towers::OptimizerFn& optimizer, TowerOptions options) {
  switch (options.reduction) {
    case Reduction::replicated:
      return std::make_unique<ReplicatedTowers>(std::move(devices), build, optimizer, std::move(options));
    case Reduction::parameter_server:
      return std::make_unique<ParameterServerTowers>(std::move(devices), build, optimizer, std::move(options));
    case Reduction::async:
      return std::make_unique<AsyncTowers>(std::move(devices), build, optimizer, std::move(options));
  }
  throw Error(ErrorCode::invalid_argument, "make_towers: unknown reduction");
}

}  // namespace vkp::towers
