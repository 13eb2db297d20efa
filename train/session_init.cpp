#include "train/session_init.h"

#include <filesystem>

#include "callbacks/checkpoint.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::train {

void restore_variables(graph::Session& session, const std::map<std::string, Array>& values, bool ignore_mismatch,
                       const std::string& source, bool allow_non_finite) {
  graph::Graph& g = session.graph();
  std::vector<std::string> names;
  std::vector<Array> restored;
  for (const auto& [name, value] : values) {
    const graph::Tensor v = g.find_variable(name);
    std::string problem;
    if (!v.valid()) problem = "the graph has no variable " + name;
    else if (!graph::has_type(value, v.type()))
      problem = "variable " + name + " is " + graph::to_string(v.type()) + " in the graph, " + describe(value) + " in " + source;
    if (const NonFinite bad = non_finite(value); bad.count > 0 && problem.empty()) {
      const std::string what = "variable " + name + " in " + source + " has " + std::to_string(bad.count) +
                               " NaN or infinite value(s), the first at index " + std::to_string(bad.first);
      if (!allow_non_finite) throw Error(ErrorCode::bad_data, what + " (restore with allow_non_finite to load it)");
      log_warn("{}: restored as it is (allow_non_finite)", what);
    }
    if (!problem.empty()) {
      if (!ignore_mismatch) throw Error(ErrorCode::invalid_argument, problem + " (restore with ignore_mismatch to skip)");
      log_warn("{}: skipped", problem);
      continue;
    }
    names.push_back(name);
    restored.push_back(value);
  }
  session.set_variables(names, restored);
  for (const graph::Tensor& v : g.variables()) {
    const std::string& name = std::get<graph::VariableAttrs>(v.node().attrs).var_name;
    if (!values.count(name)) log_warn("variable {} is not in {}; it keeps its initial value", name, source);
  }
  log_info("restored {} variables from {}", restored.size(), source);
}

void DictRestore::init(graph::Session& session) {
  restore_variables(session, values_, ignore_mismatch_, "a dictionary", allow_non_finite_);
}

void SaverRestore::init(graph::Session& session) {
  const callbacks::Checkpoint c = callbacks::load_checkpoint(path_);
  restore_variables(session, c.variables, ignore_mismatch_, path_, allow_non_finite_);
  session.set_global_step(static_cast<std::uint64_t>(c.info.global_step));
  for (const auto& [name, value] : c.info.hyperparameters) {
    bool known = false;
    for (const auto& [n, initial] : session.graph().hyperparameters()) known |= n == name;
    if (known) session.set_hyperparameter(name, value);
  }
}

std::shared_ptr<SessionInit> SmartInit(const std::string& path, bool ignore_mismatch, bool allow_non_finite) {
  namespace fs = std::filesystem;
  std::string file = path;
  if (fs::is_directory(path)) {
    file = callbacks::latest_checkpoint(path);
    if (file.empty()) throw Error(ErrorCode::not_found, "no checkpoint in " + path + " (its `checkpoint` file is missing)");
  } else if (!fs::exists(path)) {
    throw Error(ErrorCode::io, "checkpoint " + path + " does not exist");
  }
  return std::make_shared<SaverRestore>(file, ignore_mismatch, allow_non_finite);
}

}  // namespace vkp::train
