#!/usr/bin/python3
"""OpenCV (python3-opencv) on the other side of image_file_test.cpp.

  images_cv2.py write DIR   writes DIR/rgb.png (5 x 7 RGB), DIR/rgba.png (3 x 4 RGBA),
                            DIR/gray.png (4 x 6), DIR/rgb.jpg (5 x 7, quality 100) with
                            OpenCV's decoding of it as raw RGB bytes (rgb.jpg.opencv), and
                            DIR/folder/{cat/a.png, cat/b.png, dog/c.png, empty/,
                            notes.txt, dog/readme.md}
  images_cv2.py check PNG   reads a PNG vkpack wrote and checks it holds the pattern
  images_cv2.py decode JPG  writes OpenCV's decoding of a JPEG vkpack wrote, raw RGB
                            bytes, to JPG.opencv
  images_cv2.py convert CODE IN OUT DTYPE H W
                            cv2.cvtColor(image, cv2.CODE) of the raw H x W x 3 image IN
                            (DTYPE uint8 or float32), its raw result to OUT

The pattern: channel c of pixel (y, x) is (37 y + 11 x + 71 c + seed) mod 256; RGB(A)
order (OpenCV's BGR(A) is converted both ways). Gray images use channel 0.
"""
import os
import sys

import cv2
import numpy as np


def pattern(h, w, c, seed=0):
    y, x, k = np.meshgrid(np.arange(h), np.arange(w), np.arange(c), indexing="ij")
    return ((37 * y + 11 * x + 71 * k + seed) % 256).astype(np.uint8)


def save(path, rgb):
    if rgb.shape[2] == 3:
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    elif rgb.shape[2] == 4:
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGBA2BGRA)
    else:
        bgr = rgb[:, :, 0]
    params = [cv2.IMWRITE_JPEG_QUALITY, 100] if path.endswith(".jpg") else []
    assert cv2.imwrite(path, bgr, params), path


def main():
    mode, target = sys.argv[1], sys.argv[2]
    if mode == "write":
        save(f"{target}/rgb.png", pattern(5, 7, 3))
        save(f"{target}/rgba.png", pattern(3, 4, 4))
        save(f"{target}/gray.png", pattern(4, 6, 1))
        save(f"{target}/rgb.jpg", pattern(5, 7, 3))
        # OpenCV's own decoding of that JPEG, RGB bytes, to compare decoders.
        cv2.cvtColor(cv2.imread(f"{target}/rgb.jpg"), cv2.COLOR_BGR2RGB).tofile(f"{target}/rgb.jpg.opencv")
        for d in ("cat", "dog", "empty"):
            os.makedirs(f"{target}/folder/{d}", exist_ok=True)
        save(f"{target}/folder/cat/a.png", pattern(2, 3, 3, 1))
        save(f"{target}/folder/cat/b.png", pattern(2, 3, 3, 2))
        save(f"{target}/folder/dog/c.png", pattern(2, 3, 3, 3))
        open(f"{target}/folder/notes.txt", "w").write("not an image")
        open(f"{target}/folder/dog/readme.md", "w").write("not an image")
        return 0
    if mode == "convert":
        code, source, out, dtype, h, w = sys.argv[2:8]
        image = np.fromfile(source, dtype=dtype).reshape(int(h), int(w), 3)
        np.ascontiguousarray(cv2.cvtColor(image, getattr(cv2, code))).tofile(out)
        return 0
    if mode == "decode":
        cv2.cvtColor(cv2.imread(target), cv2.COLOR_BGR2RGB).tofile(f"{target}.opencv")
        return 0
    image = cv2.imread(target, cv2.IMREAD_UNCHANGED)
    if image.ndim == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB if image.shape[2] == 3 else cv2.COLOR_BGRA2RGBA)
    else:
        image = image[:, :, None]
    want = pattern(*image.shape)
    ok = np.array_equal(image, want)
    print(f"{target}: {image.shape} {'matches' if ok else 'DIFFERS from'} the pattern")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
