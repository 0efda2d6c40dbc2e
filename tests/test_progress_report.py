"""When progress lines are printed and what they say (trainer.progress.Progress), with the
executor and the clock stood in for, against the hand-worked run of test_train_to_end.py:
48 steps, 16 an epoch, a line every 10, chunks ending at 7, 10, 17, 20, 25, 30, 37, 40, 47,
48, each step's loss 0.5 and accuracy 0.75.

Under ParameterServerStrategy fetching an interval's sums waits for its steps, so a line is
printed only once `queue_steps` later steps are queued behind it; what is left is printed
by `drain`, all of it sharing the time since the last line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tensorflow as tf

from infra.records.tensorboard_scalars import read_scalars
from trainer import progress
from trainer.progress import Progress
from trainer.settings import parse_settings
from trainer.steps import StepPlan

STEPS = StepPlan.from_settings(
    parse_settings(
        ["--batch-size=64", "--epochs=3", "--log-steps=10", "--checkpoint-steps=25",
         "--steps-per-execution=7"], {},
    ),
    1000,
)  # fmt: skip
CHUNKS = [(7, 7), (3, 10), (7, 17), (3, 20), (5, 25), (5, 30), (7, 37), (3, 40), (7, 47), (1, 48)]


class FakeExecutor:
    def __init__(self, queue_steps: int) -> None:
        self.queue_steps = queue_steps

    def fetch(self, handles: list[Any]) -> list[tuple[float, float]]:
        return list(handles)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress.time, "perf_counter", fake)
    return fake


def make(queue_steps: int) -> Progress:
    return Progress(
        FakeExecutor(queue_steps),  # type: ignore[arg-type]
        STEPS,
        batch_size=64,
        writer=tf.summary.create_noop_writer(),
        echo=True,
    )


def add(report: Progress, clock: Clock, after: int, upto: int) -> None:
    """The chunks ending after step `after`, up to `upto`, each step taking 100 ms."""
    for steps, step in CHUNKS:
        if after < step <= upto:
            clock.now += 0.1 * steps
            report.add((0.5 * steps, 0.75 * steps), steps, step)


def test_with_nothing_to_keep_queued_each_line_comes_at_its_step(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    report = make(queue_steps=0)
    add(report, clock, 0, 10)
    # 10 steps in 1 s: 100 ms a step, 38 steps left: 3.8 s, said as 4s.
    assert capsys.readouterr().out == (
        "Step: 10/48 (20 %), Epoch: 1/3, Batch: 10 of 16, Cost: 0.5000, AvgTime: 100.0ms, ETA 4s\n"
    )
    add(report, clock, 10, 48)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "Step: 20/48 (41 %)", "Step: 30/48 (62 %)", "Step: 40/48 (83 %)", "Step: 48/48 (100 %)",
    ]  # fmt: skip
    assert lines[-1] == (
        "Step: 48/48 (100 %), Epoch: 3/3, Batch: 16 of 16, Cost: 0.5000, AvgTime: 100.0ms, ETA 0s"
    )
    report.drain()
    assert capsys.readouterr().out == ""


def test_a_line_waits_until_enough_steps_are_queued_behind_it(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    report = make(queue_steps=10)
    add(report, clock, 0, 17)
    assert capsys.readouterr().out == ""  # only 7 steps behind the interval ending at 10
    add(report, clock, 17, 20)
    # The interval ending at 20 (10 steps) is behind it now; 2 s since the start, 10 steps.
    assert capsys.readouterr().out.startswith("Step: 10/48 (20 %), Epoch: 1/3, Batch: 10 of 16")


def test_drain_prints_what_is_left_sharing_the_time(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    report = make(queue_steps=1000)  # nothing is ever enough: everything waits for drain
    add(report, clock, 0, 30)
    assert capsys.readouterr().out == ""
    clock.now += 3.0  # the join: 3 s more
    report.drain()
    lines = capsys.readouterr().out.splitlines()
    # 3 s of steps + 3 s of join over 30 steps: 200 ms a step, for every line alike.
    assert lines == [
        "Step: 10/48 (20 %), Epoch: 1/3, Batch: 10 of 16, Cost: 0.5000, AvgTime: 200.0ms, ETA 8s",
        "Step: 20/48 (41 %), Epoch: 2/3, Batch: 4 of 16, Cost: 0.5000, AvgTime: 200.0ms, ETA 6s",
        "Step: 30/48 (62 %), Epoch: 2/3, Batch: 14 of 16, Cost: 0.5000, AvgTime: 200.0ms, ETA 4s",
    ]
    report.drain()  # nothing left
    assert capsys.readouterr().out == ""


def test_a_process_that_does_not_write_prints_nothing(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    report = Progress(
        FakeExecutor(0),  # type: ignore[arg-type]
        STEPS,
        batch_size=64,
        writer=tf.summary.create_noop_writer(),
        echo=False,
    )
    add(report, clock, 0, 48)
    assert capsys.readouterr().out == ""


def test_each_line_s_values_are_the_train_scalars_tensorboard_shows(
    clock: Clock, tmp_path: Path
) -> None:
    """docs/trainer.md: `train/` holds `loss`, `accuracy` and `examples_per_sec`, at the
    steps of the lines (64 examples a step at 100 ms a step: 640 a second)."""
    writer = tf.summary.create_file_writer(str(tmp_path))
    executor = FakeExecutor(0)
    report = Progress(executor, STEPS, batch_size=64, writer=writer, echo=False)  # type: ignore[arg-type]
    add(report, clock, 0, 48)
    writer.close()
    read = read_scalars(tmp_path)
    at = (10, 20, 30, 40, 48)
    assert {tag: [(p.step, round(p.value, 4)) for p in points] for tag, points in read.items()} == {
        "loss": [(step, 0.5) for step in at],
        "accuracy": [(step, 0.75) for step in at],
        "examples_per_sec": [(step, 640.0) for step in at],
    }


def test_steps_of_the_open_interval_count_as_queued_too(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    """queue_steps 5: the interval ending at 10 is printed once the 7 steps to 17 are queued
    behind it, though no later interval has finished yet."""
    report = make(queue_steps=5)
    add(report, clock, 0, 10)
    assert capsys.readouterr().out == ""
    add(report, clock, 10, 17)
    assert capsys.readouterr().out.startswith("Step: 10/48 (20 %)")
