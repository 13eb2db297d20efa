#include "engine/vk/kernels/reduce.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "engine/vk/kernels/copy.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

constexpr std::uint32_t kWorkgroup = 64;       // reduce: outputs per workgroup
constexpr std::uint32_t kRowsWorkgroup = 256;  // reduce_rows: invocations per output
// Split the axis into partial reductions until this many outputs run in parallel...
constexpr std::uint64_t kParallelOutputs = 4096;
// ... but never into chunks shorter than this.
constexpr std::uint32_t kMinChunk = 256;

// The chunk length of the first pass: the whole axis when the outputs alone fill the
// device, otherwise pieces so that outputs x pieces reach kParallelOutputs.
std::uint32_t first_chunk(const ReduceArgs& args) {
  if (args.op == ReduceOp::argmax) return std::max(args.axis, 1u);
  const std::uint64_t outputs = std::uint64_t{args.outer} * args.inner;
  if (outputs >= kParallelOutputs || args.axis <= kMinChunk) return std::max(args.axis, 1u);
  const std::uint64_t pieces = (kParallelOutputs + outputs - 1) / outputs;
  const std::uint64_t chunk = (args.axis + pieces - 1) / pieces;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(chunk, kMinChunk));
}

std::uint32_t chunks_of(std::uint32_t axis, std::uint32_t chunk) { return (axis + chunk - 1) / chunk; }

// One pass: `outer` x `axis` x args.inner elements of x reduced along the axis in pieces
// of `chunk`, each piece's result (times `scale`) into y.
struct Pass {
  std::uint32_t outer, axis, chunk;
  float scale;
};

void record_pass(Recording& recording, const ReduceArgs& args, const Pass& pass, const BufferSlice& x,
                 const BufferSlice& y) {
  const std::uint32_t outer = pass.outer, axis = pass.axis, chunk = pass.chunk;
  const float scale = pass.scale;
  Device& device = recording.device();
  const std::uint32_t op = args.op == ReduceOp::argmax            ? 2
                           : args.op == ReduceOp::max             ? 1
                           : args.op == ReduceOp::count_nonfinite ? 3
                                                                  : 0;
  const ReducePush push{outer, axis, args.inner, chunk, scale};
  const std::uint64_t outputs = std::uint64_t{outer} * chunks_of(axis, chunk) * args.inner;
  if (args.inner == 1 && args.op != ReduceOp::argmax && resolve(args.choice, device) == DeviceKind::gpu) {
    const BufferSlice bindings[] = {x, y};
    const Kernel& kernel = storage_kernel(
        device,
        {shaders::reduce_rows, shaders::reduce_rows_texel, shaders::reduce_rows_f16, shaders::reduce_rows_texel_f16},
        0b01, bindings, {{0, kRowsWorkgroup}, {1, op}});
    recording.dispatch(kernel, bindings, push, grid_1d(outputs, device), "reduce");
  } else {
    const BufferSlice bindings[] = {x, y};
    const Kernel& kernel =
        storage_kernel(device, {shaders::reduce, shaders::reduce_texel, shaders::reduce_f16, shaders::reduce_texel_f16},
                       0b01, bindings, {{0, kWorkgroup}, {1, op}});
    recording.dispatch(kernel, bindings, push, grid_1d((outputs + kWorkgroup - 1) / kWorkgroup, device), "reduce");
  }
}

std::uint32_t to_u32(std::int64_t v, const Shape& shape) {
  if (v > UINT32_MAX)
    throw Error(ErrorCode::unsupported, "reduce: shape " + to_string(shape) + " is too large for 32-bit indexing");
  return static_cast<std::uint32_t>(v);
}

}  // namespace

ReduceArgs reduce_axis_args(ReduceOp op, const Shape& shape, int axis) {
  const int a = axis < 0 ? axis + shape.rank() : axis;
  if (a < 0 || a >= shape.rank())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("reduce: axis {} is out of range for shape {}", axis, to_string(shape)));
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < a; ++i) outer *= shape[i];
  for (int i = a + 1; i < shape.rank(); ++i) inner *= shape[i];
  if (shape[a] == 0 && op != ReduceOp::sum)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("reduce: max, mean or argmax over the empty axis {} of {}", axis, to_string(shape)));
  return {op, to_u32(outer, shape), to_u32(shape[a], shape), to_u32(inner, shape)};
}

ReduceArgs reduce_all_args(ReduceOp op, const Shape& shape) {
  if (shape.numel() == 0 && op != ReduceOp::sum)
    throw Error(ErrorCode::invalid_argument, "reduce: max, mean or argmax of the empty shape " + to_string(shape));
  return {op, 1, to_u32(shape.numel(), shape), 1};
}

std::size_t reduce_workspace_bytes(const ReduceArgs& args, const Device&) {
  const std::uint32_t chunk = first_chunk(args);
  if (chunk >= args.axis) return 0;
  return std::size_t{args.outer} * chunks_of(args.axis, chunk) * args.inner * sizeof(float);
}

void reduce(Recording& recording, const ReduceArgs& args, const BufferSlice& x, const BufferSlice& y,
            const BufferSlice& workspace) {
  const std::uint64_t outputs = std::uint64_t{args.outer} * args.inner;
  require_elements(x, outputs * args.axis, "reduce", "x");
  require_elements(y, outputs, "reduce", "y");
  if (outputs == 0) return;
  const float scale = args.op == ReduceOp::mean ? 1.0f / static_cast<float>(args.axis) : 1.0f;
  if (args.axis == 0) {  // the sum over nothing
    fill(recording, y, outputs, 0.0f);
    return;
  }
  const std::uint32_t chunk = first_chunk(args);
  if (chunk >= args.axis) {
    record_pass(recording, args, {args.outer, args.axis, args.axis, scale}, x, y);
    return;
  }
  const std::uint32_t pieces = chunks_of(args.axis, chunk);
  if (workspace.size < reduce_workspace_bytes(args, recording.device()))
    throw Error(ErrorCode::invalid_argument, fmt::format("reduce: workspace of {} bytes, needs {}", workspace.size,
                                                         reduce_workspace_bytes(args, recording.device())));
  record_pass(recording, args, {args.outer, args.axis, chunk, 1.0f}, x, workspace);
  ReduceArgs merge = args;  // the partial counts of non-finite elements add up
  if (args.op == ReduceOp::count_nonfinite) merge.op = ReduceOp::sum;
  record_pass(recording, merge, {args.outer, pieces, pieces, scale}, workspace, y);
}

}  // namespace vkp::vk
