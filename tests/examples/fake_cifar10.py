#!/usr/bin/env python3
"""Writes a stand-in for CIFAR-10's binary version that a network can learn.

    fake_cifar10.py OUT_DIR

OUT_DIR/cifar-10-batches-bin holds data_batch_1.bin ... data_batch_5.bin and
test_batch.bin, 10,000 records each of <label byte><1024 R, 1024 G, 1024 B bytes>, as
the real files (the reader insists on their record counts). Class c's images are one
colour of its own, the same in every pixel but a band of 8 rows of noise at a random
height (a quarter of the image): a random 32 x 32 crop of a padded copy, or a mirror image, is still that colour,
so a few steps of the ResNet example learn more than chance (0.1), whichever the
augmentation. Fixed seed: the files are the same on every run.
"""
import os
import random
import sys

SIDE = 32
PLANE = SIDE * SIDE
RECORDS = 10000


def colour(label):
    """Class `label`'s red, green and blue, far apart for the ten classes."""
    return ((label * 97) % 256, (label * 53 + 80) % 256, (label * 151 + 160) % 256)


BAND = 8 * SIDE


def record(rng, label):
    at = rng.randrange(SIDE - 8 + 1) * SIDE
    planes = []
    for value in colour(label):
        plane = bytes([value]) * PLANE
        planes.append(plane[:at] + rng.randbytes(BAND) + plane[at + BAND:])
    return bytes([label]) + b"".join(planes)


def main():
    out = os.path.join(sys.argv[1], "cifar-10-batches-bin")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(10)
    names = ["data_batch_%d.bin" % i for i in range(1, 6)] + ["test_batch.bin"]
    for name in names:
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"".join(record(rng, rng.randrange(10)) for _ in range(RECORDS)))


if __name__ == "__main__":
    main()
