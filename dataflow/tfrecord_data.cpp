#include "dataflow/tfrecord_data.h"

#include <cstring>

#include "core/atomic_file.h"
#include "core/error.h"

namespace vkp::dataflow {
namespace {

[[noreturn]] void bad_feature(const std::string& what) { throw Error(ErrorCode::bad_data, what); }

// One feature as an array, by the kind of its list; Error(bad_data) saying why it cannot be.
Array feature_array(const TFFeature& f, const std::string& name) {
  switch (f.kind) {
    case TFFeature::Kind::floats: return Array::from(Shape{static_cast<std::int64_t>(f.floats.size())}, f.floats);
    case TFFeature::Kind::int64s: return Array::from(Shape{static_cast<std::int64_t>(f.int64s.size())}, f.int64s);
    case TFFeature::Kind::bytes: {
      if (f.bytes.size() != 1)
        bad_feature("feature '" + name + "' is a bytes_list of " + std::to_string(f.bytes.size()) +
                    " values; one is read");
      Array a = Array::uninitialized(DType::u8, Shape{static_cast<std::int64_t>(f.bytes[0].size())});
      if (!f.bytes[0].empty()) std::memcpy(a.bytes().data(), f.bytes[0].data(), f.bytes[0].size());
      return a;
    }
    case TFFeature::Kind::none: break;
  }
  bad_feature("feature '" + name + "' holds no list");
}

// What TFRecordSerializer wrote: components "0", "1", ... with their shapes and dtypes.
class SerializedTFRecordData : public TFRecordData {
 public:
  SerializedTFRecordData(std::filesystem::path path, std::size_t count) : TFRecordData(std::move(path), count) {}

 protected:
  Datapoint decode(const TFExample& example) const override {
    Datapoint dp;
    for (std::size_t i = 0;; ++i) {
      const std::string name = std::to_string(i);
      const auto bytes = example.find(name), shape = example.find(name + "/shape"),
                 dtype = example.find(name + "/dtype");
      if (bytes == example.end() && shape == example.end() && dtype == example.end()) break;
      if (bytes == example.end() || shape == example.end() || dtype == example.end() ||
          bytes->second.kind != TFFeature::Kind::bytes || bytes->second.bytes.size() != 1 ||
          shape->second.kind != TFFeature::Kind::int64s || dtype->second.kind != TFFeature::Kind::bytes ||
          dtype->second.bytes.size() != 1)
        bad_record("component " + name + " lacks its bytes, shape or dtype as TFRecordSerializer writes them");
      DType t{};
      try {
        t = parse_dtype(dtype->second.bytes[0]);
      } catch (const Error&) {
        bad_record("component " + name + " has dtype '" + dtype->second.bytes[0] + "'");
      }
      Shape s;
      try {
        s = Shape(shape->second.int64s);
      } catch (const Error& e) {
        bad_record("component " + name + ": " + e.what());
      }
      const std::string& data = bytes->second.bytes[0];
      if (s.numel() < 0 || data.size() % size_of(t) != 0 ||
          static_cast<std::uint64_t>(s.numel()) != data.size() / size_of(t))
        bad_record("component " + name + " holds " + std::to_string(data.size()) + " bytes, not its shape's");
      Array a = Array::uninitialized(t, std::move(s));
      if (!data.empty()) std::memcpy(a.bytes().data(), data.data(), data.size());
      dp.push_back(std::move(a));
    }
    return dp;
  }
};

std::size_t count_records(const std::filesystem::path& path) {
  TFRecordReader reader(path);
  while (reader.next()) {
  }
  return reader.index();
}

}  // namespace

TFRecordData::TFRecordData(std::filesystem::path path, std::vector<std::string> features,
                           std::optional<std::size_t> size)
    : reader_(std::move(path)), features_(std::move(features)), size_(size) {
  if (features_.empty())
    throw Error(ErrorCode::invalid_argument,
                "TFRecordData(" + reader_.path().string() + "): name the features to read");
}

TFRecordData::TFRecordData(std::filesystem::path path, std::optional<std::size_t> size)
    : reader_(std::move(path)), size_(size) {}

void TFRecordData::bad_record(const std::string& what) const {
  throw Error(ErrorCode::bad_data,
              reader_.path().string() + ": record " + std::to_string(reader_.index() - 1) + ": " + what);
}

Datapoint TFRecordData::decode(const TFExample& example) const {
  Datapoint dp;
  for (const std::string& name : features_) {
    const auto it = example.find(name);
    if (it == example.end()) bad_record("no feature '" + name + "'");
    try {
      dp.push_back(feature_array(it->second, name));
    } catch (const Error& e) {
      bad_record(e.what());
    }
  }
  return dp;
}

void TFRecordData::on_start_epoch() { reader_.rewind(); }

std::optional<Datapoint> TFRecordData::on_next() {
  std::optional<std::string> record = reader_.next();
  if (!record) {
    if (size_ && reader_.index() != *size_)
      throw Error(ErrorCode::bad_data, reader_.path().string() + ": " + std::to_string(reader_.index()) +
                                           " records, where " + std::to_string(*size_) + " were expected");
    return std::nullopt;
  }
  if (size_ && reader_.index() > *size_)
    throw Error(ErrorCode::bad_data,
                reader_.path().string() + ": more than the " + std::to_string(*size_) + " records expected");
  TFExample example;
  try {
    example = decode_example(*record);
  } catch (const Error& e) {
    bad_record(e.what());
  }
  return decode(example);
}

std::size_t TFRecordSerializer::save(DataFlow& df, const std::filesystem::path& path) {
  if (!df.is_reset()) df.reset_state();
  AtomicFile file(path.string());
  std::size_t count = 0;
  for (const Datapoint& dp : df.epoch()) {
    TFExample example;
    for (std::size_t i = 0; i < dp.size(); ++i) {
      const Array& a = dp[i];
      const std::string name = std::to_string(i);
      TFFeature& bytes = example[name];
      bytes.kind = TFFeature::Kind::bytes;
      bytes.bytes.emplace_back(reinterpret_cast<const char*>(a.bytes().data()), a.nbytes());
      TFFeature& shape = example[name + "/shape"];
      shape.kind = TFFeature::Kind::int64s;
      shape.int64s.assign(a.shape().dims().begin(), a.shape().dims().end());
      TFFeature& dtype = example[name + "/dtype"];
      dtype.kind = TFFeature::Kind::bytes;
      dtype.bytes.emplace_back(to_string(a.dtype()));
    }
    file.write(frame_record(encode_example(example)));
    ++count;
  }
  file.commit();
  return count;
}

std::unique_ptr<DataFlow> TFRecordSerializer::load(const std::filesystem::path& path) {
  return std::make_unique<SerializedTFRecordData>(path, count_records(path));
}

}  // namespace vkp::dataflow
