#include "core/image_file.h"

#include <fmt/format.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/read_file.h"

namespace vkp {
namespace {

void check_channels(int channels, const std::string& what) {
  if (channels != 0 && channels != 1 && channels != 3 && channels != 4)
    throw Error(ErrorCode::invalid_argument, what + ": channels must be 0 (as stored), 1, 3 or 4, not " +
                                                 std::to_string(channels));
}

// u8 [H, W, C] of `image` ([H, W] or [H, W, C], u8 or f32 in [0, 1]).
Array to_u8(const Array& image, const char* who) {
  const int rank = image.shape().rank();
  if ((rank != 2 && rank != 3) || (rank == 3 && (image.shape()[2] < 1 || image.shape()[2] > 4)))
    throw Error(ErrorCode::invalid_argument, std::string(who) + ": an image is [H, W] or [H, W, C] with 1 to 4 channels, not " +
                                                 describe(image));
  const Shape hwc{image.shape()[0], image.shape()[1], rank == 3 ? image.shape()[2] : 1};
  if (image.dtype() == DType::u8) return image.reshaped(hwc);
  if (image.dtype() != DType::f32)
    throw Error(ErrorCode::invalid_argument, std::string(who) + ": images are u8 or f32, not " + describe(image));
  Array out(DType::u8, hwc);
  const auto in = image.data<float>();
  auto bytes = out.data<std::uint8_t>();
  for (std::size_t i = 0; i < in.size(); ++i)
    bytes[i] = static_cast<std::uint8_t>(std::lround(std::clamp(std::isnan(in[i]) ? 0.0f : in[i], 0.0f, 1.0f) * 255.0f));
  return out;
}

// stb 2.27 (Debian 12's) mishandles two kinds of PNM header (both found by tests/fuzz):
// a number past 9 digits overflows the int it is read into (undefined behaviour), and a
// maximum value above 255 (16-bit samples) overflows a heap buffer when the samples are
// converted to 8 bits. Both are refused here, before stb sees them. stb reads binary PGM
// and PPM only (P5, P6); vkpack's images are 8-bit.
void check_pnm_header(std::span<const std::byte> bytes, const std::string& what) {
  const auto at = [&](std::size_t i) { return static_cast<char>(bytes[i]); };
  if (bytes.size() < 2 || at(0) != 'P' || (at(1) != '5' && at(1) != '6')) return;
  int numbers = 0;  // width, height, maximum value
  for (std::size_t i = 2; i < bytes.size() && numbers < 3;) {
    if (at(i) == '#') {  // a comment, to the end of its line
      while (i < bytes.size() && at(i) != '\n' && at(i) != '\r') ++i;
    } else if (at(i) >= '0' && at(i) <= '9') {
      const std::size_t start = i;
      while (i < bytes.size() && at(i) >= '0' && at(i) <= '9') ++i;
      if (i - start > 9)
        throw Error(ErrorCode::bad_data, what + ": not a readable image (a PNM header number of " +
                                             std::to_string(i - start) + " digits)");
      if (++numbers == 3) {
        std::uint32_t max_value = 0;
        for (std::size_t d = start; d < i; ++d) max_value = max_value * 10 + static_cast<std::uint32_t>(at(d) - '0');
        if (max_value > 255)
          throw Error(ErrorCode::unsupported, what + ": a 16-bit PNM (maximum value " + std::to_string(max_value) +
                                                  ") is not read; vkpack reads 8-bit images");
      }
    } else {
      ++i;
    }
  }
}

// stb sizes a PNG's compressed-data buffer by each chunk's declared length before it
// reads the chunk (a 2 x 2 image declaring a 1.2 GB IDAT allocated 1.2 GB; found by
// tests/fuzz). Every chunk must fit in the bytes that follow it, checked here first.
// And an empty IDAT before any data has stb copy 0 bytes into its buffer while it is
// still null (memcpy(NULL, ...): undefined; found by tests/fuzz, UBSan): refused.
void check_png_chunks(std::span<const std::byte> bytes, const std::string& what) {
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0) return;
  std::size_t at = 8;
  bool image_data = false;  // an IDAT of at least one byte seen
  while (at + 8 <= bytes.size()) {
    std::uint64_t length = 0;
    for (int i = 0; i < 4; ++i) length = (length << 8) | static_cast<std::uint8_t>(bytes[at + i]);
    const std::size_t left = bytes.size() - at - 8;
    if (length + 4 > left)
      throw Error(ErrorCode::bad_data, what + ": not a readable image (a PNG chunk at byte " + std::to_string(at) +
                                           " declares " + std::to_string(length) + " bytes, the file has " +
                                           std::to_string(left) + " after its header)");
    if (std::memcmp(bytes.data() + at + 4, "IEND", 4) == 0) return;
    if (std::memcmp(bytes.data() + at + 4, "IDAT", 4) == 0) {
      if (length == 0 && !image_data)
        throw Error(ErrorCode::bad_data, what + ": not a readable image (the PNG's first IDAT chunk, at byte " +
                                             std::to_string(at) + ", is empty)");
      image_data = true;
    }
    at += 8 + length + 4;
  }
}

// stb 2.27 builds a JPEG Huffman table from the 16 code counts of a DHT segment without
// checking that they add up to at most 256 symbols, and writes past its 257-entry size
// array when they do (found by tests/fuzz, UBSan; stb 2.28 checks it). Every DHT table
// is checked here first, walking the markers as stb does: fill bytes 0xFF before each
// marker, segments by their length, entropy-coded data after SOS up to the next marker,
// and any other byte between segments skipped (a fuzzed file hid its table behind them).
void check_jpeg_huffman_tables(std::span<const std::byte> bytes, const std::string& what) {
  const auto at = [&](std::size_t i) { return i < bytes.size() ? static_cast<std::uint8_t>(bytes[i]) : 0u; };
  std::size_t i = 0;
  // A marker: one or more 0xFF, then its code; 0 when there is none at i.
  const auto marker = [&]() -> unsigned {
    if (at(i) != 0xff || i >= bytes.size()) return 0;
    while (i < bytes.size() && at(i) == 0xff) ++i;
    return i < bytes.size() ? at(i++) : 0u;
  };
  if (marker() != 0xd8) return;  // not a JPEG (stb wants SOI first)
  while (i < bytes.size()) {
    // Bytes between segments: stb skips them one by one before the frame header (and
    // stops at them after it; walking on past them checks more than stb reads, never less).
    if (at(i) != 0xff) {
      ++i;
      continue;
    }
    const unsigned m = marker();
    if (m == 0xd9) return;                                // EOI
    if (m == 0) continue;                                 // 0xFF 0x00 outside a scan, or 0xFF to the end
    if ((m >= 0xd0 && m <= 0xd7) || m == 0x01) continue;  // no segment
    const std::size_t length = (std::size_t{at(i)} << 8) | at(i + 1);
    if (length < 2) return;
    if (m == 0xc4) {
      std::size_t p = i + 2;
      std::ptrdiff_t left = static_cast<std::ptrdiff_t>(length) - 2;
      while (left > 0 && p < bytes.size()) {
        std::size_t symbols = 0;
        for (std::size_t k = 1; k <= 16; ++k) symbols += at(p + k);
        if (symbols > 256)
          throw Error(ErrorCode::bad_data, what + ": not a readable image (a JPEG Huffman table at byte " +
                                               std::to_string(p) + " declares " + std::to_string(symbols) +
                                               " codes; at most 256)");
        p += 17 + symbols;
        left -= static_cast<std::ptrdiff_t>(17 + symbols);
      }
      if (left != 0) return;  // stb refuses the segment itself
    }
    i += length;
    if (m == 0xda) {
      // Entropy-coded data: a run of 0xFF followed by 0 is a stuffed byte and by D0-D7 a
      // restart marker, both part of it (stb skips the fill bytes of the run as it
      // decodes); followed by anything else, the run begins the next marker.
      while (i < bytes.size()) {
        if (at(i) != 0xff) {
          ++i;
          continue;
        }
        std::size_t after = i;
        while (after < bytes.size() && at(after) == 0xff) ++after;
        const unsigned c = at(after);
        if (after < bytes.size() && c != 0 && (c < 0xd0 || c > 0xd7)) break;  // the next marker, at i
        i = after + 1;
      }
    }
  }
}

// The most pixels a file of each format can hold per byte of the file. BMP (stb reads
// uncompressed BMPs only) holds 8 at 1 bit per pixel; a binary PNM 1 (8-bit samples).
// Every other format stb reads is compressed, and PNG's bound is the largest that holds
// for honest files: deflate expands at most 1032:1, times 8 pixels per byte at 1 bit per
// pixel. TGA, PSD, HDR and PIC run lengths and GIF's LZW stay far below it; a JPEG could
// exceed it only through progressive end-of-band runs no encoder writes for a picture.
// A header declaring more is refused before stb allocates and fills the pixels (a
// 56-byte BMP declaring 3 x 16449282 pixels took 11 s; found by tests/fuzz).
std::uint64_t max_pixels_per_byte(std::span<const std::byte> bytes, const char*& format) {
  const auto starts = [&](const char* magic, std::size_t n) {
    return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
  };
  if (starts("BM", 2)) {
    format = "BMP";
    return 8;
  }
  if (starts("P5", 2) || starts("P6", 2)) {
    format = "PNM";
    return 1;
  }
  format = "compressed image";
  return 1032 * 8;
}

void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

}  // namespace

Array decode_image(std::span<const std::byte> bytes, const std::string& what, int channels, std::uint64_t max_bytes) {
  check_channels(channels, what);
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorCode::bad_data, what + ": " + std::to_string(bytes.size()) + " bytes, more than stb reads (2 GiB)");
  check_pnm_header(bytes, what);
  check_png_chunks(bytes, what);
  check_jpeg_huffman_tables(bytes, what);
  int w = 0, h = 0, stored = 0;
  if (stbi_info_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), static_cast<int>(bytes.size()), &w, &h,
                            &stored) != 0) {
    // No pixels: refused before stb walks millions of empty rows (a BMP of width 0 and
    // height 2^24 took 0.15 s of CPU from 50 bytes in the fuzzer).
    if (w <= 0 || h <= 0)
      throw Error(ErrorCode::bad_data, what + ": its header declares " + std::to_string(w) + " x " +
                                           std::to_string(h) + " pixels: no image to read");
    const std::uint64_t need = std::uint64_t(w) * std::uint64_t(h) * std::uint64_t(channels == 0 ? stored : channels);
    if (need > max_bytes)
      throw Error(ErrorCode::bad_data, what + ": declares " + std::to_string(w) + " x " + std::to_string(h) + " pixels (" +
                                           std::to_string(need) + " bytes decoded), more than the limit of " +
                                           std::to_string(max_bytes) + " bytes (read_image's max_bytes)");
    const char* format = "";
    const std::uint64_t per_byte = max_pixels_per_byte(bytes, format);
    if (std::uint64_t(w) * std::uint64_t(h) > per_byte * bytes.size())
      throw Error(ErrorCode::bad_data, what + ": declares " + std::to_string(w) + " x " + std::to_string(h) +
                                           " pixels, more than a " + format + " file of " +
                                           std::to_string(bytes.size()) + " bytes can hold (" +
                                           std::to_string(per_byte) + " pixels per byte at most)");
  }
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), static_cast<int>(bytes.size()), &w, &h,
                            &stored, channels),
      stbi_image_free);
  if (!pixels) {
    const char* reason = stbi_failure_reason();
    throw Error(ErrorCode::bad_data, what + ": not a readable image (" + std::string(reason ? reason : "unknown") + ")");
  }
  if (w <= 0 || h <= 0)  // stb decodes some headers that declare no pixels (a PNM's unreadable width)
    throw Error(ErrorCode::bad_data, what + ": not a readable image (it declares " + std::to_string(w) + " x " +
                                         std::to_string(h) + " pixels)");
  const int c = channels == 0 ? stored : channels;
  Array out(DType::u8, Shape{h, w, c});
  std::memcpy(out.bytes().data(), pixels.get(), out.nbytes());
  return out;
}

Array read_image(const std::string& path, int channels, std::uint64_t max_bytes) {
  return decode_image(read_whole_file(path), path, channels, max_bytes);
}

std::string encode_png(const Array& image) {
  const Array u8 = to_u8(image, "encode_png");
  const auto h = static_cast<int>(u8.shape()[0]), w = static_cast<int>(u8.shape()[1]),
             c = static_cast<int>(u8.shape()[2]);
  std::string png;
  if (stbi_write_png_to_func(append, &png, w, h, c, u8.bytes().data(), w * c) == 0)
    throw Error(ErrorCode::invalid_argument, "encode_png: stb_image_write could not encode a " + describe(image));
  return png;
}

std::string encode_jpeg(const Array& image, int quality) {
  const int rank = image.shape().rank();
  const std::int64_t c = rank == 3 ? image.shape()[2] : 1;
  if (image.dtype() != DType::u8 || (rank != 2 && rank != 3) || (c != 1 && c != 3) || quality < 1 || quality > 100 ||
      image.numel() == 0)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("encode_jpeg: a u8 image [H, W], [H, W, 1] or [H, W, 3] at a quality in [1, 100], got {} "
                            "at {}", describe(image), quality));
  std::string jpeg;
  if (stbi_write_jpg_to_func(append, &jpeg, static_cast<int>(image.shape()[1]), static_cast<int>(image.shape()[0]),
                             static_cast<int>(c), image.bytes().data(), quality) == 0)
    throw Error(ErrorCode::invalid_argument, "encode_jpeg: stb_image_write could not encode a " + describe(image));
  return jpeg;
}

void write_png(const std::string& path, const Array& image) { write_file_atomically(path, encode_png(image)); }

Array image_grid(const Array& images, int rows, int cols, int gap) {
  const int rank = images.shape().rank();
  if ((rank != 3 && rank != 4) || rows < 1 || cols < 1 || gap < 0)
    throw Error(ErrorCode::invalid_argument, "image_grid: images [N, H, W] or [N, H, W, C] in rows x cols >= 1, got " +
                                                 describe(images) + " in " + std::to_string(rows) + " x " +
                                                 std::to_string(cols));
  const std::int64_t n = images.shape()[0], h = images.shape()[1], w = images.shape()[2],
                     c = rank == 4 ? images.shape()[3] : 1;
  const std::int64_t out_h = rows * h + (rows - 1) * gap, out_w = cols * w + (cols - 1) * gap;
  Array grid(DType::u8, Shape{out_h, out_w, c});
  const std::size_t cell = static_cast<std::size_t>(h * w * c);
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, std::int64_t{rows} * cols); ++i) {
    Array one(images.dtype(), Shape{h, w, c});
    std::memcpy(one.bytes().data(), images.bytes().data() + static_cast<std::size_t>(i) * cell * size_of(images.dtype()),
                one.nbytes());
    const Array pixels = to_u8(one, "image_grid");
    const std::int64_t top = (i / cols) * (h + gap), left = (i % cols) * (w + gap);
    for (std::int64_t y = 0; y < h; ++y)
      std::memcpy(grid.bytes().data() + static_cast<std::size_t>(((top + y) * out_w + left) * c),
                  pixels.bytes().data() + static_cast<std::size_t>(y * w * c), static_cast<std::size_t>(w * c));
  }
  return grid;
}

}  // namespace vkp
