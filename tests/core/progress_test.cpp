// The progress line the training bar and the dataset predictor draw (core/progress.h).
#include "core/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace vkp {
namespace {

TEST(ProgressLine, ShowsCountPercentBarTimesAndRate) {
  // 234 of 469 in 12 s: 49%, 9 of 20 marks, 19.50 per second, 235 left take 12 s more.
  EXPECT_EQ(progress_line("Epoch 3", 234, 469, 12.0),
            "Epoch 3 [234/469]  49% |#########           | 00:12<00:12, 19.50it/s");
  EXPECT_EQ(progress_line("Epoch 1", 5, 469, 2.0),
            "Epoch 1 [  5/469]   1% |                    | 00:02<03:05, 2.50it/s");
  EXPECT_EQ(progress_line("x", 10, 10, 3725.0), "x [10/10] 100% |####################| 1:02:05<00:00, 0.00it/s");
  // An unknown total: the count, the time and the rate only.
  EXPECT_EQ(progress_line("Predicting", 5, 0, 2.0), "Predicting [5] 00:02, 2.50it/s");
}

TEST(ProgressPrinter, IntoAFileWritesTheFinalLineOnly) {
  std::FILE* f = std::tmpfile();
  ProgressPrinter p(f, "Predicting", 3);
  p.update(1);
  p.update(2);  // within 30 s of the start: no line in a file
  p.finish(3, ", done");
  std::rewind(f);
  char buffer[256] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, f);
  std::fclose(f);
  const std::string text(buffer, n);
  EXPECT_EQ(text.find("Predicting [3/3] 100% |####################| 00:00<00:00, "), 0u) << text;
  EXPECT_NE(text.find("it/s, done\n"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), text.size() - 1) << text;  // one line
  ProgressPrinter none(nullptr, "quiet", 3);            // draws nothing, and does not fail
  none.update(1);
  none.finish(3);
}

}  // namespace
}  // namespace vkp
