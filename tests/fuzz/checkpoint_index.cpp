// Fuzz target: a log directory's `checkpoint` index as a resumed run reads it, beside
// one valid checkpoint the index may name (model-3.safetensors) or not.
#include "fuzz_target.h"

#include <cstdlib>
#include <filesystem>

#include "callbacks/checkpoint_file.h"

namespace {

const vkp::fuzz::Scratch& directory() {
  static const vkp::fuzz::Scratch scratch;
  static const bool saved = [] {
    vkp::Array w(vkp::DType::f32, vkp::Shape{2});
    w.data<float>()[0] = 1.5f;
    w.data<float>()[1] = -2.0f;
    vkp::callbacks::save_checkpoint({"w"}, {std::move(w)}, scratch.dir().string(), {.global_step = 3, .epoch = 1}, 0);
    return true;
  }();
  (void)saved;
  return scratch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const vkp::fuzz::Scratch& scratch = directory();
  scratch.write(vkp::callbacks::kCheckpointIndex, data, size);
  return vkp::fuzz::expect_clean([&] {
    const std::string chosen = vkp::callbacks::resume_checkpoint(scratch.dir().string());
    // Whatever it chose lies in the directory: an index cannot point elsewhere.
    if (!chosen.empty() && std::filesystem::path(chosen).parent_path() != scratch.dir()) std::abort();
  });
}
