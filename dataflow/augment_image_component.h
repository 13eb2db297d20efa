// AugmentImageComponent(s), AugmentImageCoordinates: image augmentors applied to components
// of every datapoint (an image; an image and its mask; an image and points on it).
//
// Datapoint k (counted from reset_state(), across epochs) is augmented with
// Rng(seed, k): the same seed gives the same augmented data, and augment_component()
// gives MultiThreadMapData and MultiThreadBatchData the very same function, so that
// augmenting on worker threads (ordered) yields exactly what AugmentImageComponent
// yields on one thread.
#pragma once

#include <cstdint>

#include "dataflow/augmentor_list.h"
#include "dataflow/dataflow.h"
#include "dataflow/multi_thread_map_data.h"

namespace vkp::dataflow {

// For MultiThreadMapData and MultiThreadBatchData (with their options' seed): applies
// `augmentors` in order to component `index` with the Rng the runner hands over.
RandomMapFunction augment_component(std::vector<AugmentorPtr> augmentors, std::size_t index = 0);

// tensorpack's AugmentImageComponents: the same augmentation of several components of
// each datapoint (an image and its mask or depth map): each component gets its own copy
// of datapoint k's Rng(seed, k), so every augmentor draws the same crop, flip or angle
// for all of them. The components must have one height and width (Error naming them);
// use augmentors that move pixels (a colour change would reach the mask too).
class AugmentImageComponents : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  AugmentImageComponents(DataFlowPtr df, std::vector<AugmentorPtr> augmentors, std::vector<std::size_t> indices,
                         std::uint64_t seed = 0);

  std::optional<std::size_t> size() const override { return df_->size(); }

 protected:
  void on_reset_state() override;
  void on_start_epoch() override { df_->start_epoch(); }
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  AugmentorList augmentors_;
  std::vector<std::size_t> indices_;
  std::uint64_t seed_;
  std::uint64_t count_ = 0;
};

// One component: AugmentImageComponents of {index}.
class AugmentImageComponent : public AugmentImageComponents {
 public:
  // The augmentors are applied in order to component `index`.
  AugmentImageComponent(DataFlowPtr df, std::vector<AugmentorPtr> augmentors, std::size_t index = 0,
                        std::uint64_t seed = 0)
      : AugmentImageComponents(std::move(df), std::move(augmentors), {index}, seed) {}
};

// tensorpack's AugmentImageCoordinates: component `image_index` augmented as by
// AugmentImageComponent, and component `points_index` (f32 [N, 2] rows of (x, y) in the
// image's pixel grid: keypoints, box corners, polygons) moved with it by the same draws
// (ImageAugmentor::apply_with_points). Every augmentor must be able to move points
// (the geometric ones, warps, crops, resizes and flips, and ValueAugmentors); one that
// cannot is an Error(unsupported) at the first datapoint.
class AugmentImageCoordinates : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  AugmentImageCoordinates(DataFlowPtr df, std::vector<AugmentorPtr> augmentors, std::size_t image_index = 0,
                          std::size_t points_index = 1, std::uint64_t seed = 0);

  std::optional<std::size_t> size() const override { return df_->size(); }

 protected:
  void on_reset_state() override;
  void on_start_epoch() override { df_->start_epoch(); }
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  AugmentorList augmentors_;
  std::size_t image_index_, points_index_;
  std::uint64_t seed_;
  std::uint64_t count_ = 0;
};

// AugmentImageCoordinates' function for the thread runners.
RandomMapFunction augment_coordinates(std::vector<AugmentorPtr> augmentors, std::size_t image_index = 0,
                                      std::size_t points_index = 1);

// AugmentImageComponents' function for the thread runners.
RandomMapFunction augment_components(std::vector<AugmentorPtr> augmentors, std::vector<std::size_t> indices);

}  // namespace vkp::dataflow
