#include "train/foreign_weights.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "core/error.h"
#include "core/log.h"
#include "core/npz.h"
#include "core/permute.h"
#include "core/safetensors.h"

namespace vkp::train {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Array convert(const Array& a, Layout layout, const std::string& name) {
  const auto need_rank = [&](int rank, const char* what) {
    if (a.shape().rank() != rank)
      throw Error(ErrorCode::invalid_argument, "weights: " + name + " is " + describe(a) + "; the " + what +
                                                   " layout needs rank " + std::to_string(rank));
  };
  switch (layout) {
    case Layout::as_is: return a;
    case Layout::torch_linear: need_rank(2, "torch_linear"); return permute_axes(a, {1, 0});
    case Layout::torch_conv: need_rank(4, "torch_conv"); return permute_axes(a, {2, 3, 1, 0});
  }
  return a;
}

}  // namespace

std::map<std::string, Array> read_weights(const std::string& path) {
  if (!std::filesystem::exists(path)) throw Error(ErrorCode::io, "weights file " + path + " does not exist");
  if (ends_with(path, ".npz")) return read_npz(path);
  if (ends_with(path, ".npy")) return {{std::filesystem::path(path).stem().string(), read_npy(path)}};
  std::map<std::string, Array> out;
  for (auto& [name, value] : read_safetensors(path).tensors) out.emplace(name, std::move(value));
  return out;
}

std::map<std::string, Array> map_weights(const std::map<std::string, Array>& source, const WeightMap& map,
                                         std::map<std::string, std::string>* origin) {
  std::vector<std::regex> ignore;
  for (const std::string& p : map.ignore) ignore.emplace_back(p);
  std::vector<std::pair<std::regex, std::string>> rename;
  for (const auto& [p, r] : map.rename) rename.emplace_back(std::regex(p), r);
  std::vector<std::pair<std::regex, Layout>> layouts;
  for (const auto& [p, l] : map.layouts) layouts.emplace_back(std::regex(p), l);

  std::map<std::string, Array> out;
  std::map<std::string, std::string> from;
  for (const auto& [name, value] : source) {
    if (std::any_of(ignore.begin(), ignore.end(),
                    [&key = name](const std::regex& r) { return std::regex_match(key, r); }))
      continue;
    std::string mapped = name;
    if (!map.strip_prefix.empty() && mapped.rfind(map.strip_prefix, 0) == 0) mapped = mapped.substr(map.strip_prefix.size());
    for (const auto& [pattern, replacement] : rename) mapped = std::regex_replace(mapped, pattern, replacement);
    if (const auto seen = from.find(mapped); seen != from.end())
      throw Error(ErrorCode::invalid_argument, "weights: both '" + seen->second + "' and '" + name + "' become '" +
                                                   mapped + "'; make the rename rules tell them apart");
    Layout layout = Layout::as_is;
    for (const auto& [pattern, l] : layouts)
      if (std::regex_match(mapped, pattern)) {
        layout = l;
        break;
      }
    out.emplace(mapped, convert(value, layout, name));
    from.emplace(mapped, name);
  }
  if (origin) *origin = std::move(from);
  return out;
}

void WeightsRestore::init(graph::Session& session) {
  std::map<std::string, std::string> origin;
  std::map<std::string, Array> values = map_weights(read_weights(path_), map_, &origin);
  graph::Graph& g = session.graph();
  std::set<std::string> slots;
  for (const graph::Tensor& s : g.collection(graph::kOptimizerSlots))
    slots.insert(std::get<graph::VariableAttrs>(s.node().attrs).var_name);

  std::vector<std::string> errors, notes;
  std::vector<std::string> names;
  std::vector<Array> chosen;
  for (auto& [name, value] : values) {
    const std::string source = origin.at(name) == name ? "" : " (from '" + origin.at(name) + "')";
    const graph::Tensor v = g.find_variable(name);
    if (!v.valid()) {
      (map_.allow_unexpected ? notes : errors).push_back("unexpected: " + name + source + ", which no variable is");
      continue;
    }
    if (!graph::has_type(value, v.type())) {
      errors.push_back("mis-shaped: " + name + " is " + graph::to_string(v.type()) + " in the graph, " + describe(value) +
                       source + " after its layout conversion");
      continue;
    }
    names.push_back(name);
    chosen.push_back(std::move(value));
  }
  for (const graph::Tensor& v : g.variables()) {
    const std::string& name = std::get<graph::VariableAttrs>(v.node().attrs).var_name;
    if (slots.count(name) || values.count(name)) continue;
    (map_.allow_missing ? notes : errors).push_back("missing: " + name + ", which nothing in the file becomes");
  }
  for (const std::string& n : notes) log_warn("weights from {}: {} (skipped)", path_, n);
  if (!errors.empty()) {
    std::string message = "weights from " + path_ + ": " + std::to_string(errors.size()) + " problem(s):";
    for (const std::string& e : errors) message += "\n  " + e;
    throw Error(ErrorCode::invalid_argument, message);
  }
  std::map<std::string, Array> restore;
  for (std::size_t i = 0; i < names.size(); ++i) restore.emplace(names[i], std::move(chosen[i]));
  restore_variables(session, restore, false, path_);
}

}  // namespace vkp::train
