#include "dataflow/cifar.h"

#include "dataflow/internal/file_bytes.h"

namespace vkp::dataflow {
namespace {

constexpr std::size_t kSide = 32, kPlane = kSide * kSide, kPixels = 3 * kPlane;

struct CifarLayout {
  std::string name;            // "Cifar10"
  std::size_t label_bytes;     // before the pixels
  std::size_t label_offset;    // of the label used
  int num_classes;
};

// The folder that holds `file`: `dir` itself or its `subdir`.
std::filesystem::path locate(const std::filesystem::path& dir, const std::string& subdir, const std::string& file,
                             const std::string& what) {
  return first_existing({dir / file, dir / subdir / file}, what);
}

// Appends the records of one file to `data`, after checking them.
void append_records(const std::filesystem::path& path, const CifarLayout& layout, std::size_t expected,
                    LabeledImages& data) {
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  const std::size_t record = layout.label_bytes + kPixels;
  const std::string where = layout.name + ": " + path.string();
  if (bytes.size() % record != 0)
    throw Error(ErrorCode::bad_data, where + ": truncated: " + std::to_string(bytes.size()) +
                                         " bytes is not a whole number of " + std::to_string(record) +
                                         "-byte records (" + std::to_string(bytes.size() / record) +
                                         " records and " + std::to_string(bytes.size() % record) + " bytes)");
  const std::size_t count = bytes.size() / record;
  if (count != expected)
    throw Error(ErrorCode::bad_data, where + ": count mismatch: " + std::to_string(count) + " records, expected " +
                                         std::to_string(expected));
  const std::size_t base = data.labels.size();
  data.labels.resize(base + count);
  data.pixels.resize((base + count) * kPixels);
  for (std::size_t r = 0; r < count; ++r) {
    const std::uint8_t* rec = bytes.data() + r * record;
    const int label = rec[layout.label_offset];
    if (label >= layout.num_classes)
      throw Error(ErrorCode::bad_data, where + ": record " + std::to_string(r) + " has label " +
                                           std::to_string(label) + ", out of range [0, " +
                                           std::to_string(layout.num_classes) + ")");
    data.labels[base + r] = label;
    const std::uint8_t* planes = rec + layout.label_bytes;
    std::uint8_t* out = data.pixels.data() + (base + r) * kPixels;
    for (std::size_t p = 0; p < kPlane; ++p)
      for (std::size_t c = 0; c < 3; ++c) out[3 * p + c] = planes[c * kPlane + p];
  }
}

std::shared_ptr<LabeledImages> empty_images(int num_classes, std::size_t reserve) {
  auto data = std::make_shared<LabeledImages>();
  data->height = data->width = kSide;
  data->channels = 3;
  data->num_classes = num_classes;
  data->labels.reserve(reserve);
  data->pixels.reserve(reserve * kPixels);
  return data;
}

}  // namespace

std::shared_ptr<const LabeledImages> load_cifar10(const std::filesystem::path& dir, Split split) {
  const CifarLayout layout{"Cifar10", 1, 0, 10};
  std::vector<std::string> files;
  if (split == Split::train)
    for (int i = 1; i <= 5; ++i) files.push_back("data_batch_" + std::to_string(i) + ".bin");
  else
    files.push_back("test_batch.bin");
  auto data = empty_images(10, files.size() * 10000);
  for (const std::string& file : files)
    append_records(locate(dir, "cifar-10-batches-bin", file, "Cifar10 " + std::string(to_string(split))), layout,
                   10000, *data);
  return data;
}

std::shared_ptr<const LabeledImages> load_cifar100(const std::filesystem::path& dir, Split split, bool coarse) {
  const CifarLayout layout{"Cifar100", 2, coarse ? 0u : 1u, coarse ? 20 : 100};
  const std::size_t expected = split == Split::train ? 50000 : 10000;
  auto data = empty_images(layout.num_classes, expected);
  const std::string file = split == Split::train ? "train.bin" : "test.bin";
  append_records(locate(dir, "cifar-100-binary", file, "Cifar100 " + std::string(to_string(split))), layout,
                 expected, *data);
  return data;
}

Cifar10::Cifar10(const std::filesystem::path& dir, Split split, ImageFlowOptions options)
    : LabeledImageData(load_cifar10(dir, split), options) {}

Cifar100::Cifar100(const std::filesystem::path& dir, Split split, ImageFlowOptions options, bool coarse)
    : LabeledImageData(load_cifar100(dir, split, coarse), options) {}

}  // namespace vkp::dataflow
