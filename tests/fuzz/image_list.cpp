// Fuzz target: the image list reader (read_image_list: "<path> <label>" lines). What it
// accepts has one label per path, each in [0, 2^31), and every path under the root.
#include "fuzz_target.h"

#include <cstdlib>

#include "dataflow/image_from_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  scratch.write("train.txt", data, size);
  return vkp::fuzz::expect_clean([&] {
    const vkp::dataflow::ImageListEntries entries = vkp::dataflow::read_image_list((scratch.dir() / "train.txt").string(), "root");
    if (entries.files.size() != entries.labels.size() || entries.files.empty()) std::abort();
    for (std::size_t i = 0; i < entries.files.size(); ++i)
      if (entries.labels[i] < 0 || entries.files[i].rfind("root/", 0) != 0) std::abort();
  });
}
