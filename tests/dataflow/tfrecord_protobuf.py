#!/usr/bin/python3
"""TFRecord files of tf.train.Example as TensorFlow writes and reads them, with Google's
protobuf library (python3-protobuf; the messages declared here from TensorFlow's
example.proto and feature.proto) and a CRC-32C of its own: the reference that
tfrecord_data_test.cpp checks vkpack against, without TensorFlow.

  tfrecord_protobuf.py write FILE   three Examples (the contents tfrecord_data_test.cpp expects)
  tfrecord_protobuf.py check FILE   exits 0 when FILE holds what TFRecordSerializer::save
                                    wrote in that test (its records and their CRCs)
"""
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def example_class():
    file = descriptor_pb2.FileDescriptorProto(name="example.proto", package="tf", syntax="proto3")
    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    for name, kind in (("BytesList", F.TYPE_BYTES), ("FloatList", F.TYPE_FLOAT), ("Int64List", F.TYPE_INT64)):
        m = file.message_type.add(name=name)
        m.field.add(name="value", number=1, type=kind, label=rep)
    feature = file.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, name, type_name in ((1, "bytes_list", ".tf.BytesList"), (2, "float_list", ".tf.FloatList"),
                                    (3, "int64_list", ".tf.Int64List")):
        feature.field.add(name=name, number=number, type=F.TYPE_MESSAGE, label=opt, type_name=type_name,
                          oneof_index=0)
    features = file.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt, type_name=".tf.Feature")
    features.field.add(name="feature", number=1, type=F.TYPE_MESSAGE, label=rep,
                       type_name=".tf.Features.FeatureEntry")
    example = file.message_type.add(name="Example")
    example.field.add(name="features", number=1, type=F.TYPE_MESSAGE, label=opt, type_name=".tf.Features")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    descriptor = pool.FindMessageTypeByName("tf.Example")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data))


def records(data):
    at = 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        assert struct.unpack("<I", data[at + 8:at + 12])[0] == masked(data[at:at + 8]), "length CRC"
        body = data[at + 12:at + 12 + length]
        assert struct.unpack("<I", data[at + 12 + length:at + 16 + length])[0] == masked(body), "data CRC"
        yield body
        at += 16 + length


def write(path):
    Example = example_class()
    with open(path, "wb") as f:
        for i in range(3):
            e = Example()
            feature = e.features.feature
            feature["image/encoded"].bytes_list.value.append(bytes([i, 255, 0, 10 + i]) * (i + 1))
            feature["image/class/label"].int64_list.value.extend([i - 1, -(2 ** 40)])
            feature["bbox"].float_list.value.extend([0.25 * i, -1.5, 3.0e-8])
            feature["empty"].float_list.SetInParent()
            f.write(frame(e.SerializeToString()))


def check(path):
    Example = example_class()
    with open(path, "rb") as f:
        data = f.read()
    got = list(records(data))
    assert len(got) == 4, len(got)
    for i, body in enumerate(got):
        e = Example()
        e.ParseFromString(body)
        feature = e.features.feature
        assert sorted(feature.keys()) == ["0", "0/dtype", "0/shape", "1", "1/dtype", "1/shape"], feature.keys()
        assert feature["0/dtype"].bytes_list.value == [b"f32"]
        assert list(feature["0/shape"].int64_list.value) == [2, 3]
        values = struct.unpack("<6f", feature["0"].bytes_list.value[0])
        assert values == tuple(float(i * 10 + k) * 0.5 for k in range(6)), values
        assert feature["1/dtype"].bytes_list.value == [b"i64"]
        assert list(feature["1/shape"].int64_list.value) == []
        assert struct.unpack("<q", feature["1"].bytes_list.value[0]) == (-i,)


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
