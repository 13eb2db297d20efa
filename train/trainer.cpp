#include "train/trainer.h"

#include <fmt/format.h>

#include <filesystem>

#include "callbacks/pictures.h"
#include "callbacks/tensor_callbacks.h"
#include "core/crash_point.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/graph/collections.h"
#include "engine/graph/grad_proc.h"
#include "engine/vk/device.h"

namespace vkp::train {

Trainer::Trainer(vk::Device& device, std::uint64_t seed) : seed_(seed), device_(&device) {}

// Made on first use, as the session: a trainer whose towers build graphs of their own
// (MultiDeviceTrainer) never makes this one.
graph::Graph& Trainer::graph() {
  if (!graph_) graph_ = std::make_unique<graph::Graph>(seed_);
  return *graph_;
}

// Made on first use: a trainer whose towers have sessions of their own (MultiDeviceTrainer)
// never makes this one, so it holds no memory on the first device for nothing.
graph::Session& Trainer::session() {
  if (!session_) session_ = std::make_unique<graph::Session>(Trainer::graph(), *device_, session_options_);
  return *session_;
}

Trainer::~Trainer() = default;

void Trainer::set_step(std::vector<graph::Tensor> inputs, InputSourcePtr source, std::vector<graph::Tensor> targets,
                       graph::Tensor cost) {
  step_.set(std::move(inputs), std::move(source), std::move(targets), cost);
}

InputSource& Trainer::input_source() {
  if (!step_.source()) throw Error(ErrorCode::invalid_argument, "the trainer has no input source: call set_step first");
  return *step_.source();
}

callbacks::Monitors& Trainer::monitors() {
  if (!monitors_) throw Error(ErrorCode::invalid_argument, "the trainer's monitors exist once train() has started");
  return *monitors_;
}

callbacks::PredictFn Trainer::predictor(const std::vector<std::string>&, const std::vector<std::string>&) {
  throw Error(ErrorCode::unsupported,
              "this trainer has no tower function to build an inference tower from; use a "
              "TowerTrainer (SimpleTrainer), or build one in the graph and run the session");
}

std::vector<std::string> Trainer::input_names() const {
  std::vector<std::string> names;
  for (const graph::Tensor& t : step_.inputs()) names.push_back(t.name());
  return names;
}

std::uint64_t Trainer::device_memory_bytes() const { return device_->allocated_bytes(); }
std::uint64_t Trainer::peak_device_memory_bytes() const { return device_->peak_allocated_bytes(); }

void Trainer::set_kernel_timing(bool on) {
  if (session_options_.timestamps == on) return;  // the programs held are already so
  session_options_.timestamps = on;
  if (session_) session_->set_timestamps(on);
  step_.forget_programs();
}

std::vector<callbacks::StepProgram> Trainer::step_programs() const {
  std::vector<callbacks::StepProgram> all;
  if (session_)
    for (const graph::Program* p : session_->programs()) all.push_back({p, device_});
  return all;
}

namespace {

// The monitors and savers write there from the first step: made here, as a user who
// names train_log/mine expects, whether or not a LoggerDir (train/logger_dir.h) made it.
void make_log_directory(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::io, "cannot create the log directory " + dir + ": " + ec.message());
}

// CheckGradient's counts are checked, SummaryGradient's gradients summarised and
// print_stat's statistics logged, whichever callbacks the user chose.
std::vector<callbacks::CallbackPtr> collection_callbacks(graph::Graph& g) {
  std::vector<callbacks::CallbackPtr> out;
  if (!g.collection(graph::kGradientChecks).empty()) out.push_back(std::make_shared<callbacks::GradientChecks>());
  if (!g.collection(graph::kGradientSummaries).empty()) out.push_back(std::make_shared<callbacks::GradientSummaries>());
  if (!g.collection(graph::kPrintStats).empty()) out.push_back(std::make_shared<callbacks::PrintStats>());
  return out;
}

}  // namespace

void Trainer::setup(TrainOptions& o) {
  logger_dir_ = o.logger_dir;
  make_log_directory(logger_dir_);
  starting_epoch_ = o.starting_epoch;
  max_epoch_ = o.max_epoch;
  epoch_num_ = starting_epoch_ - 1;  // what before_train sees: the epochs already done
  local_step_ = 0;
  // Programs are compiled again for this run's callbacks' fetches.
  step_.forget_programs();
  InputSource* source = step_.source();
  if (source) {
    std::vector<InputSpec> specs;
    for (const graph::Tensor& t : step_.inputs()) specs.push_back({t.name(), t.type()});
    source->setup(specs);
    for (const callbacks::CallbackPtr& cb : source->callbacks()) o.callbacks.push_back(cb);
  }
  for (callbacks::CallbackPtr& cb : collection_callbacks(graph())) o.callbacks.push_back(std::move(cb));
  steps_per_epoch_ = o.steps_per_epoch;
  if (steps_per_epoch_ <= 0) {
    if (!source || !source->size())
      throw Error(ErrorCode::invalid_argument, "steps_per_epoch is not set and the input's size is unknown");
    steps_per_epoch_ = static_cast<std::int64_t>(*source->size());
  }
  clock_->set(o.starting_global_step >= 0 ? o.starting_global_step : (starting_epoch_ - 1) * steps_per_epoch_);
  if (o.starting_local_step < 0 || o.starting_local_step > steps_per_epoch_)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("starting_local_step is {}: steps of epoch {} already trained, 0 .. steps_per_epoch ({}); "
                            "was the checkpoint made with more steps an epoch than this run has?",
                            o.starting_local_step, starting_epoch_, steps_per_epoch_));
  starting_local_step_ = o.starting_local_step;
  monitors_ = std::make_shared<callbacks::Monitors>(o.monitors);
  callbacks_.clear();
  for (const callbacks::CallbackPtr& cb : o.callbacks)
    if (!cb->chief_only() || is_chief()) callbacks_.push_back(cb);
  callbacks_.push_back(monitors_);  // last, so that its epoch trigger sees every epoch scalar
  monitors_->setup_graph(*this);
  set_kernel_timing(false);  // a profiler's setup_graph turns it on
  hooked_fetches_.clear();
  epoch_fetches_.clear();
  for (const callbacks::CallbackPtr& cb : callbacks_) {
    if (cb != monitors_) cb->setup_graph(*this);
    for (const graph::Tensor& t : cb->fetches()) hooked_fetches_.push_back(t);
    for (const graph::Tensor& t : cb->epoch_fetches()) epoch_fetches_.push_back(t);
  }
  last_step_fetches_ = hooked_fetches_;
  last_step_fetches_.insert(last_step_fetches_.end(), epoch_fetches_.begin(), epoch_fetches_.end());
  // The trainer owns the global step; its sessions read it (a restore, which sets a
  // session's own counter, runs before they follow again).
  share_global_step(nullptr);
  if (o.session_init) o.session_init->init(session());
  share_global_step(clock_);
  // A resumed run must see the batches the uninterrupted one would have.
  if (source && o.resume_input && o.starting_global_step > 0)
    source->replay_consumed(o.starting_global_step * batches_per_step(), global_step());
}

void Trainer::train(TrainOptions options) {
  std::exception_ptr failure;
  try {
    setup(options);
    stop_reason_.clear();
    each_callback([](callbacks::Callback& cb) { cb.before_train(); });
    check_stop();
    run_epochs();
  } catch (const callbacks::StopTraining& stop) {
    log_info("training stops: {}", stop.what());
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure) {  // after an error the state may be half-updated: leave the last synced one
    try {
      sync_state();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // Training is over: the sessions count on their own again, from the trainer's step.
  share_global_step(nullptr);
  run_after_train(failure);
}

void NoOpTrainer::run_step() {
  // step_fetches(): the epoch's fetches with its last step too (ParamHistograms, ...).
  if (!step_fetches().empty()) run_hooked({}, {}, {});
}

void Trainer::run_epochs() {
  for (epoch_num_ = starting_epoch_; epoch_num_ <= max_epoch_; ++epoch_num_) {
    each_callback([](callbacks::Callback& cb) { cb.before_epoch(); });
    for (local_step_ = first_local_step(); local_step_ < steps_per_epoch_; ++local_step_) {
      each_callback([](callbacks::Callback& cb) { cb.before_run(); });
      delivered_ = false;
      run_step();
      if (!delivered_) {
        if (!hooked_fetches_.empty())
          throw Error(ErrorCode::invalid_argument,
                      "run_step did not run the callbacks' fetches; run the step with "
                      "run_hooked()");
        deliver_fetched({});
      }
      each_callback([](callbacks::Callback& cb) { cb.trigger_step(); });
      check_stop();
    }
    sync_state();
    report_epoch();
    each_callback([](callbacks::Callback& cb) { cb.after_epoch(); });
    each_callback([](callbacks::Callback& cb) { cb.trigger_epoch(); });
    check_stop();
  }
  --epoch_num_;
}

template <class Hook>
void Trainer::each_callback(Hook&& hook) {
  for (const callbacks::CallbackPtr& cb : callbacks_) {
    if (!stops_together()) {
      hook(*cb);
      continue;
    }
    try {
      hook(*cb);
    } catch (const callbacks::StopTraining& stop) {  // the others still run: every process runs the same hooks
      if (stop_reason_.empty()) stop_reason_ = stop.what();
    }
  }
}

void Trainer::check_stop() {
  if (!stops_together()) return;
  const bool requested = !stop_reason_.empty();
  std::string reason = agree_to_stop(requested);
  if (!reason.empty()) throw callbacks::StopTraining(requested ? stop_reason_ : std::move(reason));
}

void Trainer::run_after_train(std::exception_ptr failure) {
  // after_train runs for every callback whatever happened; the first error wins.
  for (const callbacks::CallbackPtr& cb : callbacks_) {
    try {
      cb->after_train();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  step_.wait_pending();
  if (failure) std::rethrow_exception(failure);
}

bool Trainer::fetches_epoch_tensors() const { return !epoch_fetches_.empty() && local_step_ == steps_per_epoch_ - 1; }

const std::vector<graph::Tensor>& Trainer::step_fetches() const {
  return fetches_epoch_tensors() ? last_step_fetches_ : hooked_fetches_;
}

void Trainer::deliver_fetched(std::span<const Array> values) {
  // The step has run: after_run sees its global step counted, as in tensorpack, where
  // the step counter is the first callback.
  clock_->advance();
  const bool with_epoch = !epoch_fetches_.empty() && values.size() == last_step_fetches_.size();
  VKP_CHECK(values.size() == hooked_fetches_.size() || with_epoch,
            "deliver_fetched: the step's values match neither the callbacks' fetches nor those with the epoch's");
  std::size_t at = 0;
  each_callback([&](callbacks::Callback& cb) {
    const std::size_t n = cb.fetches().size();
    const std::size_t first = at;
    at += n;
    cb.after_run(values.subspan(first, n));
  });
  if (with_epoch)
    each_callback([&](callbacks::Callback& cb) {
      const std::size_t n = cb.epoch_fetches().size();
      const std::size_t first = at;
      at += n;
      if (n > 0) cb.after_epoch_run(values.subspan(first, n));
    });
  delivered_ = true;
  if (crash_points_armed()) crash_point(fmt::format("step/{}", global_step()));
}

void Trainer::run_step() {
  if (!step_.source())
    throw Error(ErrorCode::invalid_argument, "the trainer has no step: call set_step or override run_step");
  const bool next_is_last = !epoch_fetches_.empty() && local_step_ + 2 == steps_per_epoch_;
  const std::span<const Array> values = step_.run(session(), step_fetches(), {fetches_epoch_tensors(), next_is_last});
  set_step_result(step_.samples(), step_.last_cost());
  deliver_fetched(values);
}

float Trainer::hyperparameter(const std::string& name) { return session().hyperparameter(name); }

void Trainer::set_hyperparameter(const std::string& name, float value) { session().set_hyperparameter(name, value); }

Array Trainer::variable(const std::string& name) {
  sync_state();
  return session().variable(name);
}

std::vector<Array> Trainer::variable_values(const std::vector<std::string>& names) {
  sync_state();
  return session().variable_values(names);
}

void Trainer::run_targets(const std::vector<graph::Tensor>& targets) { session().run({}, {}, targets); }

std::vector<Array> Trainer::run_hooked(const graph::Feeds& feeds, const std::vector<graph::Tensor>& fetches,
                                       const std::vector<graph::Tensor>& targets) {
  if (delivered_) return session().run(feeds, fetches, targets);  // the callbacks had this step's values
  std::vector<graph::Tensor> all = fetches;
  all.insert(all.end(), step_fetches().begin(), step_fetches().end());
  std::vector<Array> values = session().run(feeds, all, targets);
  deliver_fetched(std::span<const Array>(values).subspan(fetches.size()));
  values.resize(fetches.size());
  return values;
}

}  // namespace vkp::train
