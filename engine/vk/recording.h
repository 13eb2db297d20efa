// Recording: kernel dispatches and copies recorded into a command buffer once and
// replayed many times (docs/design.md section 3).
//
// Per replay the host only submits and waits: per-step values (learning rate, step
// counter, seeds) must live in device buffers, never in the push constants recorded
// here. Barriers are placed automatically: a command that reads or writes a byte range
// written since the last barrier (or writes one read since it) gets a barrier first.
// With timestamps on, each dispatch's and copy's device time can be read after a replay.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/vk/command_times.h"
#include "engine/vk/descriptors.h"
#include "engine/vk/handle.h"
#include "engine/vk/hazards.h"
#include "engine/vk/memory.h"

namespace vkp::vk {

class Device;
class Kernel;

struct Groups {
  std::uint32_t x = 1, y = 1, z = 1;
};

struct RecordingOptions {
  std::string name;          // for messages
  bool timestamps = false;   // write a timestamp after every dispatch
  // For the device's transfer queue (Queues::has_transfer_queue): copies only,
  // synchronised at the transfer stage, submitted with Queues::submit_transfer.
  bool transfer = false;
};

// A command pool of queue family `family` holding one primary command buffer, which is
// freed with the pool.
struct CommandBufferOwner {
  CommandPoolHandle pool;
  VkCommandBuffer buffer = VK_NULL_HANDLE;
};
CommandBufferOwner make_command_buffer(const Device& device, std::uint32_t family, VkCommandPoolCreateFlags flags = 0);

class Recording {
 public:
  Recording(Device& device, RecordingOptions options = {});
  ~Recording();  // waits for its last submission
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // --- recording ---
  // Binds bindings[i] to binding i of `kernel`: a storage buffer or, where the kernel
  // declares a textureBuffer, an R32G32B32A32_SFLOAT texel buffer view of the slice
  // (R16G16B16A16_SFLOAT for a float16 one; it must be texel_readable). `push` must be
  // exactly the kernel's push-constant block (its C++ mirror struct). Throws
  // Error(unsupported) when `groups` exceeds the device's workgroup-count limits or a
  // binding its storage-buffer range.
  void dispatch(const Kernel& kernel, std::span<const BufferSlice> bindings,
                std::span<const std::byte> push, Groups groups, std::string_view label = {});
  template <class Push>
  void dispatch(const Kernel& kernel, std::initializer_list<BufferSlice> bindings, const Push& push,
                Groups groups, std::string_view label = {}) {
    static_assert(std::is_trivially_copyable_v<Push>, "push constants must be a plain struct");
    dispatch(kernel, std::span<const BufferSlice>(bindings.begin(), bindings.size()),
             std::as_bytes(std::span<const Push>(&push, 1)), groups, label);
  }
  template <class Push>
  void dispatch(const Kernel& kernel, std::span<const BufferSlice> bindings, const Push& push, Groups groups,
                std::string_view label = {}) {
    static_assert(std::is_trivially_copyable_v<Push>, "push constants must be a plain struct");
    dispatch(kernel, bindings, std::as_bytes(std::span<const Push>(&push, 1)), groups, label);
  }
  // vkCmdCopyBuffer of src.size bytes; dst.size >= src.size.
  void copy(const BufferSlice& src, const BufferSlice& dst, std::string_view label = "copy");
  // Names what the commands recorded from now on compute (a graph node), for
  // times().kernel_times(); empty: nothing.
  void set_node(std::string_view node) { times_.set_node(node); }
  // Ends recording; the recording can then be submitted any number of times.
  void finish();

  // --- replay ---
  // Submits the recorded commands (after waiting for this recording's previous
  // submission, since a command buffer is not pending twice); returns the timeline
  // value reached on completion. `after`: a value of the other queue's timeline to
  // wait for on the device (the transfer timeline for a compute recording, the compute
  // timeline for a transfer one); 0 for none.
  std::uint64_t submit(std::uint64_t after = 0);
  void wait();
  // Whether the last submission has completed (true when never submitted); no wait.
  bool done() const;
  // Submits recordings of one device in one vkQueueSubmit, each as its own batch
  // signalling the device timeline in turn (Queues::submit_batches), so that the host
  // can wait for recording i and read its results while the later ones run. Each
  // recording starts with a full barrier, which orders it after the ones before.
  static void submit_in_order(std::span<Recording* const> recordings, std::uint64_t after_transfer = 0);
  void run() {
    submit();
    wait();
  }

  Device& device() const { return *device_; }
  // The timeline value of the last submission (0: never submitted).
  std::uint64_t last_submission() const { return last_submit_; }
  // The commands' names and, with timestamps, their device times (CommandTimes).
  const CommandTimes& times() const { return times_; }

 private:
  void before_access(std::span<const ByteRange> reads, std::span<const ByteRange> writes);
  void wait_for(std::uint64_t value) const;  // on this recording's queue's timeline
  void barrier();

  Device* device_;
  RecordingOptions options_;
  CommandPoolHandle pool_;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;  // freed with pool_
  Descriptors descriptors_;
  CommandTimes times_;
  Hazards hazards_;  // since the last barrier
  bool finished_ = false;
  std::uint64_t last_submit_ = 0;
};

}  // namespace vkp::vk
