// core/env.h: one policy for every VKPACK_* variable: unset or empty is the default, a
// value it takes is read, anything else is an error naming the variable, the value and
// what it takes.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "scoped_env.h"
#include "core/env.h"
#include "core/error.h"

namespace vkp::test {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    return e.what();
  }
  return "";
}

TEST(Env, UnsetOrEmptyIsTheDefault) {
  ScopedEnv unset("VKPACK_TEXEL_BUFFERS", nullptr);
  EXPECT_FALSE(env::flag("VKPACK_TEXEL_BUFFERS"));
  ScopedEnv empty("VKPACK_MEMORY", "");
  EXPECT_FALSE(env::choice("VKPACK_MEMORY"));
  EXPECT_FALSE(env::text("VKPACK_MEMORY"));
}

TEST(Env, ValuesAVariableTakesAreRead) {
  {
    ScopedEnv off("VKPACK_TEXEL_BUFFERS", "0");
    EXPECT_EQ(env::flag("VKPACK_TEXEL_BUFFERS"), false);
  }
  {
    ScopedEnv on("VKPACK_TEXEL_BUFFERS", "1");
    EXPECT_EQ(env::flag("VKPACK_TEXEL_BUFFERS"), true);
  }
  ScopedEnv staged("VKPACK_MEMORY", "staged");
  EXPECT_EQ(env::choice("VKPACK_MEMORY"), "staged");
  ScopedEnv timeout("VKPACK_MPI_TIMEOUT", "2.5");
  EXPECT_EQ(env::seconds("VKPACK_MPI_TIMEOUT"), 2.5);
}

TEST(Env, AnyOtherValueIsAnErrorNamingTheVariableAndWhatItTakes) {
  {
    ScopedEnv banana("VKPACK_TEXEL_BUFFERS", "banana");  // once silently "on"
    EXPECT_EQ(error_of([] { env::flag("VKPACK_TEXEL_BUFFERS"); }), "VKPACK_TEXEL_BUFFERS is 'banana'; it takes 0 or 1");
    EXPECT_EQ(error_of(env::check_all), "VKPACK_TEXEL_BUFFERS is 'banana'; it takes 0 or 1");
  }
  {
    ScopedEnv loud("VKPACK_LOG_LEVEL", "loud");
    EXPECT_EQ(error_of(env::check_all), "VKPACK_LOG_LEVEL is 'loud'; it takes debug, info, warn or error");
  }
  {
    ScopedEnv sometimes("VKPACK_TUNE", "sometimes");
    EXPECT_EQ(error_of(env::check_all), "VKPACK_TUNE is 'sometimes'; it takes on, off or auto");
  }
  for (const char* bad : {"soon", "-1", "3s", "nan"}) {
    ScopedEnv timeout("VKPACK_MPI_TIMEOUT", bad);
    EXPECT_EQ(error_of([] { env::seconds("VKPACK_MPI_TIMEOUT"); }),
              std::string("VKPACK_MPI_TIMEOUT is '") + bad + "'; it takes a number of seconds >= 0 (0: wait forever)");
  }
  ScopedEnv none("VKPACK_TEXEL_BUFFERS", nullptr);
  EXPECT_EQ(error_of(env::check_all), "");
}

TEST(Env, EveryVariableIsListedOnceInOrderWithWhatItTakes) {
  const auto vars = env::variables();
  ASSERT_GE(vars.size(), 8u);
  for (std::size_t i = 0; i < vars.size(); ++i) {
    EXPECT_EQ(vars[i].name.substr(0, 7), "VKPACK_");
    EXPECT_FALSE(vars[i].takes.empty()) << vars[i].name;
    EXPECT_FALSE(vars[i].meaning.empty()) << vars[i].name;
    if (i > 0) {
      EXPECT_LT(vars[i - 1].name, vars[i].name);
    }
  }
  // A name outside the list is a mistake in vkpack, not in the environment.
  EXPECT_THROW(env::text("VKPACK_NOT_A_VARIABLE"), Error);
}

}  // namespace
}  // namespace vkp::test
