#include "vkpack/engine/graph/variable_store.h"

#include "vkpack/core/error.h"
#include "vkpack/engine/graph/initializer.h"

namespace vkp::graph {

VariableStore::VariableStore(vk::Device& device, std::uint64_t seed)
    : device_(&device), seed_(seed), arena_(device, vk::MemoryUse::device, "variables") {}

const vk::BufferSlice& VariableStore::storage(const Node& variable) {
  const VariableAttrs& a = std::get<VariableAttrs>(variable.attrs);
  if (const auto it = slots_.find(a.var_name); it != slots_.end()) {
    if (it->second.type != a.type)
      throw Error(ErrorCode::invalid_argument, "variable " + a.var_name + " is stored as " + to_string(it->second.type) +
                                                   " but the graph declares " + to_string(a.type));
    return it->second.slice;
  }
  const Array value = initial_value(a.init, a.type.shape(), seed_, a.var_name);
  const vk::BufferSlice slice = arena_.allocate(std::max<std::size_t>(value.nbytes(), 4), a.var_name);
  vk::upload(*device_, slice, value.bytes());
  return slots_.emplace(a.var_name, Slot{slice, a.type}).first->second.slice;
}

const VariableStore::Slot& VariableStore::slot(const std::string& name) const {
  const auto it = slots_.find(name);
  if (it == slots_.end()) throw Error(ErrorCode::not_found, "no variable named " + name + " on the device");
  return it->second;
}

Array VariableStore::read(const std::string& name) const {
  const Slot& s = slot(name);
  Array out(s.type.dtype, s.type.shape());
  vk::download(*device_, s.slice, out.bytes());
  return out;
}

void VariableStore::write(const std::string& name, const Array& value) {
  const Slot& s = slot(name);
  if (value.dtype() != s.type.dtype || value.shape().dims() != s.type.dims)
    throw Error(ErrorCode::invalid_argument, "variable " + name + " is " + to_string(s.type) + ", the value is " +
                                                 describe(value));
  vk::upload(*device_, s.slice, value.bytes());
}

std::vector<std::string> VariableStore::names() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : slots_) out.push_back(name);
  return out;
}

}  // namespace vkp::graph
