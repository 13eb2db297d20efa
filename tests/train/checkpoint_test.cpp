// Checkpoints of a trained session: what is saved is every variable bit for bit (read
// back by our reader and by an independent parse of the safetensors layout), old ones
// are pruned, bad files and mismatched variables are errors that name them, and the log
// directory's actions do what they say.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dir_listing.h"
#include "train_fixtures.h"
#include "vk_test_env.h"
#include "callbacks/checkpoint.h"
#include "core/error.h"
#include "core/log.h"
#include "core/safetensors.h"
#include "engine/graph/variables.h"
#include "train/logger_dir.h"
#include "train/session_init.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool same_bits(const Array& a, const Array& b) {
  return a.dtype() == b.dtype() && a.shape().dims() == b.shape().dims() &&
         std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

std::vector<std::string> variable_names(graph::Graph& g) {
  std::vector<std::string> names;
  for (const graph::Tensor& v : g.variables()) names.push_back(std::get<graph::VariableAttrs>(v.node().attrs).var_name);
  return names;
}

class Checkpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("checkpoint");
    trainer_ = std::make_unique<train::SimpleTrainer>(device(), 5);
    train::launch_train_with_config(tiny_config(3, 2), *trainer_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string dir_;
  std::unique_ptr<train::SimpleTrainer> trainer_;
};

TEST_F(Checkpoints, RoundTripEveryVariableBitForBit) {
  graph::Session& s = trainer_->session();
  s.set_hyperparameter("learning_rate", 0.0625f);
  const std::string path = callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);
  EXPECT_EQ(fs::path(path).filename(), "model-6.safetensors");
  EXPECT_EQ(callbacks::latest_checkpoint(dir_), path);

  const callbacks::Checkpoint c = callbacks::load_checkpoint(path);
  const std::vector<std::string> names = variable_names(trainer_->graph());
  EXPECT_EQ(c.variables.size(), names.size());
  bool has_slot = false;
  for (const std::string& name : names) {
    ASSERT_TRUE(c.variables.count(name)) << name;
    EXPECT_TRUE(same_bits(c.variables.at(name), s.variable(name))) << name;
    has_slot |= name.find("/Momentum") != std::string::npos;
  }
  EXPECT_TRUE(has_slot) << "optimizer slots are saved too";
  EXPECT_TRUE(c.variables.count("bn/mean/EMA")) << "moving averages are saved too";
  EXPECT_EQ(c.info.global_step, 6);
  EXPECT_EQ(c.info.epoch, 2);
  EXPECT_EQ(c.info.hyperparameters.at("learning_rate"), 0.0625f);
}

TEST_F(Checkpoints, FileLayoutIsSafetensors) {
  // An independent reader of the format: u64 little-endian header size, a JSON header
  // of {name: {dtype, shape, data_offsets}}, then the data, packed in order.
  graph::Session& s = trainer_->session();
  const std::string path = callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);
  const std::string file = read_all(path);
  ASSERT_GE(file.size(), 8u);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[static_cast<std::size_t>(i)]);
  ASSERT_LE(8 + n, file.size());
  const nlohmann::json header = nlohmann::json::parse(file.substr(8, n));
  EXPECT_EQ(header.at("__metadata__").at("global_step"), "6");
  const std::size_t data = 8 + n;
  std::uint64_t covered = 0;
  for (const std::string& name : variable_names(trainer_->graph())) {
    const nlohmann::json& t = header.at(name);
    const Array expected = s.variable(name);
    EXPECT_EQ(t.at("dtype"), "F32") << name;
    EXPECT_EQ(t.at("shape").get<std::vector<std::int64_t>>(), expected.shape().dims()) << name;
    const auto offsets = t.at("data_offsets").get<std::vector<std::uint64_t>>();
    ASSERT_EQ(offsets[1] - offsets[0], expected.nbytes()) << name;
    EXPECT_EQ(0, std::memcmp(file.data() + data + offsets[0], expected.bytes().data(), expected.nbytes())) << name;
    covered += offsets[1] - offsets[0];
  }
  EXPECT_EQ(data + covered, file.size());
}

TEST_F(Checkpoints, KeepsTheNewestMaxToKeep) {
  graph::Session& s = trainer_->session();
  for (int step : {10, 20, 30, 40}) {
    s.set_global_step(static_cast<std::uint64_t>(step));
    callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, step / 10), 2);
  }
  EXPECT_EQ(test::sorted_file_names(dir_), (std::vector<std::string>{"checkpoint", "model-30.safetensors", "model-40.safetensors"}));
  EXPECT_EQ(callbacks::latest_checkpoint(dir_), dir_ + "/model-40.safetensors");
  EXPECT_EQ(callbacks::load_checkpoint(callbacks::latest_checkpoint(dir_)).info.epoch, 4);
}

// A TrainConfig naming a log directory that does not exist yet (README.md's
// "train_log/mine" on a first run): the trainer makes it, and the monitors write there.
TEST(LogDirectory, ATrainConfigsDirectoryIsMadeWhenMissing) {
  const std::string root = temp_dir("made-logdir");
  const std::string dir = root + "/train_log/mine";
  train::TrainConfig config = tiny_config(2, 1);
  config.logger_dir = dir;
  config.monitors = train::default_monitors();
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_TRUE(fs::exists(fs::path(dir) / "stats.json"));
  fs::remove_all(root);
}

// tensorpack's get_all_checkpoints and get_checkpoint_path.
TEST_F(Checkpoints, AllOfADirectoryByStepAndAPathFromAFileOrADirectory) {
  graph::Session& s = trainer_->session();
  for (int step : {200, 1000, 30}) {  // the index names the last saved, not the highest step
    s.set_global_step(static_cast<std::uint64_t>(step));
    callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 1), 0);
  }
  std::ofstream(dir_ + "/model-99999999999999999999.safetensors") << "not ours: its step is past int64";
  std::ofstream(dir_ + "/model-7.safetensors.tmp") << "not a checkpoint";
  using Found = std::vector<std::pair<std::string, std::int64_t>>;
  EXPECT_EQ(callbacks::all_checkpoints(dir_), (Found{{dir_ + "/model-30.safetensors", 30},
                                                     {dir_ + "/model-200.safetensors", 200},
                                                     {dir_ + "/model-1000.safetensors", 1000}}));
  EXPECT_TRUE(callbacks::all_checkpoints(dir_ + "/missing").empty());
  EXPECT_EQ(callbacks::checkpoint_path(dir_), dir_ + "/model-30.safetensors") << "the index's";
  EXPECT_EQ(callbacks::checkpoint_path(dir_ + "/model-30.safetensors"), dir_ + "/model-30.safetensors");
  fs::remove(fs::path(dir_) / "checkpoint");
  EXPECT_EQ(callbacks::checkpoint_path(dir_), dir_ + "/model-1000.safetensors") << "no index: the newest";
  const std::string empty = temp_dir("no-checkpoints");
  try {
    callbacks::checkpoint_path(empty);
    ADD_FAILURE() << "an empty directory has no checkpoint";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::not_found);
    EXPECT_NE(std::string(e.what()).find(empty + " holds no checkpoint"), std::string::npos) << e.what();
  }
  EXPECT_THROW(callbacks::checkpoint_path(empty + "/nothing"), Error);
  fs::remove_all(empty);
}

TEST_F(Checkpoints, PruningLeavesALaterRunsFilesAndTheIndexNeverNamesADeletedOne) {
  // A directory kept from a longer run holds model-100 and model-200; this run saves 10,
  // 20, 30 keeping 2: its own oldest goes, the other run's stay, the index names 30.
  graph::Session& s = trainer_->session();
  auto save = [&](int step) {
    s.set_global_step(static_cast<std::uint64_t>(step));
    return callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 1), 2);
  };
  save(100);
  save(200);
  for (int step : {10, 20, 30}) EXPECT_EQ(callbacks::latest_checkpoint(dir_), save(step));
  for (const char* kept : {"model-20", "model-30", "model-100", "model-200"})
    EXPECT_TRUE(fs::exists(dir_ + "/" + kept + ".safetensors")) << kept;
  EXPECT_FALSE(fs::exists(dir_ + "/model-10.safetensors"));
  EXPECT_EQ(callbacks::load_checkpoint(callbacks::latest_checkpoint(dir_)).info.global_step, 30);
}

TEST_F(Checkpoints, MissingAndCorruptFilesAreNamed) {
  const std::string missing = dir_ + "/model-1.safetensors";
  try {
    callbacks::load_checkpoint(missing);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  graph::Session& s = trainer_->session();
  const std::string path = callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);
  const std::string whole = read_all(path);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(whole.data(), static_cast<std::streamsize>(whole.size() - 10));
  try {
    callbacks::load_checkpoint(path);
    FAIL() << "a truncated checkpoint loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(train::SmartInit(dir_ + "/nothing-here"), Error);
  fs::create_directories(dir_ + "/empty");
  try {
    train::SmartInit(dir_ + "/empty");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
}

// An index from elsewhere naming a path out of its directory is refused, never followed,
// even where that path holds a valid checkpoint.
TEST_F(Checkpoints, AnIndexNamingAPathOutsideItsDirectoryIsRefused) {
  graph::Session& s = trainer_->session();
  const std::string path = callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);
  const fs::path outside = fs::path(dir_).parent_path() / ("outside-" + fs::path(dir_).filename().string() + ".safetensors");
  fs::copy_file(path, outside, fs::copy_options::overwrite_existing);
  fs::create_directories(dir_ + "/sub");
  fs::copy_file(path, dir_ + "/sub/model-1.safetensors");
  for (const std::string& name : {std::string("../") + outside.filename().string(), outside.string(),
                                  std::string("sub/model-1.safetensors"), std::string(".."), std::string("")}) {
    SCOPED_TRACE(name);
    std::ofstream(dir_ + "/checkpoint", std::ios::trunc) << "model_checkpoint_path: \"" << name << "\"\n";
    for (int resume = 0; resume < 2; ++resume) {
      try {
        resume == 0 ? callbacks::latest_checkpoint(dir_) : callbacks::resume_checkpoint(dir_);
        ADD_FAILURE() << "followed";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::bad_data);
        EXPECT_NE(std::string(e.what()).find(dir_ + "/checkpoint"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("without a path"), std::string::npos) << e.what();
      }
    }
  }
  fs::remove(outside);
}

// An index line naming 200000 bytes: the first reader matched it with std::regex, which
// recurses per character in libstdc++ and crashed on the stack. Now a clear error (the
// named file is missing); an index over 1 MiB is not read at all.
TEST_F(Checkpoints, AnIndexWithAnOverlongLineIsAClearErrorNotACrash) {
  graph::Session& s = trainer_->session();
  callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);
  std::ofstream(dir_ + "/checkpoint", std::ios::trunc) << "model_checkpoint_path: \"" << std::string(200000, 'a')
                                                        << "\"\n";
  EXPECT_THROW(callbacks::resume_checkpoint(dir_), Error);
  std::ofstream(dir_ + "/checkpoint", std::ios::trunc) << std::string(callbacks::kMaxCheckpointIndexBytes + 1, '#');
  try {
    callbacks::latest_checkpoint(dir_);
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find(dir_ + "/checkpoint is 1048577 bytes"), std::string::npos) << e.what();
  }
}

// The step, epoch and hyperparameters of a checkpoint's metadata: the first reader took
// "12abc" as 12 and cut an epoch of 2^32 + 1 to 1 (stoll, then int).
TEST_F(Checkpoints, MetadataNumbersMustBeWholeAndInRange) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"global_step", "12abc"}, {"global_step", "-3"}, {"epoch", "4294967297"}, {"local_step", " 5"},
           {"hyperparameter/learning_rate", "inf"}, {"hyperparameter/learning_rate", "0.1x"}}) {
    SCOPED_TRACE(key + "=" + value);
    TensorFile file;
    file.metadata = {{"format", "vkpack checkpoint 1"}, {"global_step", "7"}, {"epoch", "1"}};
    file.metadata[key] = value;
    file.tensors.emplace_back("w", Array(DType::f32, Shape{1}));
    const std::string path = dir_ + "/model-7.safetensors";
    fs::create_directories(dir_);
    write_safetensors(path, file);
    try {
      callbacks::load_checkpoint(path);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_data);
      EXPECT_NE(std::string(e.what()).find(path + ": metadata " + key + " is '" + value + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST_F(Checkpoints, SaverRestoreRestoresVariablesStepAndHyperparameters) {
  graph::Session& s = trainer_->session();
  s.set_hyperparameter("learning_rate", 0.03f);
  const std::string path = callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);

  train::SimpleTrainer fresh(device(), 77);  // other initial values
  train::TrainConfig config = tiny_config(3, 0);  // no epochs: build, restore, stop
  config.session_init = train::SmartInit(dir_);
  train::launch_train_with_config(std::move(config), fresh);
  for (const std::string& name : variable_names(trainer_->graph()))
    EXPECT_TRUE(same_bits(fresh.session().variable(name), s.variable(name))) << name;
  EXPECT_EQ(fresh.session().hyperparameter("learning_rate"), 0.03f);
  // The step goes to a session that counts its own (a trainer's sessions read the
  // trainer's, which AutoResumeTrainConfig sets from the checkpoint).
  graph::Session standalone(trainer_->graph(), device());
  train::SmartInit(dir_)->init(standalone);
  EXPECT_EQ(standalone.global_step(), 6u);
  (void)path;
}

TEST_F(Checkpoints, MismatchNamesTheVariableUnlessIgnored) {
  graph::Session& s = trainer_->session();
  std::map<std::string, Array> values;
  values.emplace("fc0/W", Array(DType::f32, Shape{6, 9}));  // [6, 8] in the graph
  values.emplace("fc1/b", Array(DType::f32, Shape{3}));
  try {
    train::DictRestore(values).init(s);
    FAIL() << "a [6, 9] value restored a [6, 8] variable";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fc0/W"), std::string::npos) << e.what();
  }
  values.emplace("no/such/var", Array(DType::f32, Shape{1}));
  const Array before = s.variable("fc0/W");
  train::DictRestore(values, /*ignore_mismatch=*/true).init(s);
  EXPECT_TRUE(same_bits(s.variable("fc0/W"), before));
  const Array b = s.variable("fc1/b");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.data<float>()[i], 0.0f);  // Array zero-fills
  values.erase("fc0/W");
  try {
    train::DictRestore(values).init(s);
    FAIL() << "a variable the graph lacks was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/var"), std::string::npos) << e.what();
  }
}

// A diverged model is neither written nor loaded unless asked for: the error names the
// variable, the count and the first index, and nothing is written.
TEST_F(Checkpoints, NonFiniteVariablesAreNotSavedOrRestoredUnlessAllowed) {
  graph::Session& s = trainer_->session();
  Array w = s.variable("fc1/W");
  w.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  w.data<float>()[7] = -std::numeric_limits<float>::infinity();
  s.set_variable("fc1/W", w);
  try {
    callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);
    FAIL() << "a NaN model was saved";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fc1/W has 2 NaN or infinite value(s), the first at index 5"), std::string::npos) << what;
  }
  EXPECT_TRUE(callbacks::latest_checkpoint(dir_).empty());
  EXPECT_TRUE(fs::is_empty(dir_));
  const std::string path = callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0, /*allow_non_finite=*/true);

  trainer_->session().set_variable("fc1/W", Array(DType::f32, w.shape()));
  try {
    train::SaverRestore(path).init(s);
    FAIL() << "a NaN checkpoint was restored";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("variable fc1/W in " + path + " has 2 NaN"), std::string::npos) << what;
  }
  EXPECT_EQ(s.variable("fc1/W").data<float>()[5], 0.0f) << "nothing restored";
  train::SaverRestore(path, false, /*allow_non_finite=*/true).init(s);
  EXPECT_TRUE(std::isnan(s.variable("fc1/W").data<float>()[5]));
}

// One flipped bit in a tensor's bytes is found on restore, naming the file and tensor
// (the checksums live in the header's metadata: the file stays plain safetensors).
TEST_F(Checkpoints, AFlippedBitIsFoundNamingTheFileAndTensor) {
  graph::Session& s = trainer_->session();
  const std::string path = callbacks::save_checkpoint(s, dir_, callbacks::session_info(s, 2), 0);
  std::string file = read_all(path);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[static_cast<std::size_t>(i)]);
  const nlohmann::json header = nlohmann::json::parse(file.substr(8, n));
  EXPECT_EQ(header.at("__metadata__").at("crc32c/fc0/W").get<std::string>().size(), 8u);
  const auto offsets = header.at("fc0/W").at("data_offsets").get<std::vector<std::uint64_t>>();
  file[8 + n + offsets[0] + 13] ^= 0x04;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(file.data(), static_cast<std::streamsize>(file.size()));
  try {
    callbacks::load_checkpoint(path);
    FAIL() << "a damaged checkpoint loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find(path + ": tensor fc0/W is damaged"), std::string::npos) << e.what();
  }
}

TEST(LoggerDir, ActionsOnAnExistingDirectory) {
  const std::string dir = temp_dir("logdir");
  auto write = [](const std::string& path) { std::ofstream(path) << "old"; };
  write(dir + "/old.txt");
  { train::LoggerDir keep(dir, train::DirAction::keep); }
  EXPECT_TRUE(fs::exists(dir + "/old.txt"));
  {
    train::LoggerDir d(dir, train::DirAction::remove);
    EXPECT_FALSE(fs::exists(dir + "/old.txt"));
    const LogLevel level = logger().level();
    logger().set_level(LogLevel::info);  // whatever VKPACK_LOG_LEVEL says
    log_info("a line for log.log");
    logger().set_level(level);
  }
  EXPECT_NE(read_all(dir + "/log.log").find("a line for log.log"), std::string::npos);
  write(dir + "/old.txt");
  std::string fresh_path;
  {
    train::LoggerDir fresh(dir, train::DirAction::fresh);
    fresh_path = fresh.path();
    EXPECT_NE(fresh_path, dir);
    EXPECT_TRUE(fs::exists(dir + "/old.txt"));
  }
  {
    train::LoggerDir backup(dir, train::DirAction::backup);
    EXPECT_FALSE(fs::exists(dir + "/old.txt"));
  }
  bool backed_up = false;
  for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path())) {
    const std::string p = e.path().string();
    if (p.rfind(dir + ".", 0) == 0 && p != fresh_path) backed_up |= fs::exists(p + "/old.txt");
  }
  EXPECT_TRUE(backed_up);
  EXPECT_EQ(train::parse_dir_action("k"), train::DirAction::keep);
  EXPECT_EQ(train::parse_dir_action("new"), train::DirAction::fresh);
  EXPECT_THROW(train::parse_dir_action("x"), Error);
  for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path()))
    if (e.path().string().rfind(dir, 0) == 0) fs::remove_all(e.path());
}

TEST(LoggerDir, AskWithoutATerminalIsAnError) {
  const std::string dir = temp_dir("logdir-ask");
  std::ofstream(dir + "/old.txt") << "old";
  ASSERT_NE(std::freopen("/dev/null", "r", stdin), nullptr);  // never a terminal here
  try {
    train::LoggerDir d(dir, train::DirAction::ask);
    FAIL() << "asked without a terminal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a terminal"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(dir + "/old.txt"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
