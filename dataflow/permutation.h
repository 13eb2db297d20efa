// Random orders for shuffling dataflows, drawn from a vkp::Rng so that they are
// reproducible from a seed: what a DataFlow of one's own shuffles with, as the bundled
// ones do (and bench/dataflow_bench.cpp's hand-written loop).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "core/rng.h"

namespace vkp::dataflow {

// Fisher-Yates: every order equally likely.
template <class T>
void shuffle(std::span<T> items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.below(i));
    std::swap(items[i - 1], items[j]);
  }
}

// 0, 1, ..., n-1 in a random order.
std::vector<std::size_t> random_permutation(std::size_t n, Rng& rng);

}  // namespace vkp::dataflow
