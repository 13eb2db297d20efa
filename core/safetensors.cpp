#include "core/safetensors.h"

#include "core/atomic_file.h"
#include "core/json_depth.h"
#include "core/little_endian.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string_view>

namespace vkp {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

// The reference implementation refuses headers above 100 MB; so do we, so that a
// corrupted length cannot make us allocate gigabytes for a header.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";

struct DTypeName {
  DType dtype;
  std::string_view name;
};
constexpr DTypeName kDTypeNames[] = {
    {DType::f32, "F32"}, {DType::f16, "F16"}, {DType::i32, "I32"}, {DType::i64, "I64"}, {DType::u8, "U8"}};

std::string_view safetensors_name(DType dtype) {
  for (const DTypeName& d : kDTypeNames)
    if (d.dtype == dtype) return d.name;
  return "?";
}

std::optional<DType> parse_safetensors_dtype(std::string_view name) {
  for (const DTypeName& d : kDTypeNames)
    if (d.name == name) return d.dtype;
  return std::nullopt;
}

// `what` is a view so that a literal allocates nothing before errno is read.
[[noreturn]] void fail_io(const std::string& path, std::string_view what, int error_number) {
  throw Error(ErrorCode::io, path + ": " + std::string(what) + ": " + std::strerror(error_number));
}

[[noreturn]] void fail_data(const std::string& path, const std::string& what) {
  throw Error(ErrorCode::bad_data, path + ": not a valid safetensors file: " + what);
}

// ------------------------------------------------------------------------- writing

void check_names(const TensorFile& file, const std::string& path) {
  std::set<std::string_view> seen;
  for (const auto& [name, array] : file.tensors) {
    std::string problem;
    if (name.empty())
      problem = "a tensor has an empty name";
    else if (name == kMetadataKey)
      problem = "the tensor name '__metadata__' is reserved for the metadata";
    else if (!seen.insert(name).second)
      problem = "two tensors are named '" + name + "'";
    if (!problem.empty()) throw Error(ErrorCode::invalid_argument, path + ": cannot write: " + problem);
  }
}

// The header JSON, padded with spaces to a multiple of 8 bytes; offsets follow the order
// of file.tensors.
std::string header_text(const TensorFile& file, const std::string& path) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) {
    nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
    for (const auto& [key, value] : file.metadata) metadata[key] = value;
    header[std::string(kMetadataKey)] = std::move(metadata);
  }
  std::uint64_t offset = 0;
  for (const auto& [name, array] : file.tensors) {
    const std::uint64_t end = offset + array.nbytes();
    header[name] = {{"dtype", std::string(safetensors_name(array.dtype()))},
                    {"shape", array.shape().dims()},
                    {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    // Names and metadata must be valid UTF-8.
    throw Error(ErrorCode::invalid_argument, path + ": cannot write the header: " + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// ------------------------------------------------------------------------- reading

// An open file read at absolute offsets; closed on destruction.
class InputFile {
 public:
  explicit InputFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail_io(path_, "cannot open", errno);
    struct stat info {};
    if (::fstat(fd_, &info) != 0) {
      const int error_number = errno;
      ::close(fd_);
      fail_io(path_, "cannot stat", error_number);
    }
    if (!S_ISREG(info.st_mode)) {
      ::close(fd_);
      throw Error(ErrorCode::io, path_ + ": cannot read: not a regular file");
    }
    size_ = static_cast<std::uint64_t>(info.st_size);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { ::close(fd_); }

  std::uint64_t size() const { return size_; }

  void read(std::uint64_t offset, std::span<std::byte> out) const {
    while (!out.empty()) {
      const ssize_t n = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail_io(path_, "cannot read", errno);
      if (n == 0) fail_data(path_, "file ends at byte " + std::to_string(offset) + " (truncated while reading?)");
      out = out.subspan(static_cast<std::size_t>(n));
      offset += static_cast<std::uint64_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// One tensor as the header describes it; offsets relative to the data section.
struct TensorEntry {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> dims;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

std::string describe_json(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// A JSON array of non-negative integers of the given length (any length when -1).
std::vector<std::uint64_t> unsigned_list(const nlohmann::json& value, int length, const std::string& what,
                                         const std::string& path) {
  const bool ok_shape = value.is_array() && (length < 0 || value.size() == static_cast<std::size_t>(length));
  bool ok = ok_shape;
  for (std::size_t i = 0; ok && i < value.size(); ++i) ok = value[i].is_number_unsigned();
  if (!ok) {
    const std::string expected = length < 0 ? "a list of non-negative integers"
                                            : "a list of " + std::to_string(length) + " non-negative integers";
    fail_data(path, what + " must be " + expected + ", found " + describe_json(value));
  }
  std::vector<std::uint64_t> out;
  for (const nlohmann::json& v : value) out.push_back(v.get<std::uint64_t>());
  return out;
}

// Element count of `dims` times `element_bytes`, or nullopt when it overflows 64 bits.
std::optional<std::uint64_t> byte_count(const std::vector<std::uint64_t>& dims, std::uint64_t element_bytes) {
  std::uint64_t count = element_bytes;
  for (std::uint64_t d : dims) {
    if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / d) return std::nullopt;
    count *= d;
  }
  return count;
}

TensorEntry parse_entry(const std::string& name, const nlohmann::json& value, const std::string& path) {
  if (name.size() > kMaxTensorNameBytes)
    fail_data(path, "a tensor name of " + std::to_string(name.size()) + " bytes (\"" + name.substr(0, 40) +
                        "...\"); names are at most " + std::to_string(kMaxTensorNameBytes));
  const std::string where = "tensor '" + name + "'";
  if (!value.is_object()) fail_data(path, where + " must be a JSON object, found " + describe_json(value));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key)) fail_data(path, where + " has no \"" + key + "\"");
  TensorEntry entry;
  entry.name = name;
  const nlohmann::json& dtype = value["dtype"];
  const std::optional<DType> parsed =
      dtype.is_string() ? parse_safetensors_dtype(dtype.get<std::string>()) : std::nullopt;
  if (!parsed)
    fail_data(path, where + " has dtype " + describe_json(dtype) + "; vkpack reads F32, F16, I32, I64 and U8");
  entry.dtype = *parsed;
  const std::vector<std::uint64_t> dims = unsigned_list(value["shape"], -1, where + ": \"shape\"", path);
  const std::vector<std::uint64_t> offsets =
      unsigned_list(value["data_offsets"], 2, where + ": \"data_offsets\"", path);
  entry.begin = offsets[0];
  entry.end = offsets[1];
  if (entry.begin > entry.end)
    fail_data(path, where + " has data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
                        "] out of order: begin must not exceed end");
  const std::optional<std::uint64_t> bytes = byte_count(dims, size_of(entry.dtype));
  std::string shape_text = describe_json(value["shape"]);
  if (!bytes || *bytes != entry.end - entry.begin)
    fail_data(path, where + " has shape " + shape_text + " and dtype " + std::string(safetensors_name(entry.dtype)) +
                        ", which need " + (bytes ? std::to_string(*bytes) : std::string("more than 2^64")) +
                        " bytes, but its data_offsets span " + std::to_string(entry.end - entry.begin));
  for (std::uint64_t d : dims) {
    if (d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail_data(path, where + " has an extent too large for a shape: " + shape_text);
    entry.dims.push_back(static_cast<std::int64_t>(d));
  }
  return entry;
}

std::map<std::string, std::string> parse_metadata(const nlohmann::json& value, const std::string& path) {
  if (!value.is_object())
    fail_data(path, "\"__metadata__\" must be a JSON object of strings, found " + describe_json(value));
  std::map<std::string, std::string> out;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string())
      fail_data(path, "metadata \"" + key + "\" is " + describe_json(item) + "; metadata values must be strings");
    out[key] = item.get<std::string>();
  }
  return out;
}

// Sorts `entries` by offset and checks that they tile [0, data_bytes) exactly.
void check_layout(std::vector<TensorEntry>& entries, std::uint64_t data_bytes, const std::string& path) {
  std::sort(entries.begin(), entries.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t next = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& e : entries) {
    const std::string span = "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.end > data_bytes)
      fail_data(path, "tensor '" + e.name + "' has data_offsets " + span + " but the data section holds only " +
                          std::to_string(data_bytes) + " bytes (truncated file?)");
    if (e.begin < next)
      fail_data(path, "tensor '" + e.name + "' has data_offsets " + span + ", overlapping tensor '" + previous->name +
                          "', which ends at " + std::to_string(next));
    if (e.begin > next)
      fail_data(path, "data bytes [" + std::to_string(next) + ", " + std::to_string(e.begin) +
                          ") belong to no tensor; the format requires tensors to cover the data section");
    next = e.end;
    previous = &e;
  }
  if (next != data_bytes)
    fail_data(path, "the data section holds " + std::to_string(data_bytes) + " bytes but its tensors end at " +
                        std::to_string(next));
}

// Parses the header; fills `metadata` and returns the tensors in data-section order.
std::vector<TensorEntry> parse_header(const std::string& text, std::uint64_t data_bytes, const std::string& path,
                                      std::map<std::string, std::string>& metadata) {
  const std::size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos || text[first] != '{') fail_data(path, "the header does not start with '{'");
  if (const std::size_t depth = json_nesting_depth(text); depth > kMaxJsonDepth)
    fail_data(path, "the header nests " + std::to_string(depth) + " levels deep, more than the " +
                        std::to_string(kMaxJsonDepth) + " read (safetensors needs 3)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number past double
    fail_data(path, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail_data(path, "the header must be a JSON object");
  std::vector<TensorEntry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey)
      metadata = parse_metadata(value, path);
    else
      entries.push_back(parse_entry(name, value, path));
  }
  check_layout(entries, data_bytes, path);
  return entries;
}

}  // namespace

void write_safetensors(const std::string& path, const TensorFile& file) {
  check_names(file, path);
  const std::string header = header_text(file, path);
  std::byte length[8];
  const std::uint64_t n = header.size();
  store_le(length, n);

  AtomicFile out(path);
  out.write(length);
  out.write(std::as_bytes(std::span<const char>(header)));
  for (const auto& [name, array] : file.tensors) out.write(array.bytes());
  out.commit();
}

TensorFile read_safetensors(const std::string& path) {
  const InputFile in(path);
  if (in.size() < 8)
    fail_data(path, "the file has " + std::to_string(in.size()) + " bytes, fewer than the 8-byte header length");
  std::byte length[8];
  in.read(0, length);
  const auto n = load_le<std::uint64_t>(length);
  if (n > in.size() - 8)
    fail_data(path, "header length " + std::to_string(n) + " exceeds the " + std::to_string(in.size() - 8) +
                        " bytes after it (truncated file?)");
  if (n > kMaxHeaderBytes) fail_data(path, "header length " + std::to_string(n) + " exceeds the limit of 100 MB");
  if (n < 2) fail_data(path, "header length " + std::to_string(n) + " is too short for a JSON object");

  std::string header(n, '\0');
  in.read(8, std::as_writable_bytes(std::span<char>(header)));
  TensorFile file;
  const std::uint64_t data_start = 8 + n;
  const std::vector<TensorEntry> entries = parse_header(header, in.size() - data_start, path, file.metadata);
  for (const TensorEntry& e : entries) {
    Array array(e.dtype, Shape(e.dims));
    in.read(data_start + e.begin, array.bytes());
    file.tensors.emplace_back(e.name, std::move(array));
  }
  return file;
}

}  // namespace vkp
