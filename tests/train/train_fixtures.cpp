#include "train_fixtures.h"

#include <unistd.h>

#include <filesystem>

#include "callbacks/summary.h"
#include "core/error.h"
#include "core/rng.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"

namespace vkp::test {

using namespace graph;

std::vector<train::InputSpec> TinyModel::inputs() const {
  return {{"x", f32({kUnknown, 6})}, {"label", i32({kUnknown})}};
}

Tensor TinyModel::build_graph(const std::vector<Tensor>& in) {
  Tensor t = FullyConnected("fc0", in[0], hidden_);
  t = relu(BatchNorm("bn", t, {.sync_statistics = sync_statistics_}));
  t = Dropout("dropout", t, 0.2f);
  const Tensor logits = identity(FullyConnected("fc1", t, 3), "logits");
  const Tensor cost = identity(reduce_mean(sparse_softmax_cross_entropy(logits, in[1])), "cost");
  const Tensor correct = in_top_k(logits, in[1], 1);
  identity(reduce_mean(correct), "accuracy");
  identity(scalar(in[0].graph(), 1.0f) - correct, "incorrect_vector");
  callbacks::add_moving_summary(cost);
  return cost;
}

Optimizer TinyModel::optimizer(Graph& graph) { return momentum(graph, lr_, 0.9f); }

std::vector<dataflow::Datapoint> tiny_batches(std::size_t count, std::int64_t batch, std::uint64_t seed) {
  const float centres[3][6] = {{2, 0, 0, 1, 0, 0}, {0, 2, 0, 0, 1, 0}, {0, 0, 2, 0, 0, 1}};
  Rng rng(seed);
  std::vector<dataflow::Datapoint> out;
  for (std::size_t b = 0; b < count; ++b) {
    Array x(DType::f32, Shape{batch, 6}), label(DType::i32, Shape{batch});
    for (std::int64_t i = 0; i < batch; ++i) {
      const auto k = static_cast<std::int32_t>(rng.below(3));
      label.data<std::int32_t>()[static_cast<std::size_t>(i)] = k;
      for (int d = 0; d < 6; ++d) x.data<float>()[static_cast<std::size_t>(i * 6 + d)] = centres[k][d] + 0.5f * rng.normal();
    }
    out.push_back({std::move(x), std::move(label)});
  }
  return out;
}

dataflow::DataFlowPtr tiny_flow(std::size_t count, std::int64_t batch, std::uint64_t seed) {
  return std::make_unique<dataflow::DataFromList>(tiny_batches(count, batch, seed), /*shuffle=*/false);
}

graph::Optimizer TinyAdamModel::optimizer(graph::Graph& g) { return graph::adam(g, 0.01f); }

void CrashAt::on_trigger_step() {
  if (trainer().global_step() == step_) throw Error(ErrorCode::device_lost, "simulated crash");
}

std::map<std::string, Array> all_variables(train::Trainer& t) {
  std::map<std::string, Array> out;
  for (const graph::Tensor& v : t.graph().variables()) {
    const std::string& name = std::get<graph::VariableAttrs>(v.node().attrs).var_name;
    out.emplace(name, t.session().variable(name));
  }
  return out;
}

train::TrainConfig tiny_config(std::size_t count, int epochs) {
  train::TrainConfig config;
  config.model = std::make_shared<TinyModel>();
  config.data = std::make_shared<train::FeedInput>(tiny_flow(count));
  config.extra_callbacks = std::vector<callbacks::CallbackPtr>{};
  config.monitors = std::vector<callbacks::MonitorPtr>{};
  config.max_epoch = epochs;
  return config;
}

std::string temp_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vkpack-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace vkp::test
