"""An independent reader of TensorBoard event files, for the tests: TFRecord framing checked with
a CRC-32C of its own, each record parsed by Google's protobuf runtime (Debian's python3-protobuf)
with TensorBoard's Event/Summary/SessionLog definitions (the fields used, with their numbers and
types from tensorflow/core/util/event.proto and summary.proto), and TensorBoard's purge: a
SessionLog START at step s drops the events at step s and after read before it.

    read_events(run_dir/tensorboard) -> {tag: [(step, value), ...]} in file order
"""
import glob
import os
import struct

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def _crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def _masked(data):
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _event_class():
    proto = descriptor_pb2.FileDescriptorProto(name="ct_test_event.proto", package="tensorflow", syntax="proto3")

    def message(name, fields):
        m = proto.message_type.add(name=name)
        for field_name, number, kind, type_name, repeated in fields:
            f = m.field.add(name=field_name, number=number, type=kind,
                            label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
            if type_name:
                f.type_name = type_name
        return m

    # Summary.Value in summary.proto, top-level here (the same bytes on the wire).
    message("Value", [("tag", 1, F.TYPE_STRING, None, False), ("simple_value", 2, F.TYPE_FLOAT, None, False)])
    message("Summary", [("value", 1, F.TYPE_MESSAGE, ".tensorflow.Value", True)])
    session = message("SessionLog", [("status", 1, F.TYPE_ENUM, ".tensorflow.SessionLog.SessionStatus", False),
                                     ("checkpoint_path", 2, F.TYPE_STRING, None, False),
                                     ("msg", 3, F.TYPE_STRING, None, False)])
    status = session.enum_type.add(name="SessionStatus")
    for name, number in [("STATUS_UNSPECIFIED", 0), ("START", 1), ("STOP", 2), ("CHECKPOINT", 3)]:
        status.value.add(name=name, number=number)
    message("Event", [("wall_time", 1, F.TYPE_DOUBLE, None, False),
                      ("step", 2, F.TYPE_INT64, None, False),
                      ("file_version", 3, F.TYPE_STRING, None, False),
                      ("summary", 5, F.TYPE_MESSAGE, ".tensorflow.Summary", False),
                      ("session_log", 7, F.TYPE_MESSAGE, ".tensorflow.SessionLog", False)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    descriptor = pool.FindMessageTypeByName("tensorflow.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


Event = _event_class()


def records(path):
    """The payloads of one TFRecord file; every CRC must match (a torn last record would not)."""
    data = open(path, "rb").read()
    at = 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        assert length_crc == _masked(header), f"{path}: bad length CRC at byte {at}"
        payload = data[at + 12:at + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        assert payload_crc == _masked(payload), f"{path}: bad payload CRC at byte {at}"
        yield payload
        at += 16 + length


def events(directory):
    """Every Event of every events.out.tfevents.* file in `directory`, files in name order."""
    files = sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*")))
    assert files, f"no event files in {directory}"
    for path in files:
        parsed = [Event.FromString(payload) for payload in records(path)]
        assert parsed[0].file_version == "brain.Event:2", f"{path}: does not start with the file version"
        yield from parsed


def read_events(directory, purge=True):
    scalars = {}
    for event in events(directory):
        if purge and event.HasField("session_log") and event.session_log.status == 1:  # START
            for tag in scalars:
                scalars[tag] = [(step, v) for step, v in scalars[tag] if step < event.step]
        for value in event.summary.value:
            scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    return scalars
