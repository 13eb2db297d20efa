// Program: running what compile() recorded (feeds in, submissions, fetches out).
#include "engine/graph/program.h"

#include <fmt/format.h>

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
  if (pending_ >= 0 && exchanges_.stopped())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("the run is stopped at exchange {} of {}: resume it, or wait() for it, first",
                            exchanges_.next(), exchange_count()));
  if (pending_ >= 0) recordings_[static_cast<std::size_t>(pending_)].back()->wait();
}

void Program::submit_part(int part, std::uint64_t after_feeds) {
  const std::vector<vk::Recording*>& order = in_order_[static_cast<std::size_t>(pending_)];
  const std::size_t first = part == 0 ? 0 : static_cast<std::size_t>(exchanges_.point(part - 1).recording) + 1;
  const std::size_t last =
      part < exchange_count() ? static_cast<std::size_t>(exchanges_.point(part).recording) : order.size() - 1;
  if (order.size() == 1)
    order[0]->submit(after_feeds);
  else
    vk::Recording::submit_in_order(std::span(order).subspan(first, last - first + 1), after_feeds);
  if (last + 1 == order.size()) feeds_.ran(pending_, order.back()->last_submission());
}

void Program::wait_exchange(int e, Array& value) {
  const auto begin = std::chrono::steady_clock::now();
  exchanges_.check(e, pending_ >= 0, "wait_exchange");
  recordings_[static_cast<std::size_t>(pending_)][static_cast<std::size_t>(exchanges_.point(e).recording)]->wait();
  exchange_in_->invalidate();
  exchanges_.read(e, value);
  host_spans_.note(HostSpan::Kind::wait, pending_, begin);
}

void Program::resume_exchange(int e, const Array& value) {
  const auto begin = std::chrono::steady_clock::now();
  exchanges_.check(e, pending_ >= 0, "resume_exchange");
  submit_part(exchanges_.write(e, value), 0);  // the host has waited for the part before
  host_spans_.note(HostSpan::Kind::submit, pending_, begin);
}

void Program::submit(int variant) {
  const auto begin = std::chrono::steady_clock::now();
  VKP_CHECK(variant >= 0 && variant < variants(), "program variant out of range");
  await_device();
  const std::uint64_t after_feeds = feeds_.ready_for_run(variant);
  pending_ = variant;
  exchanges_.begin_run();
  submit_part(0, after_feeds);
  fetches_.begin_run();
  last_variant_ = variant;
  host_spans_.note(HostSpan::Kind::submit, variant, begin);
}

void Program::wait_segment(int s, std::vector<Array>& outputs) {
  const auto begin = std::chrono::steady_clock::now();
  VKP_CHECK(s >= 0 && s < segment_count(), fmt::format("segment {} of a program of {} segments", s, segment_count()));
  VKP_CHECK(pending_ >= 0, "wait_segment without a submitted run");
  const int recording = fetches_.bucket_recording(s);
  if (exchanges_.stopped() && recording > exchanges_.point(exchanges_.next()).recording)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("wait_segment({}): the run is stopped at exchange {}, before it", s, exchanges_.next()));
  recordings_[static_cast<std::size_t>(pending_)][static_cast<std::size_t>(recording)]->wait();
  if (readback_) readback_->invalidate();
  fetches_.copy_bucket(s, outputs);
  host_spans_.note(HostSpan::Kind::wait, pending_, begin);
}

void Program::wait(std::vector<Array>& outputs) {
  const auto begin = std::chrono::steady_clock::now();
  const int variant = pending_;
  if (pending_ >= 0 && exchanges_.stopped()) {
    Array own;  // a run alone: each exchange's value is its input
    for (int e = exchanges_.next(); e < exchange_count(); ++e) {
      wait_exchange(e, own);
      resume_exchange(e, own);
    }
  }
  if (pending_ >= 0) recordings_[static_cast<std::size_t>(pending_)].back()->wait();
  pending_ = -1;
  if (readback_) readback_->invalidate();
  fetches_.copy_rest(outputs);
  if (variant >= 0) host_spans_.note(HostSpan::Kind::wait, variant, begin);
}

bool Program::finished() const {
  if (pending_ >= 0 && exchanges_.stopped()) return false;
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
