// TFEventWriter: the event file it writes, read back by an independent decoder written
// here from the formats' descriptions: TFRecord framing with masked CRC-32C (computed
// bit by bit, not with the library's table) and a protobuf field walker for Event,
// Summary, Summary.Value and SessionLog, and a loader that drops what a SessionLog START
// orphans, as TensorBoard's event accumulator does.
#include "callbacks/monitors/tf_event_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "fake_trainer.h"

namespace vkp::callbacks {
namespace {

using fakes::FakeTrainer;
using fakes::LogCapture;
using fakes::read_file;
using fakes::TempDir;

// ------------------------------------------------------------- the independent decoder

std::uint32_t crc32c_bit_by_bit(std::string_view data) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

std::uint32_t mask(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

template <class T>
T little_endian(std::string_view bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes.at(i))) << (8 * i);
  return static_cast<T>(v);
}

// The records of a TFRecord file; throws, saying which record, on a bad CRC or a cut.
std::vector<std::string> read_records(const std::string& file) {
  std::vector<std::string> records;
  std::size_t at = 0;
  while (at < file.size()) {
    const std::string where = "record " + std::to_string(records.size()) + " at byte " + std::to_string(at);
    if (file.size() - at < 12) throw std::runtime_error(where + ": cut inside the length");
    const std::string_view length_bytes = std::string_view(file).substr(at, 8);
    if (mask(crc32c_bit_by_bit(length_bytes)) != little_endian<std::uint32_t>(file.substr(at + 8, 4)))
      throw std::runtime_error(where + ": length CRC mismatch");
    const std::uint64_t length = little_endian<std::uint64_t>(length_bytes);
    if (file.size() - at - 12 < length + 4) throw std::runtime_error(where + ": cut inside the data");
    const std::string data = file.substr(at + 12, length);
    if (mask(crc32c_bit_by_bit(data)) != little_endian<std::uint32_t>(file.substr(at + 12 + length, 4)))
      throw std::runtime_error(where + ": data CRC mismatch");
    records.push_back(data);
    at += 12 + length + 4;
  }
  return records;
}

struct Field {
  std::uint32_t number = 0;
  std::uint32_t wire = 0;
  std::uint64_t varint = 0;  // wire type 0
  std::string bytes;         // wire types 1, 2 and 5
};

std::uint64_t read_varint(std::string_view message, std::size_t& at) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const auto byte = static_cast<unsigned char>(message.at(at++));
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  throw std::runtime_error("varint longer than 10 bytes");
}

// The fields of one protobuf message, in order.
std::vector<Field> walk(std::string_view message) {
  std::vector<Field> fields;
  std::size_t at = 0;
  while (at < message.size()) {
    Field f;
    const std::uint64_t key = read_varint(message, at);
    f.number = static_cast<std::uint32_t>(key >> 3);
    f.wire = static_cast<std::uint32_t>(key & 7);
    std::size_t size = 0;
    if (f.wire == 0)
      f.varint = read_varint(message, at);
    else if (f.wire == 1)
      size = 8;
    else if (f.wire == 5)
      size = 4;
    else if (f.wire == 2)
      size = read_varint(message, at);
    else
      throw std::runtime_error("unexpected wire type " + std::to_string(f.wire));
    if (message.size() - at < size) throw std::runtime_error("field runs past the message");
    f.bytes = std::string(message.substr(at, size));
    at += size;
    fields.push_back(f);
  }
  return fields;
}

struct Scalar {
  std::string tag;
  std::int64_t step = 0;
  float value = 0;
};

struct Event {
  double wall_time = 0;
  std::int64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> values;  // the summary's (tag, simple_value)
  std::uint64_t session_status = 0;                    // SessionLog.status; START = 1
};

float to_float(const std::string& four) {
  const auto bits = little_endian<std::uint32_t>(four);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double to_double(const std::string& eight) {
  const auto bits = little_endian<std::uint64_t>(eight);
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// Event: wall_time = 1 (double), step = 2 (int64), file_version = 3, summary = 5,
// session_log = 7; Summary: value = 1 (repeated); Value: tag = 1, simple_value = 2
// (float); SessionLog: status = 1 (enum).
Event decode_event(const std::string& record) {
  Event e;
  for (const Field& f : walk(record)) {
    if (f.number == 1 && f.wire == 1)
      e.wall_time = to_double(f.bytes);
    else if (f.number == 2 && f.wire == 0)
      e.step = static_cast<std::int64_t>(f.varint);
    else if (f.number == 3 && f.wire == 2)
      e.file_version = f.bytes;
    else if (f.number == 5 && f.wire == 2) {
      for (const Field& v : walk(f.bytes)) {
        if (v.number != 1 || v.wire != 2) throw std::runtime_error("unexpected Summary field");
        std::pair<std::string, float> value{"", NAN};
        for (const Field& g : walk(v.bytes)) {
          if (g.number == 1 && g.wire == 2)
            value.first = g.bytes;
          else if (g.number == 2 && g.wire == 5)
            value.second = to_float(g.bytes);
          else
            throw std::runtime_error("unexpected Summary.Value field");
        }
        e.values.push_back(value);
      }
    } else if (f.number == 7 && f.wire == 2) {
      for (const Field& g : walk(f.bytes)) {
        if (g.number != 1 || g.wire != 0) throw std::runtime_error("unexpected SessionLog field");
        e.session_status = g.varint;
      }
    } else {
      throw std::runtime_error("unexpected Event field " + std::to_string(f.number));
    }
  }
  return e;
}

// The scalars TensorBoard shows for a directory of event files: the files read in name
// order (their names start with the creation time), and a SessionLog START at step s
// discards every scalar loaded so far at step s or later.
std::vector<Scalar> tensorboard_view(const std::vector<std::string>& paths) {
  std::vector<Scalar> kept;
  for (const std::string& path : paths)
    for (const std::string& record : read_records(fakes::read_file(path))) {
      const Event e = decode_event(record);
      if (e.session_status == 1)
        std::erase_if(kept, [&](const Scalar& s) { return s.step >= e.step; });
      for (const auto& [tag, value] : e.values) kept.push_back({tag, e.step, value});
    }
  return kept;
}

// What read_records says of `file`; empty when it reads it.
std::string decoder_error(const std::string& file) {
  try {
    read_records(file);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

// ------------------------------------------------------------------------- the tests

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct TrainingRun {
  // A run that starts (or resumes) at `global_step`.
  explicit TrainingRun(const std::string& dir, std::int64_t global_step = 0) {
    trainer.logger_dir_ = dir;
    trainer.global_step_ = global_step;
    monitors.setup_graph(trainer);
  }
  FakeTrainer trainer;
  std::shared_ptr<TFEventWriter> writer = std::make_shared<TFEventWriter>();
  Monitors monitors{{writer}};
};

// Puts scalars at several steps; a long tag and a large step take multi-byte varints.
std::vector<Scalar> put_scalars(TrainingRun& run) {
  const std::vector<Scalar> scalars = {
      {"cross_entropy_loss", 0, 2.3025851f},
      {"learning_rate", 0, 0.1f},
      {"cross_entropy_loss", 1, 1.75f},
      {"val/accuracy", 300, 0.8765f},
      {std::string(200, 't') + "/long", 300, -3.5e-8f},
      {"QueueInput/queue_size", 1LL << 40, 50.0f},
  };
  for (const Scalar& s : scalars) {
    run.trainer.global_step_ = s.step;
    run.monitors.put_scalar(s.tag, s.value);
  }
  return scalars;
}

// The file names the format, then starts a session at `first_step`, then holds `want`.
void expect_events(const std::string& path, const std::vector<Scalar>& want, double start, double end,
                   std::int64_t first_step = 1) {
  const std::vector<std::string> records = read_records(read_file(path));
  ASSERT_EQ(records.size(), want.size() + 2);
  const Event first = decode_event(records[0]);
  EXPECT_EQ(first.file_version, "brain.Event:2");
  EXPECT_TRUE(first.values.empty());
  EXPECT_GE(first.wall_time, start);
  const Event session = decode_event(records[1]);
  EXPECT_EQ(session.session_status, 1u);
  EXPECT_EQ(session.step, first_step);
  EXPECT_TRUE(session.values.empty());
  double previous = first.wall_time;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Event e = decode_event(records[i + 2]);
    EXPECT_EQ(e.file_version, "");
    EXPECT_EQ(e.step, want[i].step) << i;
    ASSERT_EQ(e.values.size(), 1u) << i;
    EXPECT_EQ(e.values[0].first, want[i].tag) << i;
    EXPECT_EQ(e.values[0].second, want[i].value) << i;
    EXPECT_GE(e.wall_time, previous) << i;
    previous = e.wall_time;
  }
  EXPECT_LE(previous, end);
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

TEST(TFEventWriter, WritesAnEventFileThatAnIndependentDecoderReadsBack) {
  const TempDir dir;
  const double start = now_seconds();
  TrainingRun run(dir.str());
  const std::vector<Scalar> scalars = put_scalars(run);
  run.monitors.trigger_epoch();  // flushes: complete before the file is closed
  expect_events(run.writer->path(), scalars, start, now_seconds());
  run.monitors.after_train();  // closes
  expect_events(run.writer->path(), scalars, start, now_seconds());

  // events.out.tfevents.<unix seconds, 10 digits>.<hostname>
  const std::vector<std::string> names = dir.listing();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(dir.file(names[0]), run.writer->path());
  std::smatch match;
  ASSERT_TRUE(std::regex_match(names[0], match, std::regex(R"(events\.out\.tfevents\.(\d{10})\.(.+))"))) << names[0];
  EXPECT_GE(std::stol(match[1]), static_cast<long>(start));
  EXPECT_LE(std::stol(match[1]), static_cast<long>(now_seconds()));
  EXPECT_EQ(match[2], host_name());
}

TEST(TFEventWriter, TheDecoderRejectsACorruptedLengthOrData) {
  // The decoder above must be able to fail: flip one bit of a length, then of the data.
  const TempDir dir;
  TrainingRun run(dir.str());
  put_scalars(run);
  run.monitors.after_train();
  const std::string good = read_file(run.writer->path());
  ASSERT_NO_THROW(read_records(good));
  const std::size_t second_record = 12 + little_endian<std::uint64_t>(good) + 4;
  std::string bad = good;
  bad[second_record] ^= 0x01;
  EXPECT_EQ(decoder_error(bad), "record 1 at byte " + std::to_string(second_record) + ": length CRC mismatch");
  bad = good;
  bad[second_record + 12 + 3] ^= 0x10;
  EXPECT_EQ(decoder_error(bad), "record 1 at byte " + std::to_string(second_record) + ": data CRC mismatch");
  EXPECT_EQ(decoder_error(good.substr(0, second_record - 1)), "record 0 at byte 0: cut inside the data");
  EXPECT_EQ(decoder_error(good.substr(0, second_record + 5)),
            "record 1 at byte " + std::to_string(second_record) + ": cut inside the length");
}

TEST(TFEventWriter, TwoWritersInOneDirectoryAndSecondWriteTwoFiles) {
  // A resumed run may start a writer in the same second as the previous one closed.
  const TempDir dir;
  const double start = now_seconds();
  TrainingRun first(dir.str());
  TrainingRun second(dir.str());
  ASSERT_NE(first.writer->path(), second.writer->path());
  const std::vector<Scalar> a = put_scalars(first);
  first.monitors.after_train();
  const std::vector<Scalar> b = put_scalars(second);
  second.monitors.after_train();
  expect_events(first.writer->path(), a, start, now_seconds());
  expect_events(second.writer->path(), b, start, now_seconds());
}

// A run killed after step 5 and resumed from its checkpoint at step 3 trains steps 4 and 5
// again: TensorBoard shows each step's scalars once, the resumed run's.
TEST(TFEventWriter, AResumedRunsScalarsReplaceTheKilledRunsForTheStepsItTrainsAgain) {
  const TempDir dir;
  const auto put = [](TrainingRun& run, std::int64_t from, std::int64_t to, float offset) {
    for (std::int64_t step = from; step <= to; ++step) {
      run.trainer.global_step_ = step;
      run.monitors.put_scalar("loss", static_cast<float>(step) + offset);
    }
    run.monitors.trigger_epoch();
  };
  std::vector<std::string> paths;
  {
    TrainingRun killed(dir.str());
    put(killed, 1, 5, 0.25f);
    paths.push_back(killed.writer->path());
  }  // never closed, as after SIGKILL; trigger_epoch flushed it
  TrainingRun resumed(dir.str(), 3);
  put(resumed, 4, 7, 0.5f);
  resumed.monitors.after_train();
  paths.push_back(resumed.writer->path());
  std::sort(paths.begin(), paths.end());

  std::vector<std::pair<std::int64_t, float>> shown;
  for (const Scalar& s : tensorboard_view(paths)) shown.emplace_back(s.step, s.value);
  const std::vector<std::pair<std::int64_t, float>> want{{1, 1.25f}, {2, 2.25f}, {3, 3.25f}, {4, 4.5f},
                                                         {5, 5.5f},  {6, 6.5f},  {7, 7.5f}};
  EXPECT_EQ(shown, want);
}

TEST(TFEventWriter, ScalarsAfterCloseAreDropped) {
  const TempDir dir;
  const double start = now_seconds();
  TrainingRun run(dir.str());
  const std::vector<Scalar> scalars = put_scalars(run);
  run.monitors.after_train();
  run.monitors.put_scalar("late", 1.0);
  run.monitors.after_train();
  expect_events(run.writer->path(), scalars, start, now_seconds());
}

TEST(TFEventWriter, WithoutALoggerDirectoryWarnsAndWritesNothing) {
  const LogCapture log;
  TrainingRun run("");
  put_scalars(run);
  run.monitors.trigger_epoch();
  run.monitors.after_train();
  EXPECT_EQ(run.writer->path(), "");
  EXPECT_EQ(log.texts(LogLevel::warn), std::vector<std::string>{"logger directory was not set. Ignore TFEventWriter."});
}

}  // namespace
}  // namespace vkp::callbacks
