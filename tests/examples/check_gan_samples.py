#!/usr/bin/python3
"""A GAN example's pictures of its samples (gan, infogan), as docs/guide.md promises them.

    check_gan_samples.py LOGDIR STEP READ_EVENTS [NAME]

<LOGDIR>/<NAME>-<STEP>.png (NAME: samples unless given) must be a 10 x 10 grid of
28 x 28 tiles (1-pixel gaps: 289 x 289, one channel) whose tiles are not all alike, and
TensorBoard's event files in LOGDIR must hold an image summary NAME at STEP with the same
pixels (read_events.py decodes it as TensorBoard would).
"""
import json
import os
import subprocess
import sys

import cv2


def main():
    logdir, step, read_events = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    tag = sys.argv[4] if len(sys.argv) > 4 else "samples"
    path = os.path.join(logdir, "%s-%d.png" % (tag, step))
    grid = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if grid is None:
        sys.exit("%s cannot be read as an image" % path)
    if grid.shape != (289, 289):
        sys.exit("%s is %s, not a 10 x 10 grid of 28 x 28 tiles with 1-pixel gaps (289, 289)" % (path, grid.shape))
    tiles = [grid[29 * r:29 * r + 28, 29 * c:29 * c + 28] for r in range(10) for c in range(10)]
    distinct = len({t.tobytes() for t in tiles})
    if distinct < 50:
        sys.exit("%s: only %d of its 100 tiles differ" % (path, distinct))
    shown = []
    for name in sorted(n for n in os.listdir(logdir) if n.startswith("events.out.tfevents.")):
        out = subprocess.run([sys.executable, read_events, os.path.join(logdir, name)], capture_output=True,
                             text=True, check=True).stdout
        shown += [v for v in json.loads(out) if v["kind"] == "image" and v["tag"] == tag and v["step"] == step]
    if len(shown) != 1:
        sys.exit("%d image summaries '%s' at step %d in %s's event files, not 1" % (len(shown), tag, step, logdir))
    image = shown[0]
    if (image["height"], image["width"]) != grid.shape or image["pixels"] != [int(v) for v in grid.flatten()]:
        sys.exit("TensorBoard's '%s' at step %d (%d x %d) is not %s" % (tag, step, image["height"], image["width"], path))
    print("%s: a 10 x 10 grid, %d distinct tiles, the same pixels in TensorBoard at step %d" % (path, distinct, step))


if __name__ == "__main__":
    main()
