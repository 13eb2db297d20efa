// Weights from other frameworks, and several sources at once (tensorpack's SaverRestore
// with prefix / ignore, DictRestore, ChainInit). A PyTorch model's state dict saved as
// safetensors, or as .npz through NumPy, becomes a vkpack model's variables:
//
//   vkp::train::WeightMap map;
//   map.ignore = {R"(.*num_batches_tracked)"};
//   map.rename = {{R"(^features\.0\.)", "conv0/"}, {R"(^classifier\.)", "linear/"},
//                 {R"(weight$)", "W"}, {R"(bias$)", "b"}};
//   map.layouts = {{R"(^conv.*/W$)", vkp::train::Layout::torch_conv},
//                  {R"(^linear/W$)", vkp::train::Layout::torch_linear}};
//   config.session_init = std::make_shared<vkp::train::WeightsRestore>("resnet.npz", map);
//
// Names go through `ignore` (dropped), `strip_prefix`, then every `rename` rule in order
// (std::regex_replace, ECMAScript: $1 for groups); the first `layouts` rule whose pattern
// matches the new name converts the array. Float64 arrays (NumPy's default) arrive as
// float32. Every problem is named at once in one Error: source arrays no variable takes
// ("unexpected"), model variables nothing provides ("missing"; optimizer slots are not
// model variables), arrays whose converted shape is not the variable's, and two sources
// that map to one name.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"
#include "train/session_init.h"

namespace vkp::train {

enum class Layout {
  as_is,
  torch_linear,  // nn.Linear's [out, in] -> FullyConnected's W [in, out]
  // nn.Conv2d's [out, in / groups, kh, kw] -> Conv2D's W [kh, kw, in / groups, out];
  // nn.ConvTranspose2d's [in, out, kh, kw] -> Conv2DTranspose's W [kh, kw, out, in]
  // (one permutation serves both)
  torch_conv,
};

struct WeightMap {
  std::vector<std::string> ignore;  // regular expressions of source names to drop
  std::string strip_prefix;         // removed from the names that start with it
  std::vector<std::pair<std::string, std::string>> rename;
  std::vector<std::pair<std::string, Layout>> layouts;
  bool allow_missing = false;     // model variables the source lacks keep their values (logged)
  bool allow_unexpected = false;  // arrays no variable takes are skipped (logged)
};

// Every array of a safetensors file (vkpack's checkpoints too), an .npz or an .npy (named
// after the file), by name.
std::map<std::string, Array> read_weights(const std::string& path);

// `source` under `map`'s names and layouts; `origin`, when given, receives each new
// name's source name. Error(invalid_argument) for two arrays mapped to one name, or a
// layout that does not fit an array's rank.
std::map<std::string, Array> map_weights(const std::map<std::string, Array>& source, const WeightMap& map,
                                         std::map<std::string, std::string>* origin = nullptr);

// A file of weights from anywhere (read_weights) through a WeightMap.
class WeightsRestore : public SessionInit {
 public:
  explicit WeightsRestore(std::string path, WeightMap map = {}) : path_(std::move(path)), map_(std::move(map)) {}
  void init(graph::Session& session) override;

 private:
  std::string path_;
  WeightMap map_;
};

// Several SessionInits in order; a later one overwrites what an earlier one set (a
// backbone from one file, a head from another).
class ChainInit : public SessionInit {
 public:
  explicit ChainInit(std::vector<std::shared_ptr<SessionInit>> inits) : inits_(std::move(inits)) {}
  void init(graph::Session& session) override {
    for (const auto& i : inits_) i->init(session);
  }

 private:
  std::vector<std::shared_ptr<SessionInit>> inits_;
};

}  // namespace vkp::train
