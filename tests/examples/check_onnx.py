#!/usr/bin/python3
"""Runs an exported model in engines that are not vkpack's and compares with vkpack.

Usage: check_onnx.py MODEL.onnx INPUTS.f32 EXPECTED.f32 N INPUT_SHAPE TOLERANCE

INPUTS.f32 holds N inputs (float32, row-major, each of INPUT_SHAPE, e.g. 28,28,1) and
EXPECTED.f32 vkpack's outputs for them ([N, K] float32). The model must pass ONNX's own
checker (full check, with shape inference) and OpenCV's dnn module (Debian's
python3-opencv, 4.6) must reproduce the outputs within TOLERANCE (max abs) with the same
argmax in every row. Prints the figures; exit status 0 when all holds.
"""
import sys

import cv2
import numpy as np
import onnx


def main():
    model_path, inputs_path, expected_path = sys.argv[1:4]
    n = int(sys.argv[4])
    shape = [int(d) for d in sys.argv[5].split(",")]
    tolerance = float(sys.argv[6])

    onnx.checker.check_model(onnx.load(model_path), full_check=True)
    inputs = np.fromfile(inputs_path, dtype=np.float32).reshape([n] + shape)
    expected = np.fromfile(expected_path, dtype=np.float32).reshape(n, -1)

    net = cv2.dnn.readNetFromONNX(model_path)
    net.setInput(inputs)
    got = net.forward().reshape(n, -1)

    diff = float(np.max(np.abs(got - expected)))
    same = int(np.sum(np.argmax(got, axis=1) == np.argmax(expected, axis=1)))
    print(f"opencv {cv2.__version__}, onnx {onnx.__version__}: max |opencv - vkpack| = {diff:.3g} "
          f"over {expected.size} outputs, same class in {same} of {n} rows")
    return 0 if diff <= tolerance and same == n else 1


if __name__ == "__main__":
    sys.exit(main())
