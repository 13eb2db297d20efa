#include "engine/graph/variable_store.h"

#include "core/error.h"
#include "engine/graph/initializer.h"

namespace vkp::graph {

VariableStore::VariableStore(const Graph& graph, vk::Device& device)
    : device_(&device), graph_(&graph), arena_(device, vk::MemoryUse::device, "variables") {}

const vk::BufferSlice& VariableStore::storage(const Node& variable) {
  const VariableAttrs& a = std::get<VariableAttrs>(variable.attrs);
  if (const auto it = slots_.find(a.var_name); it != slots_.end()) {
    if (it->second.type != a.type)
      throw Error(ErrorCode::invalid_argument, "variable " + a.var_name + " is stored as " + to_string(it->second.type) +
                                                   " but the graph declares " + to_string(a.type));
    return it->second.slice;
  }
  Array value = initial_value(a.init, a.type.shape(), graph_->seed(), a.var_name);
  const vk::BufferSlice slice = arena_.allocate(std::max<std::size_t>(value.nbytes(), 4), a.var_name);
  initial_values_.emplace_back(slice, std::move(value));
  return slots_.emplace(a.var_name, Slot{slice, a.type}).first->second.slice;
}

void VariableStore::upload_initial_values(vk::TransferBatch& batch) {
  for (const auto& [slice, value] : initial_values_) batch.upload(slice, value.bytes());
  initial_values_.clear();
}

const VariableStore::Slot& VariableStore::slot(const std::string& name) {
  const Tensor v = graph_->find_variable(name);
  if (!v.valid()) throw Error(ErrorCode::not_found, "the graph has no variable named " + name);
  storage(v.node());  // allocates it, or checks the stored type against the graph's
  return slots_.at(name);
}

std::vector<const VariableStore::Slot*> VariableStore::slots_of(const std::vector<std::string>& names) {
  std::vector<const Slot*> out;
  out.reserve(names.size());
  for (const std::string& name : names) out.push_back(&slot(name));
  return out;
}

Array VariableStore::read(const std::string& name) { return std::move(read(std::vector<std::string>{name})[0]); }

void VariableStore::write(const std::string& name, const Array& value) {
  write(std::vector<std::string>{name}, std::vector<Array>{value});
}

std::vector<Array> VariableStore::read(const std::vector<std::string>& names) {
  const std::vector<const Slot*> slots = slots_of(names);
  std::vector<Array> out;
  out.reserve(names.size());
  for (const Slot* s : slots) out.emplace_back(s->type.dtype, s->type.shape());
  vk::TransferBatch batch(*device_);
  upload_initial_values(batch);
  for (std::size_t i = 0; i < names.size(); ++i) batch.download(slots[i]->slice, out[i].bytes());
  batch.run();
  return out;
}

void VariableStore::write(const std::vector<std::string>& names, const std::vector<Array>& values) {
  const std::vector<const Slot*> slots = slots_of(names);
  if (names.size() != values.size())
    throw Error(ErrorCode::invalid_argument, "write of " + std::to_string(names.size()) + " variables with " +
                                                 std::to_string(values.size()) + " values");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const TensorType& type = slots[i]->type;
    if (!has_type(values[i], type))
      throw Error(ErrorCode::invalid_argument,
                  "variable " + names[i] + " is " + to_string(type) + ", the value is " + describe(values[i]));
  }
  vk::TransferBatch batch(*device_);
  upload_initial_values(batch);
  for (std::size_t i = 0; i < names.size(); ++i) batch.upload(slots[i]->slice, values[i].bytes());
  batch.run();
}

std::vector<std::string> VariableStore::names() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : slots_) out.push_back(name);
  return out;
}

}  // namespace vkp::graph
