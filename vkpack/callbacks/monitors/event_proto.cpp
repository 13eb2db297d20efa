#include "vkpack/callbacks/monitors/event_proto.h"

#include <bit>
#include <cstring>

namespace vkp::callbacks {
namespace {

static_assert(std::endian::native == std::endian::little,
              "protobuf fixed-width fields are little-endian; a big-endian host would need byte swaps");

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_key(std::string& out, std::uint32_t field, WireType wire) { put_varint(out, (field << 3) | wire); }

template <class T>
void put_fixed(std::string& out, std::uint32_t field, T value) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  put_key(out, field, sizeof(T) == 8 ? kFixed64 : kFixed32);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_bytes(std::string& out, std::uint32_t field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// Event field numbers.
constexpr std::uint32_t kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5, kSessionLog = 7;
// SessionLog field number and SessionStatus value.
constexpr std::uint32_t kSessionLogStatus = 1, kStatusStart = 1;
// Summary and Summary.Value field numbers.
constexpr std::uint32_t kSummaryValue = 1, kValueTag = 1, kValueSimpleValue = 2;

// An Event's wall_time and step, the fields before its `what`.
std::string event_header(double wall_time, std::int64_t step) {
  std::string event;
  put_fixed(event, kWallTime, wall_time);
  put_key(event, kStep, kVarint);
  put_varint(event, static_cast<std::uint64_t>(step));
  return event;
}

}  // namespace

std::string encode_file_version_event(double wall_time, std::string_view version) {
  std::string event;
  put_fixed(event, kWallTime, wall_time);
  put_bytes(event, kFileVersion, version);
  return event;
}

std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value) {
  std::string summary_value;
  put_bytes(summary_value, kValueTag, tag);
  put_fixed(summary_value, kValueSimpleValue, value);
  std::string summary;
  put_bytes(summary, kSummaryValue, summary_value);

  std::string event = event_header(wall_time, step);
  put_bytes(event, kSummary, summary);
  return event;
}

std::string encode_session_start_event(double wall_time, std::int64_t step) {
  std::string session_log;
  put_key(session_log, kSessionLogStatus, kVarint);
  put_varint(session_log, kStatusStart);

  std::string event = event_header(wall_time, step);
  put_bytes(event, kSessionLog, session_log);
  return event;
}

}  // namespace vkp::callbacks
