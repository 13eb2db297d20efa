// Fuzz target: a .npz archive (zip directory, entry sizes and compression, and the
// .npy arrays inside), as read_npz reads pretrained weights.
#include "fuzz_target.h"

#include "core/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  const auto path = scratch.write("weights.npz", data, size);
  return vkp::fuzz::expect_clean([&] { vkp::read_npz(path.string()); });
}
