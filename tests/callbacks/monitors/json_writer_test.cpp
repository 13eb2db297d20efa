// JSONWriter: stats.json content (compared with hand-written text), atomic replacement,
// resume, and the backups of files it must not overwrite.
#include "callbacks/monitors/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "fake_trainer.h"

namespace vkp::callbacks {
namespace {

using fakes::FakeTrainer;
using fakes::LogCapture;
using fakes::read_file;
using fakes::TempDir;
using fakes::write_file;

// A trainer in `dir` and a Monitors group around one JSONWriter, set up as the trainer
// sets up its callbacks.
struct TrainingRun {
  explicit TrainingRun(const std::string& dir, int starting_epoch = 1) {
    trainer.logger_dir_ = dir;
    trainer.starting_epoch_ = starting_epoch;
    trainer.epoch_num_ = starting_epoch;
    trainer.global_step_ = (starting_epoch - 1) * trainer.steps_per_epoch_;
    monitors.setup_graph(trainer);
  }
  // Ends the current epoch after `steps` more steps.
  void end_epoch(std::int64_t steps) {
    trainer.global_step_ += steps;
    monitors.trigger_epoch();
    ++trainer.epoch_num_;
  }

  FakeTrainer trainer;
  std::shared_ptr<JSONWriter> writer = std::make_shared<JSONWriter>();
  Monitors monitors{{writer}};
};

TEST(JSONWriter, WritesOneObjectPerEpochWithItsLatestScalarsEpochAndStep) {
  const TempDir dir;
  TrainingRun run(dir.str());
  EXPECT_EQ(run.writer->path(), dir.file("stats.json"));
  run.monitors.put_scalar("loss", 1.5);
  run.trainer.global_step_ = 60;
  run.monitors.put_scalar("loss", 0.75);  // the epoch's latest value wins
  run.monitors.put_scalar("accuracy", 0.5);
  run.end_epoch(40);
  EXPECT_EQ(read_file(dir.file("stats.json")),
            "[\n"
            "{\"accuracy\":0.5,\"epoch_num\":1,\"global_step\":100,\"loss\":0.75}\n"
            "]\n");

  run.monitors.put_scalar("loss", 0.25);  // an epoch without accuracy has none
  run.end_epoch(100);
  EXPECT_EQ(read_file(dir.file("stats.json")),
            "[\n"
            "{\"accuracy\":0.5,\"epoch_num\":1,\"global_step\":100,\"loss\":0.75},\n"
            "{\"epoch_num\":2,\"global_step\":200,\"loss\":0.25}\n"
            "]\n");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"stats.json"});
}

TEST(JSONWriter, WritesNonFiniteValuesAsNullBecauseJsonHasNoNaN) {
  const TempDir dir;
  TrainingRun run(dir.str());
  run.monitors.put_scalar("loss", std::nan(""));
  run.monitors.put_scalar("grad_norm", INFINITY);
  run.end_epoch(100);
  EXPECT_EQ(read_file(dir.file("stats.json")),
            "[\n{\"epoch_num\":1,\"global_step\":100,\"grad_norm\":null,\"loss\":null}\n]\n");
}

TEST(JSONWriter, ReplacesTheFileByRenameSoAReaderNeverSeesItHalfWritten) {
  const TempDir dir;
  TrainingRun run(dir.str());
  run.monitors.put_scalar("loss", 2.0);
  run.end_epoch(100);
  const std::string first = read_file(dir.file("stats.json"));
  // A hard link keeps the first file's inode: rewriting in place would change it too.
  std::filesystem::create_hard_link(dir.file("stats.json"), dir.file("held_by_a_reader"));
  run.monitors.put_scalar("loss", 1.0);
  run.end_epoch(100);
  EXPECT_EQ(read_file(dir.file("held_by_a_reader")), first);
  EXPECT_NE(read_file(dir.file("stats.json")), first);
  EXPECT_EQ(dir.listing(), (std::vector<std::string>{"held_by_a_reader", "stats.json"}));
}

TEST(JSONWriter, AFailedWriteIsAnIoErrorAndKeepsThePreviousFile) {
  const TempDir dir;
  TrainingRun run(dir.str());
  run.monitors.put_scalar("loss", 2.0);
  run.end_epoch(100);
  const std::string first = read_file(dir.file("stats.json"));
  for (int i = 0; i < 20; ++i) run.monitors.put_scalar("a_long_statistic_name_" + std::to_string(i), 0.125);
  try {
    const fakes::FileSizeLimit limit(first.size() + 16);
    run.end_epoch(100);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(dir.file("stats.json") + ": cannot write: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(read_file(dir.file("stats.json")), first);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"stats.json"});
}

// stats.json as tensorpack's JSONWriter (Python's json.dump) writes it.
const char* const kThreeEpochs =
    R"([{"loss": 1.0, "epoch_num": 1, "global_step": 100}, {"loss": 0.5, "epoch_num": 2, "global_step": 200}, )"
    R"({"loss": 0.4375, "epoch_num": 3, "global_step": 300}])";

TEST(JSONWriter, OnResumeKeepsTheEpochsBeforeTheStartingOneAndAppends) {
  const TempDir dir;
  write_file(dir.file("stats.json"), kThreeEpochs);
  // The checkpoint was from the end of epoch 2: epoch 3 is trained again.
  const LogCapture log;
  TrainingRun run(dir.str(), /*starting_epoch=*/3);
  EXPECT_EQ(read_file(dir.file("stats.json")), kThreeEpochs) << "nothing is written before the epoch ends";
  run.monitors.put_scalar("loss", 0.375);
  run.end_epoch(100);
  EXPECT_EQ(read_file(dir.file("stats.json")),
            "[\n"
            "{\"epoch_num\":1,\"global_step\":100,\"loss\":1.0},\n"
            "{\"epoch_num\":2,\"global_step\":200,\"loss\":0.5},\n"
            "{\"epoch_num\":3,\"global_step\":300,\"loss\":0.375}\n"
            "]\n");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"stats.json"});
  EXPECT_TRUE(log.texts(LogLevel::warn).empty());
  ASSERT_EQ(log.texts(LogLevel::info).size(), 1u);
  EXPECT_EQ(log.texts(LogLevel::info)[0],
            "Found existing JSON inside " + dir.str() + ", will append to it (keeping 2 of its 3 epochs).");
}

// Runs JSONWriter's setup on a directory holding `existing` as stats.json, then one
// epoch; checks that the old file was moved aside with a warning giving `reason`.
void expect_backed_up(const std::string& existing, int starting_epoch, const std::string& reason) {
  const TempDir dir;
  write_file(dir.file("stats.json"), existing);
  const LogCapture log;
  TrainingRun run(dir.str(), starting_epoch);
  const std::vector<std::string> names = dir.listing();
  ASSERT_EQ(names.size(), 1u) << existing;
  EXPECT_EQ(names[0].rfind("stats.json.", 0), 0u) << names[0];  // stats.json.MMDD-HHMMSS
  EXPECT_EQ(names[0].size(), std::string("stats.json.MMDD-HHMMSS").size()) << names[0];
  EXPECT_EQ(read_file(dir.file(names[0])), existing);
  ASSERT_EQ(log.texts(LogLevel::warn).size(), 1u) << existing;
  EXPECT_EQ(log.texts(LogLevel::warn)[0], dir.file("stats.json") + ": " + reason + "; moved it to " +
                                              dir.file(names[0]) + " and starting a new one.");

  run.monitors.put_scalar("loss", 0.5);
  run.end_epoch(100);
  EXPECT_EQ(read_file(dir.file("stats.json")), "[\n{\"epoch_num\":" + std::to_string(starting_epoch) +
                                                   ",\"global_step\":" + std::to_string(starting_epoch * 100) +
                                                   ",\"loss\":0.5}\n]\n");
}

TEST(JSONWriter, BacksUpAMalformedFileWithAWarningInsteadOfOverwritingIt) {
  expect_backed_up(R"([{"loss": 1.0, "epoch_num": 1}, {"lo)", 2, "it is not valid JSON");
  expect_backed_up(R"({"loss": 1.0, "epoch_num": 1})", 2, "it is not a JSON list");
  expect_backed_up(R"([{"loss": 1.0, "epoch_num": 1}, {"loss": 1.0}])", 3,
                   "entry 1 is not an object with an integer \"epoch_num\"");
  expect_backed_up("", 2, "it is not valid JSON");
  expect_backed_up(R"([{"loss": "low", "epoch_num": 1}])", 2, "entry 0's \"loss\" is not a number");
  expect_backed_up(R"([{"loss": 1.0, "epoch_num": 1, "global_step": 1.5}])", 2,
                   "entry 0's \"global_step\" is not an integer");
}

// A value nested 200000 deep: the first reader parsed it, kept the entry and wrote it
// out again by dumping it, which recursed per level and crashed on the stack. Now the
// depth is counted before parsing (stats.json needs 2 levels).
TEST(JSONWriter, BacksUpAFileNestedDeeperThanStatisticsNest) {
  const std::string deep = R"([{"epoch_num": 1, "loss": )" + std::string(200000, '[') + std::string(200000, ']') + "}]";
  expect_backed_up(deep, 2, "it nests 200002 levels deep, more than the 64 read (a list of objects of numbers needs 2)");
}

TEST(JSONWriter, BacksUpTheStatsOfAnEarlierRunWhenTrainingStartsAtEpochOne) {
  expect_backed_up(kThreeEpochs, 1, "training starts at epoch 1, so it belongs to an earlier run");
}

TEST(JSONWriter, WithoutALoggerDirectoryWarnsAndWritesNothing) {
  const LogCapture log;
  TrainingRun run("");
  run.monitors.put_scalar("loss", 0.5);
  run.end_epoch(100);
  run.monitors.after_train();
  EXPECT_EQ(run.writer->path(), "");
  EXPECT_FALSE(std::filesystem::exists("stats.json")) << "written to the working directory";
  EXPECT_EQ(log.texts(LogLevel::warn), std::vector<std::string>{"logger directory was not set. Ignore JSONWriter."});
}

}  // namespace
}  // namespace vkp::callbacks
