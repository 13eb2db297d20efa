// Fuzz target: a .npy array (magic, version, header dictionary, dtype, shape, data).
#include "fuzz_target.h"

#include "core/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return vkp::fuzz::expect_clean([&] { vkp::parse_npy(vkp::fuzz::bytes_of(data, size), "fuzz.npy"); });
}
