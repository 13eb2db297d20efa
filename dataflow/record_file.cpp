#include "dataflow/record_file.h"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "core/little_endian.h"
#include "dataflow/internal/datapoint_codec.h"

namespace vkp::dataflow {
namespace {

constexpr char kMagic[8] = {'V', 'K', 'P', 'K', 'R', 'E', 'C', 'S'};
constexpr std::size_t kHeaderBytes = 32, kRecordHeadBytes = 16;

std::uint32_t crc_of(const void* data, std::size_t n) {
  return static_cast<std::uint32_t>(crc32_z(0L, static_cast<const Bytef*>(data), n));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::vector<std::uint8_t> header_bytes(std::uint64_t count) {
  std::vector<std::uint8_t> h(kMagic, kMagic + 8);
  append_le<std::uint32_t>(h, kRecordFileVersion);
  append_le<std::uint32_t>(h, 0);
  append_le<std::uint64_t>(h, count);
  append_le<std::uint32_t>(h, crc_of(h.data(), h.size()));
  append_le<std::uint32_t>(h, 0);
  return h;
}

// The record of `dp`: head (length, crcs) and payload.
void encode(const Datapoint& dp, std::vector<std::uint8_t>& out) {
  out.assign(kRecordHeadBytes, 0);
  encode_datapoint(dp, out);
  const std::uint64_t length = out.size() - kRecordHeadBytes;
  std::vector<std::uint8_t> head;
  append_le<std::uint64_t>(head, length);
  append_le<std::uint32_t>(head, crc_of(out.data() + kRecordHeadBytes, length));
  append_le<std::uint32_t>(head, crc_of(head.data(), 8));
  std::memcpy(out.data(), head.data(), kRecordHeadBytes);
}

void write_all(std::FILE* f, const std::vector<std::uint8_t>& bytes, const std::filesystem::path& path) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
    throw Error(ErrorCode::io, "cannot write " + path.string() + ": " + std::strerror(errno));
}

void finish(std::FILE* f, std::uint64_t count, const std::filesystem::path& path) {
  if (std::fseek(f, 0, SEEK_SET) != 0)
    throw Error(ErrorCode::io, "cannot seek in " + path.string() + ": " + std::strerror(errno));
  write_all(f, header_bytes(count), path);
  if (std::fflush(f) != 0 || fsync(fileno(f)) != 0)
    throw Error(ErrorCode::io, "cannot flush " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

std::size_t write_record_file(DataFlow& df, const std::filesystem::path& path) {
  std::filesystem::path temp = path;
  temp += ".tmp";
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(temp.c_str(), "wb"));
  if (!file) throw Error(ErrorCode::io, "cannot create " + temp.string() + ": " + std::strerror(errno));
  std::size_t count = 0;
  try {
    write_all(file.get(), header_bytes(0), temp);
    if (!df.is_reset()) df.reset_state();
    std::vector<std::uint8_t> record;
    for (const Datapoint& dp : df.epoch()) {
      encode(dp, record);
      write_all(file.get(), record, temp);
      ++count;
    }
    finish(file.get(), count, temp);
    if (std::fclose(file.release()) != 0)
      throw Error(ErrorCode::io, "cannot close " + temp.string() + ": " + std::strerror(errno));
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) throw Error(ErrorCode::io, "cannot rename " + temp.string() + " to " + path.string() + ": " + ec.message());
  } catch (...) {
    file.reset();
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
  return count;
}

RecordFileData::RecordFileData(std::filesystem::path path) : path_(std::move(path)) {
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) throw Error(ErrorCode::io, "cannot open record file " + path_.string() + ": " + std::strerror(errno));
  std::setvbuf(file_.get(), nullptr, _IOFBF, 1 << 20);
  std::error_code ec;
  file_size_ = std::filesystem::file_size(path_, ec);
  if (ec) throw Error(ErrorCode::io, "cannot stat " + path_.string() + ": " + ec.message());
  std::array<std::uint8_t, kHeaderBytes> h{};
  if (file_size_ < kHeaderBytes)
    corrupt(fmt::format("short read: {} bytes, the header alone needs {}", file_size_, kHeaderBytes));
  read_exact(h.data(), h.size(), "the header");
  if (std::memcmp(h.data(), kMagic, 8) != 0) corrupt("wrong magic: not a vkpack record file");
  if (load_le<std::uint32_t>(h.data() + 24) != crc_of(h.data(), 24)) corrupt("header checksum mismatch");
  const auto version = load_le<std::uint32_t>(h.data() + 8);
  if (version != kRecordFileVersion)
    corrupt(fmt::format("version {}, this build reads version {}", version, kRecordFileVersion));
  count_ = static_cast<std::size_t>(load_le<std::uint64_t>(h.data() + 16));
}

void RecordFileData::on_start_epoch() {
  index_ = 0;
  offset_ = kHeaderBytes;
  if (std::fseek(file_.get(), static_cast<long>(offset_), SEEK_SET) != 0)
    throw Error(ErrorCode::io, "cannot seek in " + path_.string() + ": " + std::strerror(errno));
}

std::optional<Datapoint> RecordFileData::on_next() {
  if (index_ == count_) {
    if (offset_ != file_size_)
      corrupt(fmt::format("malformed: {} bytes after the last of {} records", file_size_ - offset_, count_));
    return std::nullopt;
  }
  const std::string where = fmt::format("record {} (at byte {})", index_, offset_);
  if (file_size_ - offset_ < kRecordHeadBytes)
    corrupt(fmt::format("truncated: the file ends inside {}, after {} of {} records", where, index_, count_));
  std::array<std::uint8_t, kRecordHeadBytes> head{};
  read_exact(head.data(), head.size(), "a record head");
  const auto length = load_le<std::uint64_t>(head.data());
  if (load_le<std::uint32_t>(head.data() + 12) != crc_of(head.data(), 8))
    corrupt(where + ": checksum mismatch in its length field");
  const std::uint64_t left = file_size_ - offset_ - kRecordHeadBytes;
  if (length > left) corrupt(fmt::format("truncated: {} needs {} bytes, the file has {} left", where, length, left));
  payload_.resize(static_cast<std::size_t>(length));
  read_exact(payload_.data(), payload_.size(), "a record");
  const std::uint32_t stored = load_le<std::uint32_t>(head.data() + 8),
                      computed = crc_of(payload_.data(), payload_.size());
  if (stored != computed)
    corrupt(fmt::format("{}: checksum mismatch (stored 0x{:08x}, computed 0x{:08x})", where, stored, computed));
  Datapoint dp;
  try {
    dp = decode_datapoint(payload_);
  } catch (const Error& e) {
    corrupt(where + ": " + e.what());
  }
  offset_ += kRecordHeadBytes + length;
  ++index_;
  return dp;
}

void RecordFileData::read_exact(void* dst, std::size_t n, const char* what) {
  if (std::fread(dst, 1, n, file_.get()) != n)
    throw Error(ErrorCode::io, fmt::format("{}: cannot read {}: {}", path_.string(), what,
                                           std::ferror(file_.get()) ? std::strerror(errno) : "unexpected end of file"));
}

void RecordFileData::corrupt(const std::string& what) const {
  throw Error(ErrorCode::bad_data, path_.string() + ": " + what);
}

}  // namespace vkp::dataflow
