#include "dataflow/labeled_images.h"

#include <cstring>
#include <numeric>

#include "dataflow/permutation.h"

namespace vkp::dataflow {
namespace {

// Shuffled reads of an in-memory dataset wait on memory, one image at a time: asking for
// the image this many datapoints ahead lets its cache misses overlap the work on this one.
constexpr std::size_t kPrefetchAhead = 4;
constexpr std::size_t kCacheLine = 64;

void prefetch(const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; i += kCacheLine) __builtin_prefetch(p + i);
  if (n > 0) __builtin_prefetch(p + n - 1);
}

}  // namespace

std::string_view to_string(Split split) { return split == Split::train ? "train" : "test"; }

LabeledImageData::LabeledImageData(std::shared_ptr<const LabeledImages> data, ImageFlowOptions options)
    : data_(std::move(data)), options_(options) {
  require(data_ != nullptr, ErrorCode::invalid_argument, "LabeledImageData: the dataset is null");
  require(options_.dtype == DType::u8 || options_.dtype == DType::f32, ErrorCode::invalid_argument,
          "LabeledImageData: images can be u8 or f32, not " + std::string(vkp::to_string(options_.dtype)));
  require(data_->pixels.size() == data_->size() * data_->image_bytes(), ErrorCode::invalid_argument,
          "LabeledImageData: " + std::to_string(data_->size()) + " labels of " + std::to_string(data_->height) +
              " x " + std::to_string(data_->width) + " x " + std::to_string(data_->channels) + " images need " +
              std::to_string(data_->size() * data_->image_bytes()) + " pixel bytes, the dataset has " +
              std::to_string(data_->pixels.size()));
}

void LabeledImageData::on_start_epoch() {
  position_ = 0;
  if (options_.shuffle) {
    order_ = random_permutation(data_->size(), rng_);
  } else {
    order_.resize(data_->size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
  }
}

std::optional<Datapoint> LabeledImageData::on_next() {
  if (position_ == order_.size()) return std::nullopt;
  const std::size_t i = order_[position_++];
  const std::size_t n = data_->image_bytes();
  const std::uint8_t* src = data_->pixels.data() + i * n;
  if (position_ + kPrefetchAhead <= order_.size()) {
    const std::size_t ahead = order_[position_ + kPrefetchAhead - 1];
    prefetch(data_->pixels.data() + ahead * n, n);
    __builtin_prefetch(data_->labels.data() + ahead);
  }
  Array image = Array::uninitialized(options_.dtype, Shape{data_->height, data_->width, data_->channels});
  if (options_.dtype == DType::u8) {
    if (n > 0) std::memcpy(image.bytes().data(), src, n);
  } else {
    float* out = image.data<float>().data();
    for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<float>(src[k]) * (1.0f / 255.0f);
  }
  Array label = Array::uninitialized(DType::i32, Shape{});
  label.data<std::int32_t>()[0] = data_->labels[i];
  Datapoint dp;
  dp.reserve(2);
  dp.push_back(std::move(image));
  dp.push_back(std::move(label));
  return dp;
}

}  // namespace vkp::dataflow
