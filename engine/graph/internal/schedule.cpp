// compile()'s first stage: order, concrete types and segment buckets (schedule.h).
#include "engine/graph/internal/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "engine/graph/internal/fusion.h"
#include "engine/graph/internal/op_def.h"

namespace vkp::graph {
namespace {

bool is_effect(const Graph& graph, int id) { return op_def(graph.node(id).op).side_effect; }

}  // namespace

std::vector<int> schedule_nodes(const Graph& graph, const std::vector<Tensor>& fetches,
                                const std::vector<Tensor>& targets) {
  std::vector<char> needed(static_cast<std::size_t>(graph.size()), 0);
  std::vector<int> stack;
  for (const Tensor& t : fetches) stack.push_back(t.id());
  for (const Tensor& t : targets) stack.push_back(t.id());
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (needed[static_cast<std::size_t>(id)]) continue;
    needed[static_cast<std::size_t>(id)] = 1;
    for (int input : graph.node(id).inputs) stack.push_back(input);
    for (int effect : graph.node(id).effects) stack.push_back(effect);
  }
  std::vector<int> order;
  std::vector<int> effects;
  for (int id = 0; id < graph.size(); ++id) {
    if (!needed[static_cast<std::size_t>(id)]) continue;
    (is_effect(graph, id) ? effects : order).push_back(id);
  }
  // Position of the last reader of each node among the ordinary ops.
  std::map<int, int> position, last_reader;
  for (int p = 0; p < static_cast<int>(order.size()); ++p) {
    position[order[static_cast<std::size_t>(p)]] = p;
    for (int input : graph.node(order[static_cast<std::size_t>(p)]).inputs) last_reader[input] = p;
  }
  // Insert each effect after the latest of those positions (stable among effects).
  std::vector<std::pair<int, int>> slots;  // (after position, effect id)
  for (int e : effects) {
    int after = -1;
    for (int input : graph.node(e).inputs)
      if (position.count(input)) after = std::max(after, position[input]);
    for (int v : written_variables(graph.node(e)))
      if (last_reader.count(v)) after = std::max(after, last_reader[v]);
    slots.emplace_back(after, e);
  }
  std::stable_sort(slots.begin(), slots.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<int> schedule;
  std::size_t next = 0;
  for (int p = -1; p < static_cast<int>(order.size()); ++p) {
    if (p >= 0) schedule.push_back(order[static_cast<std::size_t>(p)]);
    while (next < slots.size() && slots[next].first == p) schedule.push_back(slots[next++].second);
  }
  return schedule;
}

std::vector<TensorType> concrete_types(const Graph& graph, const std::vector<int>& schedule,
                                       const std::vector<FeedSpec>& feeds) {
  std::vector<TensorType> types(static_cast<std::size_t>(graph.size()));
  std::map<int, const FeedSpec*> fed;
  for (const FeedSpec& f : feeds) {
    if (f.placeholder.node().op != OpKind::placeholder)
      throw Error(ErrorCode::invalid_argument, "cannot feed '" + f.placeholder.name() + "': only placeholders are fed");
    fed[f.placeholder.id()] = &f;
  }
  for (int id : schedule) {
    const Node& node = graph.node(id);
    if (node.op == OpKind::placeholder) {
      const auto it = fed.find(id);
      if (it == fed.end())
        throw Error(ErrorCode::invalid_argument,
                    "placeholder '" + node.name + "' " + to_string(node.type) + " is needed but not fed");
      const TensorType& want = node.type;
      const TensorType& got = it->second->type;
      bool fits = got.dtype == want.dtype && got.rank() == want.rank() && got.known();
      for (int i = 0; fits && i < want.rank(); ++i)
        fits = want.dims[static_cast<std::size_t>(i)] < 0 ||
               want.dims[static_cast<std::size_t>(i)] == got.dims[static_cast<std::size_t>(i)];
      if (!fits)
        throw Error(ErrorCode::invalid_argument,
                    "feed for '" + node.name + "' is " + to_string(got) + "; the placeholder takes " + to_string(want));
      types[static_cast<std::size_t>(id)] = got;
      continue;
    }
    std::vector<TensorType> in;
    for (int input : node.inputs) in.push_back(types[static_cast<std::size_t>(input)]);
    try {
      types[static_cast<std::size_t>(id)] = op_def(node.op).infer(node, in);
    } catch (const Error& e) {
      throw Error(e.code(), node.name + ": " + e.what());
    }
  }
  return types;
}

std::uint64_t bytes_of(const TensorType& t) {
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(t.numel()) * size_of(t.dtype), 4);
}

SegmentPlan plan_segments(const Graph& graph, const std::vector<int>& schedule, const std::vector<Tensor>& fetches,
                          const std::vector<TensorType>& types, const std::vector<int>& owner,
                          const FetchSegments& options) {
  SegmentPlan plan;
  if (options.empty()) return plan;
  if (options.bucket_bytes == 0)
    throw Error(ErrorCode::invalid_argument, "fetch segments: bucket_bytes is 0; give the smallest bucket in bytes");
  if (options.fetches.empty())
    throw Error(ErrorCode::invalid_argument, "fetch segments: bucket_bytes is " + std::to_string(options.bucket_bytes) +
                                                 " but no fetch is segmented");
  std::map<int, int> step_of;
  for (int step = 0; step < static_cast<int>(schedule.size()); ++step)
    step_of[schedule[static_cast<std::size_t>(step)]] = step;
  std::vector<char> seen(fetches.size(), 0);
  std::vector<std::pair<int, int>> order;  // (step computing it, fetch index)
  for (int i : options.fetches) {
    if (i < 0 || i >= static_cast<int>(fetches.size()))
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("fetch segments: fetch index {} is out of range (the program has {} fetches)", i,
                              fetches.size()));
    const Tensor& t = fetches[static_cast<std::size_t>(i)];
    if (seen[static_cast<std::size_t>(i)]++)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("fetch segments: fetch {} ('{}') is listed twice", i, t.name()));
    // The host reads a segment's fetches while later segments run, and those may
    // update variables (optimizers, moving averages): a variable's value would depend
    // on timing.
    if (graph.node(owner[static_cast<std::size_t>(t.id())]).op == OpKind::variable)
      throw Error(ErrorCode::invalid_argument,
                  "fetch segments: '" + t.name() +
                      "' is a variable's storage, which the program may update after the segment; fetch a "
                      "computed tensor (identity) or leave it out of the segments");
    order.emplace_back(step_of.at(t.id()), i);
  }
  std::sort(order.begin(), order.end());
  std::uint64_t filled = 0;
  for (const auto& [step, i] : order) {
    if (filled == 0) {
      plan.buckets.emplace_back();
      plan.end_step.push_back(step);
    }
    plan.buckets.back().push_back(i);
    plan.end_step.back() = step;
    filled += bytes_of(types[static_cast<std::size_t>(fetches[static_cast<std::size_t>(i)].id())]);
    if (filled >= options.bucket_bytes) filled = 0;
  }
  return plan;
}

}  // namespace vkp::graph
