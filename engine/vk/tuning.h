// TuningCache: kernel choices measured on a device once and kept on disk, beside the
// pipeline cache, so that the next run of the same device and driver takes them without
// measuring again. A choice is a variant's name under a key that names the kernel and
// the shape class it was measured for ("gemm m4096 n4096 k4096 ...").
//
// Tuning is on for GPUs and off for CPU devices unless DeviceOptions::tune or
// VKPACK_TUNE says otherwise (the one place that variable is read): `VKPACK_TUNE=off`
// gives every kernel its fixed rule, for runs that must pick the same kernels on any
// machine; `on` measures on CPU devices too.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace vkp::vk {

struct PhysicalDeviceInfo;

enum class TuneMode {
  automatic,  // VKPACK_TUNE if set, else on for GPUs and off for CPU devices
  on,         // measure on first use and keep the choice
  off,        // the fixed rules; nothing measured, read or written
};
// A shape class's extent: `v` rounded up to a power of two (choices are measured once
// for all the shapes of a class).
inline std::uint32_t shape_bucket(std::uint32_t v) { return std::bit_ceil(std::max(v, 1u)); }

// "on", "off" or "auto" (also 1 and 0); Error(invalid_argument) naming `what` otherwise.
TuneMode parse_tune_mode(std::string_view text, std::string_view what);

class TuningCache {
 public:
  // Reads <dir>/<vendor>-<device>-<uuid>.tuning.json when tuning is on and the file was
  // written for this driver (driver name and version inside it); a file for another
  // driver, or one that does not parse, is ignored with a warning and replaced on the
  // next choice. An empty dir keeps the choices in memory.
  TuningCache(const PhysicalDeviceInfo& info, std::string dir, bool enabled);

  bool enabled() const { return enabled_; }
  const std::string& path() const { return path_; }
  // The choice kept under `key`, if any. Thread-safe.
  std::optional<std::string> get(const std::string& key) const;
  // Keeps `choice` under `key` and writes the file (atomically: a crash leaves the old
  // one); a write that fails is logged, the choice still kept in memory.
  void put(const std::string& key, const std::string& choice);
  std::size_t size() const;
  // Choices measured by this object (not read from the file), for tests and reports.
  std::uint64_t measured() const { return measured_; }
  // Held while a choice is looked up and, if missing, measured and put: a second Device
  // that needs the same choice waits for it instead of measuring again.
  std::unique_lock<std::mutex> lock_measurement() { return std::unique_lock(measuring_); }

 private:
  void save() const;  // with mutex_ held

  bool enabled_;
  std::string path_, driver_;
  mutable std::mutex mutex_;
  std::mutex measuring_;
  std::map<std::string, std::string> choices_;
  std::uint64_t measured_ = 0;
};

// The cache of `info`'s device and driver in `dir`, one per process while any Device
// holds it: Devices opened on the same physical device (towers on one GPU) share their
// choices, so that replicas run the same kernels and agree bit for bit. Disabled: a
// cache of its own that keeps nothing.
std::shared_ptr<TuningCache> open_tuning_cache(const PhysicalDeviceInfo& info, const std::string& dir, bool enabled);

}  // namespace vkp::vk
