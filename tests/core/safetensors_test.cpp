// safetensors: round trips through the library, and the format checked against an
// independent reader and writer written here by hand from the format's description
// (8-byte little-endian header length, JSON header, raw data section).
#include "dir_listing.h"
#include "core/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "file_size_limit.h"
#include "core/half.h"

namespace vkp {
namespace {

namespace fs = std::filesystem;
using test::FileSizeLimit;

// ------------------------------------------------------------ a minimal JSON parser
// Enough of JSON for a safetensors header: objects (keys in file order), arrays,
// strings with escapes, non-negative integers.
struct Json {
  enum class Kind { object, array, string, number } kind = Kind::number;
  std::vector<std::string> keys;  // object: keys[i] names values[i]
  std::vector<Json> values;       // object members or array items
  std::string text;
  std::uint64_t number = 0;

  const Json& operator[](const std::string& key) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return values[i];
    throw std::runtime_error("no key " + key);
  }
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}
  Json parse_document() {
    Json v = parse();
    skip();
    if (at_ != s_.size()) throw std::runtime_error("trailing characters");
    return v;
  }

 private:
  void skip() {
    while (at_ < s_.size() && std::strchr(" \t\r\n", s_[at_]) != nullptr) ++at_;
  }
  char next() {
    if (at_ >= s_.size()) throw std::runtime_error("unexpected end");
    return s_[at_++];
  }
  void expect(char c) {
    skip();
    if (next() != c) throw std::runtime_error(std::string("expected ") + c);
  }
  Json parse() {
    skip();
    const char c = s_.at(at_);
    if (c == '{' || c == '[') return parse_container(c == '{');
    Json v;
    if (c == '"') {
      v.kind = Json::Kind::string;
      v.text = parse_string();
      return v;
    }
    if (c < '0' || c > '9') throw std::runtime_error("unsupported value");
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') v.number = v.number * 10 + (s_[at_++] - '0');
    return v;
  }
  Json parse_container(bool object) {
    Json v;
    v.kind = object ? Json::Kind::object : Json::Kind::array;
    ++at_;
    skip();
    if (s_.at(at_) == (object ? '}' : ']')) {
      ++at_;
      return v;
    }
    for (;;) {
      if (object) {
        skip();
        v.keys.push_back(parse_string());
        expect(':');
      }
      v.values.push_back(parse());
      skip();
      const char c = next();
      if (c == (object ? '}' : ']')) return v;
      if (c != ',') throw std::runtime_error("expected ,");
    }
  }
  std::string parse_string() {
    if (next() != '"') throw std::runtime_error("expected string");
    std::string out;
    for (char c = next(); c != '"'; c = next()) {
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = next();
      const std::string_view simple = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
      if (const auto k = simple.find(e); k != std::string_view::npos) {
        out += meaning[k];
      } else if (e == 'u') {
        append_utf8(out, std::stoul(std::string(s_.substr(at_, 4)), nullptr, 16));
        at_ += 4;
      } else {
        throw std::runtime_error("bad escape");
      }
    }
    return out;
  }
  // Basic multilingual plane only: all a writer escapes is control characters.
  static void append_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80)
      out += static_cast<char>(cp);
    else if (cp < 0x800)
      out += {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    else
      out += {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
              static_cast<char>(0x80 | (cp & 0x3F))};
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

// ------------------------------------------------------ an independent reader / writer

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string le64(std::uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// A safetensors file from a header text and a data section, as any writer lays it out.
std::string file_by_hand(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

struct RawTensor {
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0, end = 0;
  std::string bytes;
};

struct RawFile {
  std::uint64_t header_length = 0;
  std::string header;
  Json json;
  std::map<std::string, RawTensor> tensors;
};

RawFile read_by_hand(const fs::path& path) {
  const std::string bytes = read_bytes(path);
  RawFile f;
  for (int i = 0; i < 8; ++i)
    f.header_length |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes.at(i))) << (8 * i);
  f.header = bytes.substr(8, f.header_length);
  f.json = JsonParser(f.header).parse_document();
  const std::string data = bytes.substr(8 + f.header_length);
  for (std::size_t i = 0; i < f.json.keys.size(); ++i) {
    if (f.json.keys[i] == "__metadata__") continue;
    const Json& t = f.json.values[i];
    RawTensor r;
    r.dtype = t["dtype"].text;
    for (const Json& d : t["shape"].values) r.shape.push_back(d.number);
    r.begin = t["data_offsets"].values.at(0).number;
    r.end = t["data_offsets"].values.at(1).number;
    r.bytes = data.substr(r.begin, r.end - r.begin);
    f.tensors[f.json.keys[i]] = r;
  }
  return f;
}

// ------------------------------------------------------------------------ fixtures

std::string as_string(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Random bytes: every bit pattern of every dtype must survive unchanged.
Array random_array(DType dtype, Shape shape, std::mt19937& rng) {
  Array a(dtype, std::move(shape));
  for (std::byte& b : a.bytes()) b = static_cast<std::byte>(rng() & 0xff);
  return a;
}

TensorFile sample_file() {
  std::mt19937 rng(1234);
  TensorFile f;
  f.tensors.emplace_back("conv1/W", random_array(DType::f32, Shape{3, 3, 1, 5}, rng));
  f.tensors.emplace_back("bn/mean", random_array(DType::f16, Shape{7}, rng));
  f.tensors.emplace_back("labels", random_array(DType::i32, Shape{2, 3}, rng));
  f.tensors.emplace_back("global_step", random_array(DType::i64, Shape{}, rng));
  f.tensors.emplace_back("mask", random_array(DType::u8, Shape{13}, rng));
  f.tensors.emplace_back("empty", Array(DType::f32, Shape{0, 4}));
  f.metadata = {{"global_step", "1200"}, {"epoch", "3"}, {"note", "quote \" backslash \\ newline \n tab \t é ∑"}};
  return f;
}

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkpack_safetensors_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const { return test::sorted_file_names(dir_); }

  fs::path dir_;
};

void expect_same(const TensorFile& got, const TensorFile& want) {
  ASSERT_EQ(got.tensors.size(), want.tensors.size());
  for (std::size_t i = 0; i < want.tensors.size(); ++i) {
    EXPECT_EQ(got.tensors[i].first, want.tensors[i].first);
    EXPECT_EQ(got.tensors[i].second.dtype(), want.tensors[i].second.dtype()) << want.tensors[i].first;
    EXPECT_EQ(got.tensors[i].second.shape(), want.tensors[i].second.shape()) << want.tensors[i].first;
    EXPECT_EQ(as_string(got.tensors[i].second.bytes()), as_string(want.tensors[i].second.bytes()))
        << want.tensors[i].first;
  }
  EXPECT_EQ(got.metadata, want.metadata);
}

// ----------------------------------------------------------------------- round trips

TEST_F(Safetensors, RoundTripsEveryDtypeShapeAndMetadataInOrder) {
  const TensorFile want = sample_file();
  write_safetensors(path("model-1200.safetensors"), want);
  expect_same(read_safetensors(path("model-1200.safetensors")), want);
  EXPECT_EQ(listing(), std::vector<std::string>{"model-1200.safetensors"});
}

TEST_F(Safetensors, RoundTripsAFileWithoutTensorsOrMetadata) {
  write_safetensors(path("empty.safetensors"), TensorFile{});
  const TensorFile got = read_safetensors(path("empty.safetensors"));
  EXPECT_TRUE(got.tensors.empty());
  EXPECT_TRUE(got.metadata.empty());
}

TEST_F(Safetensors, OverwritingReplacesThePreviousFile) {
  TensorFile first = sample_file();
  write_safetensors(path("m.safetensors"), first);
  TensorFile second;
  second.tensors.emplace_back("w", Array::from<float>(Shape{2}, std::vector<float>{0.25f, -8.5f}));
  write_safetensors(path("m.safetensors"), second);
  expect_same(read_safetensors(path("m.safetensors")), second);
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
}

// ------------------------------------------------------------ the format, by hand

TEST_F(Safetensors, IndependentReaderReadsWhatTheLibraryWrote) {
  const TensorFile want = sample_file();
  write_safetensors(path("m.safetensors"), want);
  const RawFile raw = read_by_hand(path("m.safetensors"));

  EXPECT_EQ(raw.header_length % 8, 0u) << "the data section must start 8-byte aligned";
  EXPECT_EQ(raw.header.front(), '{');
  EXPECT_EQ(raw.header.find_first_not_of(' ', raw.header.rfind('}') + 1), std::string::npos)
      << "padding must be spaces: " << raw.header;
  const char* names[] = {"F32", "F16", "I32", "I64", "U8", "F32"};
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < want.tensors.size(); ++i) {
    const auto& [name, array] = want.tensors[i];
    ASSERT_EQ(raw.tensors.count(name), 1u) << name;
    const RawTensor& t = raw.tensors.at(name);
    EXPECT_EQ(t.dtype, names[i]) << name;
    EXPECT_EQ(t.shape, std::vector<std::uint64_t>(array.shape().dims().begin(), array.shape().dims().end()));
    EXPECT_EQ(t.begin, offset) << name << ": tensors are stored in the order given";
    EXPECT_EQ(t.end - t.begin, array.nbytes()) << name;
    EXPECT_EQ(t.bytes, as_string(array.bytes())) << name;
    offset = t.end;
  }
  EXPECT_EQ(8 + raw.header_length + offset, fs::file_size(path("m.safetensors")));
  const Json& metadata = raw.json["__metadata__"];
  ASSERT_EQ(metadata.keys.size(), want.metadata.size());
  for (std::size_t i = 0; i < metadata.keys.size(); ++i) {
    EXPECT_EQ(metadata.values[i].kind, Json::Kind::string);
    EXPECT_EQ(metadata.values[i].text, want.metadata.at(metadata.keys[i]));
  }
}

template <class T>
std::string raw_values(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

TEST_F(Safetensors, ReadsAHandWrittenFileInDataOrderWhateverTheHeaderOrder) {
  // Header keys out of data order, metadata last, pretty-printed, unpadded.
  const std::string header = R"({
    "b": {"dtype": "I64", "shape": [2], "data_offsets": [12, 28]},
    "a": {"dtype": "F32", "shape": [1, 3], "data_offsets": [0, 12]},
    "h": {"dtype": "F16", "shape": [2], "data_offsets": [28, 32]},
    "c": {"dtype": "U8", "shape": [], "data_offsets": [32, 33]},
    "d": {"dtype": "I32", "shape": [1], "data_offsets": [33, 37]},
    "__metadata__": {"format": "pt", "escaped": "a\"b\\c\u00e9"}
  })";
  const std::string data = raw_values<float>({1.5f, -2.0f, 1e-3f}) + raw_values<std::int64_t>({-5, 1LL << 40}) +
                           raw_values<std::uint16_t>({to_half(0.5f).bits, to_half(-3.0f).bits}) + "\xfe" +
                           raw_values<std::int32_t>({-123456});
  write_bytes(path("hand.safetensors"), file_by_hand(header, data));

  const TensorFile f = read_safetensors(path("hand.safetensors"));
  ASSERT_EQ(f.tensors.size(), 5u);
  const char* order[] = {"a", "b", "h", "c", "d"};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f.tensors[i].first, order[i]);
  EXPECT_EQ(f.tensors[0].second.shape(), (Shape{1, 3}));
  EXPECT_EQ(f.tensors[0].second.data<float>()[2], 1e-3f);
  EXPECT_EQ(f.tensors[1].second.data<std::int64_t>()[1], 1LL << 40);
  EXPECT_EQ(f.tensors[2].second.dtype(), DType::f16);
  EXPECT_EQ(as_string(f.tensors[2].second.bytes()), data.substr(28, 4));
  EXPECT_EQ(f.tensors[3].second.shape(), Shape{});
  EXPECT_EQ(f.tensors[3].second.data<std::uint8_t>()[0], 0xfe);
  EXPECT_EQ(f.tensors[4].second.data<std::int32_t>()[0], -123456);
  EXPECT_EQ(f.metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"escaped", "a\"b\\c\xc3\xa9"}}));
}

// ------------------------------------------------------------------ broken files

struct Broken {
  const char* what;
  std::string bytes;
  ErrorCode code;
  std::string message;
};

std::string tensor_header(const std::string& entry) { return R"({"w": )" + entry + "}"; }
const std::string kFour = raw_values<float>({1, 2, 3, 4});  // 16 bytes

std::vector<Broken> broken_files() {
  const std::string ok = R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 16]})";
  return {
      {"too short", std::string("\x10\0\0", 3), ErrorCode::bad_data,
       "has 3 bytes, fewer than the 8-byte header length"},
      {"header length past the end", le64(1000) + "{}", ErrorCode::bad_data,
       "header length 1000 exceeds the 2 bytes after it"},
      {"header length absurd", le64(~0ull) + "{}", ErrorCode::bad_data, "header length 18446744073709551615 exceeds"},
      {"not JSON", file_by_hand(R"({"w": {"dtype": )", ""), ErrorCode::bad_data, "the header is not valid JSON"},
      {"not an object", file_by_hand("[1, 2]", ""), ErrorCode::bad_data, "does not start with '{'"},
      {"invalid UTF-8", file_by_hand("{\"\xff\": 1}", ""), ErrorCode::bad_data, "not valid JSON"},
      {"unknown dtype",
       file_by_hand(tensor_header(R"({"dtype": "BF16", "shape": [8], "data_offsets": [0, 16]})"), kFour),
       ErrorCode::bad_data, "tensor 'w' has dtype \"BF16\"; vkpack reads F32, F16, I32, I64 and U8"},
      {"no shape", file_by_hand(tensor_header(R"({"dtype": "F32", "data_offsets": [0, 16]})"), kFour),
       ErrorCode::bad_data, "tensor 'w' has no \"shape\""},
      {"negative extent",
       file_by_hand(tensor_header(R"({"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]})"), kFour),
       ErrorCode::bad_data, "\"shape\" must be a list of non-negative integers, found [-4]"},
      {"three offsets",
       file_by_hand(tensor_header(R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 8, 16]})"), kFour),
       ErrorCode::bad_data, "\"data_offsets\" must be a list of 2 non-negative integers"},
      {"offsets past the data", file_by_hand(tensor_header(ok), kFour.substr(0, 12)), ErrorCode::bad_data,
       "tensor 'w' has data_offsets [0, 16] but the data section holds only 12 bytes"},
      {"begin after end",
       file_by_hand(tensor_header(R"({"dtype": "F32", "shape": [4], "data_offsets": [16, 0]})"), kFour),
       ErrorCode::bad_data, "data_offsets [16, 0] out of order"},
      {"bytes do not match shape",
       file_by_hand(tensor_header(R"({"dtype": "I64", "shape": [4], "data_offsets": [0, 16]})"), kFour),
       ErrorCode::bad_data, "shape [4] and dtype I64, which need 32 bytes, but its data_offsets span 16"},
      {"overflowing shape",
       file_by_hand(tensor_header(R"({"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]})"),
                    kFour),
       ErrorCode::bad_data, "which need more than 2^64 bytes"},
      {"overlap",
       file_by_hand(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
                                   "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                    kFour),
       ErrorCode::bad_data, "tensor 'b' has data_offsets [8, 16], overlapping tensor 'a', which ends at 12"},
      {"hole",
       file_by_hand(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                    kFour),
       ErrorCode::bad_data, "data bytes [4, 8) belong to no tensor"},
      {"trailing bytes", file_by_hand(tensor_header(ok), kFour + "xyz"), ErrorCode::bad_data,
       "the data section holds 19 bytes but its tensors end at 16"},
      {"tensor not an object", file_by_hand(tensor_header("7"), ""), ErrorCode::bad_data,
       "tensor 'w' must be a JSON object"},
      {"metadata not strings", file_by_hand(R"({"__metadata__": {"step": 12}})", ""), ErrorCode::bad_data,
       "metadata \"step\" is 12; metadata values must be strings"},
      // A shape nested 200000 deep: the error message's dump of it recursed per level
      // and ended on the stack (a crash) before the depth was checked.
      {"nested beyond any format",
       file_by_hand(tensor_header(R"({"dtype": "F32", "shape": )" + std::string(200000, '[') +
                                  std::string(200000, ']') + R"(, "data_offsets": [0, 16]})"),
                    kFour),
       ErrorCode::bad_data, "the header nests 200002 levels deep, more than the 64 read"},
      // Found by tests/fuzz (safetensors): nlohmann-json reports a number past double's
      // range as out_of_range, not parse_error, and it escaped the reader uncaught.
      {"number past double", file_by_hand(R"({"__metadata__": {"step": 7e777}})", ""), ErrorCode::bad_data,
       "the header is not valid JSON: [json.exception.out_of_range.406] number overflow parsing '7e777'"},
      {"name beyond any model",
       file_by_hand(R"({")" + std::string(5000, 'n') + R"(": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})",
                    kFour),
       ErrorCode::bad_data, "a tensor name of 5000 bytes"},
  };
}

TEST_F(Safetensors, EveryKindOfBrokenFileIsAnErrorNamingFileAndProblem) {
  for (const Broken& b : broken_files()) {
    const std::string file = path("broken.safetensors");
    write_bytes(file, b.bytes);
    try {
      read_safetensors(file);
      ADD_FAILURE() << b.what << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), b.code) << b.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(file + ": "), std::string::npos) << b.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << b.what << ": " << e.what();
    }
  }
}

TEST_F(Safetensors, ATruncatedCheckpointIsBadData) {
  write_safetensors(path("m.safetensors"), sample_file());
  const std::string whole = read_bytes(path("m.safetensors"));
  for (std::size_t keep : {std::size_t{0}, std::size_t{7}, std::size_t{20}, whole.size() - 1}) {
    write_bytes(path("cut.safetensors"), whole.substr(0, keep));
    try {
      read_safetensors(path("cut.safetensors"));
      ADD_FAILURE() << "no error reading the first " << keep << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_data) << e.what();
      EXPECT_NE(std::string(e.what()).find("cut.safetensors: not a valid safetensors file"), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(Safetensors, AMissingFileOrADirectoryIsAnIoError) {
  for (const std::string& p : {path("missing.safetensors"), dir_.string()}) {
    try {
      read_safetensors(p);
      ADD_FAILURE() << p << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(p + ": cannot ", 0), 0u) << e.what();
    }
  }
}

// ------------------------------------------------------------- failures while writing

TEST_F(Safetensors, RejectsDuplicateEmptyAndReservedNames) {
  for (const char* bad : {"w", "", "__metadata__"}) {
    TensorFile f;
    f.tensors.emplace_back("w", Array(DType::u8, Shape{1}));
    f.tensors.emplace_back(bad, Array(DType::u8, Shape{1}));
    try {
      write_safetensors(path("m.safetensors"), f);
      ADD_FAILURE() << "no error for name '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    }
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(Safetensors, AFailedWriteLeavesThePreviousFileIntactAndNoTemporary) {
  const TensorFile previous = sample_file();
  write_safetensors(path("m.safetensors"), previous);
  const std::string before = read_bytes(path("m.safetensors"));

  std::mt19937 rng(7);
  TensorFile bigger;
  bigger.tensors.emplace_back("w", random_array(DType::f32, Shape{64, 1024}, rng));
  try {
    const FileSizeLimit limit(4096);
    write_safetensors(path("m.safetensors"), bigger);
    ADD_FAILURE() << "writing 256 KiB under a 4 KiB file size limit did not fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path("m.safetensors") + ": cannot write: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
  EXPECT_EQ(read_bytes(path("m.safetensors")), before);
  expect_same(read_safetensors(path("m.safetensors")), previous);
}

TEST_F(Safetensors, AFailedRenameLeavesTheTargetAndNoTemporary) {
  // The target is a non-empty directory: rename() cannot replace it.
  fs::create_directories(dir_ / "m.safetensors");
  write_bytes(dir_ / "m.safetensors" / "keep", "x");
  try {
    write_safetensors(path("m.safetensors"), sample_file());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path("m.safetensors") + ": cannot rename the temporary file", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
  EXPECT_EQ(read_bytes(dir_ / "m.safetensors" / "keep"), "x");
}

TEST_F(Safetensors, WritingIntoAMissingDirectoryIsAnIoErrorNamingTheFile) {
  const std::string target = path("no/such/dir/m.safetensors");
  try {
    write_safetensors(target, sample_file());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(target + ": cannot create a temporary file", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp
