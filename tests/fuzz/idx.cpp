// Fuzz target: an IDX file (MNIST's format: magic, dimensions, unsigned bytes); the
// first input byte picks the rank the caller expects (1-4), the rest is the file.
#include <vector>

#include "dataflow/internal/idx_file.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int rank = 1 + data[0] % 4;
  return vkp::fuzz::expect_clean(
      [&] { vkp::dataflow::parse_idx_u8(std::vector<std::uint8_t>(data + 1, data + size), rank, "fuzz.idx"); });
}
