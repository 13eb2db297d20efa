#include "towers/mpi_reduce.h"

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/env.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::towers {
namespace {

using Clock = std::chrono::steady_clock;

// MPI counts are int: larger buffers go in several collectives.
constexpr std::size_t kMaxCount = std::size_t{1} << 30;

double timeout_from_environment() {
  return env::seconds("VKPACK_MPI_TIMEOUT").value_or(kDefaultMpiTimeoutSeconds);
}

}  // namespace

// Requests of collectives in flight.
struct MpiSession::Pending {
  std::vector<MPI_Request> requests;
  MPI_Request* add() { return &requests.emplace_back(MPI_REQUEST_NULL); }
};

MpiSession::MpiSession(double timeout_seconds) : uncaught_(std::uncaught_exceptions()) {
  timeout_ = timeout_seconds >= 0 ? timeout_seconds : timeout_from_environment();
  int initialised = 0, finalized = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalized);
  if (finalized) throw Error(ErrorCode::invalid_argument, "MpiSession: MPI was already finalized in this process");
  if (!initialised) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw Error(ErrorCode::io, "MPI_Init_thread failed: is this process started by mpirun, and is OpenMPI installed?");
    initialised_here_ = true;
  }
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", "setup");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank", "setup");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size", "setup");
}

MpiSession::~MpiSession() {
  if (failed_ || (initialised_here_ && std::uncaught_exceptions() > uncaught_)) {
    log_error("rank {}: ending the MPI job after a failure (MPI_Abort)", rank_);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (initialised_here_) MPI_Finalize();
}

void MpiSession::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this says so to the compiler
}

void MpiSession::check(int code, const char* call, std::string_view what) {
  if (code == MPI_SUCCESS) return;
  failed_ = true;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(ErrorCode::io, fmt::format("rank {}: {} ({}) failed: {}", rank_, call, what, std::string_view(text, length)));
}

void MpiSession::wait(Pending& pending, std::string_view what) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    int done = 0;
    check(MPI_Testall(static_cast<int>(pending.requests.size()), pending.requests.data(), &done, MPI_STATUSES_IGNORE),
          "MPI_Testall", what);
    if (done) return;
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (timeout_ > 0 && waited > timeout_) {
      failed_ = true;
      throw Error(ErrorCode::io,
                  fmt::format("rank {} of {}: MPI collective on {} did not complete within {:g} s "
                              "(VKPACK_MPI_TIMEOUT): another rank died, hangs, or stopped calling collectives "
                              "(a different number of steps, or a loop of its own that ended on one rank only); the MPI job "
                              "cannot go on",
                              rank_, size_, what, timeout_));
    }
    // After the first millisecond a waiting rank sleeps between polls, leaving the cores
    // to a slower rank on the same machine (lavapipe, data loading) at the cost of up to
    // 0.2 ms latency: OpenMPI progresses non-blocking collectives only inside MPI calls.
    if (waited > 1e-3) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void MpiSession::allreduce_sum(std::span<float> floats, std::span<double> doubles, std::string_view what) {
  if (failed_) throw Error(ErrorCode::io, fmt::format("rank {}: {}: an earlier MPI collective failed", rank_, what));
  Pending pending;
  for (std::size_t at = 0; at < floats.size(); at += kMaxCount)
    check(MPI_Iallreduce(MPI_IN_PLACE, floats.data() + at, static_cast<int>(std::min(kMaxCount, floats.size() - at)),
                         MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, pending.add()),
          "MPI_Iallreduce", what);
  if (!doubles.empty())
    check(MPI_Iallreduce(MPI_IN_PLACE, doubles.data(), static_cast<int>(doubles.size()), MPI_DOUBLE, MPI_SUM,
                         MPI_COMM_WORLD, pending.add()),
          "MPI_Iallreduce", what);
  wait(pending, what);
}

void MpiSession::allreduce_max(std::span<std::int64_t> values, std::string_view what) {
  if (failed_) throw Error(ErrorCode::io, fmt::format("rank {}: {}: an earlier MPI collective failed", rank_, what));
  Pending pending;
  check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_MAX,
                       MPI_COMM_WORLD, pending.add()),
        "MPI_Iallreduce", what);
  wait(pending, what);
}

void MpiSession::broadcast(std::span<const std::span<std::byte>> buffers, int root, std::string_view what) {
  if (failed_) throw Error(ErrorCode::io, fmt::format("rank {}: {}: an earlier MPI collective failed", rank_, what));
  if (root < 0 || root >= size_)
    throw Error(ErrorCode::invalid_argument, fmt::format("broadcast of {} from rank {}: the job has ranks 0 to {}",
                                                         what, root, size_ - 1));
  Pending pending;
  for (const std::span<std::byte> bytes : buffers)
    for (std::size_t at = 0; at < bytes.size(); at += kMaxCount)
      check(MPI_Ibcast(bytes.data() + at, static_cast<int>(std::min(kMaxCount, bytes.size() - at)), MPI_BYTE, root,
                       MPI_COMM_WORLD, pending.add()),
            "MPI_Ibcast", what);
  wait(pending, what);
}

void allreduce_gradients(MpiSession& mpi, std::span<Array> gradients, double& samples, double& cost,
                         std::vector<float>& bucket, std::string_view what) {
  std::size_t total = 0;
  for (const Array& g : gradients) {
    if (g.dtype() != DType::f32)
      throw Error(ErrorCode::invalid_argument, fmt::format("allreduce of {}: gradients must be f32, found {}", what,
                                                           describe(g)));
    total += static_cast<std::size_t>(g.numel());
  }
  bucket.resize(total);
  // Scaling by the sample count on the way in and dividing by the total on the way out
  // is exact when the weights are powers of two, which makes equal power-of-two batches
  // over N processes bit for bit the same as N towers of one process.
  const auto scale = static_cast<float>(samples);
  std::size_t at = 0;
  for (const Array& g : gradients) {
    for (const float v : g.data<float>()) bucket[at++] = scale * v;
  }
  std::array<double, 2> totals{samples, samples * cost};
  mpi.allreduce_sum(bucket, totals, what);
  samples = totals[0];
  cost = totals[1] / totals[0];
  const auto divisor = static_cast<float>(totals[0]);
  at = 0;
  for (Array& g : gradients) {
    for (float& v : g.data<float>()) v = bucket[at++] / divisor;
  }
}

void broadcast_arrays(MpiSession& mpi, std::span<Array> arrays, int root, std::string_view what) {
  std::vector<std::span<std::byte>> buffers;
  buffers.reserve(arrays.size());
  for (Array& a : arrays) buffers.push_back(a.bytes());
  mpi.broadcast(buffers, root, what);
}

}  // namespace vkp::towers
