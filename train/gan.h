// GAN training (tensorpack's GANModelDesc, GANTrainer and SeparateGANTrainer): a model
// with two costs, a generator's and a discriminator's, each trained by its own minimize
// of the model's optimizer over its own variables.
//
//   class Model : public vkp::train::GANModelDesc {
//     Tensor build_graph(const std::vector<Tensor>& in) override {
//       Tensor fake, real_logits, fake_logits;
//       { VariableScope s(g, "gen"); fake = generator(in[1]); }
//       { VariableScope s(g, "discrim"); real_logits = D(in[0]); }
//       { VariableScope s(g, "discrim", Reuse::yes); fake_logits = D(fake); }
//       return set_losses(g_loss, d_loss);   // variables under gen/ and discrim/
//     }
//   };
//   vkp::train::GANTrainer trainer(device, model);
//   vkp::train::launch_train_with_config(config, trainer);   // config.model = model
//
// A step feeds one batch and runs, on it, the discriminator's update and then the
// generator's, whose gradients see the updated discriminator (tensorpack's control
// dependency); SeparateGANTrainer runs them every d_period / g_period steps instead.
// The global step counts steps; Adam corrects both updates of a step with its t. The
// update-ops collection (batch norm's moving averages) runs with the last update of a
// step. Checkpoints hold both nets' variables and slots, so a resumed run ends where an
// uninterrupted one does. MultiDeviceGANTrainer trains the same on several devices.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "train/model_desc.h"
#include "train/multi_device_trainer.h"
#include "train/tower_trainer.h"

namespace vkp::train {

class GANModelDesc : public ModelDesc {
 public:
  // After the training tower is built: the losses of its last set_losses.
  graph::Tensor g_loss() const { return g_loss_; }
  graph::Tensor d_loss() const { return d_loss_; }
  const std::string& g_scope() const { return g_scope_; }
  const std::string& d_scope() const { return d_scope_; }

 protected:
  // Records both losses (scalars) for the trainer; the generator trains the trainable
  // variables whose names start with g_scope + "/", the discriminator those under
  // d_scope + "/". Returns their sum as "total_loss", the cost a build_graph returns.
  graph::Tensor set_losses(graph::Tensor g_loss, graph::Tensor d_loss, std::string g_scope = "gen",
                           std::string d_scope = "discrim");

 private:
  graph::Tensor g_loss_, d_loss_;
  std::string g_scope_ = "gen", d_scope_ = "discrim";
};

// Mixed precision (enable_mixed_precision, TrainConfig::mixed_precision): float16
// activations and gradients in both nets' runs, and a dynamic loss scale for each net
// (variables d_loss_scale/... and g_loss_scale/...): an overflow in one net's gradients
// skips that net's update and halves its scale alone. The trainer reports the
// statistics d_loss_scale, d_skipped_steps, g_loss_scale and g_skipped_steps.
inline constexpr const char* kDiscriminatorLossScale = "d_loss_scale";
inline constexpr const char* kGeneratorLossScale = "g_loss_scale";

class GANTrainer : public TowerTrainer {
 public:
  // d_period, g_period >= 1: at global step s the discriminator trains when
  // s % d_period == 0, the generator when s % g_period == 0.
  GANTrainer(vk::Device& device, std::shared_ptr<GANModelDesc> model, std::uint64_t seed = 0, int d_period = 1,
             int g_period = 1);

  void setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                   OptimizerFn optimizer) override;
  void run_step() override;

  const std::vector<graph::Tensor>& g_vars() const { return g_vars_; }
  const std::vector<graph::Tensor>& d_vars() const { return d_vars_; }

 protected:
  std::vector<std::string> loss_scale_names() const override { return {kDiscriminatorLossScale, kGeneratorLossScale}; }

 private:
  std::shared_ptr<GANModelDesc> model_;
  int d_period_, g_period_;
  std::vector<graph::Tensor> placeholders_, g_vars_, d_vars_, d_train_, g_train_, updates_;
  graph::Tensor cost_;
};

// tensorpack's SeparateGANTrainer: GANTrainer with the two periods.
class SeparateGANTrainer : public GANTrainer {
 public:
  SeparateGANTrainer(vk::Device& device, std::shared_ptr<GANModelDesc> model, std::uint64_t seed, int d_period,
                     int g_period)
      : GANTrainer(device, std::move(model), seed, d_period, g_period) {}
};

// GANs on several devices (tensorpack's MultiGPUGANTrainer): every tower builds both
// nets and takes a batch of its own; a step is the discriminator's objective (its
// gradients averaged over the towers by batch size and applied, replicated or by the
// parameter server), then the generator's on the same batches through the updated
// discriminator, as GANTrainer does on one device. The update ops run once, with the
// last objective of the step; the callbacks' fetches come from that objective's run
// (tower 0's batch). The step's cost is the mean d_loss plus the mean g_loss of the two
// runs. With periods, one of d_period and g_period must be 1, so that every step trains.
// Not with async towers or bucket_bytes. Mixed precision keeps a loss scale for each net
// in every tower, as GANTrainer does on one device (replicated towers, or a parameter
// server with its master on the device).
struct GANTowerOptions {
  towers::Reduction reduction = towers::Reduction::replicated;  // or parameter_server
  std::uint64_t seed = 0;
  int d_period = 1, g_period = 1;  // as SeparateGANTrainer's
};

class MultiDeviceGANTrainer : public MultiDeviceTrainer {
 public:
  MultiDeviceGANTrainer(const vk::Instance& instance, const std::vector<int>& devices,
                        std::shared_ptr<GANModelDesc> model, GANTowerOptions options = {},
                        PerDeviceOptions device_options = {});

 protected:
  std::vector<std::string> loss_scale_names() const override { return {kDiscriminatorLossScale, kGeneratorLossScale}; }
  towers::Tower build_tower(graph::Graph& graph, int k) override;
  double step_towers(std::span<const std::vector<Array>> batches, std::span<const std::vector<Array>> next,
                     std::vector<Array>& fetched) override;

 private:
  static constexpr int kDiscriminator = 0, kGenerator = 1;  // the towers' objectives
  std::shared_ptr<GANModelDesc> model_;
  int d_period_, g_period_;
  std::vector<Array> none_;
};

}  // namespace vkp::train
