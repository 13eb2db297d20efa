// Program: running what compile() recorded (feeds in, submissions, fetches out).
#include "engine/graph/program.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/vk/device.h"
#include "engine/vk/recording.h"

namespace vkp::graph {

void Program::write_feeds(std::span<const Array> feeds, int variant) {
  const auto begin = std::chrono::steady_clock::now();
  VKP_CHECK(variant >= 0 && variant < variants(), "program variant out of range");
  VKP_CHECK(variant != pending_, "feeds written into the inputs of a running program variant");
  if (feeds.size() != feeds_.checks().size())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("program takes {} feeds, got {}", feeds_.checks().size(), feeds.size()));
  for (std::size_t i = 0; i < feeds.size(); ++i) write_feed(i, feeds[i], variant);
  feeds_.send(variant);
  host_spans_.note(HostSpan::Kind::feed, variant, begin);
}

void Program::write_feed(std::size_t index, const Array& value, int variant) {
  VKP_CHECK(variant >= 0 && variant < variants(), "program variant out of range");
  VKP_CHECK(variant != pending_, "feeds written into the inputs of a running program variant");
  feeds_.write(index, value, variant);
}

void Program::await_device() {
  if (pending_ >= 0 && next_exchange_ < exchange_count())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the run is stopped at exchange {} of {}: resume it, or wait() for it, first",
                            next_exchange_, exchange_count()));
  if (pending_ >= 0) recordings_[static_cast<std::size_t>(pending_)].back()->wait();
}

void Program::submit_part(int part, std::uint64_t after_feeds) {
  const std::vector<vk::Recording*>& order = in_order_[static_cast<std::size_t>(pending_)];
  const std::size_t first =
      part == 0 ? 0 : static_cast<std::size_t>(exchanges_[static_cast<std::size_t>(part - 1)].recording) + 1;
  const std::size_t last = part < exchange_count()
                               ? static_cast<std::size_t>(exchanges_[static_cast<std::size_t>(part)].recording)
                               : order.size() - 1;
  if (order.size() == 1)
    order[0]->submit(after_feeds);
  else
    vk::Recording::submit_in_order(std::span(order).subspan(first, last - first + 1), after_feeds);
  if (last + 1 == order.size()) feeds_.ran(pending_, order.back()->last_submission());
}

void Program::check_exchange(int e, const char* call) const {
  if (pending_ < 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}({}) without a submitted run", call, e));
  if (e != next_exchange_ || e >= exchange_count())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}({}): the run is at exchange {} of {}", call, e, next_exchange_, exchange_count()));
}

void Program::wait_exchange(int e, Array& value) {
  const auto begin = std::chrono::steady_clock::now();
  check_exchange(e, "wait_exchange");
  const Exchange& x = exchanges_[static_cast<std::size_t>(e)];
  recordings_[static_cast<std::size_t>(pending_)][static_cast<std::size_t>(x.recording)]->wait();
  exchange_in_->invalidate();
  if (value.dtype() != x.type.dtype || value.shape().dims() != x.type.dims) value = Array(x.type.dtype, x.type.shape());
  std::memcpy(value.bytes().data(), x.input, value.nbytes());
  host_spans_.note(HostSpan::Kind::wait, pending_, begin);
}

void Program::resume_exchange(int e, const Array& value) {
  const auto begin = std::chrono::steady_clock::now();
  check_exchange(e, "resume_exchange");
  const Exchange& x = exchanges_[static_cast<std::size_t>(e)];
  if (value.dtype() != x.type.dtype || value.shape().dims() != x.type.dims)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("exchange {} takes {}, got {}", e, to_string(x.type), describe(value)));
  std::memcpy(x.value, value.bytes().data(), value.nbytes());
  submit_part(++next_exchange_, 0);  // the host has waited for the part before
  host_spans_.note(HostSpan::Kind::submit, pending_, begin);
}

void Program::submit(int variant) {
  const auto begin = std::chrono::steady_clock::now();
  VKP_CHECK(variant >= 0 && variant < variants(), "program variant out of range");
  await_device();
  const std::uint64_t after_feeds = feeds_.ready_for_run(variant);
  pending_ = variant;
  next_exchange_ = 0;
  submit_part(0, after_feeds);
  std::fill(delivered_.begin(), delivered_.end(), 0);
  last_variant_ = variant;
  host_spans_.note(HostSpan::Kind::submit, variant, begin);
}

void Program::copy_fetch(std::size_t i, std::vector<Array>& outputs) const {
  const TensorType& t = fetch_types_[i];
  if (outputs[i].dtype() != t.dtype || outputs[i].shape().dims() != t.dims) outputs[i] = Array(t.dtype, t.shape());
  std::memcpy(outputs[i].bytes().data(), fetch_host_[i], outputs[i].nbytes());
}

void Program::wait_segment(int s, std::vector<Array>& outputs) {
  const auto begin = std::chrono::steady_clock::now();
  VKP_CHECK(s >= 0 && s < segment_count(), fmt::format("segment {} of a program of {} segments", s, segment_count()));
  VKP_CHECK(pending_ >= 0, "wait_segment without a submitted run");
  const int recording = segment_recording_[static_cast<std::size_t>(s)];
  if (next_exchange_ < exchange_count() && recording > exchanges_[static_cast<std::size_t>(next_exchange_)].recording)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("wait_segment({}): the run is stopped at exchange {}, before it", s, next_exchange_));
  recordings_[static_cast<std::size_t>(pending_)][static_cast<std::size_t>(recording)]->wait();
  if (readback_) readback_->invalidate();
  outputs.resize(fetch_types_.size());
  for (int i : segments_[static_cast<std::size_t>(s)]) {
    copy_fetch(static_cast<std::size_t>(i), outputs);
    delivered_[static_cast<std::size_t>(i)] = 1;
  }
  host_spans_.note(HostSpan::Kind::wait, pending_, begin);
}

void Program::wait(std::vector<Array>& outputs) {
  const auto begin = std::chrono::steady_clock::now();
  const int variant = pending_;
  if (pending_ >= 0 && next_exchange_ < exchange_count()) {
    Array own;  // a run alone: each exchange's value is its input
    for (int e = next_exchange_; e < exchange_count(); ++e) {
      wait_exchange(e, own);
      resume_exchange(e, own);
    }
  }
  if (pending_ >= 0) recordings_[static_cast<std::size_t>(pending_)].back()->wait();
  pending_ = -1;
  if (readback_) readback_->invalidate();
  outputs.resize(fetch_types_.size());
  for (std::size_t i = 0; i < fetch_types_.size(); ++i)
    if (delivered_.empty() || !delivered_[i]) copy_fetch(i, outputs);
  std::fill(delivered_.begin(), delivered_.end(), 0);
  if (variant >= 0) host_spans_.note(HostSpan::Kind::wait, variant, begin);
}

bool Program::finished() const {
  if (pending_ >= 0 && next_exchange_ < exchange_count()) return false;
  return pending_ < 0 || recordings_[static_cast<std::size_t>(pending_)].back()->done();
}

std::size_t Program::dispatch_count() const {
  std::size_t n = 0;
  for (const auto& r : recordings_[0]) n += r->times().dispatch_count();
  return n;
}

std::vector<vk::KernelTime> Program::kernel_times() const {
  std::vector<vk::KernelTime> times;
  const auto& recordings = recordings_[static_cast<std::size_t>(last_variant_)];
  // Segments: one queue, one clock (each read of a query pool costs a driver call: only then).
  const std::uint64_t start = recordings.size() > 1 ? recordings[0]->times().start_ticks() : 0;
  const double period = recordings.empty() ? 0 : recordings[0]->device().limits().timestamp_period_ns;
  for (const auto& r : recordings) {
    std::vector<vk::KernelTime> part = r->times().kernel_times();
    // In ticks first: a clock's absolute count can be too large for a double's ns.
    const double offset = r == recordings[0] ? 0 : static_cast<double>(r->times().start_ticks() - start) * period;
    for (vk::KernelTime& t : part) t.begin_ns += offset;
    times.insert(times.end(), part.begin(), part.end());
  }
  return times;
}

void Program::run(std::span<const Array> feeds, std::vector<Array>& outputs) {
  write_feeds(feeds, 0);
  submit(0);
  wait(outputs);
}

}  // namespace vkp::graph
