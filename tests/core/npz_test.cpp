// NumPy's array files as NumPy itself writes them (write_npy.py, run in Debian's Python):
// C and Fortran order, float32/float64/float16/int64/bool, scalars, .npz stored and
// deflated; big-endian data, a truncated file and a missing one are named errors; what
// vkpack writes reads back.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"
#include "core/npz.h"

namespace vkp {
namespace {

class Npz : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (std::filesystem::temp_directory_path() / ("vkpack-npz-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir_);
    const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_WRITE_NPY + " " + dir_;
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string dir_;
};
std::string Npz::dir_;

// 100 i + 10 j + k + fraction at C-order index (i, j, k) of `dims`.
double f(std::size_t flat, const std::vector<std::int64_t>& dims, double fraction) {
  double value = fraction, weight = 1;
  for (std::size_t a = dims.size(); a-- > 0;) {
    const auto extent = static_cast<std::size_t>(dims[a]);
    value += weight * static_cast<double>(flat % extent);
    flat /= extent;
    weight *= 10;
  }
  return value;
}

template <class T>
void expect_f(const Array& a, DType dtype, const std::vector<std::int64_t>& dims, double fraction) {
  ASSERT_EQ(a.dtype(), dtype);
  ASSERT_EQ(a.shape().dims(), dims);
  const auto values = a.data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(static_cast<double>(values[i]), f(i, dims, fraction)) << i;
}

TEST_F(Npz, ReadsCOrderFloat32) { expect_f<float>(read_npy(dir_ + "/c_f32.npy"), DType::f32, {2, 3, 4}, 0.25); }

TEST_F(Npz, ReadsFortranOrderFloat64AsCOrderFloat32) {
  expect_f<float>(read_npy(dir_ + "/fortran_f64.npy"), DType::f32, {2, 3, 4}, 0.25);
}

TEST_F(Npz, ReadsFloat16Int64BoolAndScalars) {
  const Array h = read_npy(dir_ + "/f16.npy");
  ASSERT_EQ(h.dtype(), DType::f16);
  ASSERT_EQ(h.shape().dims(), (std::vector<std::int64_t>{3}));
  const std::uint16_t* bits = reinterpret_cast<const std::uint16_t*>(h.bytes().data());
  EXPECT_EQ(bits[0], 0x3400);  // 0.25 in IEEE half precision
  EXPECT_EQ(bits[1], 0x3D00);  // 1.25
  expect_f<std::int64_t>(read_npy(dir_ + "/i64.npy"), DType::i64, {2, 2}, 0);
  const Array flags = read_npy(dir_ + "/flags.npy");
  ASSERT_EQ(flags.dtype(), DType::u8);
  EXPECT_EQ(flags.data<std::uint8_t>()[0], 1);
  EXPECT_EQ(flags.data<std::uint8_t>()[1], 0);
  const Array scalar = read_npy(dir_ + "/scalar.npy");
  EXPECT_EQ(scalar.shape().rank(), 0);
  EXPECT_EQ(scalar.data<float>()[0], 7.5f);
}

TEST_F(Npz, ReadsStoredAndDeflatedArchives) {
  for (const char* name : {"stored.npz", "deflated.npz"}) {
    SCOPED_TRACE(name);
    const std::map<std::string, Array> arrays = read_npz(dir_ + "/" + name);
    ASSERT_EQ(arrays.size(), 2u);
    expect_f<float>(arrays.at("a"), DType::f32, {2, 3, 4}, 0.25);
    expect_f<std::int32_t>(arrays.at("b"), DType::i32, {5}, 0);
  }
}

TEST_F(Npz, NamesWhatItCannotRead) {
  const auto expect_error = [](auto read, ErrorCode code, const std::string& part) {
    try {
      read();
      FAIL() << "no error; expected one mentioning " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error([&] { read_npy(dir_ + "/big_endian.npy"); }, ErrorCode::unsupported, "big-endian");
  expect_error([&] { read_npy(dir_ + "/missing.npy"); }, ErrorCode::io, "missing.npy");
  expect_error([&] { read_npz(dir_ + "/missing.npz"); }, ErrorCode::io, "missing.npz");
  // A truncated array: its data ends early.
  std::ifstream in(dir_ + "/c_f32.npy", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir_ + "/short.npy", std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  expect_error([&] { read_npy(dir_ + "/short.npy"); }, ErrorCode::bad_data, "bytes of data");
  // A file that is not a zip archive at all.
  expect_error([&] { read_npz(dir_ + "/c_f32.npy"); }, ErrorCode::bad_data, "zip");
  // Headers that declare more than the file holds are refused before anything that large
  // is allocated (the ASan build of scripts/test-sanitizers would see a 3 GiB allocation).
  expect_error([&] { read_npy(dir_ + "/huge_shape.npy"); }, ErrorCode::bad_data, "declares more elements");
  expect_error([&] { read_npz(dir_ + "/bomb.npz"); }, ErrorCode::bad_data, "3221225472 bytes");
}

// Found by tests/fuzz (npy): an array of no elements, whose data copy passed a null
// pointer to memcpy (undefined behaviour that UBSan reports; scripts/test-sanitizers).
TEST(NpyParse, AnArrayWithoutElementsParses) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::string file = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  const Array a = parse_npy(std::as_bytes(std::span(file.data(), file.size())), "empty.npy");
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_EQ(a.shape().dims(), std::vector<std::int64_t>{0});
  file += "abcd";  // data where none is declared
  EXPECT_THROW(parse_npy(std::as_bytes(std::span(file.data(), file.size())), "empty.npy"), Error);
}

// Found by tests/fuzz (npy): a zero extent let the overflow check pass extents whose
// product overflows, and Shape's element count then overflowed (UBSan).
TEST(NpyParse, AZeroExtentDoesNotHideAnOverflowingShape) {
  for (const char* shape : {"(800000000000000001, 4000, 0, 0)", "(0, 1099511627776, 1099511627776)"}) {
    std::string header = std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + shape + ", }";
    header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
    const std::string file = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
    try {
      parse_npy(std::as_bytes(std::span(file.data(), file.size())), "overflow.npy");
      ADD_FAILURE() << shape << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_data) << e.what();
      EXPECT_NE(std::string(e.what()).find("more than 2^63 elements"), std::string::npos) << e.what();
    }
  }
}

// What vkpack writes (npy_bytes, write_npz) reads back the same, every dtype and rank
// (NumPy reads it too: tests/dataflow/npz_data_test.cpp).
TEST(NpyWrite, EveryDtypeAndRankReadsBack) {
  std::map<std::string, Array> arrays;
  const std::vector<Shape> shapes = {Shape{}, Shape{5}, Shape{2, 3, 4}, Shape{0, 3}};
  int n = 0;
  for (DType dtype : {DType::f32, DType::f16, DType::i32, DType::i64, DType::u8})
    for (const Shape& shape : shapes) {
      Array a(dtype, shape);
      for (std::size_t b = 0; b < a.nbytes(); ++b) a.bytes()[b] = static_cast<std::byte>((b * 37 + 11) % 251);
      const std::string image = npy_bytes(a);
      const std::size_t header = image.size() - a.nbytes();
      EXPECT_EQ(header % 64, 0u) << "NumPy aligns the data to 64 bytes";
      const Array back = parse_npy(std::as_bytes(std::span(image.data(), image.size())), "written");
      EXPECT_EQ(back.dtype(), dtype);
      EXPECT_EQ(back.shape(), shape);
      EXPECT_TRUE(std::equal(back.bytes().begin(), back.bytes().end(), a.bytes().begin()));
      arrays.emplace("a" + std::to_string(n++), a);
    }
  const std::string path = (std::filesystem::temp_directory_path() / ("vkpack-npy-write-" + std::to_string(::getpid()) + ".npz")).string();
  write_npz(path, arrays);
  const std::map<std::string, Array> back = read_npz(path);
  ASSERT_EQ(back.size(), arrays.size());
  for (const auto& [name, a] : arrays) {
    const Array& b = back.at(name);
    EXPECT_EQ(b.shape(), a.shape()) << name;
    EXPECT_TRUE(std::equal(b.bytes().begin(), b.bytes().end(), a.bytes().begin())) << name;
  }
  EXPECT_THROW(write_npz(path, {{"a/b", Array(DType::u8, Shape{1})}}), Error);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vkp
