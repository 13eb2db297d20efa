#include "callbacks/checkpoint_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/crc32c.h"
#include "core/error.h"
#include "core/log.h"
#include "core/safetensors.h"

namespace vkp::callbacks {
namespace {

// The metadata key of a tensor's checksum is this prefix and the tensor's name.
constexpr std::string_view kChecksumPrefix = "crc32c/";
constexpr const char* kFormat = "vkpack checkpoint 2";

namespace fs = std::filesystem;

// At most 200 bytes of `text` for an error message, control bytes escaped.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 200)) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out += c;
  }
  if (text.size() > 200) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

// model-<step>.safetensors files of a directory, oldest first.
std::vector<std::pair<std::int64_t, fs::path>> checkpoints_in(const fs::path& dir) {
  static const std::regex name(R"(model-(\d+)\.safetensors)");
  std::vector<std::pair<std::int64_t, fs::path>> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string file = e.path().filename().string();
    std::int64_t step = 0;
    const std::string digits = std::regex_match(file, m, name) ? m[1].str() : "";
    // A step past int64 (a file not of ours) is not a checkpoint, rather than an exception.
    if (!digits.empty() && std::from_chars(digits.data(), digits.data() + digits.size(), step).ec == std::errc{})
      found.emplace_back(step, e.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::string save_checkpoint(std::vector<std::string> names, std::vector<Array> values, const std::string& dir,
                            const CheckpointInfo& info, int max_to_keep, bool allow_non_finite) {
  VKP_CHECK(names.size() == values.size(), "save_checkpoint: names and values differ in number");
  TensorFile file;
  for (std::size_t i = 0; i < names.size() && !allow_non_finite; ++i)
    if (const NonFinite bad = non_finite(values[i]); bad.count > 0)
      throw Error(ErrorCode::bad_data,
                  "checkpoint of global step " + std::to_string(info.global_step) + " not written: variable " +
                      names[i] + " has " + std::to_string(bad.count) + " NaN or infinite value(s), the first at index " +
                      std::to_string(bad.first) + " (the model diverged; ModelSaver(..., allow_non_finite) saves it anyway)");
  // A CRC-32C per tensor in the header's metadata, so the file stays plain safetensors
  // for other readers and a damaged one is found on restore.
  for (std::size_t i = 0; i < names.size(); ++i) {
    file.metadata[std::string(kChecksumPrefix) + names[i]] = fmt::format("{:08x}", crc32c(values[i].bytes()));
    file.tensors.emplace_back(names[i], std::move(values[i]));
  }
  file.metadata["format"] = kFormat;
  file.metadata["global_step"] = std::to_string(info.global_step);
  file.metadata["epoch"] = std::to_string(info.epoch);
  if (info.local_step != 0) file.metadata["local_step"] = std::to_string(info.local_step);
  for (const auto& [name, value] : info.hyperparameters) file.metadata["hyperparameter/" + name] = fmt::format("{}", value);
  const fs::path path = fs::path(dir) / ("model-" + std::to_string(info.global_step) + ".safetensors");
  write_safetensors(path.string(), file);
  // Files of later steps belong to another run (a longer one, in a directory kept for
  // this one): they are neither kept in the index nor deleted.
  std::vector<std::pair<std::int64_t, fs::path>> kept, dropped;
  for (auto& entry : checkpoints_in(dir))
    if (entry.first <= info.global_step) kept.push_back(std::move(entry));
  while (max_to_keep > 0 && static_cast<int>(kept.size()) > max_to_keep) {
    dropped.push_back(kept.front());
    kept.erase(kept.begin());
  }
  // The index names the newest and every kept file, TensorFlow's `checkpoint` layout. It
  // is replaced before old files go, so that it never names a deleted one.
  std::string index = "model_checkpoint_path: \"" + path.filename().string() + "\"\n";
  for (const auto& [step, p] : kept) index += "all_model_checkpoint_paths: \"" + p.filename().string() + "\"\n";
  write_file_atomically((fs::path(dir) / kCheckpointIndex).string(), index);
  for (const auto& [step, p] : dropped) {
    std::error_code ec;
    fs::remove(p, ec);
    if (ec) log_warn("cannot delete old checkpoint {}: {}", p.string(), ec.message());
  }
  return path.string();
}

std::string parse_checkpoint_index(std::string_view text, const std::string& index) {
  constexpr std::string_view kKey = "model_checkpoint_path: \"";
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() < kKey.size() + 1 || line.substr(0, kKey.size()) != kKey || line.back() != '"') continue;
    const std::string name(line.substr(kKey.size(), line.size() - kKey.size() - 1));
    // The saver names a file of this directory; an index written elsewhere (a downloaded
    // run) could name any path: one with a separator, "..", or none at all is refused.
    if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos ||
        name.find('\0') != std::string::npos)
      throw Error(ErrorCode::bad_data, index + " names \"" + printable(name) +
                                           "\": a checkpoint must be a file of its own directory, named without a path");
    return name;
  }
  return {};
}

std::string latest_checkpoint(const std::string& dir) {
  const fs::path index = fs::path(dir) / kCheckpointIndex;
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(index, ec);
  if (ec) return {};
  if (size > kMaxCheckpointIndexBytes)
    throw Error(ErrorCode::bad_data, fmt::format("{} is {} bytes; an index names a few files and is at most {}",
                                                 index.string(), size, kMaxCheckpointIndexBytes));
  std::ifstream in(index, std::ios::binary);
  if (!in) return {};
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string name = parse_checkpoint_index(text, index.string());
  return name.empty() ? name : (fs::path(dir) / name).string();
}

std::vector<std::pair<std::string, std::int64_t>> all_checkpoints(const std::string& dir) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const auto& [step, path] : checkpoints_in(dir)) out.emplace_back(path.string(), step);
  return out;
}

std::string checkpoint_path(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (fs::is_directory(path, ec)) {
    if (std::string named = latest_checkpoint(path); !named.empty()) return named;
    const auto found = checkpoints_in(path);
    if (!found.empty()) return found.back().second.string();
    const bool indexed = fs::exists(fs::path(path) / kCheckpointIndex, ec);
    throw Error(ErrorCode::not_found, path + " holds no checkpoint: " +
                                          (indexed ? std::string("its index '") + kCheckpointIndex + "' names none"
                                                   : std::string("no index file '") + kCheckpointIndex + "'") +
                                          " and there is no model-<step>.safetensors");
  }
  throw Error(ErrorCode::not_found, "no checkpoint at " + path + ": neither a file nor a directory");
}

std::string resume_checkpoint(const std::string& dir, std::optional<std::int64_t> through_epoch) {
  const fs::path index = fs::path(dir) / kCheckpointIndex;
  const bool indexed = fs::exists(index);
  std::string named;
  if (indexed) {
    named = latest_checkpoint(dir);
    if (named.empty())
      throw Error(ErrorCode::bad_data, index.string() + " does not parse: no line model_checkpoint_path: \"...\"; "
                                                        "repair it, or remove it to resume from the newest valid "
                                                        "model-*.safetensors");
    const Checkpoint c = load_checkpoint(named);  // Error naming the file when it is missing or damaged
    if (!through_epoch || c.info.epoch <= *through_epoch) return named;
    log_warn("not resuming from {}: the statistics of its epoch {} were never written (a run stopped between the "
             "checkpoint and them), so that epoch is trained again",
             named, c.info.epoch);
  }
  const auto found = checkpoints_in(dir);
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    const std::string path = it->second.string();
    if (path == named) continue;
    try {
      const Checkpoint c = load_checkpoint(path);
      if (through_epoch && c.info.epoch > *through_epoch) continue;
    } catch (const Error& e) {
      log_warn("not resuming from {}: {}", path, e.what());
      continue;
    }
    log_warn("{}resuming from the newest valid checkpoint, {}", indexed ? "" : dir + " has no checkpoint index; ", path);
    return path;
  }
  return {};
}

Checkpoint load_checkpoint(const std::string& path) {
  TensorFile file = read_safetensors(path);
  // Checkpoints of format 2 and later carry a checksum of every tensor; those of format
  // 1, written before, none.
  const auto format = file.metadata.find("format");
  const bool checksummed = format != file.metadata.end() && format->second != "vkpack checkpoint 1";
  for (const auto& [name, value] : file.tensors) {
    const auto recorded = file.metadata.find(std::string(kChecksumPrefix) + name);
    if (recorded == file.metadata.end()) {
      if (checksummed) throw Error(ErrorCode::bad_data, path + ": tensor " + name + " has no checksum in the header");
      continue;
    }
    const std::string actual = fmt::format("{:08x}", crc32c(value.bytes()));
    if (actual != recorded->second)
      throw Error(ErrorCode::bad_data, path + ": tensor " + name + " is damaged (its bytes have CRC-32C " + actual +
                                           ", the checkpoint recorded " + printable(recorded->second) + ")");
  }
  Checkpoint c;
  for (auto& [name, value] : file.tensors) c.variables.emplace(name, std::move(value));
  // A count of the metadata: the whole text a non-negative decimal number up to `most`.
  auto count = [&](const char* key, std::int64_t most) -> std::int64_t {
    const auto it = file.metadata.find(key);
    if (it == file.metadata.end()) return 0;
    const std::string& text = it->second;
    std::int64_t value = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || value < 0 || value > most)
      throw Error(ErrorCode::bad_data, fmt::format("{}: metadata {} is '{}', not a count from 0 to {}", path, key,
                                                   printable(text), most));
    return value;
  };
  c.info.global_step = count("global_step", std::numeric_limits<std::int64_t>::max());
  c.info.epoch = static_cast<int>(count("epoch", std::numeric_limits<int>::max()));
  c.info.local_step = count("local_step", std::numeric_limits<std::int64_t>::max());
  for (const auto& [key, text] : file.metadata)
    if (key.rfind("hyperparameter/", 0) == 0) {
      float value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
        throw Error(ErrorCode::bad_data, path + ": metadata " + printable(key) + " is '" + printable(text) +
                                             "', not a finite number");
      c.info.hyperparameters[key.substr(15)] = value;
    }
  return c;
}

}  // namespace vkp::callbacks
