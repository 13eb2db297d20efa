// TFRecordWriter: appends records to a file in TFRecord framing, the container of
// TensorBoard event files. Each record is
//
//   uint64 length          little-endian, of the data
//   uint32 masked CRC32C   of those 8 length bytes, little-endian
//   byte   data[length]
//   uint32 masked CRC32C   of the data, little-endian
//
// (masked_crc32c in crc32c.h). Every failure throws Error(io) naming the file.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace vkp::callbacks {

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

}  // namespace vkp::callbacks
