"""Scalars from TensorBoard event files, read as Katib's TensorFlowEvent collector reads them:
whatever a trainer logged with `tf.summary.scalar` (TF2, a tensor) or a TF1 `simple_value`,
by tag, so a user's own trainer needs no code of ours to be compared.

An event file is TFRecord framing (length, its CRC, the record, its CRC) around serialized
`Event` protos; only the protos come from the `tensorboard` package, which imports no
TensorFlow. A file cut short (a run still writing, a pod killed mid-write) yields what was
whole; a record that is not an Event is skipped.

    scalars = read_scalars(run_dir)          # {"eval/test_accuracy": [Scalar, ...], ...}
    latest(scalars, "test_accuracy")         # the last value by step, or None
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2, types_pb2

EVENT_FILE_GLOB = "events.out.tfevents.*"
_HEADER = struct.Struct("<QI")  # record length, masked CRC of the length
_FOOTER = 4  # masked CRC of the data
_FLOATS = {types_pb2.DT_FLOAT: ("float_val", "<f"), types_pb2.DT_DOUBLE: ("double_val", "<d")}


@dataclass(frozen=True, order=True)
class Scalar:
    step: int
    wall_time: float
    value: float


def records(path: Path) -> Iterator[bytes]:
    """The whole records of one TFRecord file (CRCs are not checked: a torn tail ends it)."""
    with path.open("rb") as stream:
        while header := stream.read(_HEADER.size):
            if len(header) < _HEADER.size:
                return
            (length, _crc) = _HEADER.unpack(header)
            data = stream.read(length)
            if len(data) < length or len(stream.read(_FOOTER)) < _FOOTER:
                return
            yield data


def _value(value: event_pb2.Summary.Value) -> float | None:
    """A scalar summary value, TF1's simple_value or TF2's one-element tensor."""
    if value.HasField("simple_value"):
        return float(value.simple_value)
    if not value.HasField("tensor") or value.tensor.tensor_shape.dim:
        return None  # not logged as a scalar
    field, layout = _FLOATS.get(value.tensor.dtype, ("", ""))
    if not field:
        return None
    listed = getattr(value.tensor, field)
    if listed:
        return float(listed[0])
    content = value.tensor.tensor_content
    return struct.unpack(layout, content)[0] if len(content) == struct.calcsize(layout) else None


def read_file(path: Path, prefix: str = "") -> dict[str, list[Scalar]]:
    """Each scalar tag of one event file, as `<prefix><tag>`."""
    found: dict[str, list[Scalar]] = {}
    for data in records(path):
        event = event_pb2.Event()
        try:
            event.ParseFromString(data)
        except DecodeError:
            continue
        for value in event.summary.value:
            number = _value(value)
            if number is not None:
                point = Scalar(int(event.step), float(event.wall_time), number)
                found.setdefault(prefix + value.tag, []).append(point)
    return found


def read_scalars(run_dir: Path) -> dict[str, list[Scalar]]:
    """Every scalar under `run_dir`, keyed `<subdir>/<tag>` (`eval/test_accuracy`) or `<tag>`
    for files directly in it, each sorted by step."""
    scalars: dict[str, list[Scalar]] = {}
    for path in sorted(run_dir.rglob(EVENT_FILE_GLOB)):
        where = path.parent.relative_to(run_dir).as_posix()
        prefix = "" if where == "." else f"{where}/"
        for tag, points in read_file(path, prefix).items():
            scalars.setdefault(tag, []).extend(points)
    return {tag: sorted(points) for tag, points in scalars.items()}


def series(scalars: Mapping[str, list[Scalar]], metric: str) -> list[Scalar]:
    """The points of `metric`: a key as read (`eval/test_accuracy`), else every key whose tag
    is `metric` (`test_accuracy` in whichever directory it was logged), merged by step."""
    if metric in scalars:
        return list(scalars[metric])
    merged = [
        p for key, points in scalars.items() if key.rsplit("/", 1)[-1] == metric for p in points
    ]
    return sorted(merged)


def latest(scalars: Mapping[str, list[Scalar]], metric: str) -> float | None:
    """The metric's value at its highest step (Katib's `latest`), or None if never logged."""
    points = series(scalars, metric)
    return max(points, key=lambda p: (p.step, p.wall_time)).value if points else None
