#include "dataflow/image_from_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.h"
#include "dataflow/image_file.h"
#include "dataflow/permutation.h"

namespace vkp::dataflow {
namespace {

bool is_image(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* known : {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tga", ".ppm", ".pgm"})
    if (ext == known) return true;
  return false;
}

}  // namespace

ImageFromFile::ImageFromFile(std::vector<std::string> files, int channels, bool shuffle, std::uint64_t seed)
    : ImageFromFile(std::move(files), {}, channels, shuffle, seed) {}

ImageFromFile::ImageFromFile(std::vector<std::string> files, std::vector<std::int32_t> labels, int channels,
                             bool shuffle, std::uint64_t seed)
    : files_(std::move(files)), labels_(std::move(labels)), channels_(channels), shuffle_(shuffle), seed_(seed) {
  if (channels != 0 && channels != 1 && channels != 3 && channels != 4)
    throw Error(ErrorCode::invalid_argument, "ImageFromFile: channels must be 0 (as stored), 1, 3 or 4, not " +
                                                 std::to_string(channels));
}

void ImageFromFile::on_reset_state() { rng_ = Rng(seed_); }

void ImageFromFile::on_start_epoch() {
  position_ = 0;
  if (shuffle_) order_ = random_permutation(files_.size(), rng_);
}

std::optional<Datapoint> ImageFromFile::on_next() {
  if (position_ == files_.size()) return std::nullopt;
  const std::size_t i = shuffle_ ? order_[position_] : position_;
  ++position_;
  Datapoint dp{read_image(files_[i], channels_)};
  if (!labels_.empty()) dp.push_back(Array::from(Shape{}, std::vector<std::int32_t>{labels_[i]}));
  return dp;
}

struct ImageFolder::Scan {
  std::vector<std::string> files, classes;
  std::vector<std::int32_t> labels;
};

ImageFolder::ImageFolder(const std::string& root, int channels, bool shuffle, std::uint64_t seed)
    : ImageFolder(
          [&] {
            namespace fs = std::filesystem;
            if (!fs::is_directory(root)) throw Error(ErrorCode::io, "ImageFolder: " + root + " is not a directory");
            std::vector<fs::path> folders;
            for (const fs::directory_entry& e : fs::directory_iterator(root))
              if (e.is_directory()) folders.push_back(e.path());
            std::sort(folders.begin(), folders.end());
            Scan scan;
            for (const fs::path& folder : folders) {
              std::vector<std::string> images;
              for (const fs::directory_entry& e : fs::directory_iterator(folder))
                if (e.is_regular_file() && is_image(e.path())) images.push_back(e.path().string());
              if (images.empty()) continue;
              std::sort(images.begin(), images.end());
              const auto label = static_cast<std::int32_t>(scan.classes.size());
              scan.classes.push_back(folder.filename().string());
              scan.files.insert(scan.files.end(), images.begin(), images.end());
              scan.labels.insert(scan.labels.end(), images.size(), label);
            }
            if (scan.files.empty())
              throw Error(ErrorCode::not_found, "ImageFolder: " + root +
                                                    " has no class folder holding images (root/<class>/<image>.png ...)");
            return scan;
          }(),
          channels, shuffle, seed) {}

ImageFolder::ImageFolder(Scan scan, int channels, bool shuffle, std::uint64_t seed)
    : ImageFromFile(std::move(scan.files), std::move(scan.labels), channels, shuffle, seed),
      classes_(std::move(scan.classes)) {}

}  // namespace vkp::dataflow
