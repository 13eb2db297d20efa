#include "callbacks/monitors/internal/event_proto.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
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
constexpr std::uint32_t kSummaryValue = 1, kValueTag = 1, kValueSimpleValue = 2, kValueImage = 4, kValueHisto = 5;
// Image and HistogramProto field numbers.
constexpr std::uint32_t kImageHeight = 1, kImageWidth = 2, kImageColorspace = 3, kImageEncoded = 4;
constexpr std::uint32_t kHistoMin = 1, kHistoMax = 2, kHistoNum = 3, kHistoSum = 4, kHistoSumSquares = 5,
                        kHistoBucketLimit = 6, kHistoBucket = 7;

void put_int(std::string& out, std::uint32_t field, std::int64_t value) {
  put_key(out, field, kVarint);
  put_varint(out, static_cast<std::uint64_t>(value));
}

// A packed repeated double: one length-delimited field of 8-byte values.
void put_packed(std::string& out, std::uint32_t field, const std::vector<double>& values) {
  std::string packed;
  for (double v : values) {
    char bytes[8];
    std::memcpy(bytes, &v, 8);
    packed.append(bytes, 8);
  }
  put_bytes(out, field, packed);
}

// TensorFlow's default histogram bucket limits.
const std::vector<double>& default_limits() {
  static const std::vector<double> limits = [] {
    std::vector<double> positive;
    for (double v = 1e-12; v < 1e20; v *= 1.1) positive.push_back(v);
    std::vector<double> all;
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    all.push_back(DBL_MAX);
    return all;
  }();
  return limits;
}

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

namespace {

// An Event at (wall_time, step) holding a Summary of one Value, whose fields after its
// tag are `value_fields`.
std::string summary_event(double wall_time, std::int64_t step, std::string_view tag, const std::string& value_fields) {
  std::string summary_value;
  put_bytes(summary_value, kValueTag, tag);
  summary_value += value_fields;
  std::string summary;
  put_bytes(summary, kSummaryValue, summary_value);
  std::string event = event_header(wall_time, step);
  put_bytes(event, kSummary, summary);
  return event;
}

}  // namespace

std::string encode_scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value) {
  std::string fields;
  put_fixed(fields, kValueSimpleValue, value);
  return summary_event(wall_time, step, tag, fields);
}

std::string encode_image_event(double wall_time, std::int64_t step, std::string_view tag, const EncodedImage& image) {
  std::string message;
  put_int(message, kImageHeight, image.height);
  put_int(message, kImageWidth, image.width);
  put_int(message, kImageColorspace, image.channels);
  put_bytes(message, kImageEncoded, image.bytes);
  std::string fields;
  put_bytes(fields, kValueImage, message);
  return summary_event(wall_time, step, tag, fields);
}

Histogram histogram_of(std::span<const float> values) {
  const std::vector<double>& limits = default_limits();
  std::vector<double> counts(limits.size(), 0.0);
  Histogram h;
  h.min = values.empty() ? 0 : DBL_MAX;
  h.max = values.empty() ? 0 : -DBL_MAX;
  for (float f : values) {
    const double v = f;
    if (std::isnan(v)) continue;
    // The bucket whose limit is the first above v (TensorFlow: upper_bound).
    const auto at = std::upper_bound(limits.begin(), limits.end(), v) - limits.begin();
    counts[static_cast<std::size_t>(std::min<std::ptrdiff_t>(at, static_cast<std::ptrdiff_t>(limits.size()) - 1))] += 1;
    h.min = std::min(h.min, v);
    h.max = std::max(h.max, v);
    h.num += 1;
    h.sum += v;
    h.sum_squares += v * v;
  }
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0 && i + 1 < counts.size() && counts[i + 1] == 0) continue;
    h.bucket_limit.push_back(limits[i]);
    h.bucket.push_back(counts[i]);
  }
  return h;
}

std::string encode_histogram_event(double wall_time, std::int64_t step, std::string_view tag, const Histogram& h) {
  std::string histo;
  put_fixed(histo, kHistoMin, h.min);
  put_fixed(histo, kHistoMax, h.max);
  put_fixed(histo, kHistoNum, h.num);
  put_fixed(histo, kHistoSum, h.sum);
  put_fixed(histo, kHistoSumSquares, h.sum_squares);
  put_packed(histo, kHistoBucketLimit, h.bucket_limit);
  put_packed(histo, kHistoBucket, h.bucket);
  std::string fields;
  put_bytes(fields, kValueHisto, histo);
  return summary_event(wall_time, step, tag, fields);
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
