// DistributedTrainer: data-parallel training over processes and machines under mpirun
// (tensorpack's HorovodTrainer, docs/design.md section 5). Each process trains towers on its
// own devices like SyncMultiDeviceTrainerReplicated, reduces them on the host, then
// reduces across processes with MPI_Allreduce, every process weighted by its samples; all
// apply the same update. Going distributed is again a one-line change:
//
//   vkp::towers::MpiSession mpi;   // first thing in main: MPI_Init ... MPI_Finalize
//   vkp::train::DistributedTrainer trainer(mpi, instance, {0});
//
// and `mpirun -np N program`. Rank r's tower k is seeded seed + r * K + k, so N ranks of
// K towers reproduce one process of N * K towers fed the same batches in that order.
//
// What every rank must share: the same TrainConfig (model, steps per epoch, epochs,
// starting epoch, the same callbacks), and its own data (a different shuffle or shard).
// Checked at the first step: the step counters, the epochs and the variables; a mismatch
// is an Error on every rank, not a hang.
//
// Rank 0 is the chief: chief-only callbacks (ModelSaver, ProgressBar, ...) run only
// there, and the other ranks report an empty logger_dir(), so their monitors
// (stats.json, TensorBoard events) write nothing even with the same config.logger_dir.
// Create the LoggerDir (log.log, the backup or removal of an old directory) on rank 0
// only. Hyperparameter setters are not chief-only: every rank's copy sets the same
// values at the same steps. Variables (optimizer slots and BatchNorm averages too) and
// hyperparameters are broadcast from rank 0 before the first step and at every epoch
// start, so what a restore or a callback wrote there reaches every rank; a resumed run
// must restore on rank 0 (the others receive its state) and start every rank at the
// same epoch and step.
// Callbacks see rank 0's tower 0 (summaries are rank 0's); samples_per_step() counts
// every rank, last_cost() is the mean over every rank.
//
// Mixed precision (enable_mixed_precision, TrainConfig::mixed_precision) works with
// replicated local towers: the gradients of scale * cost are averaged over the ranks
// before any update sees them, so every rank skips the same steps and its loss scale
// moves alike.
//
// A StopTraining on any rank (a chief-only callback's, say) stops every rank after the
// same step: the ranks agree on it with one small collective after every step and epoch.
//
// Faults: a collective that does not complete within the session's timeout
// (VKPACK_MPI_TIMEOUT) throws Error; the program should then end the job
// (MpiSession::abort, or let the session's destructor do it), see mpi_reduce.h.
#pragma once

#ifndef VKPACK_HAVE_MPI
#error "vkpack was built without MPI (VKPACK_WITH_MPI=OFF): there is no DistributedTrainer"
#endif

#include <vector>

#include "towers/mpi_reduce.h"
#include "train/multi_device_trainer.h"

namespace vkp::train {

class DistributedTrainer : public MultiDeviceTrainer {
 public:
  // `devices`: this process's towers (`vkpack devices` indices). `local`: how the local
  // towers share the update, replicated or parameter_server (async has no average to
  // reduce across processes).
  DistributedTrainer(towers::MpiSession& mpi, const vk::Instance& instance, const std::vector<int>& devices,
                     std::uint64_t seed = 0, PerDeviceOptions device_options = {},
                     towers::Reduction local = towers::Reduction::replicated);

  void setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                   OptimizerFn optimizer) override;
  void run_step() override;
  // Every rank votes at the end of each step whether any was asked to stop.
  StopAgreement stop_agreement() override {
    return [this](bool requested) { return agree_to_stop(requested); };
  }

  bool is_chief() const override { return mpi_.rank() == 0; }
  const std::string& logger_dir() const override;
  std::int64_t samples_per_step() const override { return global_samples_; }
  int rank() const { return mpi_.rank(); }
  int world_size() const { return mpi_.size(); }

 private:
  std::string agree_to_stop(bool requested);
  // Throws on every rank when the ranks disagree on what they are about to run.
  void check_agreement();
  // Every variable and hyperparameter of tower 0 from rank 0's into every rank's.
  void broadcast_from_chief();

  towers::MpiSession& mpi_;
  std::vector<float> bucket_;          // the gradients of every variable, concatenated
  std::string what_;                   // names this step's reduction in errors
  std::vector<Array> values_;          // variables, then hyperparameters, in a broadcast
  std::int64_t global_samples_ = 0;
  bool agreed_ = false;
  std::string no_dir_;                 // what non-chief ranks report as logger_dir()
};

}  // namespace vkp::train
