#!/usr/bin/python3
"""LMDB files as tensorpack's LMDBSerializer lays them out (one file, subdir=False, keys
of 8 decimal digits), through py-lmdb (python3-lmdb): the reference lmdb_data_test.cpp
checks vkpack against. Datapoint bytes are decoded here from their specification in
dataflow/internal/datapoint_codec.h, not by vkpack.

  lmdb_python.py write FILE   five raw values and a tensorpack-style __keys__ entry, in
                              tensorpack's 2 TiB map
  lmdb_python.py check FILE   exits 0 when FILE holds what LMDBSerializer::save wrote in
                              lmdb_data_test.cpp
"""
import struct
import sys

import lmdb


def write(path):
    # tensorpack's map of 2 TiB, which LMDB stores in the file: a reader must not ask for
    # it again (ThreadSanitizer's builds cannot map a TiB).
    env = lmdb.open(path, subdir=False, map_size=1 << 41, lock=False)
    with env.begin(write=True) as txn:
        for i in range(5):
            txn.put(b"%08d" % i, bytes([i]) * (3 * i))
        txn.put(b"__keys__", b"\x95\xa800000000")  # msgpack of a list, as tensorpack writes it
    env.close()


def components(value):
    (count,) = struct.unpack_from("<I", value)
    at, out = 4, []
    for _ in range(count):
        code, rank, _pad = struct.unpack_from("<BBH", value, at)
        at += 4
        dims = struct.unpack_from("<%dq" % rank, value, at)
        at += 8 * rank
        size = {1: 4, 2: 2, 3: 4, 4: 8, 5: 1}[code]
        n = 1
        for d in dims:
            n *= d
        out.append((code, list(dims), value[at:at + n * size]))
        at += n * size
    assert at == len(value), (at, len(value))
    return out


def check(path):
    env = lmdb.open(path, subdir=False, readonly=True, lock=False)
    with env.begin() as txn:
        items = list(txn.cursor())
    assert [k for k, _ in items] == [b"%08d" % i for i in range(7)], [k for k, _ in items]
    for i, (_, value) in enumerate(items):
        (x_code, x_dims, x), (y_code, y_dims, y) = components(value)
        assert (x_code, x_dims) == (1, [3]), (x_code, x_dims)
        assert struct.unpack("<3f", x) == (i, -0.5 * i, 2.0), struct.unpack("<3f", x)
        assert (y_code, y_dims, y) == (5, [], bytes([200 + i])), (y_code, y_dims, y)


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
