#include "train/trainer.h"

#include <fmt/format.h>

#include <filesystem>

#include "callbacks/pictures.h"
#include "callbacks/tensor_callbacks.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/graph/collections.h"
#include "engine/graph/grad_proc.h"
#include "engine/vk/device.h"

namespace vkp::train {

Trainer::Trainer(vk::Device& device, std::uint64_t seed)
    : device_(&device), state_(std::make_unique<SessionState>(device, seed)) {}

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
  if (!hooks_.monitors())
    throw Error(ErrorCode::invalid_argument, "the trainer's monitors exist once train() has started");
  return *hooks_.monitors();
}

std::vector<std::string> Trainer::input_names() const {
  std::vector<std::string> names;
  for (const graph::Tensor& t : step_.inputs()) names.push_back(t.name());
  return names;
}

namespace {

// Whether the step programs compiled from now on are timed (time_kernels); train() turns
// it off before the callbacks' setup_graph, so a run without profilers times nothing
// whatever an earlier run did.
void time_programs(TrainerState& state, DefaultStep& step, bool on) {
  if (state.set_timestamps(on)) step.forget_programs();
}

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

void Trainer::time_kernels() { time_programs(*state_, step_, true); }

void Trainer::setup(TrainOptions& o) {
  logger_dir_ = o.logger_dir;
  make_log_directory(logger_dir_);
  loop_.starting_epoch = o.starting_epoch;
  loop_.max_epoch = o.max_epoch;
  loop_.epoch_num = loop_.starting_epoch - 1;  // what before_train sees: the epochs already done
  loop_.local_step = 0;
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
  loop_.steps_per_epoch = o.steps_per_epoch;
  if (loop_.steps_per_epoch <= 0) {
    if (!source || !source->size())
      throw Error(ErrorCode::invalid_argument, "steps_per_epoch is not set and the input's size is unknown");
    loop_.steps_per_epoch = static_cast<std::int64_t>(*source->size());
  }
  loop_.clock->set(o.starting_global_step >= 0 ? o.starting_global_step
                                               : (loop_.starting_epoch - 1) * loop_.steps_per_epoch);
  if (o.starting_local_step < 0 || o.starting_local_step > loop_.steps_per_epoch)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("starting_local_step is {}: steps of epoch {} already trained, 0 .. steps_per_epoch ({}); "
                            "was the checkpoint made with more steps an epoch than this run has?",
                            o.starting_local_step, loop_.starting_epoch, loop_.steps_per_epoch));
  loop_.starting_local_step = o.starting_local_step;
  hooks_.set(o.callbacks, std::make_shared<callbacks::Monitors>(o.monitors), is_chief(), stop_agreement());
  hooks_.monitors()->setup_graph(*this);
  time_programs(*state_, step_, false);  // a profiler's setup_graph turns it on
  hooks_.setup_graph(*this);
  // The trainer owns the global step; its sessions read it (a restore, which sets a
  // session's own counter, runs before they follow again).
  state_->follow_global_step(nullptr);
  if (o.session_init) o.session_init->init(session());
  state_->follow_global_step(loop_.clock);
  // A resumed run must see the batches the uninterrupted one would have.
  if (source && o.resume_input && o.starting_global_step > 0)
    source->replay_consumed(o.starting_global_step * batches_per_step(), global_step());
}

void Trainer::train(TrainOptions options) {
  std::exception_ptr failure;
  try {
    setup(options);
    hooks_.each([](callbacks::Callback& cb) { cb.before_train(); });
    hooks_.check_stop();
    run_epochs();
  } catch (const callbacks::StopTraining& stop) {
    log_info("training stops: {}", stop.what());
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure) {  // after an error the state may be half-updated: leave the last synced one
    try {
      state_->sync();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // Training is over: the sessions count on their own again, from the trainer's step.
  state_->follow_global_step(nullptr);
  // after_train runs for every callback whatever happened; the first error wins.
  hooks_.after_train(failure);
  step_.wait_pending();
  if (failure) std::rethrow_exception(failure);
}

void NoOpTrainer::run_step() {
  // The step's fetches: the epoch's with its last step too (ParamHistograms, ...).
  if (!hooks().step_fetches().empty()) run_hooked({}, {}, {});
}

void Trainer::run_epochs() {
  for (loop_.epoch_num = loop_.starting_epoch; loop_.epoch_num <= loop_.max_epoch; ++loop_.epoch_num) {
    hooks_.each([](callbacks::Callback& cb) { cb.before_epoch(); });
    for (loop_.local_step = loop_.first_local_step(); loop_.local_step < loop_.steps_per_epoch; ++loop_.local_step) {
      hooks_.each([](callbacks::Callback& cb) { cb.before_run(); });
      hooks_.begin_step();
      run_step();
      if (!hooks_.delivered()) {
        if (!hooks_.fetches().empty())
          throw Error(ErrorCode::invalid_argument,
                      "run_step did not run the callbacks' fetches; run the step with "
                      "run_hooked()");
        hooks_.deliver({});
      }
      hooks_.each([](callbacks::Callback& cb) { cb.trigger_step(); });
      hooks_.check_stop();
    }
    state_->sync();
    report_epoch();
    hooks_.each([](callbacks::Callback& cb) { cb.after_epoch(); });
    hooks_.each([](callbacks::Callback& cb) { cb.trigger_epoch(); });
    hooks_.check_stop();
  }
  --loop_.epoch_num;
}

void Trainer::run_step() {
  if (!step_.source())
    throw Error(ErrorCode::invalid_argument, "the trainer has no step: call set_step or override run_step");
  const bool next_is_last = hooks_.has_epoch_fetches() && loop_.local_step + 2 == loop_.steps_per_epoch;
  const std::span<const Array> values =
      step_.run(session(), hooks_.step_fetches(), {hooks_.fetches_epoch(), next_is_last});
  set_step_result({step_.samples(), step_.last_cost()});
  hooks_.deliver(values);
}

}  // namespace vkp::train
