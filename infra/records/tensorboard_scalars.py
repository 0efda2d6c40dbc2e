"""The scalars a run's TensorBoard event files hold, read without TensorFlow.

Any trainer's scalars count, however it wrote them: TF2's `tf.summary.scalar` (a rank-0
tensor of the `scalars` plugin, which TensorBoard's `EventAccumulator` returns from
`Tensors(tag)`, not `Scalars`), TF1 and Keras' `simple_value`, or any other writer of the
same event protocol (PyTorch's SummaryWriter, tensorboardX).

An event file is a TFRecord file: records of `<length: uint64 LE> <crc: uint32> <data>
<crc: uint32>`, each `data` a serialized `Event` (tensorboard/compat/proto/event.proto). It
is read here directly with TensorBoard's protobuf classes, because `EventAccumulator` imports
TensorFlow whenever it is installed (3+ s), and `python -m infra.status` answers in seconds.
A file still being written ends in a partial record: reading stops there, as TensorBoard's
own reader does. The checksums are not verified; a record that does not parse is skipped.

    read_scalars(directory)  -> {tag: [Point(step, value, wall_time), ...]}
    read_run_scalars(run_dir) -> {"train": {...}, "eval": {...}, ...}
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2, tensor_pb2, types_pb2

EVENT_FILE_MARK = "tfevents"
_HEADER = struct.Struct("<QI")  # length, its masked CRC-32C
_FOOTER = 4  # the data's masked CRC-32C
# dtype: (the TensorProto field holding the value, the format of its tensor_content)
_NUMERIC = {
    types_pb2.DT_FLOAT: ("float_val", "<f"),
    types_pb2.DT_DOUBLE: ("double_val", "<d"),
    types_pb2.DT_HALF: ("half_val", "<e"),
    types_pb2.DT_INT64: ("int64_val", "<q"),
    types_pb2.DT_INT32: ("int_val", "<i"),
    types_pb2.DT_INT16: ("int_val", "<h"),
    types_pb2.DT_INT8: ("int_val", "<b"),
    types_pb2.DT_UINT8: ("int_val", "<B"),
}
_SCALARS_PLUGIN = "scalars"


@dataclass(frozen=True)
class Point:
    step: int
    value: float
    wall_time: float  # seconds since the epoch, when the trainer wrote it


def event_files(directory: Path) -> list[Path]:
    """The event files directly in `directory`, oldest first (their names start with the
    time they were created)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if EVENT_FILE_MARK in p.name and p.is_file())


def records(path: Path) -> Iterator[bytes]:
    """The data of each complete record of a TFRecord file, read as a stream (an event file
    with images or histograms can be large)."""
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            while True:
                header = stream.read(_HEADER.size)
                if len(header) < _HEADER.size:
                    return  # the end, or a header still being written
                (length, _crc) = _HEADER.unpack(header)
                if stream.tell() + length + _FOOTER > size:
                    return  # a record still being written (or a damaged length)
                data = stream.read(length)
                stream.read(_FOOTER)
                yield data
    except OSError:
        return


def _tensor_value(tensor: tensor_pb2.TensorProto) -> float | None:
    """A rank-0 numeric tensor's value, else None."""
    if tensor.tensor_shape.dim or tensor.dtype not in _NUMERIC:
        return None
    field, layout = _NUMERIC[tensor.dtype]
    values = getattr(tensor, field)
    if values:
        if tensor.dtype == types_pb2.DT_HALF:
            # half_val holds the 16 bits of each value as an int.
            return float(struct.unpack("<e", struct.pack("<H", values[0]))[0])
        return float(values[0])
    if len(tensor.tensor_content) == struct.calcsize(layout):
        return float(struct.unpack(layout, tensor.tensor_content)[0])
    return None


def _values(event: event_pb2.Event, plugins: dict[str, str]) -> Iterator[tuple[str, float]]:
    for value in event.summary.value:
        # A writer names a tag's plugin with its first value only: remember it.
        if value.HasField("metadata") and value.metadata.plugin_data.plugin_name:
            plugins[value.tag] = value.metadata.plugin_data.plugin_name
        kind = value.WhichOneof("value")
        if kind == "simple_value":
            yield value.tag, float(value.simple_value)
        elif kind == "tensor" and plugins.get(value.tag, _SCALARS_PLUGIN) == _SCALARS_PLUGIN:
            number = _tensor_value(value.tensor)
            if number is not None:
                yield value.tag, number


def read_scalars(directory: Path) -> dict[str, list[Point]]:
    """Every scalar in the event files directly in `directory`, by tag, in step order.

    A step written more than once (a restarted trainer re-ran it from its last checkpoint)
    keeps the value written last.
    """
    latest: dict[str, dict[int, Point]] = {}
    for path in event_files(directory):
        plugins: dict[str, str] = {}
        for data in records(path):
            event = event_pb2.Event()
            try:
                event.ParseFromString(data)
            except DecodeError:
                continue
            if not event.HasField("summary"):
                continue
            for tag, number in _values(event, plugins):
                point = Point(int(event.step), number, float(event.wall_time))
                points = latest.setdefault(tag, {})
                earlier = points.get(point.step)
                if earlier is None or earlier.wall_time <= point.wall_time:
                    points[point.step] = point
    return {tag: [points[step] for step in sorted(points)] for tag, points in latest.items()}


def read_run_scalars(run_dir: Path, depth: int = 2) -> dict[str, dict[str, list[Point]]]:
    """`read_scalars` of `run_dir` and of each directory below it (down to `depth` levels)
    that holds event files, by path relative to `run_dir` ("." for itself), e.g. the
    bundled trainer's "train" and "eval"."""
    found: dict[str, dict[str, list[Point]]] = {}
    level = [run_dir]
    for _ in range(depth + 1):
        below = []
        for directory in level:
            scalars = read_scalars(directory)
            if scalars:
                found[directory.relative_to(run_dir).as_posix()] = scalars
            below += _subdirectories(directory)
        level = below
    return dict(sorted(found.items()))


def _subdirectories(directory: Path) -> list[Path]:
    try:
        return sorted(
            p
            for p in directory.iterdir()
            if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
        )
    except OSError:
        return []


def flat_run_scalars(run_dir: Path) -> dict[str, list[Point]]:
    """`read_run_scalars` in one mapping, keyed `<subdir>/<tag>` (`eval/test_accuracy`), or
    `<tag>` for the files directly in `run_dir`."""
    return {
        tag if where == "." else f"{where}/{tag}": points
        for where, scalars in read_run_scalars(run_dir).items()
        for tag, points in scalars.items()
    }


def series(scalars: Mapping[str, list[Point]], metric: str) -> list[Point]:
    """The points of `metric`: a key as read (`eval/test_accuracy`), else every key whose tag
    is `metric` (`test_accuracy` in whichever directory it was logged), merged by step."""
    if metric in scalars:
        return list(scalars[metric])
    merged = [
        p for key, points in scalars.items() if key.rsplit("/", 1)[-1] == metric for p in points
    ]
    return sorted(merged, key=lambda p: (p.step, p.wall_time))


def latest(scalars: Mapping[str, list[Point]], metric: str) -> float | None:
    """The metric's value at its highest step (Katib's `latest`), or None if never logged."""
    points = series(scalars, metric)
    return max(points, key=lambda p: (p.step, p.wall_time)).value if points else None
