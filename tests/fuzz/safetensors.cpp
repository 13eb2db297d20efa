// Fuzz target: a safetensors file (header length, JSON header, dtypes, shapes, data
// offsets) as read_safetensors reads a checkpoint or downloaded weights.
#include "fuzz_target.h"

#include "core/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  const auto path = scratch.write("weights.safetensors", data, size);
  return vkp::fuzz::expect_clean([&] { vkp::read_safetensors(path.string()); });
}
