#include "callbacks/monitors/tfrecord_writer.h"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "callbacks/monitors/crc32c.h"
#include "core/error.h"

namespace vkp::callbacks {
namespace {

static_assert(std::endian::native == std::endian::little,
              "TFRecord integers are little-endian; a big-endian host would need byte swaps");

[[noreturn]] void fail_io(const std::string& path, const char* what, int error_number) {
  throw Error(ErrorCode::io, path + ": " + what + ": " + std::strerror(error_number));
}

}  // namespace

TFRecordWriter::TFRecordWriter(std::string path) : path_(std::move(path)) {
  // "x": fail rather than overwrite an existing file (C11, glibc).
  file_ = std::fopen(path_.c_str(), "wbx");
  if (file_ == nullptr) fail_io(path_, "cannot create the TFRecord file", errno);
}

TFRecordWriter::~TFRecordWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TFRecordWriter::write_bytes(const void* bytes, std::size_t count) {
  if (file_ == nullptr) throw Error(ErrorCode::io, path_ + ": cannot write: the file is closed");
  if (std::fwrite(bytes, 1, count, file_) != count) fail_io(path_, "cannot write", errno);
}

void TFRecordWriter::write(std::string_view data) {
  const std::uint64_t length = data.size();
  const std::string_view length_bytes(reinterpret_cast<const char*>(&length), sizeof length);
  const std::uint32_t length_crc = masked_crc32c(length_bytes);
  const std::uint32_t data_crc = masked_crc32c(data);
  write_bytes(&length, sizeof length);
  write_bytes(&length_crc, sizeof length_crc);
  write_bytes(data.data(), data.size());
  write_bytes(&data_crc, sizeof data_crc);
}

void TFRecordWriter::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) fail_io(path_, "cannot flush", errno);
}

void TFRecordWriter::close() {
  if (file_ == nullptr) return;
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) fail_io(path_, "cannot close", errno);
}

}  // namespace vkp::callbacks
