#include "engine/vk/kernels/elementwise_chain.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

constexpr std::uint32_t kWorkgroup = 64, kPerInvocation = 4;

void fail(const std::string& what) { throw Error(ErrorCode::invalid_argument, "elementwise_chain: " + what); }

}  // namespace

void elementwise_chain(Recording& recording, std::span<const ChainStep> steps, std::span<const BufferSlice> inputs,
                       std::span<const ChainInput> modes, ChainExtent extent, const BufferSlice& out) {
  const auto [n, channels] = extent;
  if (steps.empty() || steps.size() > kMaxChainSteps) fail(std::to_string(steps.size()) + " steps (1 to 8)");
  if (inputs.empty() || inputs.size() > kMaxChainInputs || modes.size() != inputs.size())
    fail(std::to_string(inputs.size()) + " inputs with " + std::to_string(modes.size()) + " modes (1 to 4 each)");
  if (n > UINT32_MAX) fail(std::to_string(n) + " elements exceed 2^32");
  for (std::size_t s = 0; s < steps.size(); ++s) {
    auto check = [&](std::uint32_t operand) {
      if (operand < 4 ? operand >= inputs.size() : operand - 4 >= s)
        fail("step " + std::to_string(s) + " reads operand " + std::to_string(operand) +
             ", neither an input nor an earlier step");
    };
    check(steps[s].a);
    if (steps[s].op >= 32) check(steps[s].b);
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (modes[k] == ChainInput::channel && (channels == 0 || n % channels != 0))
      fail("input " + std::to_string(k) + " runs along a last axis of " + std::to_string(channels) +
           ", which does not divide " + std::to_string(n));
    const std::uint64_t need = modes[k] == ChainInput::full ? n : modes[k] == ChainInput::channel ? channels : 1;
    require_elements(inputs[k], need, "elementwise_chain", "input " + std::to_string(k));
  }
  require_elements(out, n, "elementwise_chain", "out");
  if (n == 0) return;
  std::vector<SpecConstant> constants{{0, static_cast<std::uint32_t>(steps.size())},
                                      {29, static_cast<std::uint32_t>(inputs.size())},
                                      {30, kPerInvocation}};
  ChainPush push{static_cast<std::uint32_t>(n), channels, {}};
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const auto i = static_cast<std::uint32_t>(s);
    constants.push_back({1 + i, steps[s].op});
    constants.push_back({9 + i, steps[s].a});
    constants.push_back({17 + i, steps[s].b});
    push.alpha[s] = steps[s].alpha;
  }
  for (std::size_t k = 0; k < modes.size(); ++k)
    constants.push_back({25 + static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(modes[k])});
  std::vector<BufferSlice> bindings(inputs.begin(), inputs.end());
  while (bindings.size() < kMaxChainInputs) bindings.push_back(inputs[0]);
  bindings.push_back(out);
  Device& device = recording.device();
  const Kernel& kernel = storage_kernel(device,
                                        {shaders::elementwise_chain, shaders::elementwise_chain_texel,
                                         shaders::elementwise_chain_f16, shaders::elementwise_chain_texel_f16},
                                        0b01111, bindings, std::move(constants));
  const std::uint64_t workgroups = (n + kWorkgroup * kPerInvocation - 1) / (kWorkgroup * kPerInvocation);
  recording.dispatch(kernel, bindings, std::as_bytes(std::span(&push, 1)), grid_1d(workgroups, device),
                     "elementwise_chain");
}

}  // namespace vkp::vk
