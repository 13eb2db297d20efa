// Trains an MLP or a convnet on Fashion-MNIST (Debian's dataset-fashion-mnist) on one
// Vulkan device, tensorpack style: QueueInput, InferenceRunner on the test split after
// every epoch, ModelSaver, a learning-rate schedule, ProgressBar, statistics in
// train_log/<name>/ (stats.json, TensorBoard events, log.log).
//
//   fashion_mnist --model conv --epochs 8          see --help
//   mpirun -np 2 fashion_mnist --distributed       one process per rank (DistributedTrainer)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "flags.h"
#include "models.h"
#include "training.h"
#include "vkpack/vkpack.h"

#ifdef VKPACK_HAVE_MPI
using MpiSession = vkp::towers::MpiSession;
#else
// Stands in for the session where vkpack has no MPI: --distributed is refused.
struct MpiSession {
  MpiSession() {
    throw vkp::Error(vkp::ErrorCode::unsupported, "--distributed: vkpack was built without MPI (VKPACK_WITH_MPI=OFF)");
  }
  int rank() const { return 0; }
  int size() const { return 1; }
  [[noreturn]] void abort(int code) { std::exit(code); }
};
#endif

namespace {

constexpr const char* kHelp =
    "usage: fashion_mnist [options]\n"
    "\n"
    "Trains a classifier of Fashion-MNIST on a Vulkan device and reports the test accuracy\n"
    "after every epoch.\n"
    "\n"
    "options:\n"
    "  --model mlp|conv     the model: an MLP 784-256-256-10, or conv3x3x32-BN-relu-pool,\n"
    "                       conv3x3x64-BN-relu-pool, FC128, dropout, FC10 (default mlp)\n"
    "  --epochs N           epochs to train (default 10)\n"
    "  --batch N            batch size (default 128)\n"
    "  --steps N            steps per epoch (default: the whole train split)\n"
    "  --lr X               initial learning rate of Adam (default 0.001); divided by 3\n"
    "                       at 60% and by 10 at 85% of the epochs\n"
    "  --device N           Vulkan device index, as `vkpack devices` lists them (default 0)\n"
    "  --devices I,J,...    train data-parallel on these devices, one tower each (an index\n"
    "                       may repeat); each step takes a batch per tower, and an epoch\n"
    "                       is one pass over the train split\n"
    "  --trainer NAME       with --devices: replicated (default), ps or async\n"
    "  --split S            with --devices and a synchronous trainer: how a step's batches\n"
    "                       are shared between the towers: equal (default), throughput\n"
    "                       (by each tower's samples/s in the last epoch, for devices of\n"
    "                       different speeds) or weights, one per tower (1,3)\n"
    "  --memory M[,M...]    how each device reaches its memory: auto (default), mapped,\n"
    "                       or staged (as on a discrete GPU); one for all devices or one\n"
    "                       per entry of --devices\n"
    "  --limits-profile P[,P...]  believe no limit above these GPUs' (`vkpack devices\n"
    "                       --profiles`; none by default), one for all or one per device:\n"
    "                       --devices 0,0 --memory staged,mapped --limits-profile nvidia,arm-mali\n"
    "  --distributed        one process of many under mpirun (DistributedTrainer): each\n"
    "                       trains the towers of --device or --devices (--trainer\n"
    "                       replicated or ps) on its own shuffle, gradients are averaged\n"
    "                       over all of them, and rank 0 alone writes the log directory\n"
    "  --logdir DIR         log directory (default train_log/fashion_mnist-<model>)\n"
    "  --resume             continue from the log directory's latest checkpoint; without\n"
    "                       it an existing log directory is backed up first\n"
    "  --save-every N       also save a checkpoint every N steps, so that a killed run\n"
    "                       resumes losing at most N steps (default 0: each epoch's end)\n"
    "  --data DIR           Fashion-MNIST files (default /usr/share/datasets/fashion-mnist)\n"
    "  --seed N             seed of initial values, shuffling and dropout (default 1)\n"
    "  --load PATH          start from the model variables of a checkpoint (or a log\n"
    "                       directory's latest, or an .npz / .safetensors of the same\n"
    "                       names); optimizer state and the step start afresh\n"
    "  --mixed-precision    float16 activations and gradients (float32 weights and\n"
    "                       optimizer state) with dynamic loss scaling\n"
    "  --freeze-conv        fine-tuning: train the fully connected layers only (the\n"
    "                       convnet's convolutions and batch norms keep their values)\n"
    "  --evaluate           train nothing: classify the test split with the log directory's\n"
    "                       latest checkpoint (a SimpleDatasetPredictor; with --devices,\n"
    "                       each batch cut over the devices) and print the accuracy\n"
    "  --export PATH        train nothing: write the model of the log directory's latest\n"
    "                       checkpoint (input f32 [batch, 28, 28, 1] -> logits [batch, 10],\n"
    "                       inference mode) to PATH as ONNX, for other engines\n"
    "  --help               this text\n";

struct Options : vkp::examples::RunOptions, vkp::examples::StepOptions {
  Options() { batch = 128; }
  std::string model = "mlp", split = "equal", export_path, load;
  std::vector<std::string> memory, profiles;  // per device, or one for all
  bool distributed = false, freeze_conv = false, mixed_precision = false, evaluate = false;
};

Options parse(int argc, char** argv) {
  Options o;
  vkp::examples::Flags flags(argc, argv, kHelp);
  while (flags.next()) {
    if (o.RunOptions::take(flags) || o.StepOptions::take(flags)) continue;
    if (flags.is("--model"))
      o.model = flags.value();
    else if (flags.is("--split"))
      o.split = flags.value();
    else if (flags.is("--memory"))
      o.memory = flags.to_list();
    else if (flags.is("--limits-profile"))
      o.profiles = flags.to_list();
    else if (flags.is("--distributed"))
      o.distributed = true;
    else if (flags.is("--export"))
      o.export_path = flags.value();
    else if (flags.is("--evaluate"))
      o.evaluate = true;
    else if (flags.is("--load"))
      o.load = flags.value();
    else if (flags.is("--freeze-conv"))
      o.freeze_conv = true;
    else if (flags.is("--mixed-precision"))
      o.mixed_precision = true;
    else
      flags.unknown();
  }
  o.RunOptions::check("the train split");
  o.StepOptions::check();
  if (o.freeze_conv && vkp::examples::parse_architecture(o.model) != vkp::examples::Architecture::convnet)
    throw vkp::Error(vkp::ErrorCode::invalid_argument, "--freeze-conv needs --model conv: the MLP has no convolutions");
  if (o.logdir.empty()) o.logdir = "train_log/fashion_mnist-" + o.model;
  return o;
}

// The options of each device from --memory and --limits-profile.
std::vector<vkp::vk::DeviceOptions> device_options(const Options& o, std::size_t devices) {
  for (const auto* list : {&o.memory, &o.profiles})
    if (list->size() > 1 && list->size() != devices)
      throw vkp::Error(vkp::ErrorCode::invalid_argument,
                       std::string(list == &o.memory ? "--memory" : "--limits-profile") + " lists " +
                           std::to_string(list->size()) + " values for " + std::to_string(devices) +
                           " devices; give one for all or one per device");
  std::vector<vkp::vk::DeviceOptions> out(devices);
  for (std::size_t i = 0; i < devices; ++i) {
    if (!o.memory.empty())
      out[i].memory = vkp::vk::parse_memory_mode(o.memory[o.memory.size() > 1 ? i : 0], "--memory");
    if (!o.profiles.empty()) out[i].limits_profile = o.profiles[o.profiles.size() > 1 ? i : 0];
  }
  return out;
}

// --export: the inference tower of the latest checkpoint as ONNX.
int export_model(const Options& o) {
  using namespace vkp;
#ifdef VKPACK_HAVE_ONNX
  vk::Instance instance;
  vk::Device device(instance, o.device);
  auto model = std::make_shared<examples::FashionMnistModel>(examples::parse_architecture(o.model), o.lr);
  train::OfflinePredictor predictor(model, o.logdir, device, {"input"}, {"logits"});
  train::export_onnx(predictor, o.export_path);
  std::printf(
      "wrote %s: the %s model of %s, input 'input' f32 [batch, 28, 28, 1] (NHWC), output 'logits' [batch, 10]\n",
      o.export_path.c_str(), o.model.c_str(), o.logdir.c_str());
  return 0;
#else
  throw Error(ErrorCode::unsupported,
              "--export: this build of vkpack has no ONNX export (install libonnx-dev and "
              "libprotobuf-dev, and build with VKPACK_WITH_ONNX)");
#endif
}

// --evaluate: the test split through the latest checkpoint's inference tower, its
// datapoints' images fed in order, their labels read beside them from a second pass.
int evaluate(const Options& o) {
  using namespace vkp;
  vk::Instance instance;
  const std::vector<int> indices = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
  const std::vector<vk::DeviceOptions> options = device_options(o, indices.size());
  std::vector<std::unique_ptr<vk::Device>> devices;
  std::vector<vk::Device*> pointers;
  for (std::size_t i = 0; i < indices.size(); ++i)
    pointers.push_back(devices.emplace_back(std::make_unique<vk::Device>(instance, indices[i], options[i])).get());
  const train::PredictConfig config{
      std::make_shared<examples::FashionMnistModel>(examples::parse_architecture(o.model), o.lr),
      o.logdir,
      {"input"},
      {"logits"}};
  std::shared_ptr<train::PredictorBase> predictor;
  if (pointers.size() == 1)
    predictor = std::make_shared<train::OfflinePredictor>(config, *pointers[0]);
  else
    predictor = std::make_shared<train::DataParallelOfflinePredictor>(config, pointers);
  train::SimpleDatasetPredictor images(
      predictor, std::make_unique<dataflow::SelectComponent>(examples::fashion_mnist_batches(false, o.batch, 0, o.data),
                                                             std::vector<std::size_t>{0}));
  dataflow::DataFlowPtr labels = examples::fashion_mnist_batches(false, o.batch, 0, o.data);
  labels->reset_state();
  labels->start_epoch();
  std::int64_t correct = 0, total = 0;
  images.get_result([&](std::vector<Array>& outputs) {
    const std::vector<Array> batch = *labels->next();
    const Array& logits = outputs[0];
    const std::int64_t rows = logits.shape()[0], classes = logits.shape()[1];
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = logits.data<float>().data() + r * classes;
      const auto predicted = std::max_element(row, row + classes) - row;
      correct += predicted == batch[1].data<std::int32_t>()[static_cast<std::size_t>(r)] ? 1 : 0;
    }
    total += rows;
  });
  std::printf("test accuracy %.4f of %lld images (%s, %zu device%s)\n",
              static_cast<double>(correct) / static_cast<double>(total), static_cast<long long>(total),
              o.logdir.c_str(), pointers.size(), pointers.size() == 1 ? "" : "s");
  return 0;
}

using namespace vkp;

// What the trainer runs on: one device, several (--devices), or several processes.
struct Placement {
  const vk::Instance& instance;
  MpiSession* mpi;
  const std::vector<int>& devices;
  const std::vector<vk::DeviceOptions>& options;
};

// SimpleTrainer on --device (opened into `device`), the multi-device trainer --trainer
// names on --devices, or DistributedTrainer under MPI.
std::unique_ptr<train::TowerTrainer> make_trainer(const Options& o, const Placement& at,
                                                  std::unique_ptr<vk::Device>& device) {
  if (at.mpi) {
#ifdef VKPACK_HAVE_MPI
    return std::make_unique<train::DistributedTrainer>(*at.mpi, at.instance, at.devices, o.seed, at.options,
                                                       towers::parse_reduction(o.trainer));
#endif
  }
  if (!o.devices.empty()) return examples::multi_device_trainer(at.instance, at.devices, o.trainer, o.seed, at.options);
  device = std::make_unique<vk::Device>(at.instance, o.device, at.options[0]);
  log_info("training a{} on {}",
           examples::parse_architecture(o.model) == examples::Architecture::mlp ? "n MLP" : " convnet",
           device->label());
  return std::make_unique<train::SimpleTrainer>(*device, o.seed);
}

// --load: the model variables of a checkpoint (or a log directory's latest); its
// optimizer slots (of frozen variables too) are skipped.
std::shared_ptr<train::SessionInit> weights_from(const std::string& path) {
  std::string file = path;
  if (std::filesystem::is_directory(file)) {
    file = callbacks::latest_checkpoint(path);
    if (file.empty()) throw Error(ErrorCode::not_found, "--load: no checkpoint in " + path);
  }
  train::WeightMap map;
  map.ignore = {R"(.*/(Adam|Adam_1|Momentum)$)"};
  return std::make_shared<train::WeightsRestore>(file, map);
}

// The schedule (lr, then lr / 3 from 60% of the epochs and lr / 10 from 85%) and
// checkpoints, the test split after every epoch, then the trackers.
std::vector<callbacks::CallbackPtr> training_callbacks(const Options& o) {
  const auto schedule = examples::stepped_schedule(o.lr, {{0.6, o.lr / 3}, {0.85, o.lr / 10}}, o.epochs);
  std::vector<callbacks::CallbackPtr> out = {
      std::make_shared<callbacks::ScheduledHyperParamSetter>("learning_rate", schedule),
      examples::model_saver(3, o.save_every)};
  for (callbacks::CallbackPtr& cb :
       examples::classifier_evaluation(examples::fashion_mnist_batches(false, o.batch, 0, o.data)))
    out.push_back(std::move(cb));
  for (callbacks::CallbackPtr cb : std::vector<callbacks::CallbackPtr>{
           std::make_shared<callbacks::ThroughputTracker>(), std::make_shared<callbacks::PeakMemoryTracker>(),
           std::make_shared<callbacks::EstimatedTimeLeft>(),
           // A cost or a variable that becomes NaN or infinite stops training, naming the step.
           std::make_shared<callbacks::CheckNumerics>()})
    out.push_back(std::move(cb));
  return out;
}

// `mpi`: with --distributed only.
int run(const Options& o, MpiSession* mpi) {
  using namespace vkp;
  const examples::Architecture architecture = examples::parse_architecture(o.model);
  const int rank = mpi ? mpi->rank() : 0;
  const std::vector<int> devices = o.devices.empty() ? std::vector<int>{o.device} : o.devices;
  const auto towers = static_cast<std::int64_t>(devices.size()) * (mpi ? mpi->size() : 1);
  // The train split's images (its file's header): a batch per tower must fit in them,
  // and an epoch is one pass over them, whatever the number of towers and ranks.
  const std::int64_t train_images =
      dataflow::fashion_mnist_images(dataflow::Split::train, o.data.empty() ? dataflow::kFashionMnistDir : o.data);
  o.check_fits(towers, train_images);
  // Only rank 0 owns the directory (log.log, the backup of an old run); the others write
  // nothing there.
  std::optional<train::LoggerDir> logdir;
  if (rank == 0) logdir.emplace(o.logdir, o.resume ? train::DirAction::keep : train::DirAction::backup);
  vk::Instance instance;
  const std::vector<vk::DeviceOptions> options = device_options(o, devices.size());
  // The trainer: SimpleTrainer, or a multi-device one; nothing else changes.
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<train::TowerTrainer> trainer = make_trainer(o, {instance, mpi, devices, options}, device);
  if (o.split != "equal") {
    auto* multi = dynamic_cast<train::MultiDeviceTrainer*>(trainer.get());
    if (multi == nullptr)
      throw Error(ErrorCode::invalid_argument, "--split shares a step between towers: give --devices");
    multi->set_batch_split(train::parse_batch_split(o.split));
  }

  train::TrainConfig config;
  config.model = std::make_shared<examples::FashionMnistModel>(architecture, o.lr, o.freeze_conv);
  if (o.freeze_conv) log_info("fine-tuning: the convolutions and their batch norms are frozen");
  if (!o.load.empty()) config.session_init = weights_from(o.load);
  config.dataflow = examples::fashion_mnist_batches(true, o.batch, o.seed + static_cast<std::uint64_t>(rank), o.data);
  const std::int64_t steps_per_epoch = o.steps > 0 ? o.steps : train_images / o.batch / towers;
  config.steps_per_epoch = steps_per_epoch;
  config.max_epoch = o.epochs;
  config.logger_dir = logdir ? logdir->path() : o.logdir;
  config.mixed_precision = o.mixed_precision;
  config.callbacks = training_callbacks(o);
  if (o.resume) config = train::AutoResumeTrainConfig(std::move(config));
  train::launch_train_with_config(std::move(config), *trainer);

  if (rank != 0) return 0;
  examples::print_test_accuracies(trainer->monitors(), steps_per_epoch);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<MpiSession> mpi;  // outlives run(), so that a failure can end the job
  try {
    const Options o = parse(argc, argv);
    if (!o.export_path.empty()) return export_model(o);
    if (o.evaluate) return evaluate(o);
    if (o.distributed) mpi.emplace();
    return run(o, mpi ? &*mpi : nullptr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    // The other ranks may wait in a collective: end them too rather than finalize.
    if (mpi) mpi->abort(1);
    return 1;
  }
}
