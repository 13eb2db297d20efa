#include "engine/graph/session.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/error.h"
#include "engine/graph/optimizer.h"
#include "engine/vk/device.h"

namespace vkp::graph {
namespace {

// Words of the scalar buffer: run counter, global step, then hyperparameters.
constexpr std::uint32_t kScalarWords = 256;

std::string program_key(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                        const std::vector<Tensor>& targets, int variants, const FetchSegments& segments,
                        bool timestamps) {
  std::string key = (timestamps ? "T" : "") + std::string("v") + std::to_string(variants);
  if (!segments.empty()) {
    key += "b" + std::to_string(segments.bucket_bytes);
    for (int i : segments.fetches) key += "s" + std::to_string(i);
  }
  for (const FeedSpec& f : feeds) key += "f" + std::to_string(f.placeholder.id()) + to_string(f.type);
  for (const Tensor& t : fetches) key += "o" + std::to_string(t.id());
  for (const Tensor& t : targets) key += "t" + std::to_string(t.id());
  return key;
}

}  // namespace

Session::Session(Graph& graph, vk::Device& device, SessionOptions options)
    : graph_(&graph),
      device_(&device),
      options_(options),
      variables_(device, graph.seed()),
      scalar_arena_(device, vk::MemoryUse::upload, "scalars", kScalarWords * 4) {
  scalars_ = scalar_arena_.allocate(kScalarWords * 4, "scalars");
  std::memset(scalars_.host, 0, kScalarWords * 4);
}

std::vector<const Program*> Session::programs() const {
  std::vector<const Program*> all;
  for (const auto& [key, entry] : programs_) all.push_back(entry.program.get());
  return all;
}

Session::CachedProgram& Session::find_or_compile(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                                                 const std::vector<Tensor>& targets, int variants,
                                                 const FetchSegments& segments) {
  const std::string key = program_key(feeds, fetches, targets, variants, segments, options_.timestamps);
  auto [it, fresh] = programs_.try_emplace(key);
  if (fresh) {
    try {
      it->second.program = compile({*graph_, feeds, fetches, targets}, {*device_, variables_, scalars_},
                                   {"program " + std::to_string(programs_.size()), options_.timestamps, variants,
                                    segments, options_.fuse, options_.f16_storage});
    } catch (...) {
      programs_.erase(it);
      throw;
    }
  }
  return it->second;
}

Program& Session::program(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                          const std::vector<Tensor>& targets, int variants, const FetchSegments& segments) {
  CachedProgram& entry = find_or_compile(feeds, fetches, targets, variants, segments);
  entry.handed_out = true;
  return *entry.program;
}

void Session::trim_cache() {
  const std::size_t limit = std::max<std::size_t>(options_.cached_programs, 1);
  for (;;) {
    std::size_t cached = 0;
    auto oldest = programs_.end();
    for (auto it = programs_.begin(); it != programs_.end(); ++it) {
      if (it->second.handed_out) continue;
      ++cached;
      if (oldest == programs_.end() || it->second.last_run < oldest->second.last_run) oldest = it;
    }
    if (cached <= limit) return;
    programs_.erase(oldest);  // not running: run() waits for its programs
  }
}

void Session::run_program(Program& program, std::span<const Array> feeds, std::vector<Array>& outputs) {
  program.write_feeds(feeds, 0);
  submit_program(program, 0);
  wait_program(program, outputs);
}

void Session::submit_program(Program& program, int variant) {
  // A run still in flight reads the scalar buffer: its words change only once it is done.
  program.await_device();
  sync_hyperparameters();
  write_word(Graph::kRunWord, static_cast<std::uint32_t>(runs_));
  write_word(Graph::kStepWord, static_cast<std::uint32_t>(global_step()));
  write_adam_step_factor();
  program.submit(variant);
}

void Session::wait_program(Program& program, std::vector<Array>& outputs) {
  program.wait(outputs);
  ++runs_;
  if (program.updates_variables() && !clock_) ++own_global_step_;
}

std::vector<Array> Session::run(const Feeds& feeds, const std::vector<Tensor>& fetches,
                                const std::vector<Tensor>& targets) {
  std::vector<FeedSpec> specs;
  std::vector<Array> values;
  for (const auto& [tensor, value] : feeds) {
    specs.push_back({tensor, {value.dtype(), value.shape().dims()}});
    values.push_back(value);
  }
  CachedProgram& entry = find_or_compile(specs, fetches, targets, 1, {});
  entry.last_run = ++run_calls_;
  std::vector<Array> outputs;
  run_program(*entry.program, values, outputs);
  trim_cache();
  return outputs;
}

std::uint32_t Session::word_of(const std::string& name) const {
  const auto& hyper = graph_->hyperparameters();
  for (std::size_t i = 0; i < hyper.size(); ++i)
    if (hyper[i].first == name) return Graph::kFirstHyperparameterWord + static_cast<std::uint32_t>(i);
  std::string known;
  for (const auto& [n, v] : hyper) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::not_found, "no hyperparameter named '" + name + "' (the graph has: " +
                                        (known.empty() ? "none" : known) + ")");
}

// Adam's hyperparameters have fixed names, so every Adam of a graph shares one factor.
void Session::write_adam_step_factor() {
  // The words are looked up by name again only when the graph made hyperparameters since.
  const auto& hyper = graph_->hyperparameters();
  if (adam_words_for_ != hyper.size()) {
    adam_words_for_ = hyper.size();
    const auto has = [&](std::string_view name) {
      return std::any_of(hyper.begin(), hyper.end(), [&](const auto& h) { return h.first == name; });
    };
    adam_words_.reset();
    if (has("beta1") && has("beta2")) adam_words_ = {word_of("learning_rate"), word_of("beta1"), word_of("beta2")};
  }
  if (!adam_words_) return;
  const auto value = [&](std::size_t i) { return std::bit_cast<float>(read_word((*adam_words_)[i])); };
  const float factor = adam_step_factor(value(0), value(1), value(2), global_step() + 1);
  write_word(Graph::kAdamStepWord, std::bit_cast<std::uint32_t>(factor));
}

void Session::set_global_step(std::uint64_t step) {
  if (clock_)
    throw Error(ErrorCode::invalid_argument,
                "this session follows its trainer's global step; set the trainer's (TrainConfig::starting_global_step)");
  own_global_step_ = static_cast<std::int64_t>(step);
}

void Session::follow_global_step(std::shared_ptr<const StepClock> clock) {
  if (!clock && clock_) own_global_step_ = clock_->now();  // count on from where the owner left it
  clock_ = std::move(clock);
}

void Session::sync_hyperparameters() {
  const auto& hyper = graph_->hyperparameters();
  if (Graph::kFirstHyperparameterWord + hyper.size() > kScalarWords)
    throw Error(ErrorCode::unsupported, "more hyperparameters than the scalar buffer holds");
  for (; hyperparameters_written_ < hyper.size(); ++hyperparameters_written_)
    write_word(Graph::kFirstHyperparameterWord + static_cast<std::uint32_t>(hyperparameters_written_),
               std::bit_cast<std::uint32_t>(hyper[hyperparameters_written_].second));
}

void Session::set_hyperparameter(const std::string& name, float value) {
  sync_hyperparameters();
  write_word(word_of(name), std::bit_cast<std::uint32_t>(value));
}

float Session::hyperparameter(const std::string& name) {
  sync_hyperparameters();
  return std::bit_cast<float>(read_word(word_of(name)));
}

void Session::write_word(std::uint32_t word, std::uint32_t bits) {
  std::memcpy(scalars_.host + 4 * word, &bits, 4);
}

std::uint32_t Session::read_word(std::uint32_t word) const {
  std::uint32_t bits = 0;
  std::memcpy(&bits, scalars_.host + 4 * word, 4);
  return bits;
}

void Session::ensure_variable(const std::string& name) {
  const Tensor v = graph_->find_variable(name);
  if (!v.valid()) throw Error(ErrorCode::not_found, "the graph has no variable named " + name);
  variables_.storage(v.node());
}

Array Session::variable(const std::string& name) {
  ensure_variable(name);
  return variables_.read(name);
}

void Session::set_variable(const std::string& name, const Array& value) {
  ensure_variable(name);
  variables_.write(name, value);
}

std::vector<Array> Session::variable_values(const std::vector<std::string>& names) {
  for (const std::string& name : names) ensure_variable(name);
  return variables_.read(names);
}

void Session::set_variables(const std::vector<std::string>& names, const std::vector<Array>& values) {
  for (const std::string& name : names) ensure_variable(name);
  variables_.write(names, values);
}

}  // namespace vkp::graph
