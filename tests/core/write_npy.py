#!/usr/bin/python3
"""Writes NumPy array files for npz_test.cpp. Usage: write_npy.py DIR

Every array holds f(index) = 100 i + 10 j + k + 0.25 over its C-order index (i, j, k),
in its type, so that the test can recompute it:
  c_f32.npy        float32 [2, 3, 4], C order
  fortran_f64.npy  float64 [2, 3, 4], Fortran order (np.asfortranarray)
  f16.npy          float16 [3]; i64.npy int64 [2, 2] (f without the 0.25); flags.npy bool [3]
  stored.npz       np.savez: a float32 [2, 3, 4], b int32 [5] (f without the 0.25)
  deflated.npz     np.savez_compressed: the same
  big_endian.npy   '>f4' [3] (refused); scalar.npy float32 () = 7.5
"""
import sys

import numpy as np


def f(shape, dtype, fraction=0.25):
    index = np.indices(shape)
    weights = [100, 10, 1][-len(shape):]
    value = sum(w * i for w, i in zip(weights, index)) + fraction
    return value.astype(dtype)


def main():
    out = sys.argv[1]
    np.save(f"{out}/c_f32.npy", f((2, 3, 4), np.float32))
    np.save(f"{out}/fortran_f64.npy", np.asfortranarray(f((2, 3, 4), np.float64)))
    np.save(f"{out}/f16.npy", f((3,), np.float16))
    np.save(f"{out}/i64.npy", f((2, 2), np.int64, 0))
    np.save(f"{out}/flags.npy", np.array([True, False, True]))
    np.save(f"{out}/scalar.npy", np.float32(7.5))
    np.save(f"{out}/big_endian.npy", f((3,), ">f4"))
    arrays = {"a": f((2, 3, 4), np.float32), "b": f((5,), np.int32, 0)}
    np.savez(f"{out}/stored.npz", **arrays)
    np.savez_compressed(f"{out}/deflated.npz", **arrays)
    # Files whose headers declare more than they hold: a shape of 2^80 elements over 24
    # bytes of data, and a deflated entry whose central directory claims 3 GiB.
    with open(f"{out}/c_f32.npy", "rb") as src:
        data = src.read()
    with open(f"{out}/huge_shape.npy", "wb") as dst:
        dst.write(data.replace(b"(2, 3, 4)", b"(1099511627776, 1099511627776)"))
    with open(f"{out}/deflated.npz", "rb") as src:
        data = bytearray(src.read())
    central = data.find(b"PK\x01\x02")  # the first central directory entry: size at offset 24
    data[central + 24:central + 28] = (3 << 30).to_bytes(4, "little")
    with open(f"{out}/bomb.npz", "wb") as dst:
        dst.write(data)


if __name__ == "__main__":
    main()
