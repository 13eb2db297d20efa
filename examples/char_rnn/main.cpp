// examples/char_rnn: a character-level language model (tensorpack's Char-RNN) trained on
// the plain text of Debian's fortunes, or any directory of text files (--data): an LSTM,
// a GRU or a small causal transformer. Reports validation bits per character after
// every epoch, keeps checkpoints, resumes, and samples text from a checkpoint.
//
//   char_rnn --model lstm --epochs 4            see --help
//   char_rnn --sample 400 --temperature 0.8     text from the latest checkpoint
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "char_model.h"
#include "flags.h"
#include "training.h"

namespace {

using namespace vkp;

constexpr const char* kHelp =
    "usage: char_rnn [options]\n"
    "\n"
    "Trains a character-level language model on Vulkan devices and reports validation bits\n"
    "per character after every epoch, or samples text from a trained one (--sample).\n"
    "\n"
    "options:\n"
    "  --model M            lstm (default), gru or transformer\n"
    "  --hidden N           LSTM/GRU units or transformer width (default 128)\n"
    "  --layers N           recurrent layers or transformer blocks (default 1; 2 for the\n"
    "                       transformer)\n"
    "  --heads N            transformer attention heads (default 4)\n"
    "  --length N           characters per training sequence (default 64)\n"
    "  --epochs N           epochs to train (default 4)\n"
    "  --batch N            sequences per batch and tower (default 32)\n"
    "  --steps N            steps per epoch (default: a pass over the training text)\n"
    "  --lr X               peak learning rate of Adam (default 2e-3), warmed up linearly\n"
    "                       over the first 2% of the steps, then decayed on a cosine to 0\n"
    "  --clip-norm X        clip the gradients' global norm to X (default 5, as tensorpack's\n"
    "                       Char-RNN; 0: no clip)\n"
    "  --data DIR           a directory of text files (default /usr/share/games/fortunes,\n"
    "                       Debian's fortunes package)\n"
    "  --device N           Vulkan device index, as `vkpack devices` lists them (default 0)\n"
    "  --devices I,J,...    train data-parallel on these devices, one tower each\n"
    "  --trainer NAME       with --devices: replicated (default), ps or async\n"
    "  --logdir DIR         log directory (default train_log/char_rnn-<model>)\n"
    "  --resume             continue from the log directory's latest checkpoint; without\n"
    "                       it an existing log directory is backed up first\n"
    "  --save-every N       also save a checkpoint every N steps, so that a killed run\n"
    "                       resumes losing at most N steps (default 0: each epoch's end)\n"
    "  --seed N             seed of initial values and shuffling (default 1)\n"
    "  --sample N           train nothing: write N characters sampled from the log\n"
    "                       directory's latest checkpoint\n"
    "  --temperature T      sampling temperature, > 0 (default 1; lower is more conservative)\n"
    "  --prime TEXT         text the sample starts from (default \"The \")\n"
    "  --help               this text\n";

struct Options : examples::RunOptions {
  Options() {
    epochs = 4;
    data = dataflow::kFortunesDirectory.string();
  }
  examples::CharModelConfig model;
  std::int64_t sample = 0;
  float temperature = 1.0f;
  bool layers_given = false;
  std::string prime = "The ";
};

Options parse(int argc, char** argv) {
  Options o;
  examples::Flags flags(argc, argv, kHelp);
  while (flags.next()) {
    if (o.take(flags)) continue;
    if (flags.is("--model")) o.model.kind = examples::parse_char_model(flags.value());
    else if (flags.is("--hidden")) o.model.hidden = flags.to_i64();
    else if (flags.is("--layers")) o.model.layers = flags.to_int(), o.layers_given = true;
    else if (flags.is("--heads")) o.model.heads = flags.to_i64();
    else if (flags.is("--length"))
      o.model.length = flags.to_i64();
    else if (flags.is("--batch"))
      o.model.batch = flags.to_i64();
    else if (flags.is("--lr")) o.model.learning_rate = flags.to_float();
    else if (flags.is("--clip-norm"))
      o.model.clip_norm = flags.to_float();
    else if (flags.is("--sample")) o.sample = flags.to_i64();
    else if (flags.is("--temperature")) o.temperature = flags.to_float();
    else if (flags.is("--prime")) o.prime = flags.value();
    else flags.unknown();
  }
  if (!o.layers_given && o.model.kind == examples::CharModelKind::transformer) o.model.layers = 2;
  o.check("the training text");
  if (o.model.batch < 1 || o.model.length < 2 || o.model.hidden < 1 || o.model.layers < 1 || o.model.heads < 1)
    throw Error(ErrorCode::invalid_argument, "--batch, --hidden, --layers and --heads must be >= 1, --length >= 2");
  if (o.sample < 0) throw Error(ErrorCode::invalid_argument, "--sample must be >= 0");
  if (!std::isfinite(o.model.learning_rate) || o.model.learning_rate <= 0)
    throw Error(ErrorCode::invalid_argument, "--lr must be a positive finite number");
  if (!std::isfinite(o.model.clip_norm) || o.model.clip_norm < 0)
    throw Error(ErrorCode::invalid_argument, "--clip-norm must be a finite number >= 0 (0: no clip)");
  if (!std::isfinite(o.temperature) || o.temperature <= 0)
    throw Error(ErrorCode::invalid_argument, "--temperature must be a positive finite number");
  if (o.logdir.empty()) o.logdir = std::string("train_log/char_rnn-") + examples::to_string(o.model.kind);
  return o;
}

// A character drawn from softmax(logits / temperature), in double.
std::int32_t draw(std::span<const float> logits, float temperature, Rng& rng) {
  double top = -INFINITY;
  for (float v : logits) top = std::max(top, double{v} / temperature);
  std::vector<double> p(logits.size());
  double sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(double{logits[i]} / temperature - top);
  double u = rng.uniform() * sum;
  for (std::size_t i = 0; i < p.size(); ++i)
    if ((u -= p[i]) < 0) return static_cast<std::int32_t>(i);
  return static_cast<std::int32_t>(p.size() - 1);
}

// --sample: text from the latest checkpoint, the recurrent state fed back step by step
// (or, for the transformer, the last --length characters as its window).
int sample(Options o) {
  const auto corpus = dataflow::read_char_corpus(o.data);
  o.model.vocab = corpus->vocab_size();
  vk::Instance instance;
  vk::Device device(instance, o.device);
  const bool recurrent = o.model.kind != examples::CharModelKind::transformer;
  auto model = std::make_shared<examples::CharSampler>(o.model);
  train::OfflinePredictor predictor(model, o.logdir, device, recurrent ? std::vector<std::string>{"x", "state"} : std::vector<std::string>{"x"},
                                    recurrent ? std::vector<std::string>{"logits", "next_state"} : std::vector<std::string>{"logits"});
  std::vector<std::int32_t> text = corpus->encode(o.prime);
  if (text.empty()) throw Error(ErrorCode::invalid_argument, "--prime must not be empty");
  Rng rng(o.seed);
  Array state(DType::f32, Shape{1, std::max<std::int64_t>(1, o.model.state_width())});
  Array x(DType::i32, Shape{1, recurrent ? 1 : o.model.length});
  std::size_t fed = 0;  // recurrent: characters of `text` the state has seen
  while (static_cast<std::int64_t>(text.size()) < static_cast<std::int64_t>(o.prime.size()) + o.sample) {
    std::vector<Array> out;
    if (recurrent) {
      while (fed < text.size()) {
        x.data<std::int32_t>()[0] = text[fed++];
        out = predictor({x, state});
        state = out[1];
      }
      text.push_back(draw(out[0].data<float>(), o.temperature, rng));
    } else {
      const std::size_t window = static_cast<std::size_t>(o.model.length);
      const std::size_t start = text.size() > window ? text.size() - window : 0, used = text.size() - start;
      std::fill(x.data<std::int32_t>().begin(), x.data<std::int32_t>().end(), 0);
      std::copy(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(), x.data<std::int32_t>().begin());
      out = predictor({x});
      const std::size_t vocab = static_cast<std::size_t>(o.model.vocab);
      text.push_back(draw(out[0].data<float>().subspan((used - 1) * vocab, vocab), o.temperature, rng));
    }
  }
  std::printf("%s\n", corpus->decode(text).c_str());
  return 0;
}

int run(Options o) {
  const auto corpus = dataflow::read_char_corpus(o.data);
  o.model.vocab = corpus->vocab_size();
  const auto towers = static_cast<std::int64_t>(std::max<std::size_t>(1, o.devices.size()));
  const std::int64_t sequences = static_cast<std::int64_t>(corpus->train.size() - 1) / o.model.length;
  if (o.model.batch * towers > sequences)
    throw Error(ErrorCode::invalid_argument, "--batch " + std::to_string(o.model.batch) + " on " +
                                                 std::to_string(towers) + " tower(s) is more than the " +
                                                 std::to_string(sequences) + " sequences of the training text");
  train::LoggerDir logdir(o.logdir, o.resume ? train::DirAction::keep : train::DirAction::backup);
  vk::Instance instance;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<train::TowerTrainer> trainer;
  log_info("{}: {} files, {} training and {} validation characters ({} and {} documents), {} symbols", o.data,
           corpus->files, corpus->train.size(), corpus->validation.size(), corpus->train_documents,
           corpus->validation_documents, corpus->vocab_size());
  if (o.devices.empty()) {
    device = std::make_unique<vk::Device>(instance, o.device);
    log_info("training a {} of {} x {} on {}", examples::to_string(o.model.kind), o.model.layers, o.model.hidden,
             device->label());
    trainer = std::make_unique<train::SimpleTrainer>(*device, o.seed);
  } else {
    log_info("training a {} on {} towers ({})", examples::to_string(o.model.kind), towers, o.trainer);
    trainer = examples::multi_device_trainer(instance, o.devices, o.trainer, o.seed);
  }
  if (o.model.clip_norm > 0) log_info("gradients clipped to a global norm of {} (--clip-norm)", o.model.clip_norm);
  train::TrainConfig config;
  config.model = std::make_shared<examples::CharModel>(o.model);
  config.dataflow = examples::char_batches(corpus, true, o.model, o.seed);
  const std::int64_t steps_per_epoch = o.steps > 0 ? o.steps : sequences / o.model.batch / towers;
  config.steps_per_epoch = steps_per_epoch;
  config.max_epoch = o.epochs;
  config.logger_dir = logdir.path();
  const std::int64_t total = steps_per_epoch * o.epochs;
  const std::int64_t warmup = std::max<std::int64_t>(1, total / 50);
  config.callbacks = {std::make_shared<callbacks::WarmupCosineSchedule>("learning_rate", o.model.learning_rate, warmup,
                                                                        std::max(total, warmup + 1)),
                      examples::model_saver(3, o.save_every),
                      std::make_shared<callbacks::InferenceRunner>(
                          examples::char_batches(corpus, false, o.model, 0),
                          std::vector<callbacks::InferencerPtr>{
                              std::make_shared<callbacks::ScalarStats>(std::vector<std::string>{"bpc"})}),
                      std::make_shared<callbacks::MinSaver>("validation_bpc"),
                      std::make_shared<callbacks::ThroughputTracker>(),
                      std::make_shared<callbacks::EstimatedTimeLeft>(),
                      std::make_shared<callbacks::CheckNumerics>()};
  if (o.resume) config = train::AutoResumeTrainConfig(std::move(config));
  train::launch_train_with_config(std::move(config), *trainer);

  std::printf("\nepoch  validation bpc\n");
  for (const auto& [step, value] : trainer->monitors().get_history("validation_bpc"))
    std::printf("%5lld  %.4f\n", static_cast<long long>(step / steps_per_epoch), value);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    return o.sample > 0 ? sample(o) : run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "char_rnn: %s\n", e.what());
    return 1;
  }
}
