#!/usr/bin/python3
"""Reads a TensorBoard event file with Google's protobuf library (python3-protobuf), the
messages declared here from TensorFlow's event.proto and summary.proto, and prints its
summaries as JSON: one object per Summary.Value, with its step and kind. Images are
decoded with OpenCV and given as RGB(A) pixel values. Usage: read_events.py FILE
"""
import json
import struct
import sys

import cv2
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def message(file, name, fields):
    m = file.message_type.add(name=name)
    for number, field_name, kind, label, type_name in fields:
        f = m.field.add(name=field_name, number=number, type=kind, label=label)
        if type_name:
            f.type_name = type_name
        if label == F.LABEL_REPEATED and kind == F.TYPE_DOUBLE:
            f.options.packed = True


def classes():
    file = descriptor_pb2.FileDescriptorProto(name="tb.proto", package="tb", syntax="proto3")
    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    message(file, "Image", [(1, "height", F.TYPE_INT32, opt, None), (2, "width", F.TYPE_INT32, opt, None),
                            (3, "colorspace", F.TYPE_INT32, opt, None),
                            (4, "encoded_image_string", F.TYPE_BYTES, opt, None)])
    message(file, "HistogramProto", [(1, "min", F.TYPE_DOUBLE, opt, None), (2, "max", F.TYPE_DOUBLE, opt, None),
                                     (3, "num", F.TYPE_DOUBLE, opt, None), (4, "sum", F.TYPE_DOUBLE, opt, None),
                                     (5, "sum_squares", F.TYPE_DOUBLE, opt, None),
                                     (6, "bucket_limit", F.TYPE_DOUBLE, rep, None),
                                     (7, "bucket", F.TYPE_DOUBLE, rep, None)])
    message(file, "Value", [(1, "tag", F.TYPE_STRING, opt, None), (2, "simple_value", F.TYPE_FLOAT, opt, None),
                            (4, "image", F.TYPE_MESSAGE, opt, ".tb.Image"),
                            (5, "histo", F.TYPE_MESSAGE, opt, ".tb.HistogramProto")])
    message(file, "Summary", [(1, "value", F.TYPE_MESSAGE, rep, ".tb.Value")])
    message(file, "SessionLog", [(1, "status", F.TYPE_INT32, opt, None)])
    message(file, "Event", [(1, "wall_time", F.TYPE_DOUBLE, opt, None), (2, "step", F.TYPE_INT64, opt, None),
                            (3, "file_version", F.TYPE_STRING, opt, None),
                            (5, "summary", F.TYPE_MESSAGE, opt, ".tb.Summary"),
                            (7, "session_log", F.TYPE_MESSAGE, opt, ".tb.SessionLog")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    event = pool.FindMessageTypeByName("tb.Event")
    # Newer protobuf has message_factory.GetMessageClass and no factory GetPrototype (the
    # GPU machine's Python); Debian 12's 4.21 has only GetPrototype.
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(event)
    return message_factory.MessageFactory(pool).GetPrototype(event)


def records(data):
    at = 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        yield data[at + 12:at + 12 + length]
        at += 12 + length + 4


def main():
    Event = classes()
    out = []
    for record in records(open(sys.argv[1], "rb").read()):
        event = Event.FromString(record)
        for value in event.summary.value:
            item = {"step": event.step, "tag": value.tag}
            if value.HasField("image"):
                pixels = cv2.imdecode(__import__("numpy").frombuffer(value.image.encoded_image_string, "uint8"),
                                      cv2.IMREAD_UNCHANGED)
                if pixels.ndim == 3 and pixels.shape[2] >= 3:
                    pixels = cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB if pixels.shape[2] == 3 else cv2.COLOR_BGRA2RGBA)
                item.update(kind="image", height=value.image.height, width=value.image.width,
                            colorspace=value.image.colorspace, decoded_shape=list(pixels.shape),
                            pixels=[int(v) for v in pixels.flatten()])
            elif value.HasField("histo"):
                h = value.histo
                item.update(kind="histo", min=h.min, max=h.max, num=h.num, sum=h.sum, sum_squares=h.sum_squares,
                            bucket_limit=list(h.bucket_limit), bucket=list(h.bucket))
            else:
                item.update(kind="scalar", value=value.simple_value)
            out.append(item)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
