// examples/gan: a conditional DCGAN on Fashion-MNIST (tensorpack's ConditionalGAN-mnist).
// Trains the generator and discriminator of gan_model.h with GANTrainer, writes a 10 x 10
// grid of samples (row c: class c) after every epoch to <logdir>/samples-<step>.png and
// TensorBoard, saves checkpoints and resumes; --evaluate has the Fashion-MNIST example's
// convnet label 10,000 generated samples and reports how often it names the class asked.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "flags.h"
#include "gan_model.h"
#include "models.h"
#include "training.h"

namespace {

using namespace vkp;

constexpr const char* kHelp =
    "usage: gan [options]\n"
    "\n"
    "Trains a conditional DCGAN on Fashion-MNIST on a Vulkan device; after every epoch it\n"
    "writes a 10 x 10 grid of samples (one row per class) to <logdir>/samples-<step>.png.\n"
    "\n"
    "options:\n"
    "  --epochs N           epochs to train (default 10)\n"
    "  --steps N            steps per epoch (default: the whole train split)\n"
    "  --batch N            batch size (default 64)\n"
    "  --lr X               Adam's learning rate, beta1 0.5 (default 0.0002)\n"
    "  --device N           Vulkan device index, as `vkpack devices` lists them (default 0)\n"
    "  --devices I,J,...    train data-parallel on these devices, one tower each (an index may\n"
    "                       repeat): each step takes a batch per tower, and both nets' gradients\n"
    "                       are averaged over the towers\n"
    "  --trainer NAME       with --devices: replicated (default) or ps\n"
    "  --logdir DIR         log directory (default train_log/gan)\n"
    "  --resume             continue from the log directory's latest checkpoint\n"
    "  --save-every N       also save a checkpoint every N steps, so that a killed run\n"
    "                       resumes losing at most N steps (default 0: each epoch's end)\n"
    "  --data DIR           Fashion-MNIST files (default /usr/share/datasets/fashion-mnist)\n"
    "  --seed N             seed of initial values, shuffling and noise (default 1)\n"
    "  --evaluate DIR       train nothing: the generator of --logdir's latest checkpoint makes\n"
    "                       1,000 samples of each class; the Fashion-MNIST example's convnet\n"
    "                       of DIR's latest checkpoint (fashion_mnist --model conv) labels them\n"
    "                       and the real test images; both accuracies are printed\n"
    "  --export PATH        train nothing: write the generator of --logdir's latest checkpoint\n"
    "                       (onehot [B, 10], z [B, 100] -> gen/image [B, 28, 28, 1]) as ONNX\n"
    "  --help               this text\n";

struct Options : examples::RunOptions {
  Options() { logdir = "train_log/gan"; }
  std::int64_t batch = 64;
  float lr = 2e-4f;
  std::string evaluate, export_path;
};

Options parse(int argc, char** argv) {
  Options o;
  examples::Flags flags(argc, argv, kHelp);
  while (flags.next()) {
    if (o.take(flags)) continue;
    if (flags.is("--batch"))
      o.batch = flags.to_i64();
    else if (flags.is("--lr"))
      o.lr = flags.to_float();
    else if (flags.is("--evaluate")) o.evaluate = flags.value();
    else if (flags.is("--export")) o.export_path = flags.value();
    else flags.unknown();
  }
  o.check("the train split");
  if (o.batch < 1) throw Error(ErrorCode::invalid_argument, "--batch must be >= 1");
  if (!(o.lr > 0) || !std::isfinite(o.lr)) throw Error(ErrorCode::invalid_argument, "--lr must be a positive finite number");
  return o;
}

// The generator's images for rows of {onehot, z}, `batch` at a time (the model's batch).
Array generate(const std::function<std::vector<Array>(const std::vector<Array>&)>& predict, const std::vector<Array>& rows,
               std::int64_t batch) {
  const std::int64_t count = rows[0].shape()[0];
  Array out(DType::f32, Shape{count, 28, 28, 1});
  for (std::int64_t at = 0; at < count; at += batch) {
    std::vector<Array> part;
    for (const Array& r : rows) {
      const std::int64_t width = r.shape()[1];
      Array p(DType::f32, Shape{batch, width});  // the last batch padded with zeros
      const std::int64_t n = std::min(batch, count - at);
      std::memcpy(p.bytes().data(), r.bytes().data() + static_cast<std::size_t>(at * width) * 4,
                  static_cast<std::size_t>(n * width) * 4);
      part.push_back(p);
    }
    const Array images = predict(part)[0];
    const std::int64_t n = std::min(batch, count - at);
    std::memcpy(out.bytes().data() + static_cast<std::size_t>(at * 784) * 4, images.bytes().data(),
                static_cast<std::size_t>(n * 784) * 4);
  }
  return out;
}

// After every epoch: 10 samples of each class, one row per class, from fixed noise.
class SampleGrid : public callbacks::Callback {
 public:
  explicit SampleGrid(std::int64_t batch) : batch_(batch) { chief_only_ = true; }

 protected:
  void on_trigger_epoch() override {
    if (!predict_) predict_ = trainer().predictor({"onehot", "z"}, {"gen/image"});
    std::vector<Array> rows = examples::noise_and_classes(100, 12345);
    // Row r of the grid is class r: sample i is class i / 10.
    Array onehot(DType::f32, Shape{100, examples::kClasses});
    for (int i = 0; i < 100; ++i) onehot.data<float>()[static_cast<std::size_t>(i * 10 + i / 10)] = 1;
    rows[0] = onehot;
    const Array grid = dataflow::image_grid(generate(predict_, rows, batch_), 10, 10);
    trainer().monitors().put_image("samples", grid);
    if (trainer().logger_dir().empty()) return;
    const std::string path = trainer().logger_dir() + "/samples-" + std::to_string(trainer().global_step()) + ".png";
    dataflow::write_png(path, grid);
    log_info("samples: {}", path);
  }

 private:
  std::int64_t batch_;
  callbacks::PredictFn predict_;
};

int evaluate(const Options& o) {
  vk::Instance instance;
  vk::Device device(instance, o.device);
  auto gan = std::make_shared<examples::ConditionalGan>(o.batch, o.lr);
  train::OfflinePredictor generator(gan, o.logdir, device, {"onehot", "z"}, {"gen/image"});
  auto classifier_model = std::make_shared<examples::FashionMnistModel>(examples::Architecture::convnet, 1e-3f);
  train::OfflinePredictor classifier(classifier_model, o.evaluate, device, {"input"}, {"logits"});
  const auto accuracy = [&](const Array& images, const std::vector<std::int32_t>& labels) {
    std::int64_t right = 0;
    const std::int64_t count = images.shape()[0];
    for (std::int64_t at = 0; at < count; at += 500) {
      const std::int64_t n = std::min<std::int64_t>(500, count - at);
      Array part(DType::f32, Shape{n, 28, 28, 1});
      std::memcpy(part.bytes().data(), images.bytes().data() + static_cast<std::size_t>(at * 784) * 4, part.nbytes());
      const Array logits = classifier({part})[0];
      for (std::int64_t i = 0; i < n; ++i) {
        const float* row = logits.data<float>().data() + i * 10;
        right += std::max_element(row, row + 10) - row == labels[static_cast<std::size_t>(at + i)];
      }
    }
    return static_cast<double>(right) / static_cast<double>(count);
  };
  const std::vector<Array> rows = examples::noise_and_classes(10000, o.seed + 1000);
  std::vector<std::int32_t> asked;
  for (int i = 0; i < 10000; ++i) asked.push_back(i % 10);
  const double generated = accuracy(generate([&](const std::vector<Array>& in) { return generator(in); }, rows, o.batch),
                                    asked);
  dataflow::DataFlowPtr test = examples::fashion_mnist_batches(false, 10000, 0, o.data);
  test->reset_state();
  const dataflow::Datapoint real = *test->next();
  const double ceiling = accuracy(real[0], std::vector<std::int32_t>(real[1].data<std::int32_t>().begin(),
                                                                      real[1].data<std::int32_t>().end()));
  std::printf("generated samples labelled as the class asked: %.4f (10000 samples)\n", generated);
  std::printf("real test images labelled correctly:           %.4f (the ceiling)\n", ceiling);
  return 0;
}

int export_generator(const Options& o) {
#ifdef VKPACK_HAVE_ONNX
  vk::Instance instance;
  vk::Device device(instance, o.device);
  auto gan = std::make_shared<examples::ConditionalGan>(o.batch, o.lr);
  train::OfflinePredictor generator(gan, o.logdir, device, {"onehot", "z"}, {"gen/image"});
  train::export_onnx(generator, o.export_path);
  std::printf("wrote %s: the generator of %s, inputs 'onehot' [%lld, 10] and 'z' [%lld, 100], output 'gen/image'\n",
              o.export_path.c_str(), o.logdir.c_str(), static_cast<long long>(o.batch), static_cast<long long>(o.batch));
  return 0;
#else
  (void)o;
  throw Error(ErrorCode::unsupported, "--export: this build of vkpack has no ONNX export (libonnx-dev)");
#endif
}

int run(const Options& o) {
  const auto towers = static_cast<std::int64_t>(std::max<std::size_t>(1, o.devices.size()));
  // The train split's images (its file's header); an epoch is one pass over them.
  const std::int64_t train_images =
      dataflow::fashion_mnist_images(dataflow::Split::train, o.data.empty() ? dataflow::kFashionMnistDir : o.data);
  if (o.batch * towers > train_images)
    throw Error(ErrorCode::invalid_argument, "--batch " + std::to_string(o.batch) + " on " + std::to_string(towers) +
                                                 " towers is more than the " + std::to_string(train_images) +
                                                 " images of the train split");
  train::LoggerDir logdir(o.logdir, o.resume ? train::DirAction::keep : train::DirAction::backup);
  vk::Instance instance;
  auto model = std::make_shared<examples::ConditionalGan>(o.batch, o.lr);
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<train::TowerTrainer> trainer;
  if (o.devices.empty()) {
    device = std::make_unique<vk::Device>(instance, o.device);
    trainer = std::make_unique<train::GANTrainer>(*device, model, o.seed);
  } else {
    trainer = std::make_unique<train::MultiDeviceGANTrainer>(instance, o.devices, model, towers::parse_reduction(o.trainer),
                                                             o.seed);
  }
  train::TrainConfig config;
  config.model = model;
  config.dataflow = examples::gan_batches(o.batch, o.seed, o.data);
  config.steps_per_epoch = o.steps > 0 ? o.steps : train_images / o.batch / towers;
  config.max_epoch = o.epochs;
  config.logger_dir = logdir.path();
  config.callbacks = {examples::model_saver(10, o.save_every), std::make_shared<SampleGrid>(o.batch)};
  if (o.resume) config = train::AutoResumeTrainConfig(std::move(config));
  train::launch_train_with_config(std::move(config), *trainer);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (!o.export_path.empty()) return export_generator(o);
    return o.evaluate.empty() ? run(o) : evaluate(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gan: %s\n", e.what());
    return 1;
  }
}
