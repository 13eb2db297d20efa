// MPI across processes and machines (docs/design.md section 5): the session that owns MPI
// for the process, the cross-process gradient reduction that SyncTowers::set_cross_reduce
// takes, and the broadcast of variables from the chief. Only MPI's C API is used, and
// only in mpi_reduce.cpp: this header does not include <mpi.h>.
//
// No collective waits forever. Each one is started non-blocking and polled; when it has
// not completed after timeout() seconds it throws Error naming the collective, and the
// session, now unusable, ends the whole job with MPI_Abort instead of MPI_Finalize. Why:
// OpenMPI 4.1 has no fault tolerance without ULFM. Under a plain mpirun a rank that dies
// gets the whole job killed within a second or two, but a rank that hangs, or dies where
// the launcher keeps the others running (mpirun --enable-recovery, some schedulers), leaves
// its peers blocked in the collective with no error even under MPI_ERRORS_RETURN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/array.h"

#ifndef VKPACK_HAVE_MPI
#error "vkpack was built without MPI (VKPACK_WITH_MPI=OFF): there is no distributed training"
#endif

namespace vkp::towers {

// Seconds a collective may wait when VKPACK_MPI_TIMEOUT is not set. It must exceed the
// longest time one rank can spend away from the others: an epoch's chief-only work
// (checkpoints) and inference run between two steps.
inline constexpr double kDefaultMpiTimeoutSeconds = 300;

class MpiSession {
 public:
  // Initialises MPI (MPI_THREAD_FUNNELED: only the thread that makes collectives calls
  // MPI) unless it is already initialised, and makes errors on MPI_COMM_WORLD return
  // instead of aborting. timeout_seconds < 0: VKPACK_MPI_TIMEOUT (seconds; 0 waits
  // forever), read here and nowhere else, or kDefaultMpiTimeoutSeconds.
  explicit MpiSession(double timeout_seconds = -1);
  // MPI_Finalize when this session initialised MPI; MPI_Abort instead after a failed
  // collective or while an exception unwinds, since finalizing would wait for the
  // ranks that failed.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  double timeout() const { return timeout_; }
  bool failed() const { return failed_; }

  // Ends every process of the job now (MPI_Abort), for a program that caught a training
  // error: returning normally would finalize and wait for peers still in a collective.
  [[noreturn]] void abort(int exit_code);

  // Collectives over MPI_COMM_WORLD, in place; every rank calls them in the same order
  // with the same counts. `what` names the work in errors ("gradients of step 12").
  // Sums `floats` and `doubles` element-wise over all ranks, both in flight together.
  void allreduce_sum(std::span<float> floats, std::span<double> doubles, std::string_view what);
  // Element-wise maximum.
  void allreduce_max(std::span<std::int64_t> values, std::string_view what);
  // Every buffer from `root` into the others.
  void broadcast(std::span<const std::span<std::byte>> buffers, int root, std::string_view what);

 private:
  struct Pending;
  // Waits for every request in `pending`, polling until timeout().
  void wait(Pending& pending, std::string_view what);
  void check(int code, const char* call, std::string_view what);

  bool initialised_here_ = false;
  bool failed_ = false;
  int uncaught_ = 0;  // std::uncaught_exceptions() at construction
  int rank_ = 0, size_ = 1;
  double timeout_ = kDefaultMpiTimeoutSeconds;
};

// The cross-process CrossReduce of Towers: on entry `gradients` (f32, one per trainable
// variable), `samples` and `cost` are this process's average gradients, sample count and
// mean cost; on return they are the same quantities over all processes, each process
// weighted by its sample count exactly as Towers weights unequal towers:
//   g = sum_r samples_r * g_r / sum_r samples_r,  cost likewise.
// Every gradient goes into one host buffer (`bucket`, kept by the caller so that a steady
// loop allocates nothing), scaled on the way in, for one MPI_Allreduce per step: the
// gradients are all ready at once after the towers' backward, so smaller buckets would
// not overlap anything and would pay the latency of a collective per bucket.
void allreduce_gradients(MpiSession& mpi, std::span<Array> gradients, double& samples, double& cost,
                         std::vector<float>& bucket, std::string_view what = "gradients");

// Every array from `root` into the others' arrays, which must have the same dtypes and
// shapes (any dtype: the bytes are sent).
void broadcast_arrays(MpiSession& mpi, std::span<Array> arrays, int root = 0, std::string_view what = "variables");

}  // namespace vkp::towers
