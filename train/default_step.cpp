#include "train/default_step.h"

#include <cmath>

namespace vkp::train {

void DefaultStep::set(std::vector<graph::Tensor> inputs, InputSourcePtr source, std::vector<graph::Tensor> targets,
                      graph::Tensor cost) {
  inputs_ = std::move(inputs);
  source_ = std::move(source);
  targets_ = std::move(targets);
  cost_ = cost;
  forget_programs();
}

void DefaultStep::forget_programs() {
  program_ = last_step_program_ = nullptr;
  stager_.reset();
}

graph::Program& DefaultStep::program(graph::Session& session, const std::vector<Array>& batch,
                                     const std::vector<graph::Tensor>& fetches, bool last_of_epoch) {
  graph::Program*& program = last_of_epoch ? last_step_program_ : program_;
  bool same = program != nullptr;
  for (std::size_t i = 0; same && i < batch.size(); ++i)
    same = batch[i].shape().dims() == program->feeds()[i].type.dims;
  if (same) return *program;
  std::vector<graph::FeedSpec> specs;
  samples_ = batch_rows(batch);
  for (std::size_t i = 0; i < batch.size(); ++i)
    specs.push_back({inputs_[i], {batch[i].dtype(), batch[i].shape().dims()}});
  std::vector<graph::Tensor> all = fetches;
  if (cost_.valid()) all.insert(all.begin(), cost_);
  // The epoch's last step runs alone (nothing staged for it): one variant.
  program = &session.program(specs, all, targets_, last_of_epoch ? 1 : source_->staging_buffers());
  if (!last_of_epoch) stager_.reset();
  return *program;
}

std::span<const Array> DefaultStep::run(graph::Session& session, const std::vector<graph::Tensor>& fetches,
                                        Position at) {
  if (source_->staging_buffers() > 1 && !at.last_of_epoch) {
    // This step's inputs were written during the last step; the next step's are read and
    // written while this one runs, unless the next is an epoch's last step with epoch
    // fetches (another program, fed by itself).
    std::vector<Array> batch;
    graph::Program* program = program_;
    if (!stager_.staged()) {
      batch = source_->next_batch();
      program = &this->program(session, batch, fetches, false);
    }
    session.submit_program(*program, stager_.prepare(*program, batch));
    if (!at.next_is_last) stager_.stage(*program, source_->next_batch(), "the training step");
    session.wait_program(*program, outputs_);
  } else {
    const std::vector<Array> batch = source_->next_batch();
    session.run_program(program(session, batch, fetches, at.last_of_epoch), batch, outputs_);
  }
  const std::size_t first = cost_.valid() ? 1 : 0;
  last_cost_ = cost_.valid() ? static_cast<double>(outputs_[0].data<float>()[0]) : std::nan("");
  return std::span<const Array>(outputs_).subspan(first);
}

void DefaultStep::wait_pending() noexcept {
  if (program_ == nullptr) return;
  std::vector<Array> discard;
  try {
    program_->wait(discard);  // a step that failed between submit and wait left its run pending
  } catch (...) {
  }
}

}  // namespace vkp::train
