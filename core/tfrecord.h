// TFRecord files: the container of TensorFlow's datasets and of TensorBoard event files.
// Each record is
//
//   uint64 length          little-endian, of the data
//   uint32 masked CRC32C   of those 8 length bytes, little-endian
//   byte   data[length]
//   uint32 masked CRC32C   of the data, little-endian
//
// TFRecordWriter appends records (the event files of callbacks/monitors, the serializer
// of dataflow/tfrecord_data.h); TFRecordReader reads them back checking every CRC.
// Uncompressed files only (TensorFlow's GZIP and ZLIB options are not read).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace vkp {

// ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2^32, of crc = CRC-32C(data)
// (core/crc32c.h). Masking keeps the CRC of data that itself holds CRCs from being
// degenerate.
std::uint32_t masked_crc32c(std::string_view data);

// `data` as one framed record: length, its CRC, the data, its CRC.
std::string frame_record(std::string_view data);

// Every failure throws Error(io) naming the file.
class TFRecordWriter {
 public:
  // Creates `path`; Error(io) when it exists already or cannot be created.
  explicit TFRecordWriter(std::string path);
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;
  // Closes the file without reporting errors; call close() to see them.
  ~TFRecordWriter();

  const std::string& path() const { return path_; }
  void write(std::string_view data);
  // Hands buffered records to the operating system.
  void flush();
  // Flushes and closes; later calls do nothing.
  void close();

 private:
  void write_bytes(const void* bytes, std::size_t count);

  std::string path_;
  std::FILE* file_ = nullptr;
};

// Reads a TFRecord file's records in order. Error(io) when it cannot be opened or read;
// Error(bad_data) naming the file, the record's index and its byte offset when a length
// runs past the end of the file, a CRC does not match, or a record is cut short.
class TFRecordReader {
 public:
  explicit TFRecordReader(std::filesystem::path path);
  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;
  ~TFRecordReader();

  const std::filesystem::path& path() const { return path_; }
  // The next record's data; nullopt after the last.
  std::optional<std::string> next();
  // Back to the first record.
  void rewind();
  // Records read since the start (or rewind()).
  std::size_t index() const { return index_; }

 private:
  void read_exact(void* dst, std::size_t n, const char* what);
  [[noreturn]] void corrupt(const std::string& what) const;

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;  // of the next record
  std::size_t index_ = 0;
};

}  // namespace vkp
