"""The comparison of a sweep's trials, from event files written here by TensorBoard's own
writer (not by our trainer or reader): a TF2 scalar (a float tensor, as `tf.summary.scalar`
writes it), a TF1 `simple_value`, a torn file, and the table they make."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
from tensorboard.summary.writer.record_writer import RecordWriter

from infra.config import StackConfig, parse_config
from infra.lifecycle import OUTCOMES_DIR, run_key
from infra.records.tensorboard_scalars import flat_run_scalars, latest
from infra.sweep.cli import main
from infra.sweep.results import (
    best_trial,
    compare,
    missing_metric,
    to_csv,
    to_markdown,
    trial_result,
)

IMAGE = "registry.example.com/tftrain/trainer:1"
LR = "hyperparams.learningRate"


def tf2_scalar(tag: str, value: float, step: int, wall_time: float) -> event_pb2.Event:
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[value])
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, tensor=tensor)])
    return event_pb2.Event(step=step, wall_time=wall_time, summary=summary)


def tf1_scalar(tag: str, value: float, step: int, wall_time: float) -> event_pb2.Event:
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
    return event_pb2.Event(step=step, wall_time=wall_time, summary=summary)


def write_events(directory: Path, events: list[event_pb2.Event]) -> None:
    """An event file as TensorBoard's writer frames it (length, CRC32C, record, CRC32C); its
    RecordWriter, not its EventFileWriter, which would import TensorFlow."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "events.out.tfevents.1700000000.test").open("wb") as stream:
        writer = RecordWriter(stream)
        for event in events:
            writer.write(event.SerializeToString())


def sweep(goal: str = "maximize", values: tuple[float, ...] = (0.001, 0.01, 0.1)) -> StackConfig:
    return parse_config(
        {
            "image": IMAGE,
            "sweep": {
                "parameters": {LR: {"values": list(values)}},
                "parallel": 3,
                "metric": {"name": "test_accuracy", "goal": goal},
            },
        }
    )


def succeed(run_dir: Path, trial: StackConfig) -> None:
    (run_dir / OUTCOMES_DIR).mkdir(parents=True, exist_ok=True)
    (run_dir / OUTCOMES_DIR / f"succeeded.{run_key(trial)}").write_text("worker-0\n")


def lay_out(runs: Path, config: StackConfig) -> None:
    """Trial 1: TF2 events, accuracy 0.91; trial 2: TF1 events, 0.95; trial 3 never ran."""
    first, second, _ = config.trials
    one = runs / first.job.run_id
    write_events(
        one / "train", [tf2_scalar("loss", 0.9, 50, 1000.0), tf2_scalar("loss", 0.4, 100, 1010.0)]
    )
    write_events(one / "eval", [tf2_scalar("test_accuracy", 0.91, 100, 1012.5)])
    succeed(one, first)
    two = runs / second.job.run_id
    write_events(
        two / "eval",
        [
            tf1_scalar("test_accuracy", 0.5, 40, 2000.0),
            tf1_scalar("test_accuracy", 0.95, 120, 2030.0),
        ],
    )
    succeed(two, second)


def test_scalars_read_back_from_tf1_and_tf2_event_files(tmp_path: Path) -> None:
    write_events(tmp_path / "eval", [tf2_scalar("test_accuracy", 0.25, 7, 1.0)])
    write_events(tmp_path, [tf1_scalar("loss", 2.5, 3, 2.0), tf1_scalar("loss", 1.5, 9, 3.0)])
    scalars = flat_run_scalars(tmp_path)
    assert [(p.step, p.value) for p in scalars["eval/test_accuracy"]] == [(7, 0.25)]
    assert [(p.step, p.value) for p in scalars["loss"]] == [(3, 2.5), (9, 1.5)]
    assert latest(scalars, "test_accuracy") == 0.25  # by tag, in whichever directory
    assert latest(scalars, "loss") == 1.5
    assert latest(scalars, "missing") is None


def test_a_torn_event_file_yields_what_was_whole(tmp_path: Path) -> None:
    write_events(tmp_path, [tf1_scalar("loss", 2.5, 3, 2.0), tf1_scalar("loss", 1.5, 9, 3.0)])
    (path,) = tmp_path.glob("events.out.tfevents.*")
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # the last record cut short, as by a killed writer
    assert [p.value for p in flat_run_scalars(tmp_path)["loss"]] == [2.5]


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_table_is_sorted_by_the_goal_and_names_the_best(tmp_path: Path) -> None:
    config = sweep()
    lay_out(tmp_path, config)
    first, second, third = (t.job.run_id for t in config.trials)
    table = rows(to_csv(compare(config, tmp_path), "test_accuracy"))
    # The metric's column is named as the Markdown names it; one column per swept key.
    assert [(r["trial"], r["run_id"], r["test_accuracy"], r["best"]) for r in table] == [
        ("2", second, "0.95", "best"),
        ("1", first, "0.91", ""),
        ("3", third, "", ""),
    ]
    assert table[0][LR] == "0.01"
    assert (table[0]["steps"], table[0]["wall_seconds"], table[0]["outcome"]) == (
        "120", "30.0", "succeeded"
    )  # fmt: skip
    assert (table[1]["steps"], table[1]["wall_seconds"]) == ("100", "12.5")
    assert table[2]["outcome"] == "not started"
    best = best_trial(compare(config, tmp_path))
    assert best is not None and best.run_id == second


def test_minimize_puts_the_lowest_first(tmp_path: Path) -> None:
    config = sweep(goal="minimize")
    lay_out(tmp_path, config)
    table = rows(to_csv(compare(config, tmp_path), "test_accuracy"))
    assert [r["test_accuracy"] for r in table] == ["0.91", "0.95", ""]


def test_a_failed_trial_is_never_the_best(tmp_path: Path) -> None:
    config = sweep()
    lay_out(tmp_path, config)
    second = config.trials[1]
    (tmp_path / second.job.run_id / OUTCOMES_DIR / f"succeeded.{run_key(second)}").unlink()
    (tmp_path / second.job.run_id / OUTCOMES_DIR / f"failed.{run_key(second)}.g1").write_text("x")
    results = compare(config, tmp_path)
    assert results[0].outcome == "failed"
    best = best_trial(results)
    assert best is not None and best.run_id == config.trials[0].job.run_id


def write_stack(directory: Path, sweep_section: dict[str, Any] | None) -> None:
    import yaml

    config: dict[str, Any] = {"tftrain:image": IMAGE, "tftrain:job": {"name": "mnist"}}
    if sweep_section:
        config["tftrain:sweep"] = sweep_section
    (directory / "Pulumi.s.yaml").write_text(yaml.safe_dump({"config": config}))


def run_command(tmp_path: Path) -> tuple[Path, StackConfig]:
    stacks, runs = tmp_path / "stacks", tmp_path / "runs"
    stacks.mkdir()
    runs.mkdir()
    write_stack(stacks, {"parameters": {LR: {"values": [0.001, 0.01, 0.1]}}, "parallel": 3})
    config = sweep()
    lay_out(runs, config)
    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(runs)]) == 0
    return runs, config


def test_the_command_writes_csv_markdown_and_the_chart_and_links_the_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, config = run_command(tmp_path)
    printed = capsys.readouterr().out
    second = config.trials[1].job.run_id
    assert f"Best (maximize test_accuracy): trial 2, {second}" in printed
    assert f"written in {runs}: sweep-results.csv, sweep-results.md, sweep-results.svg" in printed
    assert len(rows((runs / "sweep-results.csv").read_text())) == 3
    assert "| **2** | " in (runs / "sweep-results.md").read_text()
    chart = ElementTree.parse(runs / "sweep-results.svg").getroot()
    assert chart.tag == "{http://www.w3.org/2000/svg}svg"
    assert (runs / "best").resolve() == (runs / second).resolve()


def test_the_command_refuses_a_stack_without_a_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_stack(tmp_path, None)
    assert main(["s", "--stacks-dir", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "has no tftrain:sweep" in line


def test_markdown_and_csv_agree_and_the_best_row_is_marked(tmp_path: Path) -> None:
    config = sweep()
    lay_out(tmp_path, config)
    results = compare(config, tmp_path)
    csv_header = to_csv(results, "test_accuracy").splitlines()[0].split(",")
    markdown = to_markdown(results, "test_accuracy", "maximize").splitlines()
    assert markdown[0] == "| " + " | ".join(csv_header) + " |"
    assert csv_header[:4] == ["trial", "run_id", LR, "test_accuracy"]
    best_row = markdown[2]
    assert best_row.startswith("| **2** | ") and "| **best** |" in best_row, best_row


def test_a_metric_no_trial_wrote_names_the_scalars_found(tmp_path: Path) -> None:
    config = sweep()
    lay_out(tmp_path, config)
    trials = enumerate(config.trials, 1)
    wrong = [trial_result(n, t, tmp_path / t.job.run_id, "test_acc") for n, t in trials]
    assert missing_metric(wrong, "test_acc") == (
        "no trial has written the scalar 'test_acc' (tftrain:sweep.metric.name); "
        "the scalars they wrote: eval/test_accuracy, train/loss"
    )
    assert missing_metric(compare(config, tmp_path), "test_accuracy") is None


def test_compare_json_is_the_table_for_scripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, config = run_command(tmp_path)
    capsys.readouterr()
    stacks = tmp_path / "stacks"
    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(runs), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    first, second, third = (t.job.run_id for t in config.trials)
    # Event files hold float32: 0.95 reads back as 0.9499999881.
    assert [(r["trial"], r["run_id"], r["metric"], r["best"], r["outcome"]) for r in rows] == [
        (2, second, {"name": "test_accuracy", "value": pytest.approx(0.95)}, True, "succeeded"),
        (1, first, {"name": "test_accuracy", "value": pytest.approx(0.91)}, False, "succeeded"),
        (3, third, {"name": "test_accuracy", "value": None}, False, "not started"),
    ]
    assert rows[0]["point"] == {LR: 0.01}


def test_compare_names_the_scalars_when_the_metric_is_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stacks, runs = tmp_path / "stacks", tmp_path / "runs"
    stacks.mkdir()
    runs.mkdir()
    sweep_section = {"parameters": {LR: {"values": [0.001, 0.01, 0.1]}}, "parallel": 3}
    write_stack(stacks, {**sweep_section, "metric": {"name": "val_acc", "goal": "maximize"}})
    lay_out(runs, sweep())  # the same trials (the metric is not in the run id)
    assert main(["s", "--stacks-dir", str(stacks), "--runs-dir", str(runs)]) == 1
    assert capsys.readouterr().err == (
        "tftrain compare: no trial has written the scalar 'val_acc' "
        "(tftrain:sweep.metric.name); the scalars they wrote: eval/test_accuracy, train/loss\n"
    )
