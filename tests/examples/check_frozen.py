#!/usr/bin/python3
"""Compares two safetensors checkpoints of a fine-tuning run, reading the format itself.

Usage: check_frozen.py BEFORE AFTER FROZEN_REGEX TRAINED_REGEX

Every tensor whose name matches FROZEN_REGEX must be bit for bit the same in both files,
every one matching TRAINED_REGEX must differ; at least one of each must exist. Exit 0
when that holds.
"""
import json
import re
import struct
import sys


def tensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    return {k: body[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in header.items() if k != "__metadata__"}


def main():
    before, after = tensors(sys.argv[1]), tensors(sys.argv[2])
    frozen, trained = re.compile(sys.argv[3]), re.compile(sys.argv[4])
    ok, counts = True, [0, 0]
    for name in sorted(before):
        if name not in after:
            continue
        same = before[name] == after[name]
        if frozen.fullmatch(name):
            counts[0] += 1
            ok &= same
            print(f"frozen  {name}: {'kept' if same else 'MOVED'}")
        elif trained.fullmatch(name):
            counts[1] += 1
            ok &= not same
            print(f"trained {name}: {'moved' if not same else 'UNCHANGED'}")
    return 0 if ok and all(counts) else 1


if __name__ == "__main__":
    sys.exit(main())
