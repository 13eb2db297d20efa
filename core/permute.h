// Transposing an array's axes on the host (weight layouts: PyTorch's to vkpack's,
// vkpack's to ONNX's).
#pragma once

#include <vector>

#include "core/array.h"

namespace vkp {

// out has axis k of extent a's axis perm[k]: out[i0, i1, ...] = a[...] read through perm.
Array permute_axes(const Array& a, const std::vector<int>& perm);

}  // namespace vkp
