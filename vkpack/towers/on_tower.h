// on_tower: runs fn, naming tower k in an Error it throws (towers may be VkDevices of one
// physical device, whose label alone does not tell them apart). Internal to towers/.
#pragma once

#include <string>

#include "vkpack/core/error.h"

namespace vkp::towers::detail {

template <class Fn>
void on_tower(int k, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    throw Error(e.code(), "tower " + std::to_string(k) + ": " + e.what());
  }
}

}  // namespace vkp::towers::detail
