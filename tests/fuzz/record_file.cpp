// Fuzz target: a record file (header, per-record lengths and CRCs, component dtypes and
// shapes), read to the end for two epochs as RecordFileData serves a training run.
#include "fuzz_target.h"

#include "dataflow/record_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  const auto path = scratch.write("data.vkrecords", data, size);
  return vkp::fuzz::expect_clean([&] {
    vkp::dataflow::RecordFileData flow(path);
    flow.reset_state();
    for (int epoch = 0; epoch < 2; ++epoch) {
      flow.start_epoch();
      while (flow.next()) {
      }
    }
  });
}
