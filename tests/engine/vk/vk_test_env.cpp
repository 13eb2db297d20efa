#include "vk_test_env.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/half.h"
#include "core/rng.h"
#include "engine/vk/kernels/gemm.h"

namespace vkp::test {
namespace {

// VKPACK_TEST_BEST_PRACTICES=1 turns on the validation layer's best-practices checks
// (scripts/test runs a leg so). These of its messages are intended, for the reasons
// docs/guide.md gives under "Validation"; any other fails the test as every message does.
constexpr std::string_view kIntendedBestPractices[] = {
    // A program's arena is a few blocks sized to its memory plan, a session's scalars one
    // 1 KiB block: small allocations by the layer's measure, each bound to one buffer.
    "UNASSIGNED-BestPractices-vkAllocateMemory-small-allocation",
    "UNASSIGNED-BestPractices-vkBindMemory-small-dedicated-allocation",
    // The debug messenger that reports these messages.
    "UNASSIGNED-BestPractices-vkCreateInstance-specialuse-extension-debugging",
};

bool best_practices() {
  const char* value = std::getenv("VKPACK_TEST_BEST_PRACTICES");
  return value && std::string_view(value) == "1";
}

bool intended(const std::string& text) {
  for (std::string_view id : kIntendedBestPractices)
    if (text.find(id) != std::string::npos) return true;
  return false;
}

struct Shared {
  std::unique_ptr<vk::Instance> instance;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<vk::Device> packed_f16_device;  // made on first use
  std::unique_ptr<vk::Device> without_matrix_units;  // made on first use
};

Shared& shared() {
  static Shared s = [] {
    Shared made;
    vk::InstanceOptions options;
    options.validation = true;
    options.best_practices = best_practices();
    options.on_message = [](const vk::ValidationMessage& m) {
      if (best_practices() && intended(m.text)) return;
      ADD_FAILURE() << "Vulkan " << (m.error ? "validation error" : "validation warning") << ": " << m.text;
    };
    made.instance = std::make_unique<vk::Instance>(options);
    made.device = std::make_unique<vk::Device>(*made.instance, device_index(), device_options());
    return made;
  }();
  return s;
}

}  // namespace

int device_index() {
  const char* value = std::getenv("VKPACK_TEST_DEVICE");
  return value ? std::atoi(value) : 0;
}

vk::DeviceOptions device_options() { return {.pipeline_cache_dir = VKPACK_TEST_CACHE_DIR}; }

vk::Instance& instance() { return *shared().instance; }
vk::Device& device() { return *shared().device; }

vk::Device& packed_f16_device() {
  Shared& s = shared();
  if (!s.packed_f16_device) {
    vk::DeviceOptions options = device_options();
    options.f16_storage = false;
    s.packed_f16_device = std::make_unique<vk::Device>(*s.instance, device_index(), options);
  }
  return *s.packed_f16_device;
}

vk::Device& device_without_matrix_units() {
  Shared& s = shared();
  if (!vk::has_matrix_units(*s.device)) return *s.device;
  if (!s.without_matrix_units) {
    vk::DeviceOptions options = device_options();
    options.cooperative_matrix = false;
    s.without_matrix_units = std::make_unique<vk::Device>(*s.instance, device_index(), options);
  }
  return *s.without_matrix_units;
}

vk::Arena& VkTest::arena() {
  if (!arena_) arena_ = std::make_unique<vk::Arena>(device(), vk::MemoryUse::device, "test");
  return *arena_;
}

vk::BufferSlice VkTest::upload(std::span<const float> values) {
  const vk::BufferSlice slice = arena().allocate(std::max<std::size_t>(values.size_bytes(), 4), "test input");
  vk::upload(device(), slice, std::as_bytes(values));
  return slice;
}

vk::BufferSlice VkTest::scratch(std::size_t count) {
  const std::vector<std::uint32_t> nan(std::max<std::size_t>(count, 1), 0x7fc00001u);
  const vk::BufferSlice slice = arena().allocate(nan.size() * 4, "test output");
  vk::upload(device(), slice, std::as_bytes(std::span(nan)));
  return slice;
}

std::vector<float> VkTest::download(const vk::BufferSlice& slice, std::size_t count) {
  std::vector<float> values(count);
  vk::download(device(), slice, std::as_writable_bytes(std::span(values)));
  return values;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float low, float high) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(low, high);
  return v;
}

vk::BufferSlice VkTest::put(const std::vector<float>& values, bool half) {
  if (!half) return upload(values);
  vk::BufferSlice slice = upload(pack_halves(values));
  slice.f16 = true;
  return slice;
}

std::vector<float> VkTest::get(const vk::BufferSlice& slice, std::size_t count) {
  if (!slice.f16) return download(slice, count);
  const std::vector<float> words = download(slice, (count + 1) / 2);
  std::vector<std::uint16_t> bits(words.size() * 2);
  std::memcpy(bits.data(), words.data(), words.size() * 4);
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = to_float(Half{bits[i]});
  return values;
}

std::vector<float> rounded_to_half(std::vector<float> values) {
  for (float& x : values) x = to_float(to_half(x));
  return values;
}

}  // namespace vkp::test
