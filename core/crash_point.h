// Crash points: named places where a test can kill the process, the way a power cut or
// the OOM killer would, to prove that no kill anywhere loses or corrupts anything.
//
//   VKPACK_CRASH_AT=<point>       SIGKILL the first time the process passes <point>
//   VKPACK_CRASH_AT=<point>#<n>   ... the n-th time
//
// Points (names carry the file or step they concern):
//   step/<global step>          a training step has run, counted, and its after_run hooks too
//   before-rename/<file name>   an AtomicFile's bytes are on disk, not yet renamed over it
//   after-rename/<file name>    the file has been replaced
//   after-flush/events          TensorBoard's event file holds the epoch's scalars
// Without the variable a crash point costs one load of a flag.
#pragma once

#include <string_view>

namespace vkp {

// Whether VKPACK_CRASH_AT is set: callers that build a point's name only when it is.
bool crash_points_armed();

// Kills the process with SIGKILL if `point` is the armed one, on its n-th pass.
void crash_point(std::string_view point);

}  // namespace vkp
