#!/usr/bin/env python3
"""The bundled example, killed with SIGKILL and resumed, ends where an uninterrupted run ends.

    kill_resume.py PROGRAM WORKDIR [example options...]

Trains PROGRAM (fashion_mnist) once straight through, and once killed three times and
resumed with --resume after each kill:
  1. as soon as epoch 1's checkpoint appears (between the save and the statistics:
     validation, the best-model copy and stats.json still to come);
  2. in the middle of epoch 2's training steps;
  3. while a file is being written (a temporary *.tmp.* is seen in the log directory).
Then every tensor of the final checkpoint must equal the uninterrupted run's byte for
byte, and stats.json must hold the same epochs with the same values, apart from the
measures of time and queue fill, which no two runs share.
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

TIMING = ("Throughput", "QueueInput/queue_size", "PeakMemory", "EstimatedTimeLeft")
EPOCHS, STEPS = 2, 12


def tensors(path):
    """Name -> bytes of a safetensors file (the header's metadata left out)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    return {name: data[8 + n + t["data_offsets"][0]:8 + n + t["data_offsets"][1]] for name, t in header.items()}


def statistics(logdir):
    with open(os.path.join(logdir, "stats.json")) as f:
        entries = json.load(f)
    return [{k: v for k, v in e.items() if not k.startswith(TIMING)} for e in entries]


def final_checkpoint(logdir):
    return os.path.join(logdir, "model-%d.safetensors" % (EPOCHS * STEPS))


def command(program, logdir, extra, resume):
    return [program, "--epochs", str(EPOCHS), "--steps", str(STEPS), "--batch", "32", "--logdir", logdir] + \
        extra + (["--resume"] if resume else [])


def run_to_end(program, logdir, extra, resume):
    done = subprocess.run(command(program, logdir, extra, resume), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("%s exited with %d:\n%s" % (" ".join(command(program, logdir, extra, resume)), done.returncode,
                                             done.stderr[-3000:]))
    return done.stderr + done.stdout


def killed_when(program, logdir, extra, resume, condition, timeout=120):
    """Starts a run and SIGKILLs it as soon as condition() holds; False if it ended first."""
    process = subprocess.Popen(command(program, logdir, extra, resume), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if condition():
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.002)
    if process.poll() is None:
        process.kill()
        sys.exit("the run neither ended nor met the kill condition in %d s" % timeout)
    return False


def main():
    program, work, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    shutil.rmtree(work, ignore_errors=True)
    whole, killed = os.path.join(work, "whole"), os.path.join(work, "killed")
    run_to_end(program, whole, extra, resume=False)

    first = os.path.join(killed, "model-%d.safetensors" % STEPS)
    stats = os.path.join(killed, "stats.json")
    kills = 0
    kills += killed_when(program, killed, extra, False, lambda: os.path.exists(first))
    seen = {}

    def mid_epoch_two():
        if os.path.exists(stats) and "at" not in seen:
            seen["at"] = time.monotonic()
        return "at" in seen and time.monotonic() - seen["at"] > 0.4

    kills += killed_when(program, killed, extra, True, mid_epoch_two)
    kills += killed_when(program, killed, extra, True,
                         lambda: any(".tmp." in name for name in os.listdir(killed)))
    log = run_to_end(program, killed, extra, resume=True)
    print("killed %d times; the last resume said: %s" % (
        kills, " | ".join(line for line in log.splitlines() if "resum" in line)))
    if kills < 2:
        sys.exit("only %d of the kills happened before the run ended" % kills)

    a = tensors(final_checkpoint(whole))
    b = tensors(final_checkpoint(killed))
    if a.keys() != b.keys():
        sys.exit("the checkpoints hold other tensors: %s" % sorted(set(a) ^ set(b)))
    differ = [name for name in a if a[name] != b[name]]
    if differ:
        sys.exit("%d of %d tensors differ from the uninterrupted run's, e.g. %s" % (len(differ), len(a), differ[:5]))
    sa, sb = statistics(whole), statistics(killed)
    if sa != sb:
        sys.exit("stats.json differs:\nuninterrupted %s\nkilled        %s" % (sa, sb))
    print("killed and resumed == uninterrupted: %d tensors bit for bit, %d epochs of statistics" % (len(a), len(sa)))


if __name__ == "__main__":
    main()
