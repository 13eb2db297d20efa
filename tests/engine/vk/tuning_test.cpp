// Measured kernel choices (vk::TuningCache, gemm's GemmVariant::automatic): measured once
// per shape class and device, kept on disk and read back by the next run instead of
// measured again; results within gemm's tolerance whichever variant wins; VKPACK_TUNE=off
// runs the fixed rule and writes nothing; a file from another driver, or a damaged one,
// is ignored. On lavapipe the GPU path (KernelChoice::gpu) is tuned only when asked
// (TuneMode::on): CPU devices tune nothing by default.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "checker.h"
#include "reference.h"
#include "scoped_env.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "engine/vk/device.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/memory.h"
#include "engine/vk/transfer.h"

namespace vkp::test {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("vkpack-tuning-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

vk::DeviceOptions options_for(const fs::path& dir, vk::TuneMode tune) {
  vk::DeviceOptions o = device_options();
  o.pipeline_cache_dir = dir.string();
  o.tune = tune;
  return o;
}

// C = A B (m x k times k x n) on the GPU path of `dev`, variant automatic; checks C against
// the double reference with gemm_variants_test.cpp's bound for the tilings.
void run_and_check(vk::Device& dev, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint64_t seed) {
  vk::GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.choice = vk::KernelChoice::gpu;
  const std::vector<float> a = random_floats(std::size_t{m} * k, seed), b = random_floats(std::size_t{k} * n, seed + 1);
  vk::Arena arena(dev, vk::MemoryUse::device, "tuning test");
  const vk::BufferSlice da = arena.allocate(a.size() * 4, "A"), db = arena.allocate(b.size() * 4, "B");
  const vk::BufferSlice dc = arena.allocate(std::size_t{m} * n * 4, "C");
  vk::upload(dev, da, std::as_bytes(std::span(a)));
  vk::upload(dev, db, std::as_bytes(std::span(b)));
  vk::Recording recording(dev, {.name = "tuning test"});
  vk::gemm(recording, args, {da, db, dc, vk::BufferSlice{}});
  recording.finish();
  recording.run();
  std::vector<float> got(std::size_t{m} * n);
  vk::download(dev, dc, std::as_writable_bytes(std::span(got)));
  std::vector<double> want(got.size(), 0.0), magnitude;
  gemm_reference(args, a, b, want, magnitude);
  const std::vector<float> c0(got.size(), 0.0f);
  EXPECT_EQ(compare_gemm(got, c0, want, magnitude,
                         [&](double mag, double) { return 8.0 * std::sqrt(k + 2.0) * std::ldexp(1.0, -24) * mag + 1e-30; }),
            "");
}

std::string key_of(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  vk::GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  return vk::gemm_tuning_key(args, vk::BufferSlice{}, vk::BufferSlice{});
}

TEST(GemmTuning, MeasuresOnceKeepsTheChoiceAndTheNextRunReadsIt) {
  const fs::path dir = fresh_dir("once");
  const std::string key = key_of(70, 90, 50);
  EXPECT_EQ(key, "gemm m128 n128 k64");
  std::string chosen;
  {
    vk::Device dev(instance(), device_index(), options_for(dir, vk::TuneMode::on));
    ASSERT_TRUE(dev.kernels().tuning().enabled());
    const std::size_t kernels = dev.kernels().size();
    run_and_check(dev, 70, 90, 50, 1);
    EXPECT_EQ(dev.kernels().tuning().measured(), 1u);
    // Every candidate was built to be timed: the tilings of gemm_tiled at least.
    EXPECT_GE(dev.kernels().size() - kernels, vk::gemm_tuning_candidates({}, {}, dev).size());
    const std::optional<std::string> kept = dev.kernels().tuning().get(key);
    ASSERT_TRUE(kept.has_value());
    chosen = *kept;
    bool known = false;
    for (vk::GemmVariant v : vk::gemm_tuning_candidates({}, {}, dev)) known |= vk::to_string(v) == chosen;
    EXPECT_TRUE(known) << chosen;
    // Another product of the same class takes the kept choice without measuring.
    run_and_check(dev, 100, 65, 40, 3);
    EXPECT_EQ(dev.kernels().tuning().measured(), 1u);
    ASSERT_TRUE(fs::exists(dev.kernels().tuning().path())) << dev.kernels().tuning().path();
    EXPECT_EQ(fs::path(dev.kernels().tuning().path()).parent_path(),
              fs::path(dev.kernels().pipelines().path()).parent_path());
  }
  {
    vk::Device again(instance(), device_index(), options_for(dir, vk::TuneMode::on));
    EXPECT_EQ(again.kernels().tuning().get(key), chosen);
    const std::size_t kernels = again.kernels().size();
    run_and_check(again, 70, 90, 50, 5);
    EXPECT_EQ(again.kernels().tuning().measured(), 0u);
    EXPECT_EQ(again.kernels().size() - kernels, 1u);  // only the kept variant's kernel
  }
  fs::remove_all(dir);
}

TEST(GemmTuning, OffRunsTheFixedRuleAndWritesNothing) {
  const fs::path dir = fresh_dir("off");
  {
    ScopedEnv off("VKPACK_TUNE", "off");
    vk::Device dev(instance(), device_index(), options_for(dir, vk::TuneMode::automatic));
    EXPECT_FALSE(dev.kernels().tuning().enabled());
    const std::size_t kernels = dev.kernels().size();
    run_and_check(dev, 70, 90, 50, 7);
    EXPECT_EQ(dev.kernels().size() - kernels, 1u);
    EXPECT_EQ(dev.kernels().tuning().size(), 0u);
  }
  {
    ScopedEnv unset("VKPACK_TUNE", nullptr);
    vk::Device dev(instance(), device_index(), options_for(dir, vk::TuneMode::automatic));
    EXPECT_EQ(dev.kernels().tuning().enabled(), dev.kind() == vk::DeviceKind::gpu);  // CPU devices tune on request only
  }
  {
    ScopedEnv bad("VKPACK_TUNE", "sometimes");
    try {
      vk::Device dev(instance(), device_index(), options_for(dir, vk::TuneMode::automatic));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("VKPACK_TUNE"), std::string::npos) << e.what();
    }
  }
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tuning.json"), std::string::npos) << entry.path();
  fs::remove_all(dir);
}

TEST(GemmTuning, AFileFromAnotherDriverOrADamagedOneIsIgnoredAndReplaced) {
  const fs::path dir = fresh_dir("stale");
  std::string path;
  {
    vk::Device dev(instance(), device_index(), options_for(dir, vk::TuneMode::on));
    path = dev.kernels().tuning().path();
  }
  const std::string key = key_of(70, 90, 50);
  for (const std::string& text : {std::string(R"({"driver": "another driver 1.0", "choices": {")") + key +
                                     R"(": "tiled_128"}})",
                                 std::string("{\"driver\": "), std::string(R"({"choices": 3})")}) {
    SCOPED_TRACE(text);
    fs::create_directories(dir);
    std::ofstream(path) << text;
    vk::Device dev(instance(), device_index(), options_for(dir, vk::TuneMode::on));
    EXPECT_FALSE(dev.kernels().tuning().get(key).has_value());
    run_and_check(dev, 70, 90, 50, 9);
    EXPECT_EQ(dev.kernels().tuning().measured(), 1u);
  }
  vk::Device last(instance(), device_index(), options_for(dir, vk::TuneMode::on));
  EXPECT_TRUE(last.kernels().tuning().get(key).has_value());  // the rewritten file parses
  fs::remove_all(dir);
}

TEST(GemmTuning, TheMatrixUnitsAreCandidatesForFloat16OperandsOnly) {
  vk::BufferSlice f32, f16;
  f16.f16 = true;
  for (vk::GemmVariant v : vk::gemm_tuning_candidates(f32, f16, device())) EXPECT_FALSE(vk::on_matrix_units(v));
  for (vk::GemmVariant v : vk::gemm_tuning_candidates(f32, f32, device())) EXPECT_FALSE(vk::on_matrix_units(v));
  EXPECT_EQ(vk::gemm_tuning_candidates(f16, f16, device()).size(), vk::gemm_gpu_variants(device()).size());
  vk::GemmArgs args;
  args.m = 4096;
  args.n = 33;
  args.k = 1;
  args.trans_b = true;
  args.batch = 3;
  EXPECT_EQ(vk::gemm_tuning_key(args, f16, f16), "gemm m4096 n64 k1 Bt batched f16");
  EXPECT_EQ(vk::gemm_tuning_key(args, f32, f16), "gemm m4096 n64 k1 Bt batched mixed");
}

}  // namespace
}  // namespace vkp::test
