// Minimal SPIR-V reflection: what vkpack needs to build a pipeline from a module and to
// check that the C++ side agrees with the shader.
//
// Reads the descriptor bindings of set 0 (whether each is read-only, which the recorder
// uses to place barriers, and whether it is a storage or a uniform texel buffer), the
// push-constant block's size and member offsets (checked against the C++ mirror
// struct), and the workgroup size with the specialization-constant ids that override it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

namespace vkp::vk {

// What a texel-buffer binding's fetches return: textureBuffer, utextureBuffer,
// itextureBuffer (bound as R32G32B32A32_SFLOAT, _UINT, _SINT views).
enum class TexelSampled : std::uint8_t { float32, uint32, int32 };

struct SpirvBinding {
  std::uint32_t binding = 0;
  bool readonly = false;   // every declaration of it is NonWritable
  bool texel = false;      // a textureBuffer (uniform texel buffer); otherwise a storage buffer
  TexelSampled sampled = TexelSampled::float32;  // of a texel binding
};

struct SpirvLocalSize {
  std::uint32_t value = 1;       // the default (or the literal size)
  std::int32_t spec_id = -1;     // the specialization constant that overrides it, if any
};

struct SpirvReflection {
  std::vector<SpirvBinding> bindings;             // set 0, sorted by binding, no gaps
  std::uint32_t push_constant_bytes = 0;          // 0 when the module has none
  std::vector<std::uint32_t> push_constant_offsets;  // by member
  std::array<SpirvLocalSize, 3> local_size{};
  // Reads gl_NumWorkGroups: its dispatches cannot be split into several with a base
  // (Recording::dispatch), which would change what it reads.
  bool uses_num_workgroups = false;
};

// Throws Error(bad_data) naming `name` on a malformed module, a binding outside set 0, or
// gaps in the binding numbers.
SpirvReflection reflect_spirv(std::span<const std::uint32_t> words, std::string_view name);

// Bytes of workgroup (shared) memory the module declares once specialized with
// `spec_values` (specialization-constant id -> value); checked against
// maxComputeSharedMemorySize when a kernel is built.
std::uint64_t spirv_shared_memory_bytes(std::span<const std::uint32_t> words, std::string_view name,
                                        const std::map<std::uint32_t, std::uint32_t>& spec_values = {});

}  // namespace vkp::vk
