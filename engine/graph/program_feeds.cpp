#include "engine/graph/program_feeds.h"

#include <cstring>

namespace vkp::graph {

void ProgramFeeds::add_variant(std::vector<std::byte*> hosts, std::unique_ptr<vk::Recording> upload) {
  hosts_.push_back(std::move(hosts));
  if (!upload) return;
  uploads_.push_back(std::move(upload));
  ready_.push_back(0);
  last_run_.push_back(0);
  sent_.push_back(0);
}

void ProgramFeeds::write(std::size_t index, const Array& value, int variant) {
  checks_.check(index, value);
  const auto v = static_cast<std::size_t>(variant);
  if (on_transfer_queue()) {
    uploads_[v]->wait();  // it reads the staging buffer written here
    sent_[v] = 0;
  }
  std::memcpy(hosts_[v][index], value.bytes().data(), value.nbytes());
}

void ProgramFeeds::send(int variant) {
  if (!on_transfer_queue()) return;
  const auto v = static_cast<std::size_t>(variant);
  ready_[v] = uploads_[v]->submit(last_run_[v]);
  sent_[v] = 1;
}

std::uint64_t ProgramFeeds::ready_for_run(int variant) {
  if (!on_transfer_queue()) return 0;
  const auto v = static_cast<std::size_t>(variant);
  if (!sent_[v]) send(variant);
  return ready_[v];
}

void ProgramFeeds::ran(int variant, std::uint64_t compute_value) {
  if (on_transfer_queue()) last_run_[static_cast<std::size_t>(variant)] = compute_value;
}

}  // namespace vkp::graph
