// TFRecord datasets: files of tf.train.Example that Google's protobuf library wrote
// (tfrecord_protobuf.py, the reference standing in for TensorFlow) read as datapoints;
// TFRecordSerializer's files read back by it and by vkpack; the hand-written Example
// codec on wire forms the Python library does not write; damage named by its record.
#include "dataflow/tfrecord_data.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "dataflow/data_from_list.h"

namespace vkp::dataflow {
namespace {

int reference(const std::string& args) {
  const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_TFRECORD_PROTOBUF + " " + args;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class TFRecordDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("vkpack-tfrecord-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tfrecord"))
                .string();
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // The Error(bad_data) reading every datapoint of `flow`, or "" when it reads clean.
  static std::string damage(DataFlow& flow) {
    try {
      flow.reset_state();
      for (const Datapoint& dp : flow.epoch()) (void)dp;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_data) << e.what();
      return e.what();
    }
    return "";
  }

  std::string path_;
};

TEST_F(TFRecordDataTest, ReadsTheFeaturesProtobufWrote) {
  ASSERT_EQ(reference("write " + path_), 0);
  TFRecordData flow(path_, {"image/class/label", "bbox", "image/encoded", "empty"}, 3);
  flow.reset_state();
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::int64_t i = 0;
    for (const Datapoint& dp : flow.epoch()) {
      ASSERT_EQ(dp.size(), 4u);
      EXPECT_EQ(dp[0].dtype(), DType::i64);
      EXPECT_EQ(std::vector<std::int64_t>(dp[0].data<std::int64_t>().begin(), dp[0].data<std::int64_t>().end()),
                (std::vector<std::int64_t>{i - 1, -(std::int64_t{1} << 40)}));
      EXPECT_EQ(std::vector<float>(dp[1].data<float>().begin(), dp[1].data<float>().end()),
                (std::vector<float>{0.25f * static_cast<float>(i), -1.5f, 3.0e-8f}));
      EXPECT_EQ(dp[2].dtype(), DType::u8);
      ASSERT_EQ(dp[2].numel(), 4 * (i + 1));
      const std::uint8_t first[] = {static_cast<std::uint8_t>(i), 255, 0, static_cast<std::uint8_t>(10 + i)};
      for (std::int64_t b = 0; b < dp[2].numel(); ++b) EXPECT_EQ(dp[2].data<std::uint8_t>()[b], first[b % 4]);
      EXPECT_EQ(dp[3].shape(), Shape{0});
      ++i;
    }
    EXPECT_EQ(i, 3);
  }
}

TEST_F(TFRecordDataTest, AMissingFeatureOrAWrongCountIsNamed) {
  ASSERT_EQ(reference("write " + path_), 0);
  TFRecordData missing(path_, {"bbox", "image/width"});
  EXPECT_NE(damage(missing).find("record 0: no feature 'image/width'"), std::string::npos) << damage(missing);
  TFRecordData counted(path_, {"bbox"}, 4);
  EXPECT_NE(damage(counted).find("3 records, where 4 were expected"), std::string::npos);
  TFRecordData fewer(path_, {"bbox"}, 2);
  EXPECT_NE(damage(fewer).find("more than the 2 records"), std::string::npos);
  EXPECT_THROW(TFRecordData(path_, std::vector<std::string>{}), Error);
}

TEST_F(TFRecordDataTest, ADamagedRecordIsNeverYielded) {
  ASSERT_EQ(reference("write " + path_), 0);
  std::string bytes;
  {
    std::ifstream in(path_, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() - 10] ^= 4;  // inside the last record's Example
  std::ofstream(path_, std::ios::binary) << bytes;
  TFRecordData flow(path_, {"bbox"});
  flow.reset_state();
  flow.start_epoch();
  EXPECT_TRUE(flow.next());
  EXPECT_TRUE(flow.next());
  try {
    flow.next();
    FAIL() << "the damaged record was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find("record 2"), std::string::npos) << e.what();
  }
}

TEST_F(TFRecordDataTest, TheSerializerRoundTripsAndProtobufReadsItsFiles) {
  std::vector<Datapoint> points;
  for (int i = 0; i < 4; ++i) {
    std::vector<float> values;
    for (int k = 0; k < 6; ++k) values.push_back(static_cast<float>(i * 10 + k) * 0.5f);
    points.push_back({Array::from(Shape{2, 3}, values), Array::from(Shape{}, std::vector<std::int64_t>{-i})});
  }
  DataFromList list(points, /*shuffle=*/false);
  EXPECT_EQ(TFRecordSerializer::save(list, path_), 4u);
  EXPECT_EQ(reference("check " + path_), 0);
  std::unique_ptr<DataFlow> back = TFRecordSerializer::load(path_);
  EXPECT_EQ(back->size(), 4u);
  back->reset_state();
  std::size_t i = 0;
  for (const Datapoint& dp : back->epoch()) {
    ASSERT_EQ(dp.size(), 2u);
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(dp[c].dtype(), points[i][c].dtype());
      EXPECT_EQ(dp[c].shape(), points[i][c].shape());
      EXPECT_TRUE(std::equal(dp[c].bytes().begin(), dp[c].bytes().end(), points[i][c].bytes().begin(),
                             points[i][c].bytes().end()));
    }
    ++i;
  }
  EXPECT_EQ(i, 4u);
}

TEST_F(TFRecordDataTest, EveryDtypeAndShapeRoundTrips) {
  std::vector<Datapoint> points = {{Array(DType::f16, Shape{3, 0, 2}), Array(DType::u8, Shape{5}),
                                    Array(DType::i32, Shape{1, 1, 1, 2}), Array(DType::f32, Shape{})}};
  points[0][1].data<std::uint8_t>()[4] = 200;
  points[0][2].data<std::int32_t>()[1] = -7;
  DataFromList list(points, /*shuffle=*/false);
  TFRecordSerializer::save(list, path_);
  std::unique_ptr<DataFlow> back = TFRecordSerializer::load(path_);
  back->reset_state();
  back->start_epoch();
  const std::optional<Datapoint> dp = back->next();
  ASSERT_TRUE(dp);
  ASSERT_EQ(dp->size(), 4u);
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ((*dp)[c].dtype(), points[0][c].dtype()) << c;
    EXPECT_EQ((*dp)[c].shape(), points[0][c].shape()) << c;
  }
  EXPECT_EQ((*dp)[1].data<std::uint8_t>()[4], 200);
  EXPECT_EQ((*dp)[2].data<std::int32_t>()[1], -7);
  EXPECT_FALSE(back->next());
}

TEST_F(TFRecordDataTest, AFileTheSerializerDidNotWriteIsRefusedByComponent) {
  ASSERT_EQ(reference("write " + path_), 0);  // Examples without "0", "0/shape", "0/dtype"
  std::unique_ptr<DataFlow> back = TFRecordSerializer::load(path_);
  back->reset_state();
  back->start_epoch();
  EXPECT_TRUE(back->next()->empty());  // no component 0: an empty datapoint
  TFExample forged;
  forged["0"] = {TFFeature::Kind::bytes, {std::string(4, 'a')}, {}, {}};
  forged["0/shape"] = {TFFeature::Kind::int64s, {}, {}, {2}};
  forged["0/dtype"] = {TFFeature::Kind::bytes, {"f32"}, {}, {}};
  std::filesystem::remove(path_);
  {
    TFRecordWriter writer(path_);
    writer.write(encode_example(forged));
  }
  std::unique_ptr<DataFlow> short_bytes = TFRecordSerializer::load(path_);
  EXPECT_NE(damage(*short_bytes).find("component 0 holds 4 bytes"), std::string::npos) << damage(*short_bytes);
}

TEST(TFExample, RoundTripsEveryKindOfList) {
  TFExample e;
  e["a"] = {TFFeature::Kind::floats, {}, {1.5f, -0.0f, 1e30f}, {}};
  e["b"] = {TFFeature::Kind::int64s, {}, {}, {0, -1, std::int64_t{1} << 62}};
  e["c"] = {TFFeature::Kind::bytes, {"", std::string("\0x", 2), "ok"}, {}, {}};
  e["d"] = {TFFeature::Kind::floats, {}, {}, {}};
  e["e"] = {};
  const TFExample back = decode_example(encode_example(e));
  ASSERT_EQ(back.size(), 5u);
  EXPECT_EQ(back.at("a").floats, e["a"].floats);
  EXPECT_EQ(back.at("b").int64s, e["b"].int64s);
  EXPECT_EQ(back.at("c").bytes, e["c"].bytes);
  EXPECT_EQ(back.at("d").kind, TFFeature::Kind::floats);
  EXPECT_EQ(back.at("e").kind, TFFeature::Kind::none);
}

TEST(TFExample, ReadsUnpackedListsAndSkipsUnknownFields) {
  // Example{features{feature{key "v", value{int64_list{value 5, value 300 (unpacked)}}}}},
  // with an unknown varint field 9 in the Example and a fixed32 field 7 in the list, by hand.
  const std::string list = std::string("\x08\x05\x08\xac\x02\x3d\x01\x02\x03\x04", 10);
  const std::string feature = std::string("\x1a") + static_cast<char>(list.size()) + list;
  const std::string entry = std::string("\x0a\x01v\x12") + static_cast<char>(feature.size()) + feature;
  const std::string features = std::string("\x0a") + static_cast<char>(entry.size()) + entry;
  const std::string example = std::string("\x48\x2a\x0a") + static_cast<char>(features.size()) + features;
  const TFExample e = decode_example(example);
  ASSERT_EQ(e.count("v"), 1u);
  EXPECT_EQ(e.at("v").int64s, (std::vector<std::int64_t>{5, 300}));
  // Unpacked floats: field 1 as fixed32, twice.
  const std::string floats = std::string("\x0d\x00\x00\xc0\x3f\x0d\x00\x00\x80\xbf", 10);
  const std::string f2 = std::string("\x12") + static_cast<char>(floats.size()) + floats;
  const std::string entry2 = std::string("\x0a\x01w\x12") + static_cast<char>(f2.size()) + f2;
  const std::string example2 =
      std::string("\x0a") + static_cast<char>(entry2.size() + 2) + "\x0a" + static_cast<char>(entry2.size()) + entry2;
  EXPECT_EQ(decode_example(example2).at("w").floats, (std::vector<float>{1.5f, -1.0f}));
}

TEST(TFExample, MalformedBytesAreBadData) {
  for (const std::string& bad : {std::string("\x0a\x05\x0a"),                         // a length past the end
                                 std::string("\x0a\x02\x0a\xff"),                     // a varint cut short
                                 std::string("\x0f"),                                 // wire type 7
                                 std::string("\x00", 1),                              // field number 0
                                 std::string("\x0a\x06\x0a\x04\x12\x02\x12\x01")}) {  // a list longer than its Feature
    try {
      decode_example(bad);
      ADD_FAILURE() << "decoded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_data) << e.what();
    }
  }
}

}  // namespace
}  // namespace vkp::dataflow
