// LowerContext: what an op's lower() sees when a program is compiled: concrete types,
// the storage of its inputs, output and workspace, and the recording to add kernels to.
#pragma once

#include <span>

#include "engine/graph/graph.h"
#include "engine/vk/device.h"
#include "engine/vk/memory.h"
#include "engine/vk/recording.h"

namespace vkp::graph {

struct LowerContext {
  vk::Recording& recording;
  const Graph& graph;
  const Node& node;
  std::span<const TensorType> in_types;   // concrete
  const TensorType& out_type;             // concrete
  std::span<const vk::BufferSlice> in;    // a variable input is its persistent storage
  vk::BufferSlice out;                    // empty for side-effect ops
  vk::BufferSlice workspace;              // OpDef::workspace bytes (or 4)
  vk::BufferSlice scalars;                // run counter, global step, hyperparameters

  vk::Device& device() const { return recording.device(); }
  template <class A>
  const A& attrs() const { return std::get<A>(node.attrs); }
};

}  // namespace vkp::graph
