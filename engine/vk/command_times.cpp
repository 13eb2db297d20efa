#include "engine/vk/command_times.h"

#include "core/error.h"
#include "core/log.h"
#include "engine/vk/device.h"
#include "engine/vk/internal/check.h"

namespace vkp::vk {

CommandTimes::CommandTimes(Device& device, VkCommandBuffer commands, std::string name, bool timestamps)
    : device_(&device), commands_(commands), name_(std::move(name)), timestamps_(timestamps) {
  if (!timestamps_) return;
  const DeviceFns& fn = device.fn();
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  capacity_ = 4096;
  query_info.queryCount = capacity_;
  VkQueryPool queries = VK_NULL_HANDLE;
  check(fn.vkCreateQueryPool(device.handle(), &query_info, nullptr, &queries), "vkCreateQueryPool");
  queries_ = {device.handle(), queries, fn.vkDestroyQueryPool};
  fn.vkCmdResetQueryPool(commands_, queries, 0, capacity_);
  fn.vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 0);
}

void CommandTimes::note(std::string_view label, bool copy) {
  noted_.push_back({std::string(label), node_, copy});
  if (!timestamps_) return;
  const auto query = static_cast<std::uint32_t>(noted_.size());
  if (query >= capacity_) {  // the rest goes untimed rather than failing the program
    if (query == capacity_)
      log_warn("recording '{}' times its first {} dispatches and copies only", name_, capacity_ - 1);
    return;
  }
  device_->fn().vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_.get(), query);
}

std::size_t CommandTimes::dispatch_count() const {
  return static_cast<std::size_t>(
      std::count_if(noted_.begin(), noted_.end(), [](const Command& c) { return !c.copy; }));
}

std::vector<std::uint64_t> CommandTimes::read_ticks(std::uint32_t count) const {
  if (!timestamps_ || !submitted_) return {};
  std::vector<std::uint64_t> ticks(count);
  check(device_->fn().vkGetQueryPoolResults(device_->handle(), queries_.get(), 0, count,
                                            ticks.size() * sizeof(std::uint64_t), ticks.data(), sizeof(std::uint64_t),
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  return ticks;
}

std::vector<KernelTime> CommandTimes::kernel_times() const {
  std::vector<KernelTime> times;
  const std::size_t timed = stamped();
  const std::vector<std::uint64_t> ticks = read_ticks(static_cast<std::uint32_t>(timed + 1));
  if (ticks.empty()) return times;
  const double period = device_->limits().timestamp_period_ns;
  for (std::size_t i = 0; i < timed; ++i)
    times.push_back({noted_[i].label, static_cast<double>(ticks[i + 1] - ticks[i]) * period, noted_[i].node,
                     static_cast<double>(ticks[i] - ticks[0]) * period, noted_[i].copy});
  return times;
}

std::uint64_t CommandTimes::start_ticks() const {
  const std::vector<std::uint64_t> ticks = read_ticks(1);
  return ticks.empty() ? 0 : ticks[0];
}

double CommandTimes::total_ns() const {
  double total = 0;
  for (const KernelTime& t : kernel_times()) total += t.ns;
  return total;
}

}  // namespace vkp::vk
