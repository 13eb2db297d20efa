// TFEventWriter: writes every scalar, image and histogram as a TensorBoard event, as tensorpack's
// TFEventWriter, to <logger_dir>/events.out.tfevents.<unix time>.<hostname>: TFRecord
// framing (tfrecord_writer.h) of Event protocol buffers (event_proto.h), the first
// naming the format "brain.Event:2", the second a SessionLog START at the first step the
// run trains (global step + 1), so that TensorBoard drops what a killed run wrote for
// steps a resumed run trains again (as TensorFlow's Supervisor does). Flushed at every epoch's end, closed at close().
// Does nothing (after a warning) when the trainer has no logger directory.
#pragma once

#include <memory>
#include <string>

#include "callbacks/monitors.h"
#include "core/tfrecord.h"

namespace vkp::callbacks {

class TFEventWriter : public Monitor {
 public:
  void setup(TrainerView& trainer) override;
  void process_scalar(const std::string& name, double value, std::int64_t step) override;
  void process_image(const std::string& name, int height, int width, int channels, const std::string& png,
                     std::int64_t step) override;
  void process_histogram(const std::string& name, std::span<const float> values, std::int64_t step) override;
  void trigger_epoch() override;
  void close() override;

  // The event file; empty before setup and without a logger directory.
  const std::string& path() const { return path_; }

 private:
  std::unique_ptr<TFRecordWriter> writer_;  // null when not writing (no directory, closed)
  std::string path_;
};

}  // namespace vkp::callbacks
