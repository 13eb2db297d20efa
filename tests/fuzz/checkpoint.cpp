// Fuzz target: a checkpoint file as resume and SessionInit read it (safetensors, then
// its metadata: format, CRC-32C of every tensor, global step, epoch, hyperparameters).
#include "fuzz_target.h"

#include "callbacks/checkpoint_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  const auto path = scratch.write("model-12.safetensors", data, size);
  return vkp::fuzz::expect_clean([&] { (void)vkp::callbacks::load_checkpoint(path.string()); });
}
