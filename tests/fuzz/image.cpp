// Fuzz target: an image file in any format stb decodes (PNG, JPEG, BMP, GIF, TGA, PSD,
// HDR, PIC, PNM), as decode_image reads a user's image folder; the first input byte
// picks the channels asked for (0-4). stb itself is compiled into this target with the
// sanitizers (stb_image_instrumented.cpp), not taken from Debian's uninstrumented libstb.
#include "core/image_file.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int channels = data[0] % 5;
  return vkp::fuzz::expect_clean(
      [&] { vkp::decode_image(vkp::fuzz::bytes_of(data + 1, size - 1), "fuzz image", channels); });
}
