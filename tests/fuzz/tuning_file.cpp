// Fuzz target: the tuning file (<device>.tuning.json) as TuningCache reads it: refused
// with a reason, or choices that write and read back the same.
#include "fuzz_target.h"

#include <cstdlib>
#include <string_view>

#include "engine/vk/cache_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string driver = "llvmpipe 22.3.6 Mesa";
  return vkp::fuzz::expect_clean([&] {
    std::string why;
    const auto choices = vkp::vk::tuning_choices(text, driver, why);
    if (!choices) {
      if (why.empty()) std::abort();
      return;
    }
    const auto again = vkp::vk::tuning_choices(vkp::vk::tuning_file(driver, *choices), driver, why);
    if (!again || *again != *choices) std::abort();
  });
}
