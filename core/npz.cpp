#include "core/npz.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/read_file.h"
#include "core/safetensors.h"

namespace vkp {
namespace {

[[noreturn]] void bad(const std::string& what, const std::string& why) {
  throw Error(ErrorCode::bad_data, what + ": not a NumPy array file as expected: " + why);
}

// The value of 'key' in the header dict, up to the next top-level comma or brace (a
// shape's parentheses kept whole).
std::string field(const std::string& header, const std::string& key, const std::string& what) {
  const std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) bad(what, "its header has no '" + key + "' (header: " + header + ")");
  std::size_t i = header.find(':', at);
  if (i == std::string::npos) bad(what, "its header's '" + key + "' has no value");
  ++i;
  while (i < header.size() && header[i] == ' ') ++i;
  std::size_t end = i;
  if (i < header.size() && header[i] == '(') {
    end = header.find(')', i);
    if (end == std::string::npos) bad(what, "its header's shape is not closed");
    return header.substr(i, end + 1 - i);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  std::string value = header.substr(i, end - i);
  while (!value.empty() && value.back() == ' ') value.pop_back();
  return value;
}

std::vector<std::int64_t> parse_shape(const std::string& text, const std::string& what) {
  std::vector<std::int64_t> dims;
  std::size_t i = 1;  // past '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') break;
    std::size_t used = 0;
    try {
      dims.push_back(std::stoll(text.substr(i), &used));
    } catch (const std::exception&) {
      bad(what, "its shape " + text + " is not a tuple of integers");
    }
    if (dims.back() < 0) bad(what, "its shape " + text + " has a negative extent");
    i += used;
  }
  return dims;
}

struct Descr {
  DType dtype;
  std::size_t bytes;  // per element in the file
  bool from_f64 = false;
};

Descr parse_descr(std::string d, const std::string& what) {
  if (d.size() < 2 || (d.front() != '\'' && d.front() != '"')) bad(what, "its dtype " + d + " is not a string");
  d = d.substr(1, d.size() - 2);
  if (d == "|u1" || d == "|b1" || d == "u1" || d == "b1") return {DType::u8, 1};
  if (d.size() < 3) throw Error(ErrorCode::unsupported, what + ": NumPy dtype '" + d + "' is not read");
  if (d[0] == '>')
    throw Error(ErrorCode::unsupported, what + ": big-endian data ('" + d + "'); save it as little-endian ('<')");
  const std::string type = d.substr(1);
  if (type == "f4") return {DType::f32, 4};
  if (type == "f8") return {DType::f32, 8, true};
  if (type == "f2") return {DType::f16, 2};
  if (type == "i4") return {DType::i32, 4};
  if (type == "i8") return {DType::i64, 8};
  throw Error(ErrorCode::unsupported, what + ": NumPy dtype '" + d +
                                          "' is not read (float32, float64, float16, int32, int64, uint8, bool are)");
}

// Fortran order (the first axis fastest) to C order, element by element.
std::vector<std::byte> to_c_order(std::span<const std::byte> data, const std::vector<std::int64_t>& dims,
                                  std::size_t bytes) {
  std::vector<std::byte> out(data.size());
  const std::size_t rank = dims.size();
  std::vector<std::int64_t> index(rank, 0);
  const std::size_t count = bytes == 0 ? 0 : data.size() / bytes;
  for (std::size_t c = 0; c < count; ++c) {
    // c walks C order; its Fortran offset has the first axis fastest.
    std::int64_t f = 0, stride = 1;
    for (std::size_t a = 0; a < rank; ++a) {
      f += index[a] * stride;
      stride *= dims[a];
    }
    std::memcpy(out.data() + c * bytes, data.data() + static_cast<std::size_t>(f) * bytes, bytes);
    for (std::size_t a = rank; a-- > 0;) {
      if (++index[a] < dims[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

// Where the header starts in a .npy file and how long it is, from the preamble of format
// version 1 (2-byte length), 2 or 3 (4-byte length).
std::pair<std::size_t, std::size_t> header_extent(std::span<const std::byte> bytes, const std::string& what) {
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(bytes[i]); };
  const std::size_t major = byte(6);
  if (major == 1) return {10, byte(8) | byte(9) << 8};
  if (major != 2 && major != 3) bad(what, "format version " + std::to_string(major) + " is not 1, 2 or 3");
  if (bytes.size() < 12) bad(what, "it ends inside its preamble");
  return {12, byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24};
}

// That the elements `dims` declare fill the `data_bytes` that hold them, checked on the
// way: a shape whose product exceeds what the file holds (or 64 bits) is refused before
// anything is allocated; `shape_text` gives the header's shape for the message.
template <typename ShapeText>
void check_element_count(const std::vector<std::int64_t>& dims, std::size_t data_bytes, std::size_t element_bytes,
                         const ShapeText& shape_text, const std::string& what) {
  std::int64_t count = 1;
  for (std::int64_t e : dims) {
    if (e != 0 && count > static_cast<std::int64_t>(data_bytes / std::max<std::size_t>(element_bytes, 1)) / e) {
      count = -1;
      break;
    }
    count *= e;
  }
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    // No elements, but the other extents still multiply into the strides: refused where
    // their product overflows ([0, 2^60, 4000] came from fuzzing).
    std::int64_t product = 1;
    for (std::int64_t e : dims)
      if (e != 0 && __builtin_mul_overflow(product, e, &product))
        bad(what, "its shape " + shape_text() + " has more than 2^63 elements");
    count = 0;
  }
  if (count < 0)
    bad(what, "its shape " + shape_text() + " declares more elements of " + std::to_string(element_bytes) +
                  " bytes than the " + std::to_string(data_bytes) + " bytes of data hold");
  if (data_bytes != static_cast<std::size_t>(count) * element_bytes)
    bad(what, std::to_string(count) + " elements of " + std::to_string(element_bytes) + " bytes need " +
                  std::to_string(static_cast<std::size_t>(count) * element_bytes) + " bytes of data, the file has " +
                  std::to_string(data_bytes));
}

}  // namespace

Array parse_npy(std::span<const std::byte> bytes, const std::string& what) {
  static const unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) bad(what, "it does not start with \\x93NUMPY");
  const auto [start, header_len] = header_extent(bytes, what);
  if (start + header_len > bytes.size()) bad(what, "it ends inside its header");
  const std::string header(reinterpret_cast<const char*>(bytes.data() + start), header_len);
  const Descr d = parse_descr(field(header, "descr", what), what);
  const std::string order = field(header, "fortran_order", what);
  if (order != "False" && order != "True") bad(what, "fortran_order is '" + order + "'");
  const std::vector<std::int64_t> dims = parse_shape(field(header, "shape", what), what);
  const std::span<const std::byte> data = bytes.subspan(start + header_len);
  check_element_count(
      dims, data.size(), d.bytes, [&] { return field(header, "shape", what); }, what);
  std::vector<std::byte> c_order;
  std::span<const std::byte> elements = data;
  if (order == "True" && dims.size() > 1) {
    c_order = to_c_order(data, dims, d.bytes);
    elements = c_order;
  }
  Array out(d.dtype, Shape(dims));
  if (!d.from_f64) {
    if (!elements.empty()) std::memcpy(out.bytes().data(), elements.data(), elements.size());  // null when empty
    return out;
  }
  std::span<float> f = out.data<float>();
  for (std::size_t i = 0; i < f.size(); ++i) {
    double v = 0;
    std::memcpy(&v, elements.data() + i * 8, 8);
    f[i] = static_cast<float>(v);
  }
  return out;
}

Array read_npy(const std::string& path) { return parse_npy(read_whole_file(path), path); }

std::map<std::string, Array> read_npz(const std::string& path) {
  int code = 0;
  std::unique_ptr<zip_t, int (*)(zip_t*)> archive(zip_open(path.c_str(), ZIP_RDONLY, &code), zip_close);
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error(
        code == ZIP_ER_NOENT || code == ZIP_ER_OPEN || code == ZIP_ER_READ ? ErrorCode::io : ErrorCode::bad_data,
        "cannot read " + path + " as an .npz (zip) archive: " + why);
  }
  std::map<std::string, Array> arrays;
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0)
      throw Error(ErrorCode::bad_data, path + ": entry " + std::to_string(i) + ": " + zip_strerror(archive.get()));
    std::string name = st.name;
    if (name.size() > kMaxTensorNameBytes + 4)
      bad(path + ": entry " + std::to_string(i), "a name of " + std::to_string(name.size()) +
                                                     " bytes; array names are at most " +
                                                     std::to_string(kMaxTensorNameBytes));
    const std::string what = path + ": " + name;
    if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") bad(what, "an .npz holds only .npy files");
    // The sizes come from the archive: nothing is allocated on their word alone. Deflate
    // expands at most 1032:1, so a larger claim is a lie (a zip bomb); and the entry is
    // read a chunk at a time, so memory grows only with bytes that are really there.
    if ((st.valid & ZIP_STAT_COMP_SIZE) && st.size / 1032 > st.comp_size + 1)
      bad(what, "declares " + std::to_string(st.size) + " bytes uncompressed from " + std::to_string(st.comp_size) +
                    " compressed, more than deflate can expand (at most 1032:1)");
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0), zip_fclose);
    if (!file) throw Error(ErrorCode::bad_data, what + ": cannot be read: " + zip_strerror(archive.get()));
    std::vector<std::byte> bytes;
    constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
    while (bytes.size() < st.size) {
      const std::size_t at = bytes.size();
      bytes.resize(at + static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, st.size - at)));
      const zip_int64_t got = zip_fread(file.get(), bytes.data() + at, bytes.size() - at);
      if (got != static_cast<zip_int64_t>(bytes.size() - at))
        throw Error(ErrorCode::bad_data, what + ": declares " + std::to_string(st.size) + " bytes, " +
                                             (got < 0 ? std::string("cannot be read: ") + zip_strerror(archive.get())
                                                      : "holds " + std::to_string(at + std::max<zip_int64_t>(got, 0))));
    }
    name.resize(name.size() - 4);
    arrays.emplace(name, parse_npy(bytes, what));
  }
  return arrays;
}

std::string npy_bytes(const Array& array) {
  const char* descr = "";
  switch (array.dtype()) {
    case DType::f32: descr = "<f4"; break;
    case DType::f16: descr = "<f2"; break;
    case DType::i32: descr = "<i4"; break;
    case DType::i64: descr = "<i8"; break;
    case DType::u8: descr = "|u1"; break;
  }
  const std::vector<std::int64_t>& dims = array.shape().dims();
  std::string shape = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) shape += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  shape += dims.size() == 1 ? ",)" : ")";  // (4,) but (2, 3) and ()
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = 10 + header.size() + 1;  // magic, version, length; the newline
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (array.nbytes() > 0) out.append(reinterpret_cast<const char*>(array.bytes().data()), array.nbytes());
  return out;
}

void write_npz(const std::string& path, const std::map<std::string, Array>& arrays) {
  std::vector<std::string> images;  // alive until zip_close writes them
  images.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    if (name.empty() || name.find('/') != std::string::npos)
      throw Error(ErrorCode::invalid_argument, "write_npz: '" + name + "' is not an array name for " + path);
    images.push_back(npy_bytes(array));
  }
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (archive == nullptr)
    throw Error(ErrorCode::io, "write_npz: cannot create " + path + " (libzip error " + std::to_string(code) + ")");
  const auto fail = [&](const std::string& why) {
    const std::string detail = zip_strerror(archive);
    zip_discard(archive);
    throw Error(ErrorCode::io, "write_npz: " + path + ": " + why + " (" + detail + ")");
  };
  std::size_t i = 0;
  for (const auto& [name, array] : arrays) {
    const std::string& image = images[i++];
    zip_source_t* source = zip_source_buffer(archive, image.data(), image.size(), 0);
    if (source == nullptr) fail("no source for " + name);
    const zip_int64_t index =
        zip_file_add(archive, (name + ".npy").c_str(), source, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE);
    if (index < 0) {
      zip_source_free(source);
      fail("cannot add " + name);
    }
    if (zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
      fail("cannot store " + name);
  }
  if (zip_close(archive) != 0) fail("cannot write it");
}

}  // namespace vkp
