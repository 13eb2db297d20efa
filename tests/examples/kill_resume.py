#!/usr/bin/env python3
"""The bundled example, killed with SIGKILL and resumed, ends where an uninterrupted run ends.

    kill_resume.py PROGRAM WORKDIR [example options...]

Trains PROGRAM (fashion_mnist) once straight through, and once killed five times and
resumed with --resume after each kill. The kills are SIGKILLs the program sends itself
at crash points (VKPACK_CRASH_AT, core/crash_point.h), so each lands exactly where it is
meant to, on any machine:
  1. epoch 1's checkpoint and index are written; its validation, best-model copy and
     statistics are not;
  2. TensorBoard's event file holds epoch 1's scalars; stats.json does not yet;
  3. in the middle of epoch 2's training steps;
  4. epoch 2's checkpoint is on disk under its temporary name, not yet renamed;
  5. epoch 2's stats.json is on disk under its temporary name, not yet renamed.
With --save-every N among the options, checkpoints are made inside epochs too, and the
run after kill 3 must resume from one of them (its log says "after K steps of epoch 2"),
training only the rest of that epoch.
Then every tensor of the final checkpoint must equal the uninterrupted run's byte for
byte, no temporary file may be left, and stats.json and the TensorBoard scalars (the
event files read as TensorBoard reads them: in name order, a SessionLog START dropping
what was loaded for its step and later) must hold the same values at the same steps,
apart from the measures of time and queue fill, which no two runs share.
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys

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


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(message):
    """(number, wire type, value) of each field of a protobuf message."""
    at = 0
    while at < len(message):
        key, at = varint(message, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(message, at)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, at = message[at:at + size], at + size
        elif wire == 2:
            size, at = varint(message, at)
            value, at = message[at:at + size], at + size
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, value


def tensorboard_scalars(logdir):
    """[(step, tag, float bits)] as TensorBoard shows them, timing tags left out (images and
    histograms: their Summary.Value's bytes)."""
    shown = []
    for name in sorted(n for n in os.listdir(logdir) if n.startswith("events.out.tfevents.")):
        with open(os.path.join(logdir, name), "rb") as f:
            data = f.read()
        at = 0
        while at + 12 <= len(data):
            (length,) = struct.unpack("<Q", data[at:at + 8])
            if at + 16 + length > len(data):
                break  # a record cut by the kill: TensorBoard stops reading there too
            event, at = data[at + 12:at + 12 + length], at + 16 + length
            step, values, start = 0, [], False
            for number, _, value in fields(event):
                if number == 2:
                    step = value
                elif number == 5:  # Summary: value = 1 {tag = 1, simple_value = 2 or image, histo}
                    for _, _, v in fields(value):
                        entry = dict((n, x) for n, _, x in fields(v))
                        # A scalar's float bits; an image or histogram as its whole message.
                        values.append((entry[1].decode(), entry.get(2, v)))
                elif number == 7:  # SessionLog: status = 1, START = 1
                    start = dict((n, x) for n, _, x in fields(value)).get(1) == 1
            if start:
                shown = [s for s in shown if s[0] < step]
            shown += [(step, tag, bits) for tag, bits in values if not tag.startswith(TIMING)]
    return shown


def final_checkpoint(logdir):
    return os.path.join(logdir, "model-%d.safetensors" % (EPOCHS * STEPS))


def command(program, logdir, extra, resume):
    return [program, "--epochs", str(EPOCHS), "--steps", str(STEPS), "--batch", "32", "--logdir", logdir] + \
        extra + (["--resume"] if resume else [])


def run(program, logdir, extra, resume, crash_at=None):
    """Runs the program to its end, or (crash_at) to its SIGKILL at that crash point."""
    env = dict(os.environ)
    env.pop("VKPACK_CRASH_AT", None)
    env["VKPACK_LOG_LEVEL"] = "info"  # the resume lines read below are info lines
    if crash_at:
        env["VKPACK_CRASH_AT"] = crash_at
    argv = command(program, logdir, extra, resume)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    expected = -signal.SIGKILL if crash_at else 0
    if done.returncode != expected:
        sys.exit("%s%s exited with %d, not %d:\n%s" % ("VKPACK_CRASH_AT=%s " % crash_at if crash_at else "",
                                                      " ".join(argv), done.returncode, expected, done.stderr[-3000:]))
    return done.stderr + done.stdout


def main():
    program, work, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    shutil.rmtree(work, ignore_errors=True)
    whole, killed = os.path.join(work, "whole"), os.path.join(work, "killed")
    run(program, whole, extra, resume=False)

    crash_points = ["after-rename/checkpoint", "after-flush/events", "step/%d" % (STEPS + STEPS // 2),
                    "before-rename/model-%d.safetensors" % (EPOCHS * STEPS), "before-rename/stats.json"]
    for i, point in enumerate(crash_points):
        log = run(program, killed, extra, resume=i > 0, crash_at=point)
        print("killed at %s; that run said: %s" % (point, " | ".join(
            line.split("] ", 1)[-1] for line in log.splitlines() if "resum" in line or "not resuming" in line)))
        if i == 3 and "--save-every" in extra and "steps of epoch 2" not in log:
            sys.exit("with %s, the run after the kill inside epoch 2 did not resume inside it:\n%s" % (
                " ".join(extra), log[-3000:]))
    log = run(program, killed, extra, resume=True)
    print("the last resume said: %s" % " | ".join(line.split("] ", 1)[-1] for line in log.splitlines() if "resum" in line))
    left = [name for name in os.listdir(killed) if ".tmp." in name]
    if left:
        sys.exit("temporary files were left: %s" % left)

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
    ta, tb = tensorboard_scalars(whole), tensorboard_scalars(killed)
    if ta != tb:
        first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
        sys.exit("TensorBoard's scalars differ (%d against %d), first at #%d:\nuninterrupted %s\nkilled        %s" % (
            len(ta), len(tb), first, ta[first:first + 3], tb[first:first + 3]))
    print("killed and resumed == uninterrupted: %d tensors bit for bit, %d epochs of statistics, %d TensorBoard scalars" % (
        len(a), len(sa), len(ta)))


if __name__ == "__main__":
    main()
