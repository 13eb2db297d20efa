// TensorFlow's TFRecord datasets as dataflows, and tensorpack's TFRecordSerializer.
//
//   TFRecordData flow("train.tfrecord", {"image/encoded", "image/class/label"});
//
// reads a file of tf.train.Example records (dataflow/tf_example.h) as a TensorFlow
// dataset stores them: each datapoint holds the named features in that order, a
// float_list as an f32 array [n], an int64_list as i64 [n], a bytes_list holding one
// value as u8 [bytes] (an encoded image for decode_image, a string). Records are checked
// as they are read (core/tfrecord.h): a damaged one is reported with its index and byte
// offset, never yielded. Uncompressed files only.
//
// TFRecordSerializer::save writes any finite flow in that format, one Example per
// datapoint, so that TensorFlow reads it too (tf.io.parse_single_example): component i
// as the features "i" (bytes_list: the elements' little-endian bytes), "i/shape"
// (int64_list) and "i/dtype" (bytes_list: "f32", "f16", "i32", "i64" or "u8");
// TFRecordSerializer::load reads such a file back as the datapoints written.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tfrecord.h"
#include "dataflow/dataflow.h"
#include "dataflow/tf_example.h"

namespace vkp::dataflow {

class TFRecordData : public DataFlow {
 public:
  // Error(io) when the file cannot be opened. Error(invalid_argument) when `features` is
  // empty. `size`: the records per epoch where known (tensorpack's argument): a record
  // beyond it is Error(bad_data) when read, fewer records at the epoch's end.
  TFRecordData(std::filesystem::path path, std::vector<std::string> features,
               std::optional<std::size_t> size = std::nullopt);

  std::optional<std::size_t> size() const override { return size_; }

 protected:
  // Only for TFRecordSerializer::load: no feature list, decode() builds the datapoint.
  TFRecordData(std::filesystem::path path, std::optional<std::size_t> size);
  // The datapoint of one record's Example (Error(bad_data) naming the feature).
  virtual Datapoint decode(const TFExample& example) const;
  [[noreturn]] void bad_record(const std::string& what) const;

  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  TFRecordReader reader_;
  std::vector<std::string> features_;
  std::optional<std::size_t> size_;
};

struct TFRecordSerializer {
  // Writes one epoch of `df` (reset here if it was not) to `path`, atomically (a crash
  // leaves the old file or the new one); returns the datapoints written. Error(io) when
  // the file cannot be written.
  static std::size_t save(DataFlow& df, const std::filesystem::path& path);
  // The file's datapoints as save() wrote them; size() is their count, read from the file.
  static std::unique_ptr<DataFlow> load(const std::filesystem::path& path);
};

}  // namespace vkp::dataflow
