// Image files in and out through stb (Debian's libstb-dev): stb_image decodes JPEG, PNG,
// BMP, GIF (first frame), TGA, PSD and PNM; stb_image_write encodes PNG and JPEG. Images are u8
// [H, W, C] arrays (HWC, as the augmentors take them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/array.h"

namespace vkp {

// The most bytes of pixels an image may decode to unless the caller allows more: 1 GiB
// (16384 x 16384 RGBA). The size the file declares is checked before decoding, so a
// header claiming 65535 x 65535 pixels costs nothing.
inline constexpr std::uint64_t kMaxImageBytes = std::uint64_t{1} << 30;

// `channels`: 0 keeps the file's (1 gray, 2 gray and alpha, 3 RGB, 4 RGBA); 1, 3 or 4
// converts. Error(io) naming the file when it cannot be read; Error(bad_data) naming it
// and saying why (stb's reason) when it is not a readable image, truncated ones included,
// or when its declared size exceeds `max_bytes` (naming both).
Array read_image(const std::string& path, int channels = 0, std::uint64_t max_bytes = kMaxImageBytes);
// The same from bytes in memory; `what` names them in errors.
Array decode_image(std::span<const std::byte> bytes, const std::string& what, int channels = 0,
                   std::uint64_t max_bytes = kMaxImageBytes);

// PNG of an image [H, W] or [H, W, C] with C of 1 to 4: u8 as it is, f32 taken as [0, 1]
// (clamped, rounded to 0..255). Error(invalid_argument) for another shape or type.
std::string encode_png(const Array& image);
// JPEG of a u8 image [H, W], [H, W, 1] or [H, W, 3] at `quality` in [1, 100] (stb's
// baseline encoder, 4:2:0 chroma below quality 90). Error(invalid_argument) otherwise.
std::string encode_jpeg(const Array& image, int quality);
// encode_png written crash-safely (atomic_file.h): a killed writer leaves the old file.
void write_png(const std::string& path, const Array& image);

// Images [N, H, W] or [N, H, W, C] (u8 or f32 in [0, 1]) tiled row by row into one image
// of `rows` x `cols` cells (the last cells black when N is smaller) with `gap` black
// pixels between cells: what a DCGAN's sample sheet looks like. u8 [H', W', C].
Array image_grid(const Array& images, int rows, int cols, int gap = 1);

}  // namespace vkp
