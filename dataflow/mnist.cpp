#include "dataflow/mnist.h"

#include "core/error.h"
#include "dataflow/internal/file_bytes.h"
#include "dataflow/internal/idx_file.h"

namespace vkp::dataflow {
namespace {

std::filesystem::path find_idx(const std::filesystem::path& dir, const std::string& stem, const std::string& what) {
  return first_existing({dir / (stem + ".gz"), dir / stem}, what);
}

std::filesystem::path images_file(const std::filesystem::path& dir, Split split, const std::string& name) {
  const std::string prefix = split == Split::train ? "train" : "t10k";
  return find_idx(dir, prefix + "-images-idx3-ubyte", name + " " + std::string(to_string(split)) + " images");
}

}  // namespace

std::int64_t mnist_images(const std::filesystem::path& dir, Split split, const std::string& name) {
  const std::filesystem::path path = images_file(dir, split, name);
  const std::vector<std::uint8_t> head = read_file_bytes(path, 16);
  if (head.size() < 8 || head[0] != 0 || head[1] != 0 || head[2] != 0x08 || head[3] != 3)
    throw Error(ErrorCode::bad_data, name + ": " + path.string() + " does not start as an IDX file of u8 images");
  return std::int64_t{head[4]} << 24 | std::int64_t{head[5]} << 16 | std::int64_t{head[6]} << 8 | head[7];
}

std::shared_ptr<const LabeledImages> load_mnist(const std::filesystem::path& dir, Split split,
                                                const std::string& name) {
  const std::string prefix = split == Split::train ? "train" : "t10k";
  const std::string what = name + " " + std::string(to_string(split));
  const std::filesystem::path image_path = images_file(dir, split, name);
  const std::filesystem::path label_path = find_idx(dir, prefix + "-labels-idx1-ubyte", what + " labels");
  IdxBytes images = read_idx_u8(image_path, 3);
  const IdxBytes labels = read_idx_u8(label_path, 1);
  if (images.dims[0] != labels.dims[0])
    throw Error(ErrorCode::bad_data, name + ": count mismatch: " + image_path.string() + " holds " +
                                         std::to_string(images.dims[0]) + " images, " + label_path.string() +
                                         " holds " + std::to_string(labels.dims[0]) + " labels");
  auto data = std::make_shared<LabeledImages>();
  data->height = images.dims[1];
  data->width = images.dims[2];
  data->channels = 1;
  data->num_classes = 10;
  data->pixels = std::move(images.data);
  data->labels.reserve(labels.data.size());
  for (std::size_t i = 0; i < labels.data.size(); ++i) {
    const int label = labels.data[i];
    if (label >= data->num_classes)
      throw Error(ErrorCode::bad_data, name + ": " + label_path.string() + ": label " + std::to_string(label) +
                                           " of item " + std::to_string(i) + " is out of range [0, 10)");
    data->labels.push_back(label);
  }
  return data;
}

Mnist::Mnist(const std::filesystem::path& dir, Split split, ImageFlowOptions options)
    : LabeledImageData(load_mnist(dir, split, "Mnist"), options) {}

namespace {

// read(), with a hint at the package when the default directory lacks the files.
template <class Read>
auto with_package_hint(const std::filesystem::path& dir, Read read) {
  try {
    return read();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::io || dir != kFashionMnistDir) throw;
    throw Error(ErrorCode::io, std::string(e.what()) +
                                   "; install the Debian package dataset-fashion-mnist (scripts/setup does) or "
                                   "pass the directory holding the files");
  }
}

std::shared_ptr<const LabeledImages> load_fashion_mnist(const std::filesystem::path& dir, Split split) {
  return with_package_hint(dir, [&] { return load_mnist(dir, split, "FashionMnist"); });
}

}  // namespace

std::int64_t fashion_mnist_images(Split split, const std::filesystem::path& dir) {
  return with_package_hint(dir, [&] { return mnist_images(dir, split, "FashionMnist"); });
}

FashionMnist::FashionMnist(Split split, ImageFlowOptions options, const std::filesystem::path& dir)
    : Mnist(load_fashion_mnist(dir, split), options) {}

}  // namespace vkp::dataflow
