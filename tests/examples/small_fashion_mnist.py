#!/usr/bin/env python3
"""Writes the first images of Fashion-MNIST's two splits as a dataset of their own.

    small_fashion_mnist.py SOURCE_DIR OUT_DIR TRAIN_IMAGES TEST_IMAGES

The four idx files (gzip), cut to the first TRAIN_IMAGES and TEST_IMAGES records, with
their headers' counts set to match: what `--data OUT_DIR` reads as Fashion-MNIST, for
tests whose every epoch would otherwise evaluate all 10,000 test images.
"""
import gzip
import os
import struct
import sys

FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}


def cut(source, target, count):
    with gzip.open(source, "rb") as f:
        data = f.read()
    magic, total = struct.unpack(">II", data[:8])
    dims = magic & 0xFF  # the idx magic's last byte: the number of dimensions
    header = 4 * (1 + dims)
    record = 1
    for (size,) in struct.iter_unpack(">I", data[8:header]):
        record *= size
    if count > total:
        sys.exit("%s holds %d records, fewer than %d" % (source, total, count))
    body = data[header:header + count * record]
    with gzip.open(target, "wb") as f:
        f.write(data[:4] + struct.pack(">I", count) + data[8:header] + body)


def main():
    source, out, counts = sys.argv[1], sys.argv[2], {"train": int(sys.argv[3]), "test": int(sys.argv[4])}
    os.makedirs(out, exist_ok=True)
    for split, names in FILES.items():
        for name in names:
            cut(os.path.join(source, name), os.path.join(out, name), counts[split])
    print("wrote %d train and %d test images to %s" % (counts["train"], counts["test"], out))


if __name__ == "__main__":
    main()
