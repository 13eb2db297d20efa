// LabeledImages: a classification dataset held in memory (MNIST, CIFAR), and
// LabeledImageData, the dataflow over it.
//
// The data is shared, read-only, between flows: several MultiThreadRunner copies or a
// train flow and an evaluation flow over one loaded dataset cost its memory once.
#pragma once

#include <cstdint>
#include <memory>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

enum class Split { train, test };
std::string_view to_string(Split split);

struct LabeledImages {
  std::int64_t height = 0, width = 0, channels = 0;
  std::vector<std::uint8_t> pixels;   // size() x height x width x channels (HWC per image)
  std::vector<std::int32_t> labels;   // size(), each in [0, num_classes)
  int num_classes = 0;

  std::size_t size() const { return labels.size(); }
  std::size_t image_bytes() const { return static_cast<std::size_t>(height * width * channels); }
};

struct ImageFlowOptions {
  bool shuffle = true;        // a new order each epoch, drawn from seed
  DType dtype = DType::u8;    // u8: 0..255; f32: value / 255, in [0, 1]
  std::uint64_t seed = 0;
};

// Yields {image [H, W, C] u8 or f32, label [] i32}.
class LabeledImageData : public DataFlow {
 public:
  LabeledImageData(std::shared_ptr<const LabeledImages> data, ImageFlowOptions options = {});

  std::optional<std::size_t> size() const override { return data_->size(); }
  const std::shared_ptr<const LabeledImages>& data() const { return data_; }

 protected:
  void on_reset_state() override { rng_ = Rng(options_.seed); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::shared_ptr<const LabeledImages> data_;
  ImageFlowOptions options_;
  Rng rng_{0};
  std::vector<std::size_t> order_;
  std::size_t position_ = 0;
};

}  // namespace vkp::dataflow
