#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/): small valid
files of each format, made here byte by byte from the formats' specifications (not by
vkpack's own writers, so a writer's bug cannot hide in both). The files are kept in the
repository; run this again only to change them: python3 tests/fuzz/make_seeds.py"""
import io
import json
import os
import struct
import zipfile
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data)


def safetensors(tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def npy(descr, shape, raw, version=1):
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    head = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}"
    size_field = 2 if version == 1 else 4
    pad = -(6 + 2 + size_field + len(head) + 1) % 64
    head = (head + " " * pad + "\n").encode()
    length = struct.pack("<H" if version == 1 else "<I", len(head))
    return b"\x93NUMPY" + bytes([version, 0]) + length + head + raw


def npz(arrays, deflate):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as z:
        for name, data in arrays.items():
            z.writestr(name + ".npy", data)
    return out.getvalue()


def idx(dims, raw):
    return bytes([0, 0, 0x08, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + raw


def record_file(records):
    head = b"VKPKRECS" + struct.pack("<IIQ", 1, 0, len(records))
    out = head + struct.pack("<II", zlib.crc32(head), 0)
    for components in records:
        payload = struct.pack("<I", len(components))
        for code, shape, raw in components:
            payload += struct.pack("<BBH", code, len(shape), 0) + b"".join(struct.pack("<q", s) for s in shape) + raw
        length = struct.pack("<Q", len(payload))
        out += length + struct.pack("<II", zlib.crc32(payload), zlib.crc32(length)) + payload
    return out


def png(width, height, channels, pixels):
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = b"".join(b"\x00" + pixels[y * width * channels:(y + 1) * width * channels] for y in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def bmp(width, height, pixels):  # 24-bit, bottom-up rows padded to 4 bytes
    row = width * 3 + (-width * 3) % 4
    data = b"".join(pixels[y * width * 3:(y + 1) * width * 3] + b"\x00" * ((-width * 3) % 4) for y in range(height))
    return (b"BM" + struct.pack("<IHHI", 54 + len(data), 0, 0, 54)
            + struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, row * height, 2835, 2835, 0, 0) + data)


floats = struct.pack("<6f", 0.5, -1.0, 2.0, 3.25, 0.0, -7.5)
put("safetensors", "two_tensors.safetensors",
    safetensors({"w": ("F32", [2, 3], floats), "b": ("I64", [2], struct.pack("<2q", 7, -1))}, {"step": "12"}))
put("safetensors", "half_and_bytes.safetensors",
    safetensors({"h": ("F16", [2], struct.pack("<2H", 0x3C00, 0xC000)), "u": ("U8", [3], b"\x01\x02\x03"),
                 "s": ("I32", [], struct.pack("<i", 5))}))
put("safetensors", "empty.safetensors", safetensors({}))
put("npy", "f4_2x3.npy", npy("<f4", [2, 3], floats))
put("npy", "f8_v2.npy", npy("<f8", [2], struct.pack("<2d", 1.5, -2.0), version=2))
put("npy", "i8_scalar.npy", npy("<i8", [], struct.pack("<q", 42)))
put("npy", "u1_4.npy", npy("|u1", [4], b"\x00\x01\xfe\xff"))
put("npz", "stored.npz", npz({"w": npy("<f4", [2, 3], floats), "b": npy("<i4", [1], struct.pack("<i", 3))}, False))
put("npz", "deflated.npz", npz({"w": npy("<f4", [6], floats)}, True))
put("idx", "images_rank3", b"\x02" + idx([2, 3, 2], bytes(range(12))))   # first byte: rank 3
put("idx", "labels_rank1", b"\x00" + idx([4], b"\x01\x02\x03\x09"))      # rank 1
put("cifar", "cifar10_one_record", b"\x00" + bytes([3]) + bytes(i % 256 for i in range(3072)))
put("cifar", "cifar100_one_record", b"\x01" + bytes([1, 42]) + bytes(i % 251 for i in range(3072)))
put("record_file", "two_records.vkrecords",
    record_file([[(1, [2, 3], floats), (4, [], struct.pack("<q", 1))], [(5, [2, 2], b"\x01\x02\x03\x04")]]))
put("record_file", "empty.vkrecords", record_file([]))
put("image", "gray_3x2.png", b"\x00" + png(3, 2, 1, bytes([0, 50, 100, 150, 200, 250])))
put("image", "rgba_2x2.png", b"\x04" + png(2, 2, 4, bytes(range(16))))
put("image", "rgb_3x2.bmp", b"\x03" + bmp(3, 2, bytes(range(18))))
put("image", "gray_2x2.pgm", b"\x01" + b"P5\n2 2\n255\n\x00\x40\x80\xff")
put("image_list", "train.txt", b"n01440764/n01440764_10026.JPEG 0\nn01443537/with space.JPEG\t1\r\n\n")
put("char_corpus", "fortunes.txt", b"A fortune.\n%\nAnother one,\nover two lines.\n%\nThe third.\n%\nAnd a fourth.\n")


def crc32c(data):  # Castagnoli, reflected, as core/crc32c.h
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


w = struct.pack("<2f", 1.5, -2.0)
put("checkpoint", "model-12.safetensors",
    safetensors({"w": ("F32", [2], w)},
                {"format": "vkpack checkpoint 2", "crc32c/w": f"{crc32c(w):08x}", "global_step": "12", "epoch": "2",
                 "local_step": "3", "hyperparameter/learning_rate": "0.1"}))
put("checkpoint", "format1.safetensors", safetensors({"w": ("F32", [2], w)}, {"global_step": "4", "epoch": "1"}))
put("checkpoint_index", "checkpoint",
    b'model_checkpoint_path: "model-3.safetensors"\nall_model_checkpoint_paths: "model-3.safetensors"\n')
put("checkpoint_index", "missing", b'model_checkpoint_path: "model-9.safetensors"\n')
put("stats_json", "stats.json",
    b'[\n{"epoch_num":1,"global_step":100,"loss":1.0,"accuracy":null},\n{"epoch_num":2,"global_step":200,"loss":0.5}\n]\n')
put("tuning_file", "choices.tuning.json",
    json.dumps({"driver": "llvmpipe 22.3.6 Mesa", "choices": {"gemm m64 n64 k64 nn b1 f32": "tiled_64"}}).encode())
driver = struct.pack("<4I", 32, 1, 0x10005, 0) + bytes(range(16)) + b"compiled pipelines"
put("pipeline_cache", "wrapped_driver_data", b"\x01" + driver)
put("pipeline_cache", "whole_file",
    b"\x00" + b"VKPKPIPE" + struct.pack("<IIQ", 1, crc32c(driver), len(driver)) + driver)


def tfrecord(records):  # TFRecord framing: length, masked CRC-32C of it, data, masked CRC of the data
    def masked(data):
        crc = crc32c(data)
        return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    out = b""
    for data in records:
        length = struct.pack("<Q", len(data))
        out += length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data))
    return out


def field(number, wire, body):  # protobuf: a key varint then, for wire type 2, a length
    def varint(v):
        out = b""
        while v >= 0x80:
            out += bytes([(v & 0x7F) | 0x80])
            v >>= 7
        return out + bytes([v])
    return varint(number << 3 | wire) + (varint(len(body)) + body if wire == 2 else body)


def example(features):  # tf.train.Example of (key, kind 1 bytes / 2 floats / 3 int64s, list body)
    entries = b"".join(field(1, 2, field(1, 2, k.encode()) + field(2, 2, field(kind, 2, body)))
                       for k, kind, body in features)
    return field(1, 2, entries)


# The fuzz target reads features "0" and "image" and the serializer's components.
put("tfrecord", "serialized.tfrecord",
    tfrecord([example([("0", 1, field(1, 2, struct.pack("<2f", 1.5, -2.0))), ("0/shape", 3, field(1, 2, b"\x02")),
                       ("0/dtype", 1, field(1, 2, b"f32")), ("image", 1, field(1, 2, b"\x89PNG"))]),
              example([("0", 1, field(1, 2, b"\x07")), ("0/shape", 3, b""), ("0/dtype", 1, field(1, 2, b"u8")),
                       ("image", 2, field(1, 2, struct.pack("<f", 0.5)))])]))
put("tfrecord", "unpacked.tfrecord",
    tfrecord([example([("0", 3, field(1, 0, b"\x05") + field(1, 0, b"\xac\x02")), ("image", 3, b"")])]))
