// json_nesting_depth against depths counted by hand, brackets in strings and escapes.
#include "core/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace vkp {
namespace {

TEST(JsonNestingDepth, CountsArraysAndObjectsNotStrings) {
  EXPECT_EQ(json_nesting_depth("12"), 0u);
  EXPECT_EQ(json_nesting_depth(R"("[[[{")"), 0u);
  EXPECT_EQ(json_nesting_depth("[]"), 1u);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": [2]}], "c": []})"), 4u);
  EXPECT_EQ(json_nesting_depth(R"([{"epoch_num": 1, "loss": 0.5}, {"epoch_num": 2}])"), 2u);
  // An escaped quote does not end the string; an escaped backslash before a quote does.
  EXPECT_EQ(json_nesting_depth(R"(["a\"[[[", "b\\", [[]]])"), 3u);
  // Closing brackets beyond the opened ones do not go below zero.
  EXPECT_EQ(json_nesting_depth("]]]][[]"), 2u);
  EXPECT_EQ(json_nesting_depth(std::string(100000, '[')), 100000u);
}

}  // namespace
}  // namespace vkp
