// AtomicFile and crash points: a file is either the old one or the new one, whatever
// kills the writer; the temporaries a killed writer leaves are removed at the next start.
// The kills are real (SIGKILL from a crash point, in a death-test child process).
#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dir_listing.h"
#include "core/crash_point.h"
#include "core/error.h"

namespace vkp {
namespace {

namespace fs = std::filesystem;

// Named for the test, not the process: a death-test child re-runs the test in a process
// of its own and must write where its parent looks.
struct TempDir {
  TempDir()
      : path(fs::temp_directory_path() /
             ("vkpack-atomic-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
              std::to_string(getuid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> names() const { return test::sorted_file_names(path); }
  fs::path path;
};

std::string contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes "new" over `target` in a death-test child that VKPACK_CRASH_AT kills at `point`.
void expect_killed_writing(const std::string& target, const char* point) {
  EXPECT_EXIT(
      {
        setenv("VKPACK_CRASH_AT", point, 1);
        write_file_atomically(target, "new");
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "");
}

class AtomicFileTest : public ::testing::Test {
 protected:
  // A child re-runs this test alone, so the variable is read first in the child.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(AtomicFileTest, CommitReplacesAndAnAbandonedWriteLeavesTheOldFile) {
  const TempDir dir;
  const std::string target = (dir.path / "stats.json").string();
  write_file_atomically(target, "old");
  {
    AtomicFile f(target);
    f.write(std::string_view("new but never committed"));
  }
  EXPECT_EQ(contents(target), "old");
  EXPECT_EQ(dir.names(), std::vector<std::string>{"stats.json"}) << "the temporary was not removed";
  write_file_atomically(target, "new");
  EXPECT_EQ(contents(target), "new");
  EXPECT_THROW(AtomicFile((dir.path / "missing" / "x").string()), Error);
}

TEST_F(AtomicFileTest, AKillBeforeTheRenameLeavesTheOldFileAndATemporaryTheNextStartRemoves) {
  const TempDir dir;
  const std::string target = (dir.path / "model-12.safetensors").string();
  std::ofstream(target) << "old";  // not through AtomicFile: the child reads the variable first
  expect_killed_writing(target, "before-rename/model-12.safetensors");
  EXPECT_EQ(contents(target), "old");
  const std::vector<std::string> left = dir.names();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_TRUE(left[1].starts_with("model-12.safetensors.tmp.")) << left[1];
  EXPECT_EQ(contents(dir.path / left[1]), "new") << "the kill came after the bytes were written";

  // A temporary of a live writer (this process) stays; the dead writer's goes.
  AtomicFile live(target);
  const std::vector<std::string> removed = remove_stale_temporaries(dir.path.string());
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(fs::path(removed[0]).filename(), left[1]);
  EXPECT_EQ(dir.names().size(), 2u) << "the live writer's temporary was removed";
}

TEST_F(AtomicFileTest, AKillAfterTheRenameLeavesTheNewFile) {
  const TempDir dir;
  const std::string target = (dir.path / "checkpoint").string();
  std::ofstream(target) << "old";
  expect_killed_writing(target, "after-rename/checkpoint");
  EXPECT_EQ(contents(target), "new");
  EXPECT_EQ(dir.names(), std::vector<std::string>{"checkpoint"});
}

TEST_F(AtomicFileTest, ACrashPointKillsOnItsArmedPassAndNoOther) {
  EXPECT_EXIT(
      {
        setenv("VKPACK_CRASH_AT", "step/7#3", 1);
        crash_point("step/7");
        crash_point("step/8");
        crash_point("step/7");
        std::exit(crash_points_armed() ? 3 : 4);
      },
      ::testing::ExitedWithCode(3), "");
  EXPECT_EXIT(
      {
        setenv("VKPACK_CRASH_AT", "step/7#3", 1);
        for (int i = 0; i < 3; ++i) crash_point("step/7");
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  EXPECT_EXIT(
      {
        setenv("VKPACK_CRASH_AT", "step/7#0", 1);
        try {
          crash_point("step/7");
        } catch (const Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(5);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(5), "the pass after '#' must be a whole number from 1");
}

}  // namespace
}  // namespace vkp
