#include "engine/vk/kernels/gather.h"

#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

std::uint64_t table_elements(const GatherPush& g) { return std::uint64_t{g.outer} * g.rows * g.inner; }
std::uint64_t gathered_elements(const GatherPush& g) { return std::uint64_t{g.outer} * g.count * g.inner; }

}  // namespace

void gather(Recording& recording, const GatherPush& geometry, const BufferSlice& table, const BufferSlice& indices,
            const BufferSlice& out) {
  require_elements(table, table_elements(geometry), "gather", "table");
  require_elements(indices, geometry.count, "gather", "indices");
  require_elements(out, gathered_elements(geometry), "gather", "out");
  Device& device = recording.device();
  const Kernel& kernel = device.kernel(shaders::gather, {{0, 0}, {1, 64}});
  recording.dispatch(kernel, {table, indices, out}, geometry,
                     grid_1d((gathered_elements(geometry) + 63) / 64, device), "gather");
}

void gather_grad(Recording& recording, const GatherPush& geometry, const BufferSlice& dy, const BufferSlice& indices,
                 const BufferSlice& dtable, KernelChoice choice) {
  require_elements(dy, gathered_elements(geometry), "gather_grad", "dy");
  require_elements(indices, geometry.count, "gather_grad", "indices");
  require_elements(dtable, table_elements(geometry), "gather_grad", "dtable");
  Device& device = recording.device();
  // CPU devices walk the indices once per column (8 lanes: a workgroup per AVX2 vector of
  // columns); GPUs give each (row, 64 columns) its own workgroup.
  const bool cpu = resolve(choice, device) == DeviceKind::cpu;
  const std::uint32_t lanes = cpu ? 8 : 64;
  const Kernel& kernel = device.kernel(shaders::gather, {{0, cpu ? 2u : 1u}, {1, lanes}});
  const std::uint64_t chunks = (geometry.inner + lanes - 1) / lanes;
  const std::uint64_t groups = std::uint64_t{geometry.outer} * (cpu ? 1 : geometry.rows) * chunks;
  recording.dispatch(kernel, {dy, indices, dtable}, geometry, grid_1d(groups, device), "gather_grad");
}

}  // namespace vkp::vk
