// Datasets of image files, decoded as they are read (image_file.h):
//   ImageFromFile  [image] from each file of a list (tensorpack's ImageFromFile)
//   ImageFolder    [image, label] from root/<class>/<file>: one subfolder per class, the
//                  classes in sorted order numbered from 0 (torchvision's ImageFolder,
//                  tensorpack's ILSVRC12Files); images are the files whose extension is
//                  .png, .jpg, .jpeg, .bmp, .gif, .tga, .ppm or .pgm (any case)
//   ImageList      [image, label] from a list file of "<path> <label>" lines (the
//                  train.txt / val.txt of tensorpack's ILSVRC12 layout), paths
//                  relative to a root
// Images are u8 [H, W, C] with `channels` channels (0: as stored). In order, or shuffled
// per epoch from `seed` (the same orders for the same seed, so a resumed run replays
// them). A file that cannot be decoded is an Error naming it when it is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class ImageFromFile : public DataFlow {
 public:
  explicit ImageFromFile(std::vector<std::string> files, int channels = 3, bool shuffle = false, std::uint64_t seed = 0);

  std::optional<std::size_t> size() const override { return files_.size(); }
  const std::vector<std::string>& files() const { return files_; }

 protected:
  // With labels (one per file): datapoints [image, label].
  ImageFromFile(std::vector<std::string> files, std::vector<std::int32_t> labels, int channels, bool shuffle,
                std::uint64_t seed);
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::vector<std::string> files_;
  std::vector<std::int32_t> labels_;  // empty: none
  int channels_;
  bool shuffle_;
  std::uint64_t seed_;
  Rng rng_{0};
  std::vector<std::size_t> order_;
  std::size_t position_ = 0;
};

class ImageFolder : public ImageFromFile {
 public:
  // Error(io) when `root` is not a directory; Error(not_found) when it holds no class
  // folder with an image.
  explicit ImageFolder(const std::string& root, int channels = 3, bool shuffle = true, std::uint64_t seed = 0);
  // Class names by label.
  const std::vector<std::string>& classes() const { return classes_; }

 private:
  struct Scan;
  ImageFolder(Scan scan, int channels, bool shuffle, std::uint64_t seed);
  std::vector<std::string> classes_;
};

// One image and its label per line: the path (which may hold spaces), whitespace, then
// the label, an integer in [0, 2^31); blank lines are skipped. With a root, a path must
// stay under it (not absolute, no '..'), so that a downloaded list cannot make the flow
// read other files; with an empty root paths are taken as they are. A line without a label, or
// with a label that is not such an integer, is an Error(bad_data) naming the list file and
// the line; a list file that cannot be read is an Error(io), one without an image
// Error(not_found). The images are read when
// the flow reaches them (a missing one is then an Error naming it).
struct ImageListEntries {
  std::vector<std::string> files;  // root joined with each line's path
  std::vector<std::int32_t> labels;
};
ImageListEntries read_image_list(const std::string& list_file, const std::string& root);

class ImageList : public ImageFromFile {
 public:
  ImageList(const std::string& list_file, const std::string& root, int channels = 3, bool shuffle = true,
            std::uint64_t seed = 0);
  explicit ImageList(ImageListEntries entries, int channels = 3, bool shuffle = true, std::uint64_t seed = 0);
};

}  // namespace vkp::dataflow
