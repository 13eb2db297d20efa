#!/usr/bin/python3
"""Runs an example's --evaluate as a user would and checks it against its training log.

Usage: check_evaluate.py PROGRAM LOGDIR [ARGS...]

Runs `PROGRAM --evaluate --logdir LOGDIR ARGS...`, which must exit with 0 and print
"test accuracy A of N images", and compares A with the last validation_accuracy of
LOGDIR/stats.json, which the training run's InferenceRunner computed on the same test
split with the same checkpoint: they must agree within one image in N. Exit 0 when they do.
"""
import json
import re
import subprocess
import sys


def main():
    program, logdir, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    run = subprocess.run([program, "--evaluate", "--logdir", logdir] + args, capture_output=True, text=True)
    output = run.stderr + run.stdout
    if run.returncode != 0:
        sys.exit(f"exit status {run.returncode}:\n{output}")
    found = re.search(r"test accuracy ([0-9.]+) of ([0-9]+) images", run.stdout)
    if not found:
        sys.exit(f"no 'test accuracy A of N images' line:\n{output}")
    accuracy, images = float(found.group(1)), int(found.group(2))
    with open(f"{logdir}/stats.json") as f:
        logged = json.load(f)[-1]["validation_accuracy"]
    print(f"--evaluate {' '.join(args)}: {accuracy:.4f} of {images} images; the training log: {logged:.4f}")
    if "Predicting [" not in run.stderr:
        sys.exit(f"no progress bar on stderr:\n{output}")
    if abs(accuracy - logged) > 1.0 / images + 5e-5:
        sys.exit(f"--evaluate gives {accuracy}, the training log {logged}")


if __name__ == "__main__":
    main()
