// TensorBoard's Event protocol buffer (tensorflow/core/util/event.proto), encoded by
// hand for the three kinds of event vkpack writes. The fields used:
//
//   message Event   { double wall_time = 1; int64 step = 2;
//                     oneof what { string file_version = 3; Summary summary = 5;
//                                  SessionLog session_log = 7; } }
//   message Summary { repeated Value value = 1; }
//   message Value   { string tag = 1; float simple_value = 2; }
//   message SessionLog { SessionStatus status = 1; }   // enum: START = 1
//
// Encoding (protobuf wire format): each field is a varint key (field << 3 | wire type)
// then its value: wire type 0 a varint (int64 as two's complement, 10 bytes when
// negative), 1 eight little-endian bytes (double), 2 a varint length then the bytes
// (string, message), 5 four little-endian bytes (float).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vkp::callbacks {

// wall_time in seconds since the Unix epoch. The first event of every event file names
// the file format: version "brain.Event:2".
std::string encode_file_version_event(double wall_time, std::string_view version);

// One scalar summary: tag, value as float, at a global step.
std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value);

// A session (re)starts at `step`: TensorBoard then discards every event it loaded
// earlier whose step is `step` or later, the orphans of a run that was killed and resumed
// from a checkpoint.
std::string encode_session_start_event(double wall_time, std::int64_t step);

}  // namespace vkp::callbacks
