// Checkpoints of a session: saving every variable of a graph, and the session's state
// to record with it. The files themselves (model-<global_step>.safetensors, the
// `checkpoint` index, reading them back) are callbacks/checkpoint_file.h.
#pragma once

#include <string>
#include <vector>

#include "callbacks/checkpoint_file.h"
#include "engine/graph/session.h"

namespace vkp::callbacks {

// Saves every variable of the graph, updates `checkpoint`, and deletes the oldest
// model-*.safetensors beyond max_to_keep (0 keeps all). Returns the file's path. A
// variable with NaN or infinite values is an Error naming it, and nothing is written,
// unless allow_non_finite.
std::string save_checkpoint(graph::Session& session, const std::string& dir, const CheckpointInfo& info,
                            int max_to_keep, bool allow_non_finite = false);
// Every variable of the graph (slots and moving averages too), by name, in creation order.
std::vector<std::string> variable_names(const graph::Graph& graph);

// The info of the session as it is now (global step, hyperparameters; `epoch` given).
CheckpointInfo session_info(graph::Session& session, int epoch);

}  // namespace vkp::callbacks
