#!/usr/bin/python3
"""NumPy on the other side of npz_data_test.cpp.

  npz_numpy.py write PATH   np.savez_compressed(PATH, x_train=float32 [5, 2, 3] (x[i, j, k]
                            = 100 i + 10 j + k), y_train=int64 [5] (i * 7), other=uint8 [3])
  npz_numpy.py check PATH   np.load(PATH, allow_pickle=False): arr_0 float32 [N, 2] holds
                            (i, -i) in row i, arr_1 int32 [N] holds i; exits 1 otherwise
"""
import sys

import numpy as np


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "write":
        i, j, k = np.meshgrid(np.arange(5), np.arange(2), np.arange(3), indexing="ij")
        x = (100 * i + 10 * j + k).astype(np.float32)
        np.savez_compressed(path, x_train=x, y_train=np.arange(5, dtype=np.int64) * 7,
                            other=np.arange(3, dtype=np.uint8))
        return 0
    with np.load(path, allow_pickle=False) as f:
        a, b = f["arr_0"], f["arr_1"]
        n = b.shape[0]
        ok = (a.dtype == np.float32 and b.dtype == np.int32 and a.shape == (n, 2)
              and np.array_equal(a[:, 0], np.arange(n, dtype=np.float32))
              and np.array_equal(a[:, 1], -np.arange(n, dtype=np.float32))
              and np.array_equal(b, np.arange(n, dtype=np.int32)) and sorted(f.files) == ["arr_0", "arr_1"])
    print(f"{path}: {'as written' if ok else 'DIFFERS'}: {a.dtype} {a.shape}, {b.dtype} {b.shape}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
