// TrainLoopOptions: how long a run trains, where it starts and where it writes, which
// Trainer::train's options (trainer.h) and TrainConfig (train_config.h) share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace vkp::train {

class SessionInit;

struct TrainLoopOptions {
  std::shared_ptr<SessionInit> session_init;
  std::int64_t steps_per_epoch = 0;  // 0: the input source's size
  int starting_epoch = 1;
  int max_epoch = 99999;
  std::int64_t starting_global_step = -1;  // -1: (starting_epoch - 1) * steps_per_epoch
  // Steps of starting_epoch trained already (a resume from a checkpoint made inside an
  // epoch): that epoch runs only the rest of its steps. 0 .. steps_per_epoch.
  std::int64_t starting_local_step = 0;
  std::string logger_dir;  // empty: write no files
  // With starting_global_step > 0 (a resume): read and drop the batches the earlier run
  // consumed, so that the input goes on exactly where it stood (see Trainer::train).
  bool resume_input = true;
};

}  // namespace vkp::train
