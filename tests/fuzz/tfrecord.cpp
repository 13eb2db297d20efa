// Fuzz target: a TFRecord file (framing, CRCs, tf.train.Example's protobuf encoding),
// read to the end twice as TFRecordData serves a training run (features "0" and
// "image"), then as TFRecordSerializer::load's components (dtype, shape, bytes).
#include "dataflow/tfrecord_data.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  const auto path = scratch.write("data.tfrecord", data, size);
  const auto read = [](vkp::dataflow::DataFlow& flow) {
    flow.reset_state();
    for (int epoch = 0; epoch < 2; ++epoch) {
      flow.start_epoch();
      while (flow.next()) {
      }
    }
  };
  vkp::fuzz::expect_clean([&] {
    vkp::dataflow::TFRecordData flow(path, {"0", "image"});
    read(flow);
  });
  return vkp::fuzz::expect_clean([&] { read(*vkp::dataflow::TFRecordSerializer::load(path)); });
}
