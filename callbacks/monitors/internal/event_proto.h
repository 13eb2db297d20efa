// TensorBoard's Event protocol buffer (tensorflow/core/util/event.proto and
// framework/summary.proto), encoded by hand for the kinds of event vkpack writes. The
// fields used:
//
//   message Event   { double wall_time = 1; int64 step = 2;
//                     oneof what { string file_version = 3; Summary summary = 5;
//                                  SessionLog session_log = 7; } }
//   message Summary { repeated Value value = 1; }
//   message Value   { string tag = 1; oneof value { float simple_value = 2;
//                     Image image = 4; HistogramProto histo = 5; } }
//   message Image   { int32 height = 1; int32 width = 2; int32 colorspace = 3;
//                     bytes encoded_image_string = 4; }
//   message HistogramProto { double min = 1; double max = 2; double num = 3;
//                     double sum = 4; double sum_squares = 5;
//                     repeated double bucket_limit = 6 [packed]; repeated double bucket = 7 [packed]; }
//   message SessionLog { SessionStatus status = 1; }   // enum: START = 1
//
// Encoding (protobuf wire format): each field is a varint key (field << 3 | wire type)
// then its value: wire type 0 a varint (int64 as two's complement, 10 bytes when
// negative), 1 eight little-endian bytes (double), 2 a varint length then the bytes
// (string, message), 5 four little-endian bytes (float).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkp::callbacks {

// wall_time in seconds since the Unix epoch. The first event of every event file names
// the file format: version "brain.Event:2".
std::string encode_file_version_event(double wall_time, std::string_view version);

// One scalar summary: tag, value as float, at a global step.
std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value);

// A picture for an image summary: a PNG (or JPEG) of height x width with `channels`
// channels (TensorBoard's colorspace: 1 gray, 2 gray and alpha, 3 RGB, 4 RGBA).
struct EncodedImage {
  int height = 0;
  int width = 0;
  int channels = 0;
  std::string_view bytes;
};

// One image summary.
std::string encode_image_event(double wall_time, std::int64_t step, std::string_view tag, const EncodedImage& image);

// A histogram as TensorFlow summarises one (core/lib/histogram): counts over its default
// bucket limits (+-1e-12 growing by 1.1 up to 1e20, then DBL_MAX), the empty buckets
// before an empty one left out, as TensorFlow's EncodeToProto does.
struct Histogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> bucket_limit, bucket;
};
Histogram histogram_of(std::span<const float> values);
std::string encode_histogram_event(double wall_time, std::int64_t step, std::string_view tag, const Histogram& h);

// A session (re)starts at `step`: TensorBoard then discards every event it loaded
// earlier whose step is `step` or later, the orphans of a run that was killed and resumed
// from a checkpoint.
std::string encode_session_start_event(double wall_time, std::int64_t step);

}  // namespace vkp::callbacks
