#include "engine/vk/recording.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "engine/vk/device.h"
#include "engine/vk/internal/check.h"
#include "engine/vk/kernel.h"

namespace vkp::vk {
CommandBufferOwner make_command_buffer(const Device& device, std::uint32_t family, VkCommandPoolCreateFlags flags) {
  const DeviceFns& fn = device.fn();
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = flags;
  pool_info.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  check(fn.vkCreateCommandPool(device.handle(), &pool_info, nullptr, &pool), "vkCreateCommandPool");
  CommandBufferOwner owner{{device.handle(), pool, fn.vkDestroyCommandPool}, VK_NULL_HANDLE};
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  check(fn.vkAllocateCommandBuffers(device.handle(), &alloc, &owner.buffer), "vkAllocateCommandBuffers");
  return owner;
}

Recording::Recording(Device& device, RecordingOptions options)
    : device_(&device), options_(std::move(options)), descriptors_(device) {
  const DeviceFns& fn = device.fn();
  VKP_CHECK(!options_.transfer || device.queues().has_transfer_queue(),
            "transfer recording '" + options_.name + "' on " + device.label() + ", which has no transfer queue");
  if (options_.transfer) options_.timestamps = false;
  CommandBufferOwner owner = make_command_buffer(
      device, options_.transfer ? device.queues().transfer_family() : device.queues().compute_family());
  pool_ = std::move(owner.pool);
  commands_ = owner.buffer;
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(fn.vkBeginCommandBuffer(commands_, &begin), "vkBeginCommandBuffer");
  if (options_.timestamps && !device.limits().timestamps) {
    log_warn("{}: no timestamps on this queue; recording '{}' will not be timed", device.label(), options_.name);
    options_.timestamps = false;
  }
  // Work of earlier submissions on this queue (another replay, an upload) is visible
  // to this one; host writes made before the submit are visible by the submit itself.
  barrier();
  times_ = CommandTimes(device, commands_, options_.name, options_.timestamps);
}

Recording::~Recording() {
  if (last_submit_ == 0) return;
  try {
    wait_for(last_submit_);
  } catch (const Error& e) {
    log_error("recording '{}': {}", options_.name, e.what());
  }
}

void Recording::barrier() {
  // A transfer queue may support no other stage.
  const VkPipelineStageFlags stages = options_.transfer ? kCopyStage : kWorkStages;
  VkMemoryBarrier memory{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory.srcAccessMask = options_.transfer ? kCopyWrites : kWrites;
  memory.dstAccessMask = options_.transfer ? kCopyAccess : kReadsAndWrites;
  device_->fn().vkCmdPipelineBarrier(commands_, stages, stages, 0, 1, &memory, 0, nullptr, 0, nullptr);
  hazards_.clear();
}

void Recording::before_access(std::span<const ByteRange> reads, std::span<const ByteRange> writes) {
  if (hazards_.conflict(reads, writes)) barrier();
  hazards_.add(reads, writes);
}

namespace {

// The arguments of a dispatch that the kernel cannot take, refused by name: a float16
// tensor bound where the kernel reads float32 (a wrong answer, not a fault; a texel
// binding reads either, its view's format says which), and a grid beyond
// maxComputeWorkGroupCount in a kernel that reads gl_NumWorkGroups (others are
// recorded as several dispatches with a base).
void check_dispatch(const Kernel& kernel, std::span<const BufferSlice> bindings, Groups groups, std::string_view label,
                    const Device& device) {
  for (std::size_t b = 0; b < bindings.size(); ++b)
    if (bindings[b].f16 && (b >= 32 || (kernel.f16_bindings() >> b & 1u) == 0) &&
        !(b < kernel.bindings().size() && kernel.bindings()[b].texel))
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("kernel {} ({}): binding {} holds float16 values, which this kernel reads as float32",
                              kernel.name(), label, b));
  const std::uint32_t counts[3] = {groups.x, groups.y, groups.z};
  for (int i = 0; i < 3; ++i)
    if (counts[i] > device.limits().max_workgroup_count[i] && kernel.uses_num_workgroups())
      throw Error(
          ErrorCode::unsupported,
          fmt::format("kernel {} ({}): {} workgroups in dimension {} exceed the {} of {} "
                      "(maxComputeWorkGroupCount)",
                      kernel.name(), label, counts[i], i, device.limits().max_workgroup_count[i], device.label()));
}

// Binding `i` as a storage buffer: within maxStorageBufferRange, a buffer of at least a
// byte, at an offset of minStorageBufferOffsetAlignment. A texel binding must pass too,
// as the plain build it stands in for would have to.
void check_storage_binding(const Kernel& kernel, std::size_t i, const BufferSlice& b, std::string_view label,
                           const Device& device) {
  const DeviceLimits& limits = device.limits();
  if (b.size > limits.max_storage_buffer_range)
    throw Error(ErrorCode::unsupported,
                fmt::format("kernel {} ({}): binding {} spans {} bytes; {} allows at most {} per binding "
                            "(maxStorageBufferRange)",
                            kernel.name(), label, i, b.size, device.label(), limits.max_storage_buffer_range));
  if (b.buffer == VK_NULL_HANDLE || b.size == 0)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("kernel {} ({}): binding {} is {}", kernel.name(), label, i,
                            b.buffer == VK_NULL_HANDLE ? "not a buffer" : "empty (Vulkan binds at least 1 byte)"));
  if (b.offset % limits.min_storage_buffer_offset_alignment != 0)
    throw Error(
        ErrorCode::invalid_argument,
        fmt::format("kernel {} ({}): binding {} starts at byte {}, not a multiple of {} "
                    "(minStorageBufferOffsetAlignment of {})",
                    kernel.name(), label, i, b.offset, limits.min_storage_buffer_offset_alignment, device.label()));
}

// The grid, in pieces of at most maxComputeWorkGroupCount with a base where it is larger.
void record_grid(const DeviceFns& fn, VkCommandBuffer commands, Groups groups, const std::uint32_t* most) {
  for (std::uint32_t z = 0; z < groups.z; z += most[2])
    for (std::uint32_t y = 0; y < groups.y; y += most[1])
      for (std::uint32_t x = 0; x < groups.x; x += most[0]) {
        const std::uint32_t nx = std::min(most[0], groups.x - x), ny = std::min(most[1], groups.y - y),
                            nz = std::min(most[2], groups.z - z);
        if (x == 0 && y == 0 && z == 0 && nx == groups.x && ny == groups.y && nz == groups.z)
          fn.vkCmdDispatch(commands, nx, ny, nz);
        else
          fn.vkCmdDispatchBase(commands, x, y, z, nx, ny, nz);
      }
}

}  // namespace

void Recording::dispatch(const Kernel& kernel, std::span<const BufferSlice> bindings, std::span<const std::byte> push,
                         Groups groups, std::string_view label) {
  VKP_CHECK(!finished_, "dispatch after finish() in recording '" + options_.name + "'");
  VKP_CHECK(!options_.transfer, "dispatch in transfer recording '" + options_.name + "'");
  VKP_CHECK(bindings.size() == kernel.bindings().size(),
            fmt::format("kernel {} has {} bindings, dispatch gave {}", kernel.name(), kernel.bindings().size(),
                        bindings.size()));
  VKP_CHECK(push.size() == kernel.push_constant_bytes(),
            fmt::format("kernel {} takes {} bytes of push constants, dispatch gave {}", kernel.name(),
                        kernel.push_constant_bytes(), push.size()));
  if (groups.x == 0 || groups.y == 0 || groups.z == 0) {  // empty tensors: nothing to do
    check_dispatch(kernel, bindings, {1, 1, 1}, label, *device_);
    return;
  }
  check_dispatch(kernel, bindings, groups, label, *device_);
  const DeviceFns& fn = device_->fn();
  std::vector<ByteRange> reads, written;
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const BufferSlice& b = bindings[i];
    check_storage_binding(kernel, i, b, label, *device_);
    (kernel.bindings()[i].readonly ? reads : written).push_back({b.buffer, b.offset, b.offset + b.size});
  }
  const VkDescriptorSet set = descriptors_.write(kernel, bindings, label);
  before_access(reads, written);
  fn.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipeline());
  fn.vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.layout(), 0, 1, &set, 0, nullptr);
  if (!push.empty())
    fn.vkCmdPushConstants(commands_, kernel.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          static_cast<std::uint32_t>(push.size()), push.data());
  record_grid(fn, commands_, groups, device_->limits().max_workgroup_count);
  times_.note(label.empty() ? std::string_view(kernel.name()) : label, false);
}

void Recording::copy(const BufferSlice& src, const BufferSlice& dst, std::string_view label) {
  VKP_CHECK(!finished_, "copy after finish() in recording '" + options_.name + "'");
  if (dst.size < src.size)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("copy of {} bytes into a slice of {} bytes", src.size, dst.size));
  if (src.size == 0) return;
  const ByteRange read{src.buffer, src.offset, src.offset + src.size};
  const ByteRange write{dst.buffer, dst.offset, dst.offset + src.size};
  before_access({&read, 1}, {&write, 1});
  const VkBufferCopy region{src.offset, dst.offset, src.size};
  device_->fn().vkCmdCopyBuffer(commands_, src.buffer, dst.buffer, 1, &region);
  times_.note(label, true);
}

void Recording::finish() {
  VKP_CHECK(!finished_, "recording '" + options_.name + "' finished twice");
  // Results are read through mappings after the wait: make device writes visible to the host.
  VkMemoryBarrier memory{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory.srcAccessMask = options_.transfer ? kCopyWrites : kWrites;
  memory.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  device_->fn().vkCmdPipelineBarrier(commands_, options_.transfer ? kCopyStage : kWorkStages,
                                     VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &memory, 0, nullptr, 0, nullptr);
  check(device_->fn().vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
  finished_ = true;
}

std::uint64_t Recording::submit(std::uint64_t after) {
  VKP_CHECK(finished_, "recording '" + options_.name + "' submitted before finish()");
  if (last_submit_ != 0) wait_for(last_submit_);
  last_submit_ = options_.transfer ? device_->queues().submit_transfer(commands_, after)
                                   : device_->queues().submit({&commands_, 1}, after);
  times_.submitted();
  return last_submit_;
}

void Recording::wait_for(std::uint64_t value) const {
  if (options_.transfer)
    device_->queues().wait_transfer(value);
  else
    device_->queues().wait(value);
}

void Recording::submit_in_order(std::span<Recording* const> recordings, std::uint64_t after_transfer) {
  if (recordings.empty()) return;
  Device& device = *recordings[0]->device_;
  std::vector<VkCommandBuffer> buffers;
  for (Recording* r : recordings) {
    VKP_CHECK(r->finished_, "recording '" + r->options_.name + "' submitted before finish()");
    VKP_CHECK(r->device_ == &device, "recordings of two devices submitted together");
    VKP_CHECK(!r->options_.transfer, "transfer recording '" + r->options_.name + "' submitted in order");
    if (r->last_submit_ != 0) device.queues().wait(r->last_submit_);
    buffers.push_back(r->commands_);
  }
  const std::uint64_t first = device.queues().submit_batches(buffers, after_transfer);
  for (std::size_t i = 0; i < recordings.size(); ++i) {
    recordings[i]->last_submit_ = first + i;
    recordings[i]->times_.submitted();
  }
}

void Recording::wait() {
  if (last_submit_ != 0) wait_for(last_submit_);
}

bool Recording::done() const {
  if (last_submit_ == 0) return true;
  return options_.transfer ? device_->queues().transfer_reached(last_submit_) : device_->queues().reached(last_submit_);
}

}  // namespace vkp::vk
