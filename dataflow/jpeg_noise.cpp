#include "dataflow/jpeg_noise.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"
#include "core/image_file.h"

namespace vkp::dataflow {

JpegNoise::JpegNoise(int quality_low, int quality_high) : low_(quality_low), high_(quality_high) {
  require(low_ >= 1 && high_ <= 101 && low_ < high_, ErrorCode::invalid_argument,
          fmt::format("JpegNoise: the quality range [{}, {}) must lie in [1, 101) and hold a value", low_, high_));
}

Array JpegNoise::apply(Array image, Rng& rng) const {
  const int quality = low_ + static_cast<int>(rng.below(static_cast<std::uint64_t>(high_ - low_)));
  const std::string jpeg = encode_jpeg(image, quality);
  const int channels = image.shape().rank() == 3 ? static_cast<int>(image.shape()[2]) : 1;
  Array decoded = decode_image(std::as_bytes(std::span(jpeg.data(), jpeg.size())), "JpegNoise's own JPEG", channels);
  return std::move(decoded).reshaped(image.shape());
}

}  // namespace vkp::dataflow
