// Images and histograms in TensorBoard event files, read back with Google's protobuf
// library from the messages of TensorFlow's summary.proto (read_events.py, Debian's
// Python) and the PNGs decoded by OpenCV: the pixels put are the pixels TensorBoard gets,
// and a histogram's statistics and bucket counts are those of the values put, counted
// here from the bucket limits the file gives.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "fake_trainer.h"
#include "callbacks/monitors/tf_event_writer.h"
#include "core/rng.h"

namespace vkp::callbacks {
namespace {

using fakes::FakeTrainer;

nlohmann::json read_events(const std::string& path) {
  const std::string out = path + ".json";
  const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_READ_EVENTS + " " + path + " > " + out;
  const int status = std::system(command.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("failed: " + command);
  return nlohmann::json::parse(fakes::read_file(out));
}

TEST(TFEventPictures, ImagesAndHistogramsReadBackThroughProtobufAndOpenCv) {
  fakes::TempDir dir;
  FakeTrainer trainer;
  trainer.logger_dir_ = dir.str();
  auto writer = std::make_shared<TFEventWriter>();
  Monitors monitors{{writer}};
  monitors.setup_graph(trainer);

  // RGB u8 5 x 7, and gray f32 [4, 3] in [0, 1] (with values outside, clamped).
  Array rgb(DType::u8, Shape{5, 7, 3});
  for (std::size_t i = 0; i < rgb.nbytes(); ++i) rgb.data<std::uint8_t>()[i] = static_cast<std::uint8_t>((i * 37 + 11) % 256);
  Array gray(DType::f32, Shape{4, 3});
  for (std::size_t i = 0; i < 12; ++i) gray.data<float>()[i] = -0.2f + 0.125f * static_cast<float>(i);
  trainer.global_step_ = 5;
  monitors.put_image("samples/rgb", rgb);
  monitors.put_image("gray", gray);
  // Values of both signs over many decades, exact zeros and a NaN (left out).
  Rng rng(3);
  std::vector<float> values;
  for (int i = 0; i < 2000; ++i) values.push_back(rng.normal() * std::pow(10.0f, static_cast<float>(i % 7 - 3)));
  values.insert(values.end(), {0.0f, 0.0f, 1e-13f, -7e5f, NAN});
  trainer.global_step_ = 9;
  monitors.put_histogram("weights", values);
  writer->close();

  const nlohmann::json events = read_events(writer->path());
  ASSERT_EQ(events.size(), 3u) << events.dump();

  const nlohmann::json& a = events[0];
  EXPECT_EQ(a["tag"], "samples/rgb");
  EXPECT_EQ(a["step"], 5);
  EXPECT_EQ(a["kind"], "image");
  EXPECT_EQ(a["height"], 5);
  EXPECT_EQ(a["width"], 7);
  EXPECT_EQ(a["colorspace"], 3);
  ASSERT_EQ(a["pixels"].size(), rgb.nbytes());
  for (std::size_t i = 0; i < rgb.nbytes(); ++i) ASSERT_EQ(a["pixels"][i], rgb.data<std::uint8_t>()[i]) << i;

  const nlohmann::json& b = events[1];
  EXPECT_EQ(b["colorspace"], 1);
  ASSERT_EQ(b["pixels"].size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    const double want = std::round(std::clamp(gray.data<float>()[i], 0.0f, 1.0f) * 255.0);
    EXPECT_EQ(b["pixels"][i].get<int>(), static_cast<int>(want)) << i;
  }

  const nlohmann::json& h = events[2];
  EXPECT_EQ(h["kind"], "histo");
  EXPECT_EQ(h["step"], 9);
  double num = 0, sum = 0, squares = 0, lo = INFINITY, hi = -INFINITY;
  for (float v : values)
    if (!std::isnan(v)) {
      num += 1, sum += v, squares += static_cast<double>(v) * v;
      lo = std::min<double>(lo, v), hi = std::max<double>(hi, v);
    }
  EXPECT_EQ(h["num"].get<double>(), num);
  EXPECT_DOUBLE_EQ(h["sum"].get<double>(), sum);
  EXPECT_DOUBLE_EQ(h["sum_squares"].get<double>(), squares);
  EXPECT_EQ(h["min"].get<double>(), lo);
  EXPECT_EQ(h["max"].get<double>(), hi);
  // Bucket i holds the values in [limit i-1, limit i): counted here independently.
  const auto limits = h["bucket_limit"].get<std::vector<double>>();
  const auto counts = h["bucket"].get<std::vector<double>>();
  ASSERT_EQ(limits.size(), counts.size());
  ASSERT_GT(limits.size(), 20u);
  double total = 0;
  for (std::size_t i = 0; i < limits.size(); ++i) {
    const double below = i == 0 ? -INFINITY : limits[i - 1];
    double n = 0;
    for (float v : values) n += (!std::isnan(v) && v >= below && v < limits[i]) ? 1 : 0;
    EXPECT_EQ(counts[i], n) << "bucket " << i << " [" << below << ", " << limits[i] << ")";
    total += counts[i];
  }
  EXPECT_EQ(total, num);
}

}  // namespace
}  // namespace vkp::callbacks
