#!/usr/bin/python3
"""Writes weights as PyTorch names and lays them out, with NumPy, and the outputs NumPy
computes from them, for foreign_weights_test.cpp.

Usage: write_torch_weights.py DIR

DIR/torch_mlp.npz (np.savez_compressed, float64 as NumPy makes them):
    net.0.weight [8, 6], net.0.bias [8], net.0.num_batches_tracked (int64, to ignore),
    net.2.weight [3, 8], net.2.bias [3]          -- nn.Linear layouts [out, in]
DIR/torch_conv.safetensors (the format written by hand, float32):
    conv.weight [4, 2, 3, 3], conv.bias [4]      -- nn.Conv2d layout [out, in, kh, kw]
DIR/io.npz (np.savez, stored):
    x [5, 6], mlp [5, 3]: relu(x W0^T + b0) W2^T + b2
    image [2, 5, 5, 2] (NHWC), conv [2, 5, 5, 4]: the convolution with zero padding 1
"""
import json
import struct
import sys

import numpy as np


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(12)
    w0, b0 = rng.normal(size=(8, 6)), rng.normal(size=8)
    w2, b2 = rng.normal(size=(3, 8)), rng.normal(size=3)
    np.savez_compressed(f"{out}/torch_mlp.npz", **{
        "net.0.weight": w0, "net.0.bias": b0, "net.0.num_batches_tracked": np.array(7, dtype=np.int64),
        "net.2.weight": w2, "net.2.bias": b2})
    x = rng.normal(size=(5, 6))
    mlp = np.maximum(x @ w0.T + b0, 0) @ w2.T + b2

    cw = rng.normal(size=(4, 2, 3, 3)).astype(np.float32)
    cb = rng.normal(size=4).astype(np.float32)
    header = {}
    data = b""
    for name, a in (("conv.weight", cw), ("conv.bias", cb)):
        raw = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(f"{out}/torch_conv.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)

    image = rng.normal(size=(2, 5, 5, 2)).astype(np.float32)
    padded = np.pad(image.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    conv = np.zeros((2, 5, 5, 4))
    for y in range(5):
        for x_ in range(5):
            window = padded[:, y:y + 3, x_:x_ + 3, :]  # [n, kh, kw, cin]
            conv[:, y, x_, :] = np.einsum("nhwi,oihw->no", window, cw.astype(np.float64)) + cb
    np.savez(f"{out}/io.npz", x=x, mlp=mlp, image=image, conv=conv)


if __name__ == "__main__":
    main()
