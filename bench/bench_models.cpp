#include "bench_models.h"

#include "models.h"

namespace vkp::bench {

namespace {

BenchModel fashion_mnist(graph::Graph& g, examples::Architecture architecture, std::int64_t batch) {
  examples::FashionMnistModel model(architecture, 0.01f);
  const std::vector<train::InputSpec> specs = model.inputs();
  std::vector<graph::Tensor> inputs;
  for (const train::InputSpec& spec : specs) {
    graph::TensorType type = spec.type;
    type.dims[0] = batch;
    inputs.push_back(graph::placeholder(g, spec.name, type));
  }
  const graph::Tensor cost = model.build_graph(inputs);
  return {inputs[0], inputs[1], cost};
}

}  // namespace

BenchModel mlp_model(graph::Graph& g, std::int64_t batch) {
  return fashion_mnist(g, examples::Architecture::mlp, batch);
}

BenchModel convnet_model(graph::Graph& g, std::int64_t batch) {
  return fashion_mnist(g, examples::Architecture::convnet, batch);
}

}  // namespace vkp::bench
