// Fuzz target: the char corpus reader (documents split on separator lines, held-out
// documents, the byte vocabulary), on one text file.
#include "fuzz_target.h"

#include "dataflow/char_corpus.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  scratch.write("texts.txt", data, size);
  return vkp::fuzz::expect_clean([&] {
    const auto corpus = vkp::dataflow::read_char_corpus(scratch.dir(), {.separator = "%", .validation_every = 2});
    (void)corpus->decode(corpus->train);
  });
}
