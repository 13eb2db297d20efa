#include "engine/vk/spirv_reflect.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "core/error.h"

namespace vkp::vk {
namespace {

// Opcodes, decorations and enumerants from the SPIR-V specification (unified 1.6).
enum Op : std::uint32_t {
  kOpExecutionMode = 16,
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeImage = 25,
  kOpTypeSampledImage = 27,
  kOpTypeArray = 28,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstantTrue = 41,
  kOpConstantFalse = 42,
  kOpConstant = 43,
  kOpSpecConstantTrue = 48,
  kOpSpecConstantFalse = 49,
  kOpSpecConstant = 50,
  kOpSpecConstantComposite = 51,
  kOpSpecConstantOp = 52,
  kOpVariable = 59,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
  kOpExecutionModeId = 331,
};
enum Decoration : std::uint32_t {
  kSpecId = 1,
  kArrayStride = 6,
  kBuiltIn = 11,
  kNonWritable = 24,
  kBinding = 33,
  kDescriptorSet = 34,
  kOffset = 35,
};
constexpr std::uint32_t kBuiltInNumWorkgroups = 24, kBuiltInWorkgroupSize = 25;
constexpr std::uint32_t kModeLocalSize = 17, kModeLocalSizeId = 38;
constexpr std::uint32_t kDimBuffer = 5;
constexpr std::uint32_t kStorageUniformConstant = 0, kStorageUniform = 2, kStorageWorkgroup = 4,
                        kStoragePushConstant = 9, kStorageStorageBuffer = 12;
// Operations of OpSpecConstantOp that array lengths are built from: integer arithmetic,
// and a choice by a boolean (specialization) constant.
constexpr std::uint32_t kOpIAdd = 128, kOpISub = 130, kOpIMul = 132, kOpUDiv = 134, kOpSelect = 169;

struct Type {
  std::uint32_t op = 0;
  std::vector<std::uint32_t> operands;  // the instruction's words after the result id
};

struct Module {
  std::map<std::uint32_t, Type> types;
  std::map<std::uint32_t, std::uint32_t> constants;  // OpConstant / OpSpecConstant values (booleans 0, 1)
  std::map<std::uint32_t, std::uint32_t> spec_ids;
  std::map<std::uint32_t, std::uint32_t> bindings, sets, strides;
  std::map<std::uint32_t, std::uint32_t> builtins;
  std::map<std::uint32_t, bool> nonwritable;  // on a variable
  std::map<std::uint32_t, std::map<std::uint32_t, std::uint32_t>> member_offsets;
  std::map<std::uint32_t, std::map<std::uint32_t, bool>> member_nonwritable;
  std::map<std::uint32_t, std::vector<std::uint32_t>> composites;
  std::map<std::uint32_t, std::vector<std::uint32_t>> spec_ops;  // id -> opcode, operands
  std::vector<std::array<std::uint32_t, 3>> variables;           // type, id, storage class
  std::array<std::uint32_t, 3> local_size_literal{1, 1, 1};
  std::array<std::uint32_t, 3> local_size_ids{};
  bool has_local_size_ids = false;
};

[[noreturn]] void malformed(std::string_view name, const std::string& what) {
  throw Error(ErrorCode::bad_data, "SPIR-V module '" + std::string(name) + "': " + what);
}

// The decoration (OpDecorate or OpMemberDecorate) at `w`, of `count` words, into `m`.
void decorate(Module& m, std::uint32_t op, const std::uint32_t* w, std::uint32_t count) {
  if (op == kOpMemberDecorate) {
    if (count < 4) return;
    if (w[3] == kOffset && count > 4) m.member_offsets[w[1]][w[2]] = w[4];
    if (w[3] == kNonWritable) m.member_nonwritable[w[1]][w[2]] = true;
    return;
  }
  if (count < 3) return;
  if (w[2] == kSpecId && count > 3) m.spec_ids[w[1]] = w[3];
  if (w[2] == kBinding && count > 3) m.bindings[w[1]] = w[3];
  if (w[2] == kDescriptorSet && count > 3) m.sets[w[1]] = w[3];
  if (w[2] == kArrayStride && count > 3) m.strides[w[1]] = w[3];
  if (w[2] == kBuiltIn && count > 3) m.builtins[w[1]] = w[3];
  if (w[2] == kNonWritable) m.nonwritable[w[1]] = true;
}

Module parse(std::span<const std::uint32_t> words, std::string_view name) {
  if (words.size() < 5 || words[0] != 0x07230203u) malformed(name, "missing the SPIR-V magic number");
  Module m;
  for (std::size_t at = 5; at < words.size();) {
    const std::uint32_t count = words[at] >> 16, op = words[at] & 0xffffu;
    if (count == 0 || at + count > words.size()) malformed(name, "instruction runs past the end");
    const std::uint32_t* w = &words[at];
    switch (op) {
      case kOpTypeInt:
      case kOpTypeFloat:
      case kOpTypeVector:
      case kOpTypeArray:
      case kOpTypeStruct:
      case kOpTypePointer:
      case kOpTypeImage:
      case kOpTypeSampledImage: m.types[w[1]] = Type{op, std::vector<std::uint32_t>(w + 2, w + count)}; break;
      case kOpConstant:
      case kOpSpecConstant:
        if (count >= 4) m.constants[w[2]] = w[3];
        break;
      case kOpConstantTrue:
      case kOpSpecConstantTrue:
        if (count >= 3) m.constants[w[2]] = 1;
        break;
      case kOpConstantFalse:
      case kOpSpecConstantFalse:
        if (count >= 3) m.constants[w[2]] = 0;
        break;
      case kOpSpecConstantComposite: m.composites[w[2]] = std::vector<std::uint32_t>(w + 3, w + count); break;
      case kOpSpecConstantOp:
        if (count >= 4) m.spec_ops[w[2]] = std::vector<std::uint32_t>(w + 3, w + count);
        break;
      case kOpVariable: m.variables.push_back({w[1], w[2], w[3]}); break;
      case kOpDecorate:
      case kOpMemberDecorate: decorate(m, op, w, count); break;
      case kOpExecutionMode:
        if (count >= 6 && w[2] == kModeLocalSize) m.local_size_literal = {w[3], w[4], w[5]};
        break;
      case kOpExecutionModeId:
        if (count >= 6 && w[2] == kModeLocalSizeId) {
          m.local_size_ids = {w[3], w[4], w[5]};
          m.has_local_size_ids = true;
        }
        break;
      default: break;
    }
    at += count;
  }
  return m;
}

std::uint32_t size_of_type(const Module& m, std::uint32_t id, std::string_view name) {
  const auto it = m.types.find(id);
  if (it == m.types.end()) malformed(name, "push-constant member of unknown type %" + std::to_string(id));
  const Type& t = it->second;
  switch (t.op) {
    case kOpTypeInt:
    case kOpTypeFloat: return t.operands.at(0) / 8;
    case kOpTypeVector: return t.operands.at(1) * size_of_type(m, t.operands.at(0), name);
    case kOpTypeArray: {
      const auto length = m.constants.find(t.operands.at(1));
      const auto stride = m.strides.find(id);
      if (length == m.constants.end() || stride == m.strides.end())
        malformed(name, "push-constant array without a constant length or stride");
      return length->second * stride->second;
    }
    case kOpTypeStruct: {
      std::uint32_t end = 0;
      const auto& offsets =
          m.member_offsets.count(id) ? m.member_offsets.at(id) : std::map<std::uint32_t, std::uint32_t>{};
      for (std::uint32_t i = 0; i < t.operands.size(); ++i) {
        const auto off = offsets.find(i);
        if (off == offsets.end()) malformed(name, "push-constant member without an Offset");
        end = std::max(end, off->second + size_of_type(m, t.operands[i], name));
      }
      return end;
    }
    default: malformed(name, "unsupported type in the push-constant block");
  }
}

// The struct a pointer-typed variable points to.
const Type* pointee(const Module& m, std::uint32_t pointer_type, std::uint32_t* struct_id) {
  const auto ptr = m.types.find(pointer_type);
  if (ptr == m.types.end() || ptr->second.op != kOpTypePointer) return nullptr;
  *struct_id = ptr->second.operands.at(1);
  const auto s = m.types.find(*struct_id);
  return s == m.types.end() ? nullptr : &s->second;
}

// The value of a (specialization) constant after specialization.
std::uint64_t constant_value(const Module& m, std::uint32_t id, const std::map<std::uint32_t, std::uint32_t>& spec,
                             std::string_view name) {
  if (const auto op = m.spec_ops.find(id); op != m.spec_ops.end()) {
    const std::vector<std::uint32_t>& w = op->second;
    if (w.size() == 4 && w[0] == kOpSelect)
      return constant_value(m, constant_value(m, w[1], spec, name) != 0 ? w[2] : w[3], spec, name);
    if (w.size() != 3) malformed(name, "unsupported specialization-constant operation");
    const std::uint64_t a = constant_value(m, w[1], spec, name), b = constant_value(m, w[2], spec, name);
    switch (w[0]) {
      case kOpIAdd: return a + b;
      case kOpISub: return a - b;
      case kOpIMul: return a * b;
      case kOpUDiv: return b == 0 ? 0 : a / b;
      default: malformed(name, "specialization-constant operation " + std::to_string(w[0]) + " in an array length");
    }
  }
  if (const auto s = m.spec_ids.find(id); s != m.spec_ids.end())
    if (const auto v = spec.find(s->second); v != spec.end()) return v->second;
  const auto c = m.constants.find(id);
  if (c == m.constants.end()) malformed(name, "array length %" + std::to_string(id) + " is not a constant");
  return c->second;
}

// Bytes of a workgroup-memory type (tightly packed: shared arrays carry no stride).
std::uint64_t shared_size_of(const Module& m, std::uint32_t id, const std::map<std::uint32_t, std::uint32_t>& spec,
                             std::string_view name) {
  const auto it = m.types.find(id);
  if (it == m.types.end()) malformed(name, "shared variable of unknown type %" + std::to_string(id));
  const Type& t = it->second;
  switch (t.op) {
    case kOpTypeInt:
    case kOpTypeFloat: return t.operands.at(0) / 8;
    case kOpTypeVector: return t.operands.at(1) * shared_size_of(m, t.operands.at(0), spec, name);
    case kOpTypeArray:
      return constant_value(m, t.operands.at(1), spec, name) * shared_size_of(m, t.operands.at(0), spec, name);
    case kOpTypeStruct: {
      std::uint64_t total = 0;
      for (std::uint32_t member : t.operands) total += shared_size_of(m, member, spec, name);
      return total;
    }
    default: malformed(name, "unsupported type of a shared variable");
  }
}

// A uniform texel buffer, read only: a textureBuffer (an image of dimension Buffer,
// sampled, read by texelFetch without a sampler), or the older samplerBuffer (that image
// inside a sampled image, which SPIR-V 1.6 no longer allows): what its fetches return.
// nullopt for any other variable; an error for another kind of image.
std::optional<TexelSampled> texel_buffer_kind(const Module& m, std::uint32_t storage, const Type* block,
                                              std::string_view name) {
  if (storage != kStorageUniformConstant || block == nullptr) return std::nullopt;
  const Type* image_type = nullptr;
  if (block->op == kOpTypeSampledImage) {
    const auto image = m.types.find(block->operands.at(0));
    if (image == m.types.end() || image->second.op != kOpTypeImage)
      malformed(name, "a sampled image without an image type");
    image_type = &image->second;
  } else if (block->op == kOpTypeImage) {
    image_type = block;
  } else {
    return std::nullopt;
  }
  // Operands: sampled type, Dim, Depth, Arrayed, MS, Sampled (1: read through texelFetch), format.
  if (image_type->operands.at(1) != kDimBuffer || image_type->operands.at(5) != 1)
    malformed(name, "an image that is not a uniform texel buffer; vkpack binds buffers only");
  const auto component = m.types.find(image_type->operands.at(0));
  if (component == m.types.end() || (component->second.op != kOpTypeFloat && component->second.op != kOpTypeInt) ||
      component->second.operands.at(0) != 32)
    malformed(name, "a texel buffer of other than 32-bit floats or integers");
  return component->second.op == kOpTypeFloat    ? TexelSampled::float32
         : component->second.operands.at(1) != 0 ? TexelSampled::int32
                                                 : TexelSampled::uint32;
}

// The workgroup size into r.local_size, and whether the shader reads gl_NumWorkGroups.
void workgroup_size(const Module& m, std::string_view name, SpirvReflection& r) {
  // Workgroup size: a spec-constant composite decorated WorkgroupSize wins over the
  // execution mode (glslang emits both for local_size_x_id).
  std::array<std::uint32_t, 3> ids{};
  bool from_ids = false;
  for (const auto& [id, builtin] : m.builtins) {
    if (builtin == kBuiltInNumWorkgroups) r.uses_num_workgroups = true;
    if (builtin == kBuiltInWorkgroupSize && m.composites.count(id) && m.composites.at(id).size() == 3) {
      const auto& c = m.composites.at(id);
      ids = {c[0], c[1], c[2]};
      from_ids = true;
    }
  }
  if (!from_ids && m.has_local_size_ids) {
    ids = m.local_size_ids;
    from_ids = true;
  }
  for (int i = 0; i < 3; ++i) {
    if (!from_ids) {
      r.local_size[i].value = m.local_size_literal[i];
      continue;
    }
    const auto value = m.constants.find(ids[i]);
    if (value == m.constants.end()) malformed(name, "workgroup size is not a constant");
    r.local_size[i].value = value->second;
    if (m.spec_ids.count(ids[i])) r.local_size[i].spec_id = static_cast<std::int32_t>(m.spec_ids.at(ids[i]));
  }
}

}  // namespace

std::uint64_t spirv_shared_memory_bytes(std::span<const std::uint32_t> words, std::string_view name,
                                        const std::map<std::uint32_t, std::uint32_t>& spec_values) {
  const Module m = parse(words, name);
  std::uint64_t total = 0;
  for (const auto& [type, id, storage] : m.variables) {
    if (storage != kStorageWorkgroup) continue;
    const auto ptr = m.types.find(type);
    if (ptr == m.types.end() || ptr->second.op != kOpTypePointer)
      malformed(name, "shared variable without a pointer type");
    total += shared_size_of(m, ptr->second.operands.at(1), spec_values, name);
  }
  return total;
}

SpirvReflection reflect_spirv(std::span<const std::uint32_t> words, std::string_view name) {
  const Module m = parse(words, name);
  SpirvReflection r;
  std::map<std::uint32_t, bool> readonly;  // binding -> all declarations NonWritable
  std::map<std::uint32_t, bool> texel;     // binding -> declared as a texel buffer
  std::map<std::uint32_t, TexelSampled> sampled;
  for (const auto& [type, id, storage] : m.variables) {
    std::uint32_t struct_id = 0;
    const Type* block = pointee(m, type, &struct_id);
    if (storage == kStoragePushConstant) {
      if (block == nullptr || block->op != kOpTypeStruct) malformed(name, "push constants are not a block");
      r.push_constant_bytes = size_of_type(m, struct_id, name);
      const auto& offsets = m.member_offsets.at(struct_id);
      for (const auto& [member, offset] : offsets) r.push_constant_offsets.push_back(offset);
      continue;
    }
    const std::optional<TexelSampled> texel_kind = texel_buffer_kind(m, storage, block, name);
    const bool is_texel = texel_kind.has_value();
    if (is_texel && m.bindings.count(id)) sampled[m.bindings.at(id)] = *texel_kind;
    if (!is_texel && storage != kStorageStorageBuffer && storage != kStorageUniform) continue;
    if (!m.bindings.count(id)) continue;
    const std::uint32_t set = m.sets.count(id) ? m.sets.at(id) : 0;
    if (set != 0) malformed(name, "binding in descriptor set " + std::to_string(set) + "; vkpack uses set 0 only");
    if (const auto kind = texel.find(m.bindings.at(id)); kind != texel.end() && kind->second != is_texel)
      malformed(name, "binding " + std::to_string(m.bindings.at(id)) + " is declared both as a texel buffer and not");
    texel[m.bindings.at(id)] = is_texel;
    bool ro = is_texel || m.nonwritable.count(id) > 0;
    if (!ro && block != nullptr && block->op == kOpTypeStruct && m.member_nonwritable.count(struct_id))
      ro = m.member_nonwritable.at(struct_id).size() == block->operands.size();
    const std::uint32_t binding = m.bindings.at(id);
    const auto seen = readonly.find(binding);
    readonly[binding] = seen == readonly.end() ? ro : (seen->second && ro);
  }
  for (const auto& [binding, ro] : readonly) {
    if (binding != r.bindings.size())
      malformed(name, "binding " + std::to_string(r.bindings.size()) + " is missing; bindings must be 0..n-1");
    const auto s = sampled.find(binding);
    r.bindings.push_back({binding, ro, texel.at(binding), s == sampled.end() ? TexelSampled::float32 : s->second});
  }

  workgroup_size(m, name, r);
  return r;
}

}  // namespace vkp::vk
