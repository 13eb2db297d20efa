// Data pipeline throughput: the Fashion-MNIST train split -> f32 normalisation -> random
// pad-and-crop (pad 4, crop 28) and horizontal flip -> batches of 128, built from
// dataflow parts on 0, 1 and 2 worker threads, against a plain loop that does the same
// work by hand, measured in the same run. Prints a table of datapoints/s and ratios.
//
//   vkpack_bench_dataflow [--epochs N] [--repeats R] [--dir DIR] [--only TEXT]
//
// --only keeps the plain loop and the rows whose names contain TEXT.
//
// Every variant reads the same shuffled order and draws the same random numbers
// (datapoint k is augmented with Rng(seed, k)), so the ordered variants must produce
// batches identical to the plain loop's; the table says whether they did. The runner
// variants run independently seeded copies and are checked only for their count.
//
// The parallel rows: MultiThreadBatchData (workers augment and batch, the reader gets
// batches: the runner for this pipeline), MultiThreadMapData then BatchData (datapoints
// cross threads one by one), MultiThreadRunner (copies of the serial pipeline). The
// reading thread comes on top of the workers in each; MultiThreadBatchData's reader
// also augments while it has no batch to take (its default), and a row shows it
// without that.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "dataflow/augment_image_component.h"
#include "dataflow/batch_data.h"
#include "dataflow/geometric_augmentors.h"
#include "dataflow/mnist.h"
#include "dataflow/multi_thread_batch_data.h"
#include "dataflow/multi_thread_map_data.h"
#include "dataflow/multi_thread_runner.h"
#include "dataflow/permutation.h"
#include "dataflow/photometric_augmentors.h"

namespace vkp::dataflow {
namespace {

constexpr std::int64_t kBatch = 128, kSide = 28, kPad = 4;
constexpr float kMean = 0.2860f, kStd = 0.3530f;  // of Fashion-MNIST's train pixels in [0, 1]
constexpr std::uint64_t kOrderSeed = 1, kAugmentSeed = 2;

struct Options {
  int epochs = 3;
  int repeats = 3;
  std::string dir = kFashionMnistDir;
  std::string only;
};

// What a consumer sees of the batches: their count and a sampled sum, cheap enough not
// to weigh on the timing and the same work for every variant.
struct Digest {
  std::size_t datapoints = 0;
  double sum = 0;
};

void digest_batch(const float* images, const std::int32_t* labels, std::size_t count, Digest& d) {
  const std::size_t n = count * static_cast<std::size_t>(kSide * kSide);
  for (std::size_t i = 0; i < n; i += 61) d.sum += images[i] * static_cast<double>(i % 7 + 1);
  for (std::size_t i = 0; i < count; ++i) d.sum += labels[i];
  d.datapoints += count;
}

std::vector<AugmentorPtr> augmentors() {
  return {std::make_shared<ToFloat>(1.0f / 255.0f, std::vector<float>{kMean}, std::vector<float>{kStd}),
          std::make_shared<Shift>(kPad, kSide, kSide), std::make_shared<Flip>(FlipAxis::horizontal)};
}

// ---- The plain loop, by hand: no dataflow, no Arrays per datapoint.

// Normalises, pads-and-crops and maybe flips one image into `out` (28 x 28 f32), drawing
// from `rng` exactly as Shift(4, 28, 28) then Flip(horizontal) do.
void augment_by_hand(const std::uint8_t* src, float* out, Rng& rng) {
  const float a = (1.0f / 255.0f) / kStd, b = -kMean / kStd;
  float normalised[kSide * kSide];
  for (std::int64_t i = 0; i < kSide * kSide; ++i) normalised[i] = static_cast<float>(src[i]) * a + b;
  const auto top = static_cast<std::int64_t>(rng.below(2 * kPad + 1)) - kPad;
  const auto left = static_cast<std::int64_t>(rng.below(2 * kPad + 1)) - kPad;
  const bool flip = rng.uniform() < 0.5f;
  std::memset(out, 0, sizeof(float) * kSide * kSide);
  const std::int64_t x0 = std::max<std::int64_t>(0, -left), x1 = std::min(kSide, kSide - left);
  for (std::int64_t y = std::max<std::int64_t>(0, -top); y < std::min(kSide, kSide - top); ++y)
    std::memcpy(out + y * kSide + x0, normalised + (y + top) * kSide + x0 + left,
                sizeof(float) * static_cast<std::size_t>(x1 - x0));
  if (flip)
    for (std::int64_t y = 0; y < kSide; ++y) std::reverse(out + y * kSide, out + (y + 1) * kSide);
}

Digest plain_loop(const LabeledImages& data, int epochs) {
  Digest d;
  Rng order_rng(kOrderSeed);
  std::vector<float> images(static_cast<std::size_t>(kBatch * kSide * kSide));
  std::vector<std::int32_t> labels(kBatch);
  std::uint64_t k = 0;  // datapoints augmented so far, the Rng stream
  for (int e = 0; e < epochs; ++e) {
    const std::vector<std::size_t> order = random_permutation(data.size(), order_rng);
    std::size_t slot = 0;
    for (std::size_t i : order) {
      Rng rng(kAugmentSeed, k++);
      augment_by_hand(data.pixels.data() + i * data.image_bytes(), images.data() + slot * kSide * kSide, rng);
      labels[slot] = data.labels[i];
      if (++slot == kBatch) {
        digest_batch(images.data(), labels.data(), kBatch, d);
        slot = 0;
      }
    }
  }
  return d;
}

// ---- The same work from dataflow parts.

using Data = std::shared_ptr<const LabeledImages>;

DataFlowPtr source(const Data& data, std::uint64_t seed) {
  return std::make_unique<LabeledImageData>(data, ImageFlowOptions{.shuffle = true, .dtype = DType::u8, .seed = seed});
}

DataFlowPtr serial_pipeline(const Data& data, std::uint64_t order_seed, std::uint64_t augment_seed) {
  auto augmented = std::make_unique<AugmentImageComponent>(source(data, order_seed), augmentors(), 0, augment_seed);
  return std::make_unique<BatchData>(std::move(augmented), kBatch);
}

// Workers augment and batch; the reader receives whole batches, and augments too while
// none is ready unless `reader_helps` is false.
DataFlowPtr batch_pipeline(const Data& data, std::size_t threads, bool reader_helps = true) {
  return std::make_unique<MultiThreadBatchData>(
      source(data, kOrderSeed), kBatch, augment_component(augmentors(), 0),
      MultiThreadBatchOptions{.num_threads = threads,
                              .ordered = true,
                              .buffer_batches = 4,
                              .seed = kAugmentSeed,
                              .reader_helps = reader_helps});
}

DataFlowPtr map_pipeline(const Data& data, std::size_t threads) {
  auto mapped = std::make_unique<MultiThreadMapData>(
      source(data, kOrderSeed), augment_component(augmentors(), 0),
      MultiThreadMapOptions{.num_threads = threads, .buffer_size = 2048, .ordered = true, .chunk = 64, .seed = kAugmentSeed});
  return std::make_unique<BatchData>(std::move(mapped), kBatch);
}

// Copies of the whole pipeline, batching included, each on its own thread; the queue
// carries batches.
DataFlowPtr runner_pipeline(const Data& data, std::size_t copies) {
  return std::make_unique<MultiThreadRunner>(
      [data](std::size_t i) { return serial_pipeline(data, kOrderSeed + 10 * i, kAugmentSeed + 10 * i); },
      MultiThreadRunnerOptions{.num_threads = copies, .queue_size = 16, .chunk = 1});
}

Digest drain(DataFlow& df, int epochs) {
  Digest d;
  for (int e = 0; e < epochs; ++e)
    for (const Datapoint& batch : df.epoch())
      digest_batch(batch[0].data<float>().data(), batch[1].data<std::int32_t>().data(),
                   static_cast<std::size_t>(batch[1].numel()), d);
  return d;
}

// ---- Measuring and printing.

struct Row {
  std::string name;
  double per_second = 0;
  Digest digest;
  bool ordered = true;      // must match the plain loop's digest
  int baseline = -1;        // row this one's thread scaling is measured against, if any
  std::function<Digest()> run;  // builds its pipeline anew and drains it; returns the digest
};

using Clock = std::chrono::steady_clock;

// Runs every row `repeats` times, one run of each row per round, and keeps each row's
// best: rows measured side by side see the same machine, however its load drifts. A
// pipeline's build (threads starting) is timed with it.
void measure(std::vector<Row>& rows, int repeats) {
  for (int r = 0; r < repeats; ++r)
    for (Row& row : rows) {
      const Clock::time_point start = Clock::now();
      row.digest = row.run();
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      row.per_second = std::max(row.per_second, static_cast<double>(row.digest.datapoints) / seconds);
    }
  for (const Row& row : rows) std::fprintf(stderr, "  %-40s %12.0f datapoints/s\n", row.name.c_str(), row.per_second);
}

std::function<Digest()> flow_run(std::function<DataFlowPtr()> build, int epochs) {
  return [build = std::move(build), epochs] {
    DataFlowPtr df = build();
    df->reset_state();
    return drain(*df, epochs);
  };
}

std::string fmt_ratio(double r) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", r);
  return text;
}

// The 1-minute load average, to judge how much of the machine the run had.
std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "unknown";
  char text[64] = {};
  const bool ok = std::fgets(text, sizeof text, f) != nullptr;
  std::fclose(f);
  return ok ? std::string(text, std::strcspn(text, " ")) : "unknown";
}

void print_table(const std::vector<Row>& rows, const Options& o, std::size_t n, const std::string& load) {
  std::printf("\nFashion-MNIST train (%zu images) -> f32 normalise -> pad %lld + random crop %lld -> "
              "random h-flip -> BatchData(%lld)\n%d epochs per run, best of %d runs taken in turn with the other rows; %u hardware threads; "
              "load average %s before the run\n\n",
              n, static_cast<long long>(kPad), static_cast<long long>(kSide), static_cast<long long>(kBatch),
              o.epochs, o.repeats, std::thread::hardware_concurrency(), load.c_str());
  std::printf("| %-40s | %12s | %13s | %14s | %-12s |\n", "variant", "datapoints/s", "vs plain loop",
              "vs 1 worker", "same batches");
  std::printf("|%s|%s|%s|%s|%s|\n", std::string(42, '-').c_str(), std::string(14, '-').c_str(),
              std::string(15, '-').c_str(), std::string(16, '-').c_str(), std::string(14, '-').c_str());
  const Row& plain = rows.front();
  for (const Row& row : rows) {
    const bool same = row.digest.datapoints == plain.digest.datapoints && row.digest.sum == plain.digest.sum;
    const char* check = row.ordered ? (same ? "yes" : "NO")
                                    : (row.digest.datapoints == plain.digest.datapoints ? "count only" : "NO");
    const std::string scaling =
        row.baseline >= 0 ? fmt_ratio(row.per_second / rows[static_cast<std::size_t>(row.baseline)].per_second) : "";
    std::printf("| %-40s | %12.0f | %13.2f | %14s | %-12s |\n", row.name.c_str(), row.per_second,
                row.per_second / plain.per_second, scaling.c_str(), check);
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--epochs") o.epochs = std::atoi(argv[i + 1]);
    else if (flag == "--repeats") o.repeats = std::atoi(argv[i + 1]);
    else if (flag == "--dir") o.dir = argv[i + 1];
    else if (flag == "--only") o.only = argv[i + 1];
    else throw Error(ErrorCode::invalid_argument, "unknown flag " + flag + "; use --epochs, --repeats, --dir or --only");
  }
  require(o.epochs > 0 && o.repeats > 0, ErrorCode::invalid_argument, "--epochs and --repeats must be positive");
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::string load = load_average();
  const Data data = load_mnist(o.dir, Split::train, "FashionMnist");
  std::fprintf(stderr, "measuring (%d epochs x %d runs each, in turn):\n", o.epochs, o.repeats);
  std::vector<Row> rows;
  // `scaling_from`: the name of the row this one's thread scaling is measured against
  // (none when --only left it out).
  const auto add = [&rows, &o](std::string name, bool ordered, std::function<Digest()> run,
                               const std::string& scaling_from = "") {
    if (!rows.empty() && name.find(o.only) == std::string::npos) return;
    int baseline = -1;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!scaling_from.empty() && rows[i].name == scaling_from) baseline = static_cast<int>(i);
    rows.push_back(Row{std::move(name), 0, {}, ordered, baseline, std::move(run)});
  };
  const auto workers = [](std::size_t t) { return std::to_string(t) + (t > 1 ? " workers" : " worker"); };
  add("plain loop, by hand (1 thread)", true, [&] { return plain_loop(*data, o.epochs); });
  add("dataflow, no worker thread", true,
      flow_run([&] { return serial_pipeline(data, kOrderSeed, kAugmentSeed); }, o.epochs));
  for (std::size_t t : {1, 2})
    add("MultiThreadBatchData, " + workers(t), true, flow_run([&data, t] { return batch_pipeline(data, t); }, o.epochs),
        t > 1 ? "MultiThreadBatchData, " + workers(1) : "");
  for (std::size_t t : {1, 2})
    add("  the same, reader only waits, " + workers(t), true,
        flow_run([&data, t] { return batch_pipeline(data, t, false); }, o.epochs),
        t > 1 ? "  the same, reader only waits, " + workers(1) : "");
  for (std::size_t t : {1, 2})
    add("MultiThreadMapData, " + workers(t), true, flow_run([&data, t] { return map_pipeline(data, t); }, o.epochs),
        t > 1 ? "MultiThreadMapData, " + workers(1) : "");
  const auto copies = [](std::size_t t) { return "MultiThreadRunner, " + std::to_string(t) + (t > 1 ? " copies" : " copy"); };
  for (std::size_t t : {1, 2})
    add(copies(t), t == 1, flow_run([&data, t] { return runner_pipeline(data, t); }, o.epochs), t > 1 ? copies(1) : "");
  measure(rows, o.repeats);
  print_table(rows, o, data->size(), load);
  return 0;
}

}  // namespace
}  // namespace vkp::dataflow

int main(int argc, char** argv) {
  try {
    return vkp::dataflow::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkpack_bench_dataflow: %s\n", e.what());
    return 1;
  }
}
