#include "engine/graph/feed_stager.h"

#include "core/error.h"

namespace vkp::graph {

void FeedStager::stage(Program& program, std::span<const Array> next, const std::string& what) {
  for (std::size_t i = 0; i < next.size() && i < program.feeds().size(); ++i)
    if (next[i].shape().dims() != program.feeds()[i].type.dims)
      throw Error(ErrorCode::invalid_argument,
                  what + ": StagingInput needs batches of one shape; input '" + program.feeds()[i].placeholder.name() +
                      "' changed from " + to_string(program.feeds()[i].type) + " to " + to_string(next[i].shape()));
  program.write_feeds(next, 1 - variant_);
  variant_ = 1 - variant_;
  staged_ = true;
}

}  // namespace vkp::graph
