// CommandTimes: what a recording's commands are called and, with timestamps on, the
// timestamp written after each, read back as device times per command after a replay.
#pragma once

#include <vulkan/vulkan_core.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/vk/handle.h"

namespace vkp::vk {

class Device;

struct KernelTime {
  std::string label;    // the kernel's (or "copy")
  double ns = 0;        // device time from the end of the previous command to the end of this one
  std::string node;     // what set_node named when it was recorded (a graph node); may be empty
  double begin_ns = 0;  // where that time begins, from the recording's first timestamp
  bool copy = false;    // a vkCmdCopyBuffer, not a dispatch
};

class CommandTimes {
 public:
  CommandTimes() = default;  // for nothing, until assigned
  // For the commands recorded into `commands` on `device`; with `timestamps`, makes the
  // query pool and writes the first timestamp (before any command). `name`: the
  // recording's, for messages.
  CommandTimes(Device& device, VkCommandBuffer commands, std::string name, bool timestamps);

  // Names what the commands recorded from now on compute (a graph node), for
  // kernel_times(); empty: nothing.
  void set_node(std::string_view node) { node_ = node; }
  // Notes a dispatch or copy just recorded and, with timestamps, writes one after it.
  void note(std::string_view label, bool copy);
  // The recording has been submitted: its timestamps can be read once it completes.
  void submitted() { submitted_ = true; }

  std::size_t dispatch_count() const;
  // Device time per dispatch and copy of the last completed replay, in recorded order;
  // needs timestamps on (empty otherwise, or before a replay). Each begins where the one
  // before ends: they add up to the replay. The first 4095 commands only (the timestamp
  // pool's size; a warning names the rest). Waits for the replay.
  std::vector<KernelTime> kernel_times() const;
  // Sum of kernel_times().
  double total_ns() const;
  // The device clock at the replay's first timestamp (before its first command), in
  // ticks of DeviceLimits::timestamp_period_ns: comparable between recordings of one
  // queue; 0 without timestamps or a replay.
  std::uint64_t start_ticks() const;

 private:
  std::vector<std::uint64_t> read_ticks(std::uint32_t count) const;  // the last replay's first `count`
  // Of noted_, those with a timestamp after them: all but those beyond the pool's size.
  std::size_t stamped() const { return timestamps_ ? std::min<std::size_t>(noted_.size(), capacity_ - 1) : 0; }

  struct Command {
    std::string label, node;
    bool copy = false;
  };
  Device* device_ = nullptr;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  std::string name_;
  bool timestamps_ = false;
  bool submitted_ = false;
  QueryPoolHandle queries_;
  std::uint32_t capacity_ = 0;
  std::vector<Command> noted_;  // every dispatch and copy, in order
  std::string node_;
};

}  // namespace vkp::vk
