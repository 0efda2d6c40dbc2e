"""The TensorBoard scalar reader: event files written by TensorBoard's own writer in each
shape a trainer produces (event.proto, summary.proto, tensor.proto), and, in the slow test,
by TensorFlow's `tf.summary` itself, checked against TensorBoard's `EventAccumulator`.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from tensorboard.compat.proto import (
    event_pb2,
    summary_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    types_pb2,
)
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from infra.records.tensorboard_scalars import Point, latest, read_run_scalars, read_scalars, series


def _value(tag: str, tensor: tensor_pb2.TensorProto, plugin: str = "") -> summary_pb2.Summary.Value:
    value = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
    if plugin:
        value.metadata.plugin_data.plugin_name = plugin
    return value


def _write(
    directory: Path, steps: list[tuple[int, float, list[summary_pb2.Summary.Value]]]
) -> None:
    writer = EventFileWriter(str(directory))
    for step, wall_time, values in steps:
        summary = summary_pb2.Summary(value=values)
        writer.add_event(event_pb2.Event(wall_time=wall_time, step=step, summary=summary))
    writer.close()


def _float(value: float) -> tensor_pb2.TensorProto:
    return tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[value])


def test_every_scalar_shape_is_read_and_nothing_else(tmp_path: Path) -> None:
    double = tensor_pb2.TensorProto(
        dtype=types_pb2.DT_DOUBLE, tensor_content=struct.pack("<d", 0.25)
    )
    text = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[b"hello"])
    vector = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[1.0, 2.0])
    vector.tensor_shape.dim.add(size=2)
    _write(
        tmp_path,
        [
            # TF2: the plugin's metadata with a tag's first value only.
            (1, 100.0, [_value("loss", _float(2.0), "scalars"), _value("note", text, "text")]),
            (2, 101.0, [_value("loss", _float(1.0)), _value("note", text)]),
            (2, 101.5, [_value("lr", double, "scalars"), _value("weights", vector, "histograms")]),
            # TF1 / Keras / PyTorch: simple_value.
            (3, 102.0, [summary_pb2.Summary.Value(tag="acc", simple_value=0.75)]),
        ],
    )
    assert read_scalars(tmp_path) == {
        "loss": [Point(1, 2.0, 100.0), Point(2, 1.0, 101.0)],
        "lr": [Point(2, 0.25, 101.5)],
        "acc": [Point(3, 0.75, 102.0)],
    }


def test_a_step_written_again_after_a_restart_keeps_the_newer_value(tmp_path: Path) -> None:
    _write(tmp_path, [(10, 100.0, [_value("loss", _float(1.5), "scalars")]),
                      (20, 101.0, [_value("loss", _float(1.0))])])  # fmt: skip
    time.sleep(0.01)  # a later event file: its name carries its creation time
    _write(tmp_path, [(20, 200.0, [_value("loss", _float(0.875), "scalars")]),
                      (30, 201.0, [_value("loss", _float(0.625))])])  # fmt: skip
    assert read_scalars(tmp_path)["loss"] == [
        Point(10, 1.5, 100.0), Point(20, 0.875, 200.0), Point(30, 0.625, 201.0)
    ]  # fmt: skip


def test_a_file_still_being_written_is_read_up_to_its_last_whole_record(tmp_path: Path) -> None:
    _write(tmp_path, [(1, 100.0, [_value("loss", _float(2.0), "scalars")])])
    (path,) = tmp_path.glob("*tfevents*")
    with path.open("ab") as events:
        events.write(struct.pack("<Q", 500) + b"\x00" * 10)  # a header, then half a record
    assert read_scalars(tmp_path) == {"loss": [Point(1, 2.0, 100.0)]}


def test_a_run_dir_is_read_per_directory_of_event_files(tmp_path: Path) -> None:
    _write(tmp_path / "train", [(5, 1.0, [_value("loss", _float(0.5), "scalars")])])
    _write(tmp_path / "eval", [(5, 2.0, [_value("test_accuracy", _float(0.9), "scalars")])])
    _write(tmp_path / ".tftrain-run", [(5, 3.0, [_value("hidden", _float(1.0), "scalars")])])
    (tmp_path / "checkpoints").mkdir()
    assert read_run_scalars(tmp_path) == {
        "eval": {"test_accuracy": [Point(5, pytest.approx(0.9), 2.0)]},
        "train": {"loss": [Point(5, 0.5, 1.0)]},
    }
    assert read_run_scalars(tmp_path / "missing") == {}


@pytest.mark.slow
def test_tf_summary_scalars_read_as_tensorboards_event_accumulator_reads_them(
    tmp_path: Path,
) -> None:
    import tensorflow as tf
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        for step, loss in ((100, 0.7), (200, 0.3), (300, 0.1)):
            tf.summary.scalar("loss", loss, step=step)
            tf.summary.scalar("accuracy", 1 - loss, step=step)
    writer.close()
    accumulator = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    accumulator.Reload()
    ours = read_scalars(tmp_path)
    for tag in ("loss", "accuracy"):
        theirs = [
            Point(e.step, float(tensor_util.make_ndarray(e.tensor_proto)), e.wall_time)
            for e in accumulator.Tensors(tag)
        ]
        assert ours[tag] == theirs


def test_a_vector_is_no_scalar_and_a_half_is_read_from_its_bits(tmp_path: Path) -> None:
    shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=2)])
    vector = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[1.0, 2.0],
                                    tensor_shape=shape)  # fmt: skip
    # float16 1.5 is 0x3E00 (sign 0, exponent 15, fraction 0x200): half_val holds those bits.
    # -1.5 is 0xBE00: the sign bit set, an unsigned 16-bit value above 32767.
    half = tensor_pb2.TensorProto(dtype=types_pb2.DT_HALF, half_val=[0x3E00])
    negative = tensor_pb2.TensorProto(dtype=types_pb2.DT_HALF, half_val=[0xBE00])
    values = [_value("vector", vector, "scalars"), _value("half", half), _value("neg", negative)]
    _write(tmp_path, [(1, 10.0, values)])
    assert read_scalars(tmp_path) == {"half": [Point(1, 1.5, 10.0)], "neg": [Point(1, -1.5, 10.0)]}


def test_event_files_two_directories_down_are_read_and_no_deeper(tmp_path: Path) -> None:
    scalar = [_value("loss", _float(0.5), "scalars")]
    for where in ("train/a", "eval/b", "eval/b/too-deep"):
        (tmp_path / where).mkdir(parents=True)
        _write(tmp_path / where, [(1, 10.0, scalar)])
    assert sorted(read_run_scalars(tmp_path)) == ["eval/b", "train/a"]
    assert sorted(read_run_scalars(tmp_path, depth=3)) == ["eval/b", "eval/b/too-deep", "train/a"]


def test_a_metric_is_found_by_its_tag_in_any_directory(tmp_path: Path) -> None:
    points = {
        "eval/holdout/test_accuracy": [Point(3, 0.8, 1.0)],
        "train/loss": [Point(3, 1.0, 1.0)],
    }
    assert series(points, "test_accuracy") == [Point(3, 0.8, 1.0)]
    assert latest(points, "holdout/test_accuracy") is None  # a tag, not part of a path


def _raw_file(path: Path, records: list[bytes]) -> None:
    """A TFRecord file of `records` as they are, framed by TensorBoard's own writer."""
    from tensorboard.summary.writer.record_writer import RecordWriter

    with path.open("wb") as stream:
        writer = RecordWriter(stream)
        for record in records:
            writer.write(record)


def _event(step: int, wall_time: float, value: summary_pb2.Summary.Value) -> bytes:
    summary = summary_pb2.Summary(value=[value])
    return event_pb2.Event(step=step, wall_time=wall_time, summary=summary).SerializeToString()


def test_a_record_that_does_not_parse_is_skipped_and_reading_goes_on(tmp_path: Path) -> None:
    good = [_event(s, 1.0 + s, _value("loss", _float(s / 4), "scalars")) for s in (1, 2)]
    _raw_file(tmp_path / "events.out.tfevents.1.h", [good[0], b"\xff\xff\xff", good[1]])
    assert read_scalars(tmp_path) == {"loss": [Point(1, 0.25, 2.0), Point(2, 0.5, 3.0)]}


def test_a_record_missing_part_of_its_checksum_is_still_being_written(tmp_path: Path) -> None:
    records = [_event(s, 1.0, _value("loss", _float(s / 4), "scalars")) for s in (1, 2)]
    path = tmp_path / "events.out.tfevents.1.h"
    _raw_file(path, records)
    path.write_bytes(path.read_bytes()[:-2])  # the last record's data whole, its CRC half
    assert read_scalars(tmp_path) == {"loss": [Point(1, 0.25, 1.0)]}


def test_only_event_files_are_read(tmp_path: Path) -> None:
    _raw_file(tmp_path / "events.out.tfevents.1.h", [_event(1, 1.0, _value("loss", _float(1.0)))])
    _raw_file(tmp_path / "backup.bin", [_event(1, 9.0, _value("loss", _float(5.0)))])
    assert read_scalars(tmp_path) == {"loss": [Point(1, 1.0, 1.0)]}


def test_which_tensors_are_scalars_by_their_plugin(tmp_path: Path) -> None:
    described = _value("described", _float(0.5))
    described.metadata.display_name = "metadata, but no plugin named"
    records = [
        _event(1, 1.0, described),
        _event(1, 1.0, _value("hparam", _float(3.0), "hparams")),  # another plugin's tensor
        _event(2, 2.0, _value("hparam", _float(4.0))),  # still that plugin's: said once
    ]
    _raw_file(tmp_path / "events.out.tfevents.1.h", records)
    assert read_scalars(tmp_path) == {"described": [Point(1, 0.5, 1.0)]}


def test_a_step_written_twice_keeps_the_later_wall_time_else_the_later_record(
    tmp_path: Path,
) -> None:
    # The later file (by name) holds the older write: wall time decides, not file order.
    _raw_file(tmp_path / "events.out.tfevents.1.h", [_event(5, 20.0, _value("a", _float(1.0)))])
    _raw_file(tmp_path / "events.out.tfevents.2.h", [_event(5, 10.0, _value("a", _float(2.0)))])
    # Two writes of one step at one wall time: the one read last.
    twice = [_event(7, 30.0, _value("b", _float(1.0))), _event(7, 30.0, _value("b", _float(2.0)))]
    _raw_file(tmp_path / "events.out.tfevents.3.h", twice)
    assert read_scalars(tmp_path) == {"a": [Point(5, 1.0, 20.0)], "b": [Point(7, 2.0, 30.0)]}
