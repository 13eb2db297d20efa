// ProgramCache: a session's compiled programs, by what they were compiled for (the feeds
// and their shapes, fetches, targets, variants, segments and timing). A program handed
// out (Session::program) stays for the cache's life; those only Session::run used are
// kept up to a limit, the least recently run released first.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/graph/program.h"

namespace vkp::graph {

class ProgramCache {
 public:
  // What a program is looked up by.
  static std::string key(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                         const std::vector<Tensor>& targets, int variants, const FetchSegments& segments,
                         bool timestamps);

  enum class Use { hand_out, run };
  // The program under `key`, or the one `compile` makes (given its name, "program N")
  // and keeps; nothing is kept when `compile` throws. Use::run notes it as the most
  // recently run.
  Program& find_or_compile(const std::string& key, Use use,
                           const std::function<std::unique_ptr<Program>(std::string name)>& compile);
  // Releases the least recently run programs of Use::run beyond `limit` (at least 1).
  // None of them may be running.
  void trim(std::size_t limit);

  std::size_t size() const { return programs_.size(); }
  std::vector<const Program*> programs() const;

 private:
  struct Entry {
    std::unique_ptr<Program> program;
    bool handed_out = false;     // never released
    std::uint64_t last_run = 0;  // Use::run look-ups so far when it was last run
  };
  std::map<std::string, Entry> programs_;
  std::uint64_t runs_ = 0;
};

}  // namespace vkp::graph
