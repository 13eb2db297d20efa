// examples/infogan: InfoGAN on Fashion-MNIST (tensorpack's InfoGAN-mnist). Trains the
// generator, discriminator and Q head of infogan_model.h with GANTrainer, without labels;
// after every epoch writes two 10 x 10 grids, one row per value of the categorical code
// and the columns sweeping one continuous code from -1 to 1 (the noise fixed), to
// <logdir>/samples-<step>.png and <logdir>/style-<step>.png and TensorBoard; saves
// checkpoints and resumes. --evaluate has the Fashion-MNIST example's convnet label
// 1,000 samples of each category and says how well the categories match the classes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "flags.h"
#include "infogan_model.h"
#include "models.h"
#include "training.h"

namespace {

using namespace vkp;

constexpr const char* kHelp =
    "usage: infogan [options]\n"
    "\n"
    "Trains an InfoGAN on Fashion-MNIST on a Vulkan device, without labels: a categorical\n"
    "code of 10 values and two continuous codes beside the noise, which the discriminator's Q\n"
    "head learns to recover. After every epoch it writes <logdir>/samples-<step>.png (row r:\n"
    "category r; columns: the first continuous code from -1 to 1) and style-<step>.png (the\n"
    "second continuous code), the noise fixed across each grid, and noise-<step>.png (row r:\n"
    "category r; column c: the c-th of ten noise draws).\n"
    "\n"
    "options:\n"
    "  --epochs N           epochs to train (default 10)\n"
    "  --steps N            steps per epoch (default: the whole train split)\n"
    "  --batch N            batch size (default 64)\n"
    "  --lr X               Adam's learning rate, beta1 0.5 (default 0.0002)\n"
    "  --info-weight X      lambda, the weight of the Q head's loss in both losses (default 2;\n"
    "                       tensorpack's 1 steers the class less in the first epochs)\n"
    "  --mixed-precision    float16 activations and gradients, a dynamic loss scale for each\n"
    "                       net\n"
    "  --device N           Vulkan device index, as `vkpack devices` lists them (default 0)\n"
    "  --devices I,J,...    train data-parallel on these devices, one tower each (an index may\n"
    "                       repeat)\n"
    "  --trainer NAME       with --devices: replicated (default) or ps\n"
    "  --logdir DIR         log directory (default train_log/infogan)\n"
    "  --resume             continue from the log directory's latest checkpoint\n"
    "  --save-every N       also save a checkpoint every N steps (default 0: each epoch's end)\n"
    "  --data DIR           Fashion-MNIST files (default /usr/share/datasets/fashion-mnist)\n"
    "  --seed N             seed of initial values, shuffling, codes and noise (default 1)\n"
    "  --evaluate DIR       train nothing: the generator of --logdir's latest checkpoint makes\n"
    "                       1,000 samples of each category; the Fashion-MNIST example's convnet\n"
    "                       of DIR's latest checkpoint (fashion_mnist --model conv) labels them;\n"
    "                       prints the class each category matches, the share of samples\n"
    "                       labelled so, and I(category; label)\n"
    "  --help               this text\n";

// Fashion-MNIST's labels 0 .. 9.
constexpr const char* kClassNames[] = {"T-shirt/top", "trouser", "pullover", "dress", "coat",
                                       "sandal",      "shirt",   "sneaker",  "bag",   "ankle boot"};

struct Options : examples::RunOptions, examples::StepOptions {
  Options() {
    logdir = "train_log/infogan";
    lr = 2e-4f;
  }
  bool mixed_precision = false;
  float info_weight = 2.0f;
  std::string evaluate;
};

Options parse(int argc, char** argv) {
  Options o;
  examples::Flags flags(argc, argv, kHelp);
  while (flags.next()) {
    if (o.RunOptions::take(flags) || o.StepOptions::take(flags)) continue;
    if (flags.is("--mixed-precision"))
      o.mixed_precision = true;
    else if (flags.is("--info-weight"))
      o.info_weight = flags.to_float();
    else if (flags.is("--evaluate"))
      o.evaluate = flags.value();
    else
      flags.unknown();
  }
  o.RunOptions::check("the train split");
  o.StepOptions::check();
  if (!(o.info_weight >= 0) || !std::isfinite(o.info_weight))
    throw Error(ErrorCode::invalid_argument, "--info-weight must be a finite number >= 0");
  return o;
}

// After every epoch: the two grids of code_grid and the one of noise_grid, to the
// monitors and the log directory.
class CodeGrids : public callbacks::Callback {
 public:
  explicit CodeGrids(std::int64_t batch) : batch_(batch) { chief_only_ = true; }

 protected:
  void on_trigger_epoch() override {
    if (!predict_) predict_ = trainer().predictor({"category", "style", "noise"}, {"gen/image"});
    const char* names[] = {"samples", "style"};
    for (int axis = 0; axis < 2; ++axis)
      examples::publish_image(
          trainer(), names[axis],
          vkp::image_grid(examples::predict_rows(predict_, examples::code_grid(axis, 12345), batch_), 10, 10));
    examples::publish_image(
        trainer(), "noise",
        vkp::image_grid(examples::predict_rows(predict_, examples::noise_grid(12345), batch_), 10, 10));
  }

 private:
  std::int64_t batch_;
  callbacks::PredictFn predict_;
};

int evaluate(const Options& o) {
  vk::Instance instance;
  vk::Device device(instance, o.device);
  auto gan = std::make_shared<examples::InfoGan>(o.batch, o.lr, o.info_weight);
  train::OfflinePredictor generator(gan, o.logdir, device, {"category", "style", "noise"}, {"gen/image"});
  auto classifier_model = std::make_shared<examples::FashionMnistModel>(examples::Architecture::convnet, 1e-3f);
  train::OfflinePredictor classifier(classifier_model, o.evaluate, device, {"input"}, {"logits"});
  constexpr std::int64_t kSamples = 10000;
  const Array images = examples::predict_rows([&](const std::vector<Array>& in) { return generator(in); },
                                              examples::codes_by_category(kSamples, o.seed + 1000), o.batch);
  const std::vector<std::int32_t> labels =
      examples::predicted_labels([&](const std::vector<Array>& in) { return classifier(in); }, images, 500);
  std::array<std::array<std::int64_t, 10>, 10> table{};
  for (std::size_t i = 0; i < labels.size(); ++i) ++table[i % 10][static_cast<std::size_t>(labels[i])];
  const examples::CodeAgreement agreement = examples::code_agreement(table);
  std::printf("category -> the class it matches (share of its 1000 samples the convnet labels so)\n");
  for (std::size_t c = 0; c < 10; ++c) {
    const int label = agreement.matched_label[c];
    std::printf("  %zu -> %d %-12s (%.3f)\n", c, label, kClassNames[static_cast<std::size_t>(label)],
                static_cast<double>(table[c][static_cast<std::size_t>(label)]) / 1000.0);
  }
  std::printf("samples labelled as their category's class: %.4f (%lld samples)\n", agreement.matched_accuracy,
              static_cast<long long>(kSamples));
  std::printf("I(category; label): %.3f nats of log 10 = %.3f\n", agreement.mutual_information, std::log(10.0));
  return 0;
}

int run(const Options& o) {
  examples::train_gan(o, o.batch, o.mixed_precision, std::make_shared<examples::InfoGan>(o.batch, o.lr, o.info_weight),
                      [&o] { return examples::infogan_batches(o.batch, o.seed, o.data); },
                      {std::make_shared<CodeGrids>(o.batch)});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    return o.evaluate.empty() ? run(o) : evaluate(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infogan: %s\n", e.what());
    return 1;
  }
}
