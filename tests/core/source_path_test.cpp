// project_path: a source file's path from vkpack's top folder, whatever the build made of it.
#include "core/source_path.h"

#include <gtest/gtest.h>

namespace vkp {
namespace {

TEST(ProjectPath, StartsAtTheFirstTopLevelFolder) {
  EXPECT_EQ(project_path("/home/me/vkpack/engine/vk/memory.cpp"), "engine/vk/memory.cpp");
  EXPECT_EQ(project_path("../towers/mpi_reduce.cpp"), "towers/mpi_reduce.cpp") << "ccache's relative paths";
  EXPECT_EQ(project_path("/src/vkpack/tests/train/trainer_test.cpp"), "tests/train/trainer_test.cpp")
      << "the first match: tests/, not train/ inside it";
  EXPECT_EQ(project_path("core/error.cpp"), "core/error.cpp");
  EXPECT_EQ(project_path("/work/mycore/app.cpp"), "/work/mycore/app.cpp") << "a folder that only begins with core";
  EXPECT_EQ(project_path("/home/me/app/main.cpp"), "/home/me/app/main.cpp") << "not vkpack's: kept whole";
  EXPECT_EQ(project_path("engine"), "engine");
  EXPECT_EQ(project_path(""), "");
}

}  // namespace
}  // namespace vkp
