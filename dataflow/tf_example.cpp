#include "dataflow/tf_example.h"

#include <bit>
#include <cstring>

#include "core/error.h"

namespace vkp::dataflow {
namespace {

static_assert(std::endian::native == std::endian::little, "protobuf's fixed-width fields are little-endian");

enum Wire : std::uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_key(std::string& out, std::uint32_t field, Wire wire) { put_varint(out, (field << 3) | wire); }

void put_bytes(std::string& out, std::uint32_t field, std::string_view bytes) {
  put_key(out, field, kLength);
  put_varint(out, bytes.size());
  out.append(bytes);
}

std::string encode_feature(const TFFeature& f) {
  std::string list;
  switch (f.kind) {
    case TFFeature::Kind::none: return {};
    case TFFeature::Kind::bytes:
      for (const std::string& b : f.bytes) put_bytes(list, 1, b);
      break;
    case TFFeature::Kind::floats:
      if (!f.floats.empty())
        put_bytes(list, 1, {reinterpret_cast<const char*>(f.floats.data()), f.floats.size() * sizeof(float)});
      break;
    case TFFeature::Kind::int64s: {
      std::string packed;
      for (std::int64_t v : f.int64s) put_varint(packed, static_cast<std::uint64_t>(v));
      if (!packed.empty()) put_bytes(list, 1, packed);
      break;
    }
  }
  std::string feature;
  const std::uint32_t field = f.kind == TFFeature::Kind::bytes ? 1 : f.kind == TFFeature::Kind::floats ? 2 : 3;
  put_bytes(feature, field, list);
  return feature;
}

// Reads one message's fields in order.
class Fields {
 public:
  Fields(std::string_view bytes, const char* message) : bytes_(bytes), message_(message) {}

  bool done() const { return at_ == bytes_.size(); }
  // The next field's number and wire type.
  std::pair<std::uint32_t, std::uint32_t> key() {
    const std::uint64_t k = varint();
    if ((k >> 3) == 0 || (k >> 3) > 0x1fffffff) fail("a field number of " + std::to_string(k >> 3));
    return {static_cast<std::uint32_t>(k >> 3), static_cast<std::uint32_t>(k & 7)};
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size()) fail("a varint runs past the end");
      const auto byte = static_cast<std::uint8_t>(bytes_[at_++]);
      v |= std::uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return v;
    }
    fail("a varint longer than 10 bytes");
  }
  std::string_view length_delimited() {
    const std::uint64_t n = varint();
    if (n > bytes_.size() - at_) fail("a length of " + std::to_string(n) + " runs past the end");
    const std::string_view v = bytes_.substr(at_, n);
    at_ += n;
    return v;
  }
  std::string_view fixed(std::size_t n) {
    if (n > bytes_.size() - at_) fail("a fixed-width value runs past the end");
    const std::string_view v = bytes_.substr(at_, n);
    at_ += n;
    return v;
  }
  void skip(std::uint32_t wire) {
    switch (wire) {
      case kVarint: varint(); return;
      case kFixed64: fixed(8); return;
      case kLength: length_delimited(); return;
      case kFixed32: fixed(4); return;
      default: fail("wire type " + std::to_string(wire) + ", which no field can have");
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::bad_data, std::string("tf.train.Example: in a ") + message_ + ": " + what);
  }

 private:
  std::string_view bytes_;
  const char* message_;
  std::size_t at_ = 0;
};

void expect(Fields& f, std::uint32_t wire, std::uint32_t want, const char* field) {
  if (wire != want) f.fail(std::string(field) + " has wire type " + std::to_string(wire));
}

void decode_floats(std::string_view list, std::vector<float>& out) {
  Fields f(list, "FloatList");
  while (!f.done()) {
    const auto [field, wire] = f.key();
    if (field != 1) {
      f.skip(wire);
    } else if (wire == kLength) {
      const std::string_view packed = f.length_delimited();
      if (packed.size() % 4 != 0) f.fail("a packed list of " + std::to_string(packed.size()) + " bytes");
      const std::size_t old = out.size();
      out.resize(old + packed.size() / 4);
      std::memcpy(out.data() + old, packed.data(), packed.size());
    } else {
      expect(f, wire, kFixed32, "value");
      float v = 0;
      std::memcpy(&v, f.fixed(4).data(), 4);
      out.push_back(v);
    }
  }
}

void decode_int64s(std::string_view list, std::vector<std::int64_t>& out) {
  Fields f(list, "Int64List");
  while (!f.done()) {
    const auto [field, wire] = f.key();
    if (field != 1) {
      f.skip(wire);
    } else if (wire == kLength) {
      Fields packed(f.length_delimited(), "Int64List");
      while (!packed.done()) out.push_back(static_cast<std::int64_t>(packed.varint()));
    } else {
      expect(f, wire, kVarint, "value");
      out.push_back(static_cast<std::int64_t>(f.varint()));
    }
  }
}

void decode_bytes(std::string_view list, std::vector<std::string>& out) {
  Fields f(list, "BytesList");
  while (!f.done()) {
    const auto [field, wire] = f.key();
    if (field != 1) {
      f.skip(wire);
      continue;
    }
    expect(f, wire, kLength, "value");
    out.emplace_back(f.length_delimited());
  }
}

// A Feature; lists of one field number merge, another kind replaces the oneof's.
TFFeature decode_feature(std::string_view bytes) {
  TFFeature out;
  Fields f(bytes, "Feature");
  while (!f.done()) {
    const auto [field, wire] = f.key();
    if (field < 1 || field > 3) {
      f.skip(wire);
      continue;
    }
    expect(f, wire, kLength, "a list");
    const std::string_view list = f.length_delimited();
    const auto kind = static_cast<TFFeature::Kind>(field);
    if (kind != out.kind) out = TFFeature{kind, {}, {}, {}};
    if (kind == TFFeature::Kind::bytes) decode_bytes(list, out.bytes);
    if (kind == TFFeature::Kind::floats) decode_floats(list, out.floats);
    if (kind == TFFeature::Kind::int64s) decode_int64s(list, out.int64s);
  }
  return out;
}

void decode_entry(std::string_view bytes, TFExample& out) {
  std::string key;
  TFFeature value;
  Fields f(bytes, "Features map entry");
  while (!f.done()) {
    const auto [field, wire] = f.key();
    if (field == 1) {
      expect(f, wire, kLength, "key");
      key = f.length_delimited();
    } else if (field == 2) {
      expect(f, wire, kLength, "value");
      value = decode_feature(f.length_delimited());
    } else {
      f.skip(wire);
    }
  }
  out[key] = std::move(value);
}

}  // namespace

std::string encode_example(const TFExample& example) {
  std::string features;
  for (const auto& [key, feature] : example) {
    std::string entry;
    put_bytes(entry, 1, key);
    put_bytes(entry, 2, encode_feature(feature));
    put_bytes(features, 1, entry);
  }
  std::string out;
  put_bytes(out, 1, features);
  return out;
}

TFExample decode_example(std::string_view bytes) {
  TFExample out;
  Fields example(bytes, "Example");
  while (!example.done()) {
    const auto [field, wire] = example.key();
    if (field != 1) {
      example.skip(wire);
      continue;
    }
    expect(example, wire, kLength, "features");
    Fields features(example.length_delimited(), "Features");
    while (!features.done()) {
      const auto [f, w] = features.key();
      if (f != 1) {
        features.skip(w);
        continue;
      }
      expect(features, w, kLength, "feature");
      decode_entry(features.length_delimited(), out);
    }
  }
  return out;
}

}  // namespace vkp::dataflow
