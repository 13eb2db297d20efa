// ProgramFeeds: where a compiled program's feeds go. Each variant has its own input
// memory, written by the host through its mapping, or through staging buffers whose
// copies run first in the variant's recording or, on a device with a transfer queue, in
// an upload recording of their own, submitted as soon as the feeds are written so that
// the next step's inputs go up while the current step runs (StagingInput).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/array.h"
#include "engine/graph/feed_checks.h"
#include "engine/vk/recording.h"

namespace vkp::graph {

class ProgramFeeds {
 public:
  // --- built by compile() ---
  void set_checks(FeedChecks checks) { checks_ = std::move(checks); }
  // The next variant's: where the host writes each feed, and its upload recording
  // (nullptr: the copies, if any, are in the variant's own recording).
  void add_variant(std::vector<std::byte*> hosts, std::unique_ptr<vk::Recording> upload);

  const FeedChecks& checks() const { return checks_; }
  bool on_transfer_queue() const { return !uploads_.empty(); }

  // Checks `value` (FeedChecks) and writes it as feed `index` of `variant`, once that
  // variant's last upload has read the staging memory.
  void write(std::size_t index, const Array& value, int variant);
  // With uploads: submits the variant's upload, after the variant's last run (which read
  // its inputs) on the compute timeline.
  void send(int variant);
  // The transfer timeline value a run of `variant` waits for: its upload, sent now if the
  // feeds written since were not (0 without uploads).
  std::uint64_t ready_for_run(int variant);
  // A run of `variant` reaches `compute_value` on the compute timeline.
  void ran(int variant, std::uint64_t compute_value);

 private:
  FeedChecks checks_;
  std::vector<std::vector<std::byte*>> hosts_;  // by variant: where each feed is written
  // By variant, with uploads: the recording, the transfer timeline value its last
  // submission reaches, whether the feeds written since have been sent, and the compute
  // timeline value of the variant's last run.
  std::vector<std::unique_ptr<vk::Recording>> uploads_;
  std::vector<std::uint64_t> ready_, last_run_;
  std::vector<char> sent_;
};

}  // namespace vkp::graph
