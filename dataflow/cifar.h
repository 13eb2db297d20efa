// CIFAR-10 and CIFAR-100 from their binary versions.
//
// CIFAR-10 (cifar-10-batches-bin): data_batch_1.bin ... data_batch_5.bin (train) and
// test_batch.bin, 10000 records each of <label u8><3072 pixel bytes>.
// CIFAR-100 (cifar-100-binary): train.bin (50000 records) and test.bin (10000), records of
// <coarse label u8><fine label u8><3072 pixel bytes>.
// Pixels are stored as planes (1024 R, 1024 G, 1024 B, rows of 32); the readers give
// 32 x 32 x 3 HWC images. `dir` is the folder holding the .bin files or its parent.
#pragma once

#include <filesystem>

#include "dataflow/labeled_images.h"

namespace vkp::dataflow {

// Errors name the file: Error(io) when missing or unreadable; Error(bad_data) when
// truncated (not a whole number of records), of the wrong record count, or holding a
// label out of range.
std::shared_ptr<const LabeledImages> load_cifar10(const std::filesystem::path& dir, Split split);
// `coarse`: the 20 superclass labels instead of the 100 class labels.
std::shared_ptr<const LabeledImages> load_cifar100(const std::filesystem::path& dir, Split split,
                                                   bool coarse = false);

// Yield {image u8/f32 [32, 32, 3], label i32 []}.
class Cifar10 : public LabeledImageData {
 public:
  Cifar10(const std::filesystem::path& dir, Split split, ImageFlowOptions options = {});
};

class Cifar100 : public LabeledImageData {
 public:
  Cifar100(const std::filesystem::path& dir, Split split, ImageFlowOptions options = {}, bool coarse = false);
};

}  // namespace vkp::dataflow
