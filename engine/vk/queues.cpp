#include "engine/vk/queues.h"

#include <vector>

#include "core/error.h"
#include "engine/vk/internal/check.h"

namespace vkp::vk {
namespace {

SemaphoreHandle make_timeline(const DeviceFns& fn, VkDevice device) {
  VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type_info.initialValue = 0;
  VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  semaphore_info.pNext = &type_info;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  check(fn.vkCreateSemaphore(device, &semaphore_info, nullptr, &semaphore), "vkCreateSemaphore");
  return {device, semaphore, fn.vkDestroySemaphore};
}

// Makes `submit` wait for `value` of `semaphore` (at the stages of copies and kernels)
// when value > 0; the arrays must outlive the submission call.
void add_wait(VkSubmitInfo& submit, VkTimelineSemaphoreSubmitInfo& timeline, const VkSemaphore* semaphore,
              const std::uint64_t* value, const VkPipelineStageFlags* stages) {
  if (*value == 0) return;
  timeline.waitSemaphoreValueCount = 1;
  timeline.pWaitSemaphoreValues = value;
  submit.waitSemaphoreCount = 1;
  submit.pWaitSemaphores = semaphore;
  submit.pWaitDstStageMask = stages;
}

constexpr VkPipelineStageFlags kWaitStages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;

}  // namespace

Queues::Queues(const DeviceFns& fn, VkDevice device, QueueSlot compute, std::optional<QueueSlot> transfer,
               std::string label)
    : fn_(fn), device_(device), label_(std::move(label)) {
  compute_.family = compute.family;
  fn_.vkGetDeviceQueue(device, compute.family, compute.index, &compute_.queue);
  compute_.timeline = make_timeline(fn_, device);
  if (transfer) {
    transfer_.family = transfer->family;
    fn_.vkGetDeviceQueue(device, transfer->family, transfer->index, &transfer_.queue);
    transfer_.timeline = make_timeline(fn_, device);
  }
}

void Queues::simulate_loss(std::uint64_t after) {
  std::lock_guard lock(compute_.mutex);
  submits_until_loss_ = after;
}

void Queues::check_simulated_loss() {
  if (submits_until_loss_ == UINT64_MAX) return;
  if (submits_until_loss_ == 0) throw Error(ErrorCode::device_lost, label_ + " was lost (vkQueueSubmit; simulated)");
  --submits_until_loss_;
}

std::uint64_t Queues::submit(std::span<const VkCommandBuffer> buffers, std::uint64_t after_transfer) {
  std::lock_guard lock(compute_.mutex);
  check_simulated_loss();
  const std::uint64_t value = compute_.submitted + 1;
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &value;
  const VkSemaphore semaphore = compute_.timeline.get();
  const VkSemaphore transfer = transfer_.timeline.get();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.pNext = &timeline;
  submit.commandBufferCount = static_cast<std::uint32_t>(buffers.size());
  submit.pCommandBuffers = buffers.data();
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &semaphore;
  VKP_CHECK(after_transfer == 0 || has_transfer_queue(), "a wait for transfers on a device without a transfer queue");
  add_wait(submit, timeline, &transfer, &after_transfer, &kWaitStages);
  const VkResult result = fn_.vkQueueSubmit(compute_.queue, 1, &submit, VK_NULL_HANDLE);
  if (result == VK_ERROR_DEVICE_LOST) throw Error(ErrorCode::device_lost, label_ + " was lost (vkQueueSubmit)");
  check(result, "vkQueueSubmit");
  compute_.submitted = value;
  return value;
}

std::uint64_t Queues::submit_batches(std::span<const VkCommandBuffer> buffers, std::uint64_t after_transfer) {
  VKP_CHECK(!buffers.empty(), "submit_batches with no command buffers");
  std::lock_guard lock(compute_.mutex);
  check_simulated_loss();
  const std::size_t n = buffers.size();
  const VkSemaphore semaphore = compute_.timeline.get();
  std::vector<std::uint64_t> values(n);
  std::vector<VkTimelineSemaphoreSubmitInfo> timelines(n, {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO});
  std::vector<VkSubmitInfo> submits(n, {VK_STRUCTURE_TYPE_SUBMIT_INFO});
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = compute_.submitted + 1 + i;
    timelines[i].signalSemaphoreValueCount = 1;
    timelines[i].pSignalSemaphoreValues = &values[i];
    submits[i].pNext = &timelines[i];
    submits[i].commandBufferCount = 1;
    submits[i].pCommandBuffers = &buffers[i];
    submits[i].signalSemaphoreCount = 1;
    submits[i].pSignalSemaphores = &semaphore;
  }
  const VkSemaphore transfer = transfer_.timeline.get();
  add_wait(submits[0], timelines[0], &transfer, &after_transfer, &kWaitStages);
  const VkResult result =
      fn_.vkQueueSubmit(compute_.queue, static_cast<std::uint32_t>(n), submits.data(), VK_NULL_HANDLE);
  if (result == VK_ERROR_DEVICE_LOST) throw Error(ErrorCode::device_lost, label_ + " was lost (vkQueueSubmit)");
  check(result, "vkQueueSubmit");
  compute_.submitted = values.back();
  return values.front();
}

std::uint64_t Queues::submit_transfer(VkCommandBuffer buffer, std::uint64_t after_compute) {
  VKP_CHECK(has_transfer_queue(), label_ + " has no transfer queue");
  // A stand-in on the compute queue shares its lock: a VkQueue is used by one thread at a time.
  const bool separate = transfer_queue_is_separate();
  std::lock_guard lock(separate ? transfer_.mutex : compute_.mutex);
  if (separate) {
    std::lock_guard loss(compute_.mutex);
    check_simulated_loss();
  } else {
    check_simulated_loss();
  }
  const std::uint64_t value = transfer_.submitted + 1;
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &value;
  const VkSemaphore signal = transfer_.timeline.get(), compute = compute_.timeline.get();
  constexpr VkPipelineStageFlags stages = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.pNext = &timeline;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &buffer;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &signal;
  add_wait(submit, timeline, &compute, &after_compute, &stages);
  const VkResult result = fn_.vkQueueSubmit(transfer_.queue, 1, &submit, VK_NULL_HANDLE);
  if (result == VK_ERROR_DEVICE_LOST)
    throw Error(ErrorCode::device_lost, label_ + " was lost (vkQueueSubmit, transfer)");
  check(result, "vkQueueSubmit");
  transfer_.submitted = value;
  return value;
}

void Queues::wait_transfer(std::uint64_t value) { wait_on(transfer_.timeline.get(), value); }

bool Queues::transfer_reached(std::uint64_t value) const { return counter(transfer_.timeline.get()) >= value; }

void Queues::wait_on(VkSemaphore semaphore, std::uint64_t value) {
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore;
  info.pValues = &value;
  const VkResult result = fn_.vkWaitSemaphores(device_, &info, UINT64_MAX);
  if (result == VK_ERROR_DEVICE_LOST) throw Error(ErrorCode::device_lost, label_ + " was lost (vkWaitSemaphores)");
  check(result, "vkWaitSemaphores");
}

std::uint64_t Queues::counter(VkSemaphore semaphore) const {
  std::uint64_t now = 0;
  check(fn_.vkGetSemaphoreCounterValue(device_, semaphore, &now), "vkGetSemaphoreCounterValue");
  return now;
}

void Queues::wait(std::uint64_t value) { wait_on(compute_.timeline.get(), value); }

bool Queues::reached(std::uint64_t value) const { return counter(compute_.timeline.get()) >= value; }

void Queues::wait_idle() {
  std::uint64_t last = 0;
  {
    std::lock_guard lock(compute_.mutex);
    last = compute_.submitted;
  }
  wait(last);
}

}  // namespace vkp::vk
