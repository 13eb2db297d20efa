#include "dataflow/char_corpus.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <numeric>

#include "core/error.h"
#include "dataflow/permutation.h"

namespace vkp::dataflow {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> text_files(const fs::path& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    throw Error(ErrorCode::io, "CharCorpus: " + directory.string() + " is not a directory" +
                                   (directory.string().starts_with(kFortunesDirectory.string())
                                        ? std::string("; it comes with Debian's fortunes package (apt-get install "
                                                      "fortunes), or pass a directory of text files")
                                        : std::string()));
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.is_symlink() || !entry.is_regular_file() || entry.path().extension() == ".dat") continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::io, "CharCorpus: cannot open " + path.string());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorCode::io, "CharCorpus: cannot read " + path.string());
  return text;
}

// The documents of a file: each ends after a line holding only the separator (which
// stays in), or at the end of the file.
std::vector<std::string_view> documents_of(std::string_view text, const std::string& separator) {
  std::vector<std::string_view> docs;
  if (separator.empty()) {
    if (!text.empty()) docs.push_back(text);
    return docs;
  }
  std::size_t start = 0, line = 0;
  while (line < text.size()) {
    std::size_t end = text.find('\n', line);
    end = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view body = text.substr(line, end - line);
    if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
    if (body == separator) {
      docs.push_back(text.substr(start, end - start));
      start = end;
    }
    line = end;
  }
  if (start < text.size()) docs.push_back(text.substr(start));
  return docs;
}

}  // namespace

std::vector<std::int32_t> CharCorpus::encode(std::string_view text) const {
  std::array<std::int32_t, 256> id;
  id.fill(-1);
  for (std::size_t i = 0; i < vocabulary.size(); ++i) id[vocabulary[i]] = static_cast<std::int32_t>(i);
  std::vector<std::int32_t> out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<std::uint8_t>(text[i]);
    if (id[byte] < 0)
      throw Error(ErrorCode::invalid_argument, "CharCorpus::encode: byte " + std::to_string(byte) + " at position " +
                                                   std::to_string(i) + " is not in the corpus' vocabulary");
    out.push_back(id[byte]);
  }
  return out;
}

std::string CharCorpus::decode(std::span<const std::int32_t> ids) const {
  std::string out;
  out.reserve(ids.size());
  for (const std::int32_t i : ids) {
    if (i < 0 || i >= vocab_size())
      throw Error(ErrorCode::invalid_argument, "CharCorpus::decode: id " + std::to_string(i) + " is outside [0, " +
                                                   std::to_string(vocab_size()) + ")");
    out.push_back(static_cast<char>(vocabulary[static_cast<std::size_t>(i)]));
  }
  return out;
}

std::shared_ptr<const CharCorpus> read_char_corpus(const fs::path& directory, const CharCorpusOptions& options) {
  if (options.validation_every < 2)
    throw Error(ErrorCode::invalid_argument, "CharCorpus: validation_every must be at least 2, got " +
                                                 std::to_string(options.validation_every));
  auto corpus = std::make_shared<CharCorpus>();
  std::string train, validation;
  std::size_t documents = 0;
  for (const fs::path& path : text_files(directory)) {
    const std::string text = read_text(path);
    if (text.empty() || std::memchr(text.data(), 0, text.size()) != nullptr) continue;  // empty or binary
    ++corpus->files;
    for (const std::string_view doc : documents_of(text, options.separator)) {
      const bool held_out = ++documents % static_cast<std::size_t>(options.validation_every) == 0;
      (held_out ? validation : train).append(doc);
      ++(held_out ? corpus->validation_documents : corpus->train_documents);
    }
  }
  if (corpus->files == 0)
    throw Error(ErrorCode::bad_data, "CharCorpus: " + directory.string() + " holds no text files");
  if (corpus->validation_documents == 0 || corpus->train_documents == 0)
    throw Error(ErrorCode::bad_data, "CharCorpus: " + directory.string() + " holds " + std::to_string(documents) +
                                         " documents; a validation part needs at least " +
                                         std::to_string(options.validation_every));
  std::array<bool, 256> seen{};
  for (const char c : train) seen[static_cast<std::uint8_t>(c)] = true;
  for (const char c : validation) seen[static_cast<std::uint8_t>(c)] = true;
  for (int b = 0; b < 256; ++b)
    if (seen[static_cast<std::size_t>(b)]) corpus->vocabulary.push_back(static_cast<std::uint8_t>(b));
  corpus->train = corpus->encode(train);
  corpus->validation = corpus->encode(validation);
  return corpus;
}

CharSequenceData::CharSequenceData(std::shared_ptr<const CharCorpus> corpus, const std::vector<std::int32_t>& ids,
                                   SequenceOptions options)
    : corpus_(std::move(corpus)), ids_(&ids), options_(options) {
  require(corpus_ != nullptr, ErrorCode::invalid_argument, "CharSequenceData: the corpus is null");
  require(&ids == &corpus_->train || &ids == &corpus_->validation, ErrorCode::invalid_argument,
          "CharSequenceData: ids must be the corpus' train or validation part");
  require(options_.length >= 1, ErrorCode::invalid_argument, "CharSequenceData: length must be at least 1");
  const auto length = static_cast<std::size_t>(options_.length);
  count_ = ids.size() > 0 ? (ids.size() - 1) / length : 0;
  require(count_ > 0, ErrorCode::bad_data,
          "CharSequenceData: " + std::to_string(ids.size()) + " characters hold no sequence of " +
              std::to_string(length) + " plus its target");
}

void CharSequenceData::on_start_epoch() {
  position_ = 0;
  if (options_.shuffle) {
    order_ = random_permutation(count_, rng_);
  } else {
    order_.resize(count_);
    std::iota(order_.begin(), order_.end(), std::size_t{0});
  }
}

std::optional<Datapoint> CharSequenceData::on_next() {
  if (position_ == order_.size()) return std::nullopt;
  const auto length = static_cast<std::size_t>(options_.length);
  const std::int32_t* start = ids_->data() + order_[position_++] * length;
  Array x = Array::uninitialized(DType::i32, Shape{options_.length});
  Array y = Array::uninitialized(DType::i32, Shape{options_.length});
  std::memcpy(x.bytes().data(), start, length * sizeof(std::int32_t));
  std::memcpy(y.bytes().data(), start + 1, length * sizeof(std::int32_t));
  return Datapoint{std::move(x), std::move(y)};
}

}  // namespace vkp::dataflow
