// CharCorpus: a directory of plain-text files as a character-level language-modelling
// dataset (bytes are the characters, so any encoding reads), split into training and
// validation text without cutting a document across the split; and CharSequenceData,
// the dataflow of fixed-length sequences with their next-character targets over either
// part. Debian's `fortunes` package (/usr/share/games/fortunes, about 2.5 MB of English,
// fortunes separated by lines holding only "%") is the bundled example's corpus.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

inline const std::filesystem::path kFortunesDirectory = "/usr/share/games/fortunes";

struct CharCorpusOptions {
  // A line holding only this ends a document (the fortune files' format); the separator
  // line stays in the text. Empty: each file is one document.
  std::string separator = "%";
  // Every validation_every-th document, counted over all files in name order, goes to
  // validation (20: 5%); the rest to training. At least 2.
  int validation_every = 20;
};

struct CharCorpus {
  std::vector<std::uint8_t> vocabulary;    // the bytes that occur, ascending; an id is a position here
  std::vector<std::int32_t> train, validation;  // each part's documents, concatenated, as ids
  std::size_t files = 0, train_documents = 0, validation_documents = 0;

  int vocab_size() const { return static_cast<int>(vocabulary.size()); }
  // Error(invalid_argument) naming the first byte not in the vocabulary.
  std::vector<std::int32_t> encode(std::string_view text) const;
  std::string decode(std::span<const std::int32_t> ids) const;
};

// Reads every regular file directly in `directory` (in name order), skipping symbolic
// links (the fortune package's *.u8 aliases), *.dat files (strfile's indexes) and files
// with a NUL byte (binary). Error(io) when the directory is missing (the message says
// which package provides the default one), Error(bad_data) when it holds no text or too
// little for a validation part.
std::shared_ptr<const CharCorpus> read_char_corpus(const std::filesystem::path& directory,
                                                   const CharCorpusOptions& options = {});

struct SequenceOptions {
  std::int64_t length = 64;  // characters per sequence
  bool shuffle = true;       // a new order of the sequences each epoch, drawn from seed
  std::uint64_t seed = 0;
};

// Yields {x i32 [length], y i32 [length]}: the text cut into consecutive, non-overlapping
// windows, x a window and y the same window one character later (y[t] = x[t + 1]).
class CharSequenceData : public DataFlow {
 public:
  // `ids` is one part of `corpus` (corpus->train or corpus->validation), kept alive by it.
  CharSequenceData(std::shared_ptr<const CharCorpus> corpus, const std::vector<std::int32_t>& ids,
                   SequenceOptions options = {});

  std::optional<std::size_t> size() const override { return count_; }

 protected:
  void on_reset_state() override { rng_ = Rng(options_.seed); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::shared_ptr<const CharCorpus> corpus_;
  const std::vector<std::int32_t>* ids_;
  SequenceOptions options_;
  std::size_t count_ = 0;
  Rng rng_{0};
  std::vector<std::size_t> order_;
  std::size_t position_ = 0;
};

}  // namespace vkp::dataflow
