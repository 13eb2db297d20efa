#include "dataflow/permutation.h"

#include <numeric>

namespace vkp::dataflow {

std::vector<std::size_t> random_permutation(std::size_t n, Rng& rng) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  shuffle(std::span<std::size_t>(order), rng);
  return order;
}

}  // namespace vkp::dataflow
