#include "dataflow/image_from_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/image_file.h"
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
  if (!labels_.empty() && labels_.size() != files_.size())
    throw Error(ErrorCode::invalid_argument, "ImageFromFile: " + std::to_string(labels_.size()) + " labels for " +
                                                 std::to_string(files_.size()) + " files; give one per file");
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

ImageListEntries read_image_list(const std::string& list_file, const std::string& root) {
  std::ifstream in(list_file);
  if (!in) throw Error(ErrorCode::io, "ImageList: cannot read the list file " + list_file);
  ImageListEntries entries;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!line.empty() && is_space(line.back())) line.pop_back();
    std::size_t first = 0;
    while (first < line.size() && is_space(line[first])) ++first;
    if (first == line.size()) continue;
    const std::string where = list_file + ":" + std::to_string(number);
    std::size_t split = line.size();
    while (split > first && !is_space(line[split - 1])) --split;
    std::size_t path_end = split;
    while (path_end > first && is_space(line[path_end - 1])) --path_end;
    if (path_end == first)
      throw Error(ErrorCode::bad_data, where + ": '" + line + "' is not '<path> <label>'");
    std::int32_t label = -1;
    const char* begin = line.data() + split;
    const char* end = line.data() + line.size();
    const auto [stop, ec] = std::from_chars(begin, end, label);
    if (ec != std::errc() || stop != end || label < 0)
      throw Error(ErrorCode::bad_data, where + ": the label '" + std::string(begin, end) +
                                           "' is not an integer in [0, 2^31)");
    const std::filesystem::path path(line.substr(first, path_end - first));
    if (!root.empty()) {  // a stranger's list must not reach outside the root
      bool climbs = false;
      for (const std::filesystem::path& part : path) climbs |= part == "..";
      if (path.is_absolute() || path.has_root_name() || path.has_root_directory() || climbs)
        throw Error(ErrorCode::bad_data, where + ": the path '" + path.string() +
                                             "' leaves the root (absolute, or through '..'); paths are relative to " +
                                             root);
    }
    entries.files.push_back((std::filesystem::path(root) / path).string());
    entries.labels.push_back(label);
  }
  if (in.bad()) throw Error(ErrorCode::io, "ImageList: reading " + list_file + " failed");
  if (entries.files.empty()) throw Error(ErrorCode::not_found, "ImageList: " + list_file + " lists no image");
  return entries;
}

ImageList::ImageList(const std::string& list_file, const std::string& root, int channels, bool shuffle,
                     std::uint64_t seed)
    : ImageList(read_image_list(list_file, root), channels, shuffle, seed) {}

ImageList::ImageList(ImageListEntries entries, int channels, bool shuffle, std::uint64_t seed)
    : ImageFromFile(std::move(entries.files), std::move(entries.labels), channels, shuffle, seed) {}

}  // namespace vkp::dataflow
