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
    "  --mixed-precision    float16 activations and gradients, a dynamic loss scale for each\n"
    "                       net\n"
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

struct Options : examples::RunOptions, examples::StepOptions {
  Options() {
    logdir = "train_log/gan";
    lr = 2e-4f;
  }
  bool mixed_precision = false;
  std::string evaluate, export_path;
};

Options parse(int argc, char** argv) {
  Options o;
  examples::Flags flags(argc, argv, kHelp);
  while (flags.next()) {
    if (o.RunOptions::take(flags) || o.StepOptions::take(flags)) continue;
    if (flags.is("--mixed-precision"))
      o.mixed_precision = true;
    else if (flags.is("--evaluate"))
      o.evaluate = flags.value();
    else if (flags.is("--export"))
      o.export_path = flags.value();
    else
      flags.unknown();
  }
  o.RunOptions::check("the train split");
  o.StepOptions::check();
  return o;
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
    examples::publish_image(trainer(), "samples",
                            vkp::image_grid(examples::predict_rows(predict_, rows, batch_), 10, 10));
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
    const std::vector<std::int32_t> named =
        examples::predicted_labels([&](const std::vector<Array>& in) { return classifier(in); }, images, 500);
    std::int64_t right = 0;
    for (std::size_t i = 0; i < named.size(); ++i) right += named[i] == labels[i];
    return static_cast<double>(right) / static_cast<double>(named.size());
  };
  const std::vector<Array> rows = examples::noise_and_classes(10000, o.seed + 1000);
  std::vector<std::int32_t> asked;
  for (int i = 0; i < 10000; ++i) asked.push_back(i % 10);
  const double generated = accuracy(
      examples::predict_rows([&](const std::vector<Array>& in) { return generator(in); }, rows, o.batch), asked);
  dataflow::DataFlowPtr test = examples::fashion_mnist_batches(false, 10000, 0, o.data);
  test->reset_state();
  const dataflow::Datapoint real = *test->next();
  const double ceiling = accuracy(
      real[0], std::vector<std::int32_t>(real[1].data<std::int32_t>().begin(), real[1].data<std::int32_t>().end()));
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
              o.export_path.c_str(), o.logdir.c_str(), static_cast<long long>(o.batch),
              static_cast<long long>(o.batch));
  return 0;
#else
  (void)o;
  throw Error(ErrorCode::unsupported, "--export: this build of vkpack has no ONNX export (libonnx-dev)");
#endif
}

int run(const Options& o) {
  examples::train_gan(o, o.batch, o.mixed_precision, std::make_shared<examples::ConditionalGan>(o.batch, o.lr),
                      [&o] { return examples::gan_batches(o.batch, o.seed, o.data); },
                      {std::make_shared<SampleGrid>(o.batch)});
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
