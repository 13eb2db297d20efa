#include "vkpack/dataflow/image_augmentor.h"

#include <string>

namespace vkp::dataflow {

Shape ImageDims::with_size(std::int64_t h, std::int64_t w) const {
  return rank == 2 ? Shape{h, w} : Shape{h, w, channels};
}

ImageDims image_dims(const Array& image, const char* who) {
  const Shape& s = image.shape();
  if (s.rank() != 2 && s.rank() != 3)
    throw Error(ErrorCode::invalid_argument, std::string(who) + ": expects an image [H, W, C] or [H, W], got " +
                                                 describe(image));
  return ImageDims{s[0], s[1], s.rank() == 3 ? s[2] : 1, s.rank()};
}

void require_u8_or_f32(const Array& image, const char* who) {
  if (image.dtype() != DType::u8 && image.dtype() != DType::f32)
    throw Error(ErrorCode::invalid_argument,
                std::string(who) + ": works on u8 or f32 images, got " + describe(image));
}

}  // namespace vkp::dataflow
