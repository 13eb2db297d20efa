// examples/resnet: tensorpack's cifar10-resnet, a pre-activation residual network of
// 6n + 2 layers, on Fashion-MNIST (Debian's files) or on CIFAR-10 when --data points at
// its binary files. Pad-and-crop and flip augmentation, Momentum with a stepped (or
// cosine) learning rate, the test split evaluated after every epoch, checkpoints and --resume;
// one device or data-parallel towers (--devices).
//
//   resnet --depth 14 --epochs 12          see --help
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "flags.h"
#include "resnet_model.h"
#include "training.h"

namespace {

using namespace vkp;

constexpr const char* kHelp =
    "usage: resnet [options]\n"
    "\n"
    "Trains a pre-activation ResNet (tensorpack's cifar10-resnet) on Fashion-MNIST, or on\n"
    "CIFAR-10 with --data, on Vulkan devices and reports the test accuracy after every epoch.\n"
    "\n"
    "options:\n"
    "  --depth D            layers, 6n + 2: n residual units in each of three stages of\n"
    "                       16, 32 and 64 filters (default 14; tensorpack's default is 32)\n"
    "  --epochs N           epochs to train (default 12)\n"
    "  --batch N            batch size per tower (default 128)\n"
    "  --steps N            steps per epoch (default: a pass over the train split)\n"
    "  --lr X               initial learning rate of Momentum(0.9) (default 0.1)\n"
    "  --schedule NAME      step (default): the learning rate divided by 10 at 50% and by\n"
    "                       100 at 75% of the epochs; cosine: decayed every step from --lr\n"
    "                       to 0 on a half cosine over all the steps of --epochs\n"
    "  --no-augment         no random crop and flip\n"
    "  --device N           Vulkan device index, as `vkpack devices` lists them (default 0)\n"
    "  --devices I,J,...    train data-parallel on these devices, one tower each (an index\n"
    "                       may repeat)\n"
    "  --trainer NAME       with --devices: replicated (default), ps or async\n"
    "  --logdir DIR         log directory (default train_log/resnet-<depth>)\n"
    "  --resume             continue from the log directory's latest checkpoint; without\n"
    "                       it an existing log directory is backed up first\n"
    "  --save-every N       also save a checkpoint every N steps, so that a killed run\n"
    "                       resumes losing at most N steps (default 0: each epoch's end)\n"
    "  --data DIR           CIFAR-10's binary files (cifar-10-batches-bin), or Fashion-MNIST\n"
    "                       files (default /usr/share/datasets/fashion-mnist)\n"
    "  --seed N             seed of initial values, shuffling and augmentation (default 1)\n"
    "  --mixed-precision    float16 activations and gradients (float32 weights and\n"
    "                       optimizer state) with dynamic loss scaling\n"
    "  --sync-bn            with --devices: BatchNorm over the global batch of the towers\n"
    "                       (statistics exchanged through the host), not each tower's own\n"
    "  --export PATH        train nothing: write the model of the log directory's latest\n"
    "                       checkpoint (input f32 [batch, H, W, C] -> logits [batch, 10],\n"
    "                       inference mode) to PATH as ONNX\n"
    "  --help               this text\n";

struct Options : examples::RunOptions {
  Options() { epochs = 12; }
  int depth = 14;
  std::int64_t batch = 128;
  float lr = 0.1f;
  bool augment = true, mixed_precision = false, sync_bn = false;
  std::string schedule = "step", export_path;
};

Options parse(int argc, char** argv) {
  Options o;
  examples::Flags flags(argc, argv, kHelp);
  while (flags.next()) {
    if (o.take(flags)) continue;
    if (flags.is("--depth"))
      o.depth = flags.to_int();
    else if (flags.is("--batch"))
      o.batch = flags.to_i64();
    else if (flags.is("--lr")) o.lr = flags.to_float();
    else if (flags.is("--schedule")) o.schedule = flags.value();
    else if (flags.is("--no-augment"))
      o.augment = false;
    else if (flags.is("--mixed-precision")) o.mixed_precision = true;
    else if (flags.is("--sync-bn"))
      o.sync_bn = true;
    else if (flags.is("--export")) o.export_path = flags.value();
    else flags.unknown();
  }
  if (o.depth < 8 || (o.depth - 2) % 6 != 0)
    throw Error(ErrorCode::invalid_argument, "--depth must be 6n + 2 with n >= 1 (8, 14, 20, 32, 56, ...), not " +
                                                 std::to_string(o.depth));
  o.check("the train split");
  if (o.batch < 1) throw Error(ErrorCode::invalid_argument, "--batch must be >= 1");
  if (!std::isfinite(o.lr) || o.lr <= 0) throw Error(ErrorCode::invalid_argument, "--lr must be a positive finite number");
  if (o.sync_bn && o.trainer == "async")
    throw Error(ErrorCode::invalid_argument, "--sync-bn needs synchronous towers: --trainer replicated or ps");
  if (o.schedule != "step" && o.schedule != "cosine")
    throw Error(ErrorCode::invalid_argument, "--schedule must be step or cosine, not '" + o.schedule + "'");
  if (o.logdir.empty()) o.logdir = "train_log/resnet-" + std::to_string(o.depth);
  return o;
}

// --export: the inference tower of the latest checkpoint as ONNX.
int export_model(const Options& o) {
#ifdef VKPACK_HAVE_ONNX
  const examples::ImageSet images = examples::find_image_set(o.data);
  vk::Instance instance;
  vk::Device device(instance, o.device);
  auto model = std::make_shared<examples::PreactResNet>(images, (o.depth - 2) / 6, o.lr);
  train::OfflinePredictor predictor(model, o.logdir, device, {"input"}, {"logits"});
  train::export_onnx(predictor, o.export_path);
  std::printf("wrote %s: ResNet-%d of %s, input 'input' f32 [batch, %lld, %lld, %lld] (NHWC), output 'logits' [batch, 10]\n",
              o.export_path.c_str(), o.depth, o.logdir.c_str(), static_cast<long long>(images.height),
              static_cast<long long>(images.width), static_cast<long long>(images.channels));
  return 0;
#else
  (void)o;
  throw Error(ErrorCode::unsupported, "--export: this build of vkpack has no ONNX export (libonnx-dev)");
#endif
}

int run(const Options& o) {
  const examples::ImageSet images = examples::find_image_set(o.data);
  const auto towers = static_cast<std::int64_t>(std::max<std::size_t>(1, o.devices.size()));
  const std::int64_t train_images = images.train_size();
  examples::StepOptions{.batch = o.batch}.check_fits(towers, train_images);
  train::LoggerDir logdir(o.logdir, o.resume ? train::DirAction::keep : train::DirAction::backup);
  vk::Instance instance;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<train::TowerTrainer> trainer;
  if (o.devices.empty()) {
    device = std::make_unique<vk::Device>(instance, o.device);
    log_info("training ResNet-{} on {} on {}", o.depth, images.name(), device->label());
    trainer = std::make_unique<train::SimpleTrainer>(*device, o.seed);
  } else {
    log_info("training ResNet-{} on {} on {} towers ({})", o.depth, images.name(), towers, o.trainer);
    trainer = examples::multi_device_trainer(instance, o.devices, o.trainer, o.seed);
  }

  train::TrainConfig config;
  config.model = std::make_shared<examples::PreactResNet>(images, (o.depth - 2) / 6, o.lr, o.sync_bn);
  config.dataflow = examples::resnet_batches(images, true, o.batch, o.seed, o.augment);
  const std::int64_t steps_per_epoch = o.steps > 0 ? o.steps : train_images / o.batch / towers;
  config.steps_per_epoch = steps_per_epoch;
  config.max_epoch = o.epochs;
  config.logger_dir = logdir.path();
  config.mixed_precision = o.mixed_precision;
  // step: lr, lr / 10 from 50% of the epochs, lr / 100 from 75% (tensorpack's 82 and 123
  // of its ~164). cosine: set before every step from the global step, so a resumed run
  // continues it exactly.
  if (o.schedule == "cosine")
    config.callbacks = {std::make_shared<callbacks::WarmupCosineSchedule>("learning_rate", o.lr, 0,
                                                                          o.epochs * steps_per_epoch)};
  else
    config.callbacks = {std::make_shared<callbacks::ScheduledHyperParamSetter>(
        "learning_rate", examples::stepped_schedule(o.lr, {{0.5, o.lr / 10}, {0.75, o.lr / 100}}, o.epochs))};
  config.callbacks.push_back(examples::model_saver(3, o.save_every));
  for (callbacks::CallbackPtr& cb : examples::classifier_evaluation(examples::resnet_batches(images, false, o.batch, 0)))
    config.callbacks.push_back(std::move(cb));
  config.callbacks.push_back(std::make_shared<callbacks::ThroughputTracker>());
  config.callbacks.push_back(std::make_shared<callbacks::EstimatedTimeLeft>());
  config.callbacks.push_back(std::make_shared<callbacks::CheckNumerics>());
  if (o.resume) config = train::AutoResumeTrainConfig(std::move(config));
  train::launch_train_with_config(std::move(config), *trainer);

  examples::print_test_accuracies(trainer->monitors(), steps_per_epoch);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    return o.export_path.empty() ? run(o) : export_model(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "resnet: %s\n", e.what());
    return 1;
  }
}
