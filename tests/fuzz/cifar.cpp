// Fuzz target: CIFAR's binary batches, as load_cifar10 and load_cifar100 read a test
// split (the first input byte picks which; the rest is test_batch.bin or test.bin). The
// format fixes every size, so most inputs meet the record-count check; what is fuzzed
// is that every refusal is clean.
#include "fuzz_target.h"

#include "dataflow/cifar.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vkp::fuzz::Scratch scratch;
  if (size == 0) return 0;
  const bool hundred = data[0] % 2 == 1;
  std::filesystem::remove_all(scratch.dir() / "test_batch.bin");
  std::filesystem::remove_all(scratch.dir() / "test.bin");
  scratch.write(hundred ? "test.bin" : "test_batch.bin", data + 1, size - 1);
  return vkp::fuzz::expect_clean([&] {
    if (hundred) vkp::dataflow::load_cifar100(scratch.dir(), vkp::dataflow::Split::test, data[0] % 4 == 3);
    else vkp::dataflow::load_cifar10(scratch.dir(), vkp::dataflow::Split::test);
  });
}
