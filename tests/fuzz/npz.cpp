// Fuzz target: a .npz archive (zip directory, entry sizes and compression, and the
// .npy arrays inside), as read_npz reads pretrained weights, then as a dataset: NpzData
// over all its arrays, one epoch (rows of every shape the arrays have, zero extents
// included).
#include "fuzz_target.h"

#include "core/npz.h"
#include "dataflow/npz_data.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  const auto path = scratch.write("weights.npz", data, size);
  return vkp::fuzz::expect_clean([&] {
    std::map<std::string, vkp::Array> arrays = vkp::read_npz(path.string());
    std::vector<std::string> keys;
    for (const auto& [name, array] : arrays) keys.push_back(name);
    vkp::dataflow::NpzData rows(std::move(arrays), keys, true, 1, path.string());
    rows.reset_state();
    for (const vkp::dataflow::Datapoint& dp : rows.epoch()) (void)dp;
  });
}
