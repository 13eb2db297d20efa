// The residual-network example's model and data: tensorpack's cifar10-resnet, a
// pre-activation ResNet (He et al., "Identity Mappings in Deep Residual Networks") of
// 6n + 2 layers, on Fashion-MNIST (28 x 28 x 1) or CIFAR-10 (32 x 32 x 3).
#pragma once

#include <cstdint>
#include <string>

#include "vkpack/vkpack.h"

namespace vkp::examples {

// Which images: the dataset and its image size.
struct ImageSet {
  enum class Kind { fashion_mnist, cifar10 } kind = Kind::fashion_mnist;
  std::string dir;  // empty: Debian's Fashion-MNIST
  std::int64_t height = 28, width = 28, channels = 1;
  const char* name() const { return kind == Kind::cifar10 ? "CIFAR-10" : "Fashion-MNIST"; }
  // Images of the train split: CIFAR-10's 50000, or as many as the Fashion-MNIST-format
  // files hold (their header read).
  std::int64_t train_size() const;
};
// CIFAR-10 when `dir` holds the binary files (data_batch_1.bin, itself or in its
// cifar-10-batches-bin folder); Fashion-MNIST otherwise (Debian's files when empty).
ImageSet find_image_set(const std::string& dir);

// Inputs "input" f32 [?, H, W, C] in [0, 1] and "label" i32 [?]. conv0 (16 filters), then
// three stages of n residual units (16, 32 and 64 filters; the second and third halve
// the resolution in their first unit, whose shortcut is average pooling and zero-padded
// channels), BN-relu, global average pooling and a 10-way linear layer. Names "cost"
// (cross entropy + weight decay 2e-4 * l2_loss of every .*/W), "accuracy",
// "incorrect_vector" and "logits"; Momentum(0.9) with the session's learning rate.
// `sync_statistics`: every BatchNorm normalises over the global batch of synchronous
// towers (BatchNormOptions::sync_statistics), not each tower's own.
class PreactResNet : public train::ModelDesc {
 public:
  PreactResNet(const ImageSet& images, int units_per_stage, float learning_rate, bool sync_statistics = false);
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
  graph::Optimizer optimizer(graph::Graph& graph) override;

 private:
  ImageSet images_;
  int n_;
  float learning_rate_;
  bool sync_statistics_;
};

// Train batches: shuffled from `seed`, each image padded by 4 pixels, a random crop of
// its own size and a random left-right flip (when `augment`); the last partial batch is
// dropped. Test batches: in order, unaugmented, every image.
dataflow::DataFlowPtr resnet_batches(const ImageSet& images, bool train, std::int64_t batch, std::uint64_t seed,
                                     bool augment = true);

}  // namespace vkp::examples
