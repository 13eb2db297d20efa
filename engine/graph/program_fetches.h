// ProgramFetches: where the host reads a compiled program's fetches (their memory's
// mapping, or a read-back copy made at the end of a run), in buckets when the program
// has segments (CompileOptions::segments), and which of them the pending run has
// already copied out, so that wait() copies only the rest.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.h"
#include "engine/graph/tensor_type.h"

namespace vkp::graph {

class ProgramFetches {
 public:
  // --- built by compile() ---
  // The next fetch: its type, and where the host reads it once its run has reached it.
  void add(const TensorType& type, const std::byte* host);
  // Fetch indices by bucket, in the order the program computes them.
  void set_buckets(std::vector<std::vector<int>> buckets);
  // The next bucket is complete at the end of recording `recording`.
  void end_bucket(int recording) { bucket_recording_.push_back(recording); }

  std::size_t size() const { return types_.size(); }
  int bucket_count() const { return static_cast<int>(buckets_.size()); }
  const std::vector<int>& bucket(int s) const { return buckets_.at(static_cast<std::size_t>(s)); }
  int bucket_recording(int s) const { return bucket_recording_.at(static_cast<std::size_t>(s)); }

  // A run is submitted: none of its fetches delivered yet.
  void begin_run();
  // Copies bucket s's fetches into outputs[i] (outputs sized like the fetches, each
  // reallocated only when its shape changes), noting them delivered.
  void copy_bucket(int s, std::vector<Array>& outputs);
  // Copies the fetches the run has not delivered, and begins the count again.
  void copy_rest(std::vector<Array>& outputs);

 private:
  std::vector<TensorType> types_;
  std::vector<const std::byte*> hosts_;
  std::vector<std::vector<int>> buckets_;
  std::vector<int> bucket_recording_;  // by bucket: the recording it ends
  // By fetch: copied out by copy_bucket this run; empty until a bucket is first copied
  // (a program without segments never sizes or clears it).
  std::vector<char> delivered_;
};

}  // namespace vkp::graph
