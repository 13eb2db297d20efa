// examples/embeddings: metric learning on Fashion-MNIST (tensorpack's SimilarityLearning,
// mnist-embeddings): a convnet embeds images in a few dimensions, trained on pairs
// (--algorithm siamese) or triplets (triplet). After every epoch the test images are
// embedded, each is given the class of its nearest neighbour among embedded train images
// (nearest-neighbour accuracy, to the monitors as nn_accuracy), and the test embeddings
// are drawn coloured by class to <logdir>/embedding-<step>.png and TensorBoard.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "embedding_model.h"
#include "flags.h"
#include "training.h"

namespace {

using namespace vkp;

constexpr const char* kHelp =
    "usage: embeddings [options]\n"
    "\n"
    "Learns an embedding of Fashion-MNIST images on a Vulkan device from pairs or triplets\n"
    "of images, so that images of one class lie near each other. After every epoch it reports\n"
    "the test images' nearest-neighbour accuracy among embedded train images and draws the\n"
    "test embeddings, coloured by class, to <logdir>/embedding-<step>.png.\n"
    "\n"
    "options:\n"
    "  --algorithm NAME     siamese (pairs, contrastive loss; default) or triplet (triplet loss)\n"
    "  --dim N              dimensions of the embedding, >= 2 (default 2: the picture is the\n"
    "                       embedding itself; more are drawn along their two principal axes)\n"
    "  --margin X           the loss's margin, > 0 (default 1)\n"
    "  --epochs N           epochs to train (default 10)\n"
    "  --steps N            steps per epoch (default: as many batches as the train split has\n"
    "                       images)\n"
    "  --batch N            pairs or triplets a step (default 128)\n"
    "  --lr X               Adam's learning rate (default 0.001)\n"
    "  --reference N        train images the test images are compared with (default 10000;\n"
    "                       at most the train split)\n"
    "  --device N           Vulkan device index, as `vkpack devices` lists them (default 0)\n"
    "  --devices I,J,...    train data-parallel on these devices, one tower each\n"
    "  --trainer NAME       with --devices: replicated (default), ps or async\n"
    "  --logdir DIR         log directory (default train_log/embeddings-<algorithm>)\n"
    "  --resume             continue from the log directory's latest checkpoint\n"
    "  --save-every N       also save a checkpoint every N steps (default 0: each epoch's end)\n"
    "  --data DIR           Fashion-MNIST files (default /usr/share/datasets/fashion-mnist)\n"
    "  --seed N             seed of initial values and of the pairs and triplets (default 1)\n"
    "  --help               this text\n";

struct Options : examples::RunOptions, examples::StepOptions {
  Options() { batch = 128; }
  examples::Metric metric = examples::Metric::siamese;
  std::string algorithm = "siamese";
  std::int64_t dim = 2, reference = 10000;
  float margin = 1.0f;
};

Options parse(int argc, char** argv) {
  Options o;
  examples::Flags flags(argc, argv, kHelp);
  while (flags.next()) {
    if (o.RunOptions::take(flags) || o.StepOptions::take(flags)) continue;
    if (flags.is("--algorithm")) {
      o.algorithm = flags.value();
      o.metric = examples::parse_metric(o.algorithm);
    } else if (flags.is("--dim")) {
      o.dim = flags.to_i64();
    } else if (flags.is("--margin")) {
      o.margin = flags.to_float();
    } else if (flags.is("--reference")) {
      o.reference = flags.to_i64();
    } else {
      flags.unknown();
    }
  }
  o.RunOptions::check("the train split");
  o.StepOptions::check(2, "pairs of both kinds");
  if (o.logdir.empty()) o.logdir = "train_log/embeddings-" + o.algorithm;
  if (o.dim < 2) throw Error(ErrorCode::invalid_argument, "--dim must be >= 2");
  if (o.reference < 1) throw Error(ErrorCode::invalid_argument, "--reference must be >= 1");
  if (!(o.margin > 0) || !std::isfinite(o.margin))
    throw Error(ErrorCode::invalid_argument, "--margin must be a positive finite number");
  return o;
}

// After every epoch: the test images' nearest-neighbour accuracy and their picture.
class EmbeddingEvaluation : public callbacks::Callback {
 public:
  EmbeddingEvaluation(std::string input, std::shared_ptr<const examples::ImagesByClass> reference,
                      std::shared_ptr<const examples::ImagesByClass> test)
      : input_(std::move(input)), reference_(std::move(reference)), test_(std::move(test)) {
    chief_only_ = true;
  }

 protected:
  void on_trigger_epoch() override {
    if (!predict_) predict_ = trainer().predictor({input_}, {"embedding"});
    const Array references = examples::predict_rows(predict_, {reference_->images}, 500);
    const Array queries = examples::predict_rows(predict_, {test_->images}, 500);
    const double accuracy =
        examples::nearest_neighbour_accuracy(references, reference_->labels, queries, test_->labels);
    trainer().monitors().put_scalar("nn_accuracy", accuracy);
    log_info("nearest-neighbour accuracy: {:.4f} ({} test images, {} train images)", accuracy, test_->labels.size(),
             reference_->labels.size());
    examples::publish_image(trainer(), "embedding", examples::embedding_picture(queries, test_->labels));
  }

 private:
  std::string input_;
  std::shared_ptr<const examples::ImagesByClass> reference_, test_;
  callbacks::PredictFn predict_;
};

int run(const Options& o) {
  const auto towers = static_cast<std::int64_t>(std::max<std::size_t>(1, o.devices.size()));
  auto train_images =
      std::make_shared<const examples::ImagesByClass>(examples::images_by_class(dataflow::Split::train, o.data));
  auto reference = std::make_shared<const examples::ImagesByClass>(
      examples::images_by_class(dataflow::Split::train, o.data, o.reference));
  auto test = std::make_shared<const examples::ImagesByClass>(examples::images_by_class(dataflow::Split::test, o.data));
  train::LoggerDir logdir(o.logdir, o.resume ? train::DirAction::keep : train::DirAction::backup);
  vk::Instance instance;
  auto model = std::make_shared<examples::EmbeddingModel>(o.metric, o.dim, o.margin, o.lr);
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<train::TowerTrainer> trainer;
  if (o.devices.empty()) {
    device = std::make_unique<vk::Device>(instance, o.device);
    trainer = std::make_unique<train::SimpleTrainer>(*device, o.seed);
  } else {
    trainer = examples::multi_device_trainer(instance, o.devices, o.trainer, o.seed);
  }
  const std::int64_t steps =
      o.steps > 0 ? o.steps : std::max<std::int64_t>(1, train_images->images.shape()[0] / o.batch / towers);
  train::TrainConfig config;
  config.model = model;
  config.dataflow = examples::metric_batches(o.metric, train_images, o.batch, steps * towers, o.seed);
  config.steps_per_epoch = steps;
  config.max_epoch = o.epochs;
  config.logger_dir = logdir.path();
  config.callbacks = {examples::model_saver(10, o.save_every),
                      std::make_shared<EmbeddingEvaluation>(model->image_input(), reference, test)};
  if (o.resume) config = train::AutoResumeTrainConfig(std::move(config));
  train::launch_train_with_config(std::move(config), *trainer);
  examples::print_test_accuracies(trainer->monitors(), steps, "nn_accuracy", "nearest-neighbour accuracy");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embeddings: %s\n", e.what());
    return 1;
  }
}
