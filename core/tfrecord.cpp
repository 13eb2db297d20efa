#include "core/tfrecord.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <span>

#include "core/crc32c.h"
#include "core/error.h"

namespace vkp {
namespace {

static_assert(std::endian::native == std::endian::little,
              "TFRecord integers are little-endian; a big-endian host would need byte swaps");

[[noreturn]] void fail_io(const std::string& path, const char* what, int error_number) {
  throw Error(ErrorCode::io, path + ": " + what + ": " + std::strerror(error_number));
}

std::string_view bytes_of(const std::uint64_t& value) { return {reinterpret_cast<const char*>(&value), sizeof value}; }

}  // namespace

std::uint32_t masked_crc32c(std::string_view data) {
  const std::uint32_t crc = crc32c(std::as_bytes(std::span<const char>(data.data(), data.size())));
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string frame_record(std::string_view data) {
  const std::uint64_t length = data.size();
  const std::uint32_t length_crc = masked_crc32c(bytes_of(length));
  const std::uint32_t data_crc = masked_crc32c(data);
  std::string out;
  out.reserve(8 + 4 + data.size() + 4);
  out.append(bytes_of(length));
  out.append(reinterpret_cast<const char*>(&length_crc), 4);
  out.append(data);
  out.append(reinterpret_cast<const char*>(&data_crc), 4);
  return out;
}

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
  const std::string record = frame_record(data);
  write_bytes(record.data(), record.size());
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

TFRecordReader::TFRecordReader(std::filesystem::path path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) fail_io(path_.string(), "cannot open the TFRecord file", errno);
  std::error_code ec;
  size_ = std::filesystem::file_size(path_, ec);
  if (ec) {
    std::fclose(file_);
    throw Error(ErrorCode::io, path_.string() + ": cannot read its size: " + ec.message());
  }
}

TFRecordReader::~TFRecordReader() { std::fclose(file_); }

void TFRecordReader::corrupt(const std::string& what) const {
  throw Error(ErrorCode::bad_data, path_.string() + ": record " + std::to_string(index_) + " at byte " +
                                       std::to_string(offset_) + ": " + what + " (a damaged TFRecord file?)");
}

void TFRecordReader::read_exact(void* dst, std::size_t n, const char* what) {
  if (n == 0) return;
  if (std::fread(dst, 1, n, file_) == n) return;
  if (std::ferror(file_)) fail_io(path_.string(), "cannot read", errno);
  corrupt(std::string("the file ends inside the ") + what);
}

std::optional<std::string> TFRecordReader::next() {
  if (offset_ == size_) return std::nullopt;
  constexpr std::uint64_t kFraming = 8 + 4 + 4;
  if (size_ - offset_ < kFraming) corrupt("the file ends inside the record's framing");
  std::uint64_t length = 0;
  std::uint32_t length_crc = 0;
  read_exact(&length, sizeof length, "length");
  read_exact(&length_crc, sizeof length_crc, "length's CRC");
  if (masked_crc32c(bytes_of(length)) != length_crc) corrupt("the length's CRC does not match");
  // Checked before allocating: a damaged length must not ask for terabytes.
  if (length > size_ - offset_ - kFraming)
    corrupt("a length of " + std::to_string(length) + " bytes runs past the end of the file");
  std::string data(length, '\0');
  std::uint32_t data_crc = 0;
  read_exact(data.data(), data.size(), "data");
  read_exact(&data_crc, sizeof data_crc, "data's CRC");
  if (masked_crc32c(data) != data_crc) corrupt("the data's CRC does not match");
  offset_ += kFraming + length;
  ++index_;
  return data;
}

void TFRecordReader::rewind() {
  if (std::fseek(file_, 0, SEEK_SET) != 0) fail_io(path_.string(), "cannot seek", errno);
  offset_ = 0;
  index_ = 0;
}

}  // namespace vkp
