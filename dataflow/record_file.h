// Record files: a finite dataflow stored in one file and read back as a dataflow.
//
// Layout (all integers little-endian):
//   header, 32 bytes: magic "VKPKRECS", u32 version (1), u32 0, u64 record count,
//                     u32 crc32 of the 24 bytes before it, u32 0
//   records, one per datapoint:
//     u64 payload length, u32 crc32 of the payload, u32 crc32 of the length field
//     payload: u32 component count, then per component
//              u8 dtype (1 f32, 2 f16, 3 i32, 4 i64, 5 u8), u8 rank, u16 0,
//              i64 extents[rank], the element bytes
//
// Every record carries its own checksums, so a damaged record is reported with its
// index and is never yielded. A file is written to "<path>.tmp", flushed, synced and
// renamed into place: a crash leaves the old file or the new one, never half of one.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

inline constexpr std::uint32_t kRecordFileVersion = 1;

// Writes one epoch of `df` (reset here if it was not) to `path`; returns the number of
// datapoints written. The flow must be finite. Error(io) when the file cannot be written;
// the temporary file is removed on any error.
std::size_t write_record_file(DataFlow& df, const std::filesystem::path& path);

// Reads a record file in order, one record at a time. The header is checked on
// construction; each record when read. Error(bad_data) names the file, the record index
// and its byte offset: checksum mismatch, a length running past the end, a malformed
// payload, fewer records than the header says, bytes after the last record.
class RecordFileData : public DataFlow {
 public:
  explicit RecordFileData(std::filesystem::path path);

  std::optional<std::size_t> size() const override { return count_; }

 protected:
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };

  void read_exact(void* dst, std::size_t n, const char* what);
  [[noreturn]] void corrupt(const std::string& what) const;

  std::filesystem::path path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::uint64_t file_size_ = 0;
  std::size_t count_ = 0;
  std::size_t index_ = 0;         // of the next record
  std::uint64_t offset_ = 0;      // byte offset of the next record
  std::vector<std::uint8_t> payload_;
};

}  // namespace vkp::dataflow
