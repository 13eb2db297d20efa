// SessionInit: how variables get their values before training (tensorpack's
// session_init): from a checkpoint file (SaverRestore), a dictionary (DictRestore), or
// whatever a path names (SmartInit: a checkpoint file, or a log directory's latest).
// Values are matched by variable name. A variable the source lacks keeps its initial
// value (logged); a name the graph lacks, or a shape that differs, is an Error naming
// it unless ignore_mismatch (then logged and skipped). A value with NaN or infinite
// elements is an Error naming the variable and the source unless allow_non_finite:
// a diverged model is never trained on by accident.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/array.h"
#include "engine/graph/session.h"

namespace vkp::train {

class SessionInit {
 public:
  virtual ~SessionInit() = default;
  virtual void init(graph::Session& session) = 0;
};

class DictRestore : public SessionInit {
 public:
  explicit DictRestore(std::map<std::string, Array> values, bool ignore_mismatch = false,
                       bool allow_non_finite = false)
      : values_(std::move(values)), ignore_mismatch_(ignore_mismatch), allow_non_finite_(allow_non_finite) {}
  void init(graph::Session& session) override;

 private:
  std::map<std::string, Array> values_;
  bool ignore_mismatch_, allow_non_finite_;
};

class SaverRestore : public SessionInit {
 public:
  explicit SaverRestore(std::string path, bool ignore_mismatch = false, bool allow_non_finite = false)
      : path_(std::move(path)), ignore_mismatch_(ignore_mismatch), allow_non_finite_(allow_non_finite) {}
  void init(graph::Session& session) override;

 private:
  std::string path_;
  bool ignore_mismatch_, allow_non_finite_;
};

// A checkpoint file, or a directory whose `checkpoint` file names the latest one.
std::shared_ptr<SessionInit> SmartInit(const std::string& path, bool ignore_mismatch = false,
                                       bool allow_non_finite = false);

// Sets every variable in `values` on the session (see the header comment).
void restore_variables(graph::Session& session, const std::map<std::string, Array>& values, bool ignore_mismatch,
                       const std::string& source, bool allow_non_finite = false);

}  // namespace vkp::train
