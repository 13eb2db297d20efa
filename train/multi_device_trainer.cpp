#include "train/multi_device_trainer.h"

#include "core/error.h"
#include "core/log.h"
#include "engine/graph/ops.h"
#include "towers/host_master.h"

namespace vkp::train {

vk::DeviceOptions PerDeviceOptions::for_device(std::size_t i, std::size_t count) const {
  if (each.empty()) return {};
  if (each.size() == 1) return each[0];
  if (each.size() != count)
    throw Error(ErrorCode::invalid_argument, "device options: " + std::to_string(each.size()) + " sets for " +
                                                 std::to_string(count) + " devices; give one for all or one each");
  return each.at(i);
}

detail::OpenedDevices::OpenedDevices(const vk::Instance& instance, const std::vector<int>& indices,
                                     const PerDeviceOptions& options) {
  if (indices.empty()) throw Error(ErrorCode::invalid_argument, "a multi-device trainer needs at least one device");
  for (std::size_t i = 0; i < indices.size(); ++i) {
    opened.push_back(std::make_unique<vk::Device>(instance, indices[i], options.for_device(i, indices.size())));
    const vk::Device& d = *opened.back();
    log_info("tower {} on {}: {} memory, limits {}", i, d.label(), vk::to_string(d.memory().mode()),
             d.limits_profile().empty() ? "of the driver" : "profile " + d.limits_profile());
  }
}

std::vector<vk::Device*> detail::OpenedDevices::device_list() const {
  std::vector<vk::Device*> all;
  for (const auto& d : opened) all.push_back(d.get());
  return all;
}

MultiDeviceTrainer::MultiDeviceTrainer(const vk::Instance& instance, const std::vector<int>& device_indices,
                                       towers::TowerOptions tower_options, PerDeviceOptions device_options)
    : OpenedDevices(instance, device_indices, device_options),
      TowerTrainer(*opened.front(), tower_options.seed),
      options_(std::move(tower_options)) {
  towers::check_tower_options(options_);
  const std::vector<vk::Device*> all = device_list();
  auto state = std::make_unique<TowersState>(std::vector<const vk::Device*>(all.begin(), all.end()), is_async());
  towers_ = state.get();
  set_state(std::move(state));
}

MultiDeviceTrainer::~MultiDeviceTrainer() = default;

void MultiDeviceTrainer::setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                                     OptimizerFn optimizer) {
  specs_ = inputs;
  tower_ = std::move(tower);
  // StagingInput: every tower double-buffers its inputs, as the one-device step does.
  options_.staging_buffers = source ? source->staging_buffers() : 1;
  options_.time_towers = splitter_.by_throughput();
  splitter_.start(tower_count());
  staged_batches_.clear();
  towers_->set_towers(towers::make_towers(
      device_list(), [this](graph::Graph& g, int k) { return build_tower(g, k); }, optimizer, options_));
  const towers::Tower& first = towers().tower(0);
  set_step(first.inputs, std::move(source), {}, first.cost);
}

towers::Tower MultiDeviceTrainer::build_tower(graph::Graph& g, int) {
  towers::Tower t;
  for (const InputSpec& s : specs_) t.inputs.push_back(graph::placeholder(g, s.name, s.type));
  t.cost = tower_(t.inputs);
  return t;
}

double MultiDeviceTrainer::step_towers(std::span<const std::vector<Array>> batches,
                                       std::span<const std::vector<Array>> next, std::vector<Array>& fetched) {
  return towers().step({.batches = batches,
                        .global_step = static_cast<std::uint64_t>(global_step()),
                        .fetches = &hooks().step_fetches(),
                        .fetched = &fetched,
                        .next = next});
}

towers::SyncTowers& MultiDeviceTrainer::sync_towers() {
  if (is_async()) throw Error(ErrorCode::invalid_argument, "these towers are asynchronous");
  return static_cast<towers::SyncTowers&>(towers());
}

towers::AsyncTowers& MultiDeviceTrainer::async_towers() {
  if (!is_async()) throw Error(ErrorCode::invalid_argument, "these towers are synchronous");
  return static_cast<towers::AsyncTowers&>(towers());
}

std::vector<callbacks::PredictFn> MultiDeviceTrainer::tower_predictors(const std::vector<std::string>& input_names,
                                                                       const std::vector<std::string>& output_names) {
  towers::Towers& t = towers();
  towers_->sync();
  std::vector<callbacks::PredictFn> out;
  for (int k = 0; k < t.size(); ++k)
    out.push_back(draining(predictor_in(t.graph(k), t.session(k), input_names, output_names)));
  // After the inference towers exist, so that their variables get the values too.
  t.broadcast_variables(0);
  return out;
}

callbacks::PredictFn MultiDeviceTrainer::draining(callbacks::PredictFn fn) {
  if (!is_async()) return fn;
  return [this, fn = std::move(fn)](const std::vector<Array>& inputs) {
    towers_->drain();
    return fn(inputs);
  };
}

callbacks::PredictFn MultiDeviceTrainer::predictor(const std::vector<std::string>& input_names,
                                                   const std::vector<std::string>& output_names) {
  towers_->sync();  // before the inference tower is built into tower 0's graph
  return draining(TowerTrainer::predictor(input_names, output_names));
}

void MultiDeviceTrainer::run_step() {
  if (is_async()) return run_async_step();
  towers::SyncTowers& t = sync_towers();
  if (loop().first_step_of_epoch()) {
    t.broadcast_variables(0);
    if (towers::HostMaster* master = t.host_master()) {
      master->load();
      towers_->set_slots_behind(false);
    }
  }
  if (loop().first_step_of_epoch() && splitter_.begin_epoch(monitors(), staged_batches_)) towers().discard_staged();
  // With StagingInput the batches of this step were read (and written to the devices)
  // during the last one, and the next step's are read and written during this one.
  const bool staging = options_.staging_buffers > 1;
  if (!staging || staged_batches_.empty())
    splitter_.read(input_source(), batches_);
  else
    std::swap(batches_, staged_batches_);
  if (staging) splitter_.read(input_source(), staged_batches_);
  const std::int64_t samples = splitter_.note_rows(batches_);
  const double cost = step_towers(batches_, staging ? std::span<const std::vector<Array>>(staged_batches_)
                                                    : std::span<const std::vector<Array>>(),
                                  fetched_);
  // An epoch's first step may compile programs for new shapes: the rates leave it out.
  if (options_.time_towers && !loop().first_step_of_epoch())
    for (int k = 0; k < t.size(); ++k) splitter_.add_time(k, t.tower_seconds()[static_cast<std::size_t>(k)]);
  towers_->set_slots_behind(t.host_master() != nullptr);
  set_step_result({samples, cost});
  hooks().deliver(fetched_);
}

void MultiDeviceTrainer::run_async_step() {
  towers::AsyncTowers& t = async_towers();
  if (loop().first_step_of_epoch()) {
    // The last epoch ended drained; what a callback or a restore wrote into tower 0 since
    // reaches every tower and the master, whose updates go on from the global step.
    t.drain();
    t.broadcast_variables(0);
    t.host_master()->load();  // async towers always keep one
    t.count_updates_from(static_cast<std::uint64_t>(global_step()) * static_cast<std::uint64_t>(tower_count()));
    // Async towers fetch the epoch fetches with every update (their fetch list is fixed
    // while they run) and deliver them with the epoch's last step.
    t.set_async_fetches(hooks().fetches_with_epoch());
  }
  std::int64_t samples = 0;
  for (int k = 0; k < t.size(); ++k) {
    std::vector<Array> batch = input_source().next_batch();
    samples += batch_rows(batch);
    t.feed(std::move(batch));
  }
  const towers::AsyncProgress progress = t.progress(fetched_);
  set_step_result({samples, progress.cost});
  if (!hooks().fetches_epoch()) fetched_.resize(hooks().fetches().size());
  hooks().deliver(fetched_);
}

void MultiDeviceTrainer::set_batch_split(BatchSplit split) {
  if (towers_->has_towers()) throw Error(ErrorCode::invalid_argument, "set_batch_split: before training starts");
  if (is_async() && split.mode != BatchSplit::Mode::equal)
    throw Error(ErrorCode::unsupported, "async towers share the batches by speed already (a free tower takes the "
                                        "next one); a batch split is for synchronous towers");
  splitter_.set(std::move(split), tower_count());
}

void MultiDeviceTrainer::report_epoch() {
  if (!towers_->has_towers()) return;
  TowerTrainer::report_epoch();  // the loss scale and skipped steps, with mixed precision
  splitter_.end_epoch(monitors(), epoch_num());
  // What the gradient processors' host forms summarised (SummaryGradient).
  for (const graph::GradProcPtr& p : towers().processors())
    for (const graph::ProcessorSummary& s : p->take_summaries()) {
      if (s.histogram)
        monitors().put_histogram(s.name, s.values);
      else
        monitors().put_scalar(s.name, s.values.at(0));
    }
  if (!is_async()) return;
  const towers::AsyncStats s = async_towers().take_async_stats();
  std::string line;
  for (std::size_t k = 0; k < s.updates.size(); ++k) {
    line += fmt::format("{}tower {}: {} updates, staleness mean {:.2f} max {}", k == 0 ? "" : "; ", k, s.updates[k],
                        s.mean_staleness[k], s.max_staleness[k]);
    if (s.held_seconds[k] > 0) line += fmt::format(", held back {:.2f} s", s.held_seconds[k]);
    const std::string prefix = "async/tower" + std::to_string(k) + "/";
    monitors().put_scalar(prefix + "updates", static_cast<double>(s.updates[k]));
    monitors().put_scalar(prefix + "staleness_mean", s.mean_staleness[k]);
    monitors().put_scalar(prefix + "staleness_max", static_cast<double>(s.max_staleness[k]));
  }
  log_info("async epoch {}: {}", epoch_num(), line);
}

AsyncMultiDeviceTrainer::AsyncMultiDeviceTrainer(const vk::Instance& instance, const std::vector<int>& devices,
                                                 std::uint64_t seed, float scale, PerDeviceOptions device_options,
                                                 int max_lead)
    : MultiDeviceTrainer(
          instance, devices,
          {.reduction = towers::Reduction::async, .seed = seed, .async_scale = scale, .async_max_lead = max_lead},
          std::move(device_options)) {}

void MultiDeviceTrainer::enable_mixed_precision(const graph::LossScaleOptions& options) {
  if (towers_->has_towers())
    throw Error(ErrorCode::invalid_argument, "enable_mixed_precision: call it before setup_graph");
  towers::TowerOptions with = options_;
  with.loss_scale = options;
  towers::check_tower_options(with);  // Error(unsupported) where these towers cannot
  loss_scale_ = options;
  options_ = std::move(with);
}

}  // namespace vkp::train
