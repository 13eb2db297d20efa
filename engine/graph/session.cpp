#include "engine/graph/session.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/error.h"
#include "engine/graph/optimizer.h"
#include "engine/vk/device.h"

namespace vkp::graph {
Session::Session(Graph& graph, vk::Device& device, SessionOptions options)
    : graph_(&graph), device_(&device), options_(options), variables_(graph, device), scalars_(graph, device) {}

// The program for this key, compiled the first time.
Program& Session::find_or_compile(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                                  const std::vector<Tensor>& targets, int variants, const FetchSegments& segments,
                                  ProgramCache::Use use) {
  return programs_.find_or_compile(
      ProgramCache::key(feeds, fetches, targets, variants, segments, options_.timestamps), use, [&](std::string name) {
        return compile({*graph_, feeds, fetches, targets}, {*device_, variables_, scalars_.slice()},
                       {std::move(name), options_.timestamps, variants, segments, options_.fuse, options_.f16_storage});
      });
}

Program& Session::program(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                          const std::vector<Tensor>& targets, int variants, const FetchSegments& segments) {
  return find_or_compile(feeds, fetches, targets, variants, segments, ProgramCache::Use::hand_out);
}

void Session::run_program(Program& program, std::span<const Array> feeds, std::vector<Array>& outputs) {
  program.write_feeds(feeds, 0);
  submit_program(program, 0);
  wait_program(program, outputs);
}

void Session::submit_program(Program& program, int variant) {
  // A run still in flight reads the scalar buffer: its words change only once it is done.
  program.await_device();
  scalars_.sync_hyperparameters();
  scalars_.write(Graph::kRunWord, static_cast<std::uint32_t>(runs_));
  scalars_.write(Graph::kStepWord, static_cast<std::uint32_t>(global_step()));
  scalars_.write_adam_step_factor(global_step() + 1);
  program.submit(variant);
}

void Session::wait_program(Program& program, std::vector<Array>& outputs) {
  program.wait(outputs);
  ++runs_;
  if (program.plan().updates_variables) step_.count_update();
}

std::vector<Array> Session::run(const Feeds& feeds, const std::vector<Tensor>& fetches,
                                const std::vector<Tensor>& targets) {
  std::vector<FeedSpec> specs;
  std::vector<Array> values;
  for (const auto& [tensor, value] : feeds) {
    specs.push_back({tensor, {value.dtype(), value.shape().dims()}});
    values.push_back(value);
  }
  Program& program = find_or_compile(specs, fetches, targets, 1, {}, ProgramCache::Use::run);
  std::vector<Array> outputs;
  run_program(program, values, outputs);
  programs_.trim(options_.cached_programs);  // none is running: run() waits for its programs
  return outputs;
}

void Session::set_hyperparameter(const std::string& name, float value) { scalars_.set_hyperparameter(name, value); }

float Session::hyperparameter(const std::string& name) { return scalars_.hyperparameter(name); }

}  // namespace vkp::graph
