// MNIST and Fashion-MNIST from their IDX files, gzipped or not:
//   <dir>/train-images-idx3-ubyte[.gz]   <dir>/train-labels-idx1-ubyte[.gz]
//   <dir>/t10k-images-idx3-ubyte[.gz]    <dir>/t10k-labels-idx1-ubyte[.gz]
// Images are 28 x 28 x 1 (HWC), labels 0..9. The train split has 60000 images, the
// test split 10000 (not enforced: other IDX sets of that layout load too).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "dataflow/labeled_images.h"

namespace vkp::dataflow {

// Where Debian's package dataset-fashion-mnist installs the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Reads one split. `name` ("Mnist", "FashionMnist") prefixes error messages. Errors name
// the file: Error(io) when missing or unreadable, Error(bad_data) when malformed
// (wrong magic, short read, image and label counts that differ, a label above 9).
std::shared_ptr<const LabeledImages> load_mnist(const std::filesystem::path& dir, Split split,
                                                const std::string& name = "Mnist");

// The number of images of one split, from its images file's header alone (16 bytes read:
// what an epoch's steps are counted from before the data is loaded). Errors as load_mnist.
std::int64_t mnist_images(const std::filesystem::path& dir, Split split, const std::string& name = "Mnist");
// The same for Fashion-MNIST, with load_fashion_mnist's hint at the Debian package.
std::int64_t fashion_mnist_images(Split split, const std::filesystem::path& dir = kFashionMnistDir);

// Yields {image u8/f32 [28, 28, 1], label i32 []}.
class Mnist : public LabeledImageData {
 public:
  Mnist(const std::filesystem::path& dir, Split split, ImageFlowOptions options = {});

 protected:
  Mnist(std::shared_ptr<const LabeledImages> data, ImageFlowOptions options)
      : LabeledImageData(std::move(data), options) {}
};

class FashionMnist : public Mnist {
 public:
  explicit FashionMnist(Split split, ImageFlowOptions options = {},
                        const std::filesystem::path& dir = kFashionMnistDir);
};

}  // namespace vkp::dataflow
