"""The training loop's bookkeeping (trainer.train_loop.train_to_end) with its collaborators
stood in for: where it saves, and that a stop always saves before it leaves. No step is
computed here (the multi-process runs in test_fault_tolerance.py, @slow, do that); this
is the order of things, against a hand-worked run.

The run: 1000 examples at batch 64 is 16 steps an epoch, 3 epochs 48 steps; a line every
10, a checkpoint every 25, at most 7 steps fused, so chunks end at 7, 10, 17, 20, 25, 30,
37, 40, 47, 48 (test_trainer_settings.py works the same table)."""

from __future__ import annotations

from typing import Any

import pytest

from trainer.preemption import Preempted
from trainer.settings import parse_settings
from trainer.steps import StepPlan
from trainer.tf_config import parse_tf_config
from trainer.train_loop import train_to_end, waits_on

STEPS = StepPlan.from_settings(
    parse_settings(
        ["--batch-size=64", "--epochs=3", "--log-steps=10", "--checkpoint-steps=25",
         "--steps-per-execution=7"], {},
    ),
    1000,
)  # fmt: skip


class Calls:
    """One ordered log of what the loop asked of its collaborators."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []


class FakeExecutor:
    queue_steps = 0

    def __init__(self, calls: Calls, others_stop_after: int | None = None) -> None:
        self.calls, self.others_stop_after, self.done = calls, others_stop_after, 0

    def run(self, steps: int) -> str:
        self.done += steps
        return f"sums to {self.done}"

    def join(self) -> None:
        self.calls.log.append(("join",))

    def any_replica(self, flag: bool) -> bool:
        # Another MWMS worker's SIGTERM shows here as True although this one's flag is not.
        return flag or (self.others_stop_after is not None and self.done >= self.others_stop_after)


class FakeProgress:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    def add(self, handle: Any, steps: int, step: int) -> None:
        self.calls.log.append(("add", handle, steps, step))

    def drain(self) -> None:
        self.calls.log.append(("drain",))


class FakeNotice:
    def __init__(self, calls: Calls, sigterm_after: int | None = None) -> None:
        self.calls, self.sigterm_after, self.step = calls, sigterm_after, 0

    def reason(self) -> str | None:
        self.step += 1
        return (
            "SIGTERM" if self.sigterm_after is not None and self.step > self.sigterm_after else None
        )

    def saved(self, step: int) -> None:
        self.calls.log.append(("saved note", step))


class FakeCheckpoints:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    def save(self, step: int) -> None:
        self.calls.log.append(("save", step))


class FakeWatchdog:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    def beat(self, at: str) -> None:
        self.calls.log.append(("beat", at))


def run(
    first_step: int = 0, sigterm_after_chunks: int | None = None, others_at: int | None = None
) -> tuple[Calls, int | Preempted]:
    calls = Calls()
    executor = FakeExecutor(calls, others_at)
    executor.done = first_step
    try:
        end: int | Preempted = train_to_end(
            executor,  # type: ignore[arg-type]
            FakeProgress(calls),  # type: ignore[arg-type]
            STEPS,
            first_step,
            FakeNotice(calls, sigterm_after_chunks),  # type: ignore[arg-type]
            FakeCheckpoints(calls),  # type: ignore[arg-type]
            FakeWatchdog(calls),  # type: ignore[arg-type]
        )
    except Preempted as stop:
        end = stop
    return calls, end


def saves(calls: Calls) -> list[tuple[Any, ...]]:
    """The calls around each save: what came right before it."""
    names = [entry[0] for entry in calls.log]
    return [tuple(calls.log[i - 2 : i + 1]) for i, name in enumerate(names) if name == "save"]


def test_a_whole_run_saves_at_each_checkpoint_and_at_the_end() -> None:
    calls, end = run()
    assert end == 48
    adds = [entry[2:] for entry in calls.log if entry[0] == "add"]
    assert adds == [(7, 7), (3, 10), (7, 17), (3, 20), (5, 25), (5, 30), (7, 37), (3, 40),
                    (7, 47), (1, 48)]  # fmt: skip
    # Each save waits for every step started and reports them first.
    assert saves(calls) == [
        (("join",), ("drain",), ("save", 25)),
        (("join",), ("drain",), ("save", 48)),
    ]
    assert ("saved note", 48) not in calls.log  # no SIGTERM: no note for a ps
    # The watchdog hears of every chunk, at the step it started from.
    beats = [entry[1] for entry in calls.log if entry[0] == "beat"]
    assert beats == [f"step {s}" for s in (0, 7, 10, 17, 20, 25, 30, 37, 40, 47)]


def test_a_resumed_run_goes_on_from_its_step() -> None:
    calls, end = run(first_step=25)
    assert end == 48
    assert [entry[3] for entry in calls.log if entry[0] == "add"] == [30, 37, 40, 47, 48]
    assert [entry[1] for entry in calls.log if entry[0] == "save"] == [48]


def test_a_run_already_at_its_end_does_nothing() -> None:
    calls, end = run(first_step=48)
    assert (calls.log, end) == ([], 48)


def test_sigterm_saves_the_step_reached_then_stops() -> None:
    """Told after its third chunk (step 17, no checkpoint boundary): it still saves there,
    tells a waiting ps, and stops with that step."""
    calls, end = run(sigterm_after_chunks=2)
    assert isinstance(end, Preempted)
    assert (end.step, str(end)) == (17, "preempted (SIGTERM): saved a checkpoint at step 17")
    assert calls.log[-4:] == [("join",), ("drain",), ("save", 17), ("saved note", 17)]
    assert [entry[3] for entry in calls.log if entry[0] == "add"] == [7, 10, 17]


def test_sigterm_on_a_checkpoint_step_saves_once() -> None:
    calls, end = run(sigterm_after_chunks=4)  # the fifth chunk ends at 25
    assert isinstance(end, Preempted) and end.step == 25
    assert [entry for entry in calls.log if entry[0] == "save"] == [("save", 25)]


def test_another_worker_s_sigterm_stops_this_one_at_the_same_step() -> None:
    calls, end = run(others_at=30)
    assert isinstance(end, Preempted)
    assert str(end) == "preempted (another worker's SIGTERM): saved a checkpoint at step 30"
    assert calls.log[-4:] == [("join",), ("drain",), ("save", 30), ("saved note", 30)]
    assert [entry for entry in calls.log if entry[0] == "save"] == [("save", 25), ("save", 30)]


@pytest.mark.parametrize(
    ("tf_config", "expected"),
    [
        (None, "nothing but its own TensorFlow runtime"),
        ('{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker"}}', "no other task"),
        ('{"cluster": {"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "ps": ["p:1"]}, '
         '"task": {"type": "chief"}}', "worker:0, worker:1, ps:0"),
    ],
)  # fmt: skip
def test_whom_a_training_process_waits_on(tf_config: str | None, expected: str) -> None:
    assert waits_on(parse_tf_config(tf_config)) == expected
