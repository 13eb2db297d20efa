#include "callbacks/monitors/tf_event_writer.h"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <filesystem>

#include "callbacks/monitors/internal/event_proto.h"
#include "core/crash_point.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::callbacks {
namespace {

// Seconds since the Unix epoch, with sub-second precision, as Event.wall_time.
double wall_time_now() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(now).count();
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// A new event file in `dir`, named as TensorFlow names them; a numbered suffix when
// another writer created the same name in the same second.
std::unique_ptr<TFRecordWriter> create_event_file(const std::string& dir) {
  const long seconds = static_cast<long>(wall_time_now());
  char stem[32];
  std::snprintf(stem, sizeof stem, "events.out.tfevents.%010ld.", seconds);
  const std::string base = (std::filesystem::path(dir) / stem).string() + host_name();
  std::string path = base;
  for (int n = 1; n < 100 && std::filesystem::exists(path); ++n) path = base + "." + std::to_string(n);
  return std::make_unique<TFRecordWriter>(path);
}

}  // namespace

void TFEventWriter::setup(TrainerView& trainer) {
  Monitor::setup(trainer);
  writer_.reset();
  path_.clear();
  if (trainer.logger_dir().empty()) {
    log_warn("logger directory was not set. Ignore TFEventWriter.");
    return;
  }
  writer_ = create_event_file(trainer.logger_dir());
  path_ = writer_->path();
  writer_->write(encode_file_version_event(wall_time_now(), "brain.Event:2"));
  // The first step this run trains: scalars a killed run wrote from there on, for steps
  // this run trains again, are dropped by TensorBoard instead of shown twice.
  writer_->write(encode_session_start_event(wall_time_now(), trainer.global_step() + 1));
  writer_->flush();
}

void TFEventWriter::process_scalar(const std::string& name, double value, std::int64_t step) {
  if (!writer_) return;
  writer_->write(encode_scalar_event(wall_time_now(), step, name, static_cast<float>(value)));
}

void TFEventWriter::process_image(const std::string& name, int height, int width, int channels, const std::string& png,
                                  std::int64_t step) {
  if (!writer_) return;
  writer_->write(encode_image_event(wall_time_now(), step, name, {height, width, channels, png}));
}

void TFEventWriter::process_histogram(const std::string& name, std::span<const float> values, std::int64_t step) {
  if (!writer_) return;
  writer_->write(encode_histogram_event(wall_time_now(), step, name, histogram_of(values)));
}

void TFEventWriter::trigger_epoch() {
  if (!writer_) return;
  writer_->flush();
  crash_point("after-flush/events");
}

void TFEventWriter::close() {
  // Scalars put after close are dropped, as after training ended.
  if (const std::unique_ptr<TFRecordWriter> writer = std::move(writer_)) writer->close();
}

}  // namespace vkp::callbacks
