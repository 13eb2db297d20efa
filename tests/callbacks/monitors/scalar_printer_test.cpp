// ScalarPrinter: the log lines, compared with what tensorpack prints (Python's
// '{}: {:.5g}'.format(name, value) over the names in sorted order).
#include "callbacks/monitors/scalar_printer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fake_trainer.h"

namespace vkp::callbacks {
namespace {

using fakes::FakeTrainer;
using fakes::LogCapture;

struct TrainingRun {
  explicit TrainingRun(std::shared_ptr<ScalarPrinter> p) : printer(std::move(p)) { monitors.setup_graph(trainer); }
  FakeTrainer trainer;
  std::shared_ptr<ScalarPrinter> printer;
  Monitors monitors{{printer}};
};

TEST(ScalarPrinter, LogsTheEpochsLatestScalarsSortedByNameAsTensorpackDoes) {
  TrainingRun run(std::make_shared<ScalarPrinter>());
  const LogCapture log;
  run.monitors.put_scalar("cross_entropy_loss", 2.5);
  run.monitors.put_scalar("learning_rate", 1e-5);
  run.monitors.put_scalar("cross_entropy_loss", 0.312174);  // the latest wins
  run.monitors.put_scalar("QueueInput/queue_size", 50.0);
  run.monitors.put_scalar("throughput", 123456.0);
  run.monitors.put_scalar("val-error-top1", 0.0812345678);
  run.monitors.put_scalar("grad_norm", -INFINITY);
  run.monitors.put_scalar("bad", std::nan(""));
  EXPECT_TRUE(log.lines().empty()) << "nothing is printed before the epoch ends";
  run.monitors.trigger_epoch();
  // Python: sorted() puts upper case first; '{:.5g}' drops trailing zeros and switches
  // to exponents below 1e-4 and from 1e5.
  EXPECT_EQ(log.texts(LogLevel::info), (std::vector<std::string>{
                                           "QueueInput/queue_size: 50",
                                           "bad: nan",
                                           "cross_entropy_loss: 0.31217",
                                           "grad_norm: -inf",
                                           "learning_rate: 1e-05",
                                           "throughput: 1.2346e+05",
                                           "val-error-top1: 0.081235",
                                       }));

  run.monitors.put_scalar("learning_rate", 0.001);
  run.monitors.trigger_epoch();
  EXPECT_EQ(log.texts(LogLevel::info).size(), 8u) << "an epoch prints only its own scalars";
  EXPECT_EQ(log.texts(LogLevel::info).back(), "learning_rate: 0.001");
}

TEST(ScalarPrinter, SelectsNamesByIncludeAndExcludePatterns) {
  // tensorpack's whitelist / blacklist: a pattern matches anywhere in the name (re.search).
  TrainingRun run(std::make_shared<ScalarPrinter>(std::vector<std::string>{"loss", "^val"},
                                                  std::vector<std::string>{"regulari[sz]e"}));
  const LogCapture log;
  for (const char* name : {"cross_entropy_loss", "regularize_loss", "val_accuracy", "accuracy", "train_val"})
    run.monitors.put_scalar(name, 0.25);
  run.monitors.trigger_epoch();
  EXPECT_EQ(log.texts(LogLevel::info), (std::vector<std::string>{"cross_entropy_loss: 0.25", "val_accuracy: 0.25"}));
}

TEST(ScalarPrinter, ExcludeAloneHidesOnlyWhatItMatches) {
  TrainingRun run(std::make_shared<ScalarPrinter>(std::vector<std::string>{}, std::vector<std::string>{"^Queue"}));
  const LogCapture log;
  run.monitors.put_scalar("QueueInput/queue_size", 3);
  run.monitors.put_scalar("loss", 0.125);
  run.monitors.trigger_epoch();
  EXPECT_EQ(log.texts(LogLevel::info), std::vector<std::string>{"loss: 0.125"});
}

TEST(ScalarPrinter, AnInvalidPatternIsAnErrorNamingIt) {
  try {
    ScalarPrinter printer({"loss("});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("include pattern 'loss(' is not a regular expression"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace vkp::callbacks
