// A program built against an installed vkpack, through the umbrella header alone: C = A B
// on device 0, checked by hand.
#include <vkpack/vkpack.h>

#include <cstdio>
#include <vector>

int main() {
  vkp::vk::Instance instance;
  vkp::vk::Device device(instance, 0, {.pipeline_cache_dir = ""});
  vkp::vk::Arena arena(device, vkp::vk::MemoryUse::device, "consumer");
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};     // 2 x 3
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};  // 3 x 2
  vkp::vk::GemmArgs args;
  args.m = 2;
  args.n = 2;
  args.k = 3;
  const auto da = arena.allocate(24, "a"), db = arena.allocate(24, "b"), dc = arena.allocate(16, "c");
  const auto work = arena.allocate(vkp::vk::gemm_workspace_bytes(args, device) + 4, "work");
  vkp::vk::upload(device, da, std::as_bytes(std::span(a)));
  vkp::vk::upload(device, db, std::as_bytes(std::span(b)));
  vkp::vk::Recording recording(device);
  vkp::vk::gemm(recording, args, {da, db, dc, work});
  recording.finish();
  recording.run();
  std::vector<float> c(4);
  vkp::vk::download(device, dc, std::as_writable_bytes(std::span(c)));
  const std::vector<float> want = {58, 64, 139, 154};
  if (c != want) {
    std::printf("wrong: %g %g %g %g\n", c[0], c[1], c[2], c[3]);
    return 1;
  }
  std::printf("consumer: C = [58 64; 139 154] on %s\n", device.info().name.c_str());
  return 0;
}
