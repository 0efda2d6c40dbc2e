"""The evaluator's loop (trainer.evaluator.run) in this process, on a tiny data set: it
scores each new checkpoint once, exits 0 at the final step, and on SIGTERM scores what is
there and exits 0 if that was the final step, else 143 (docs/lifecycle.md: the supervisor
lets it finish, then stops it). The multi-process run with a real cluster is @slow
(test_trainer_distributed.py)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import keras
import numpy as np
import pytest

from infra.records.tensorboard_scalars import read_scalars
from trainer import evaluator
from trainer.data import Mnist
from trainer.model import build_model
from trainer.output_dir import OutputPaths
from trainer.outputs import Checkpoints
from trainer.plan import Plan, Role
from trainer.settings import parse_settings

# 4 training examples at batch 2, 1 epoch: the final step is 2.
DATA = Mnist(
    train_images=np.zeros((4, 28, 28, 1), np.uint8),
    train_labels=np.array([0, 1, 2, 3], np.uint8),
    test_images=np.zeros((5, 28, 28, 1), np.uint8),
    test_labels=np.array([0, 0, 0, 0, 0], np.uint8),
)


@pytest.fixture
def output(tmp_path: Path) -> Path:
    return tmp_path / "out"


@pytest.fixture(autouse=True)
def own_sigterm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(evaluator, "POLL_SECONDS", 0.2)  # a second is long in a test
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


def save(output: Path, *steps: int) -> None:
    model = build_model()
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)
    checkpoints = Checkpoints(
        model, optimizer, Plan("single", Role.TRAINER, True), OutputPaths(output), keep=5
    )
    for step in steps:
        checkpoints.save(step)


def run(output: Path, sigterm_after: float | None = None) -> int:
    settings = parse_settings([f"--output-dir={output}", "--batch-size=2", "--epochs=1"], {})
    done = threading.Event()
    if sigterm_after is not None:
        before = signal.getsignal(signal.SIGTERM)

        def sigterm() -> None:
            # Only once the evaluator's own handler is in (a loaded machine can be slow to
            # get there), and not after it has returned.
            while signal.getsignal(signal.SIGTERM) is before and not done.is_set():
                time.sleep(0.01)
            if not done.wait(sigterm_after):
                os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=sigterm, daemon=True).start()
    try:
        return evaluator.run(settings, DATA)
    finally:
        done.set()


def test_the_final_checkpoint_is_scored_and_ends_the_evaluator(
    output: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(output, 2)
    assert run(output) == 0
    prefix = OutputPaths(output).checkpoints / "ckpt-2"
    assert capsys.readouterr().out.splitlines() == [
        f"Checkpoint {prefix}: step 2, Test-Accuracy: {accuracy(output, 2):.4f}"
    ]
    assert [p.step for p in read_scalars(OutputPaths(output).eval)["test_accuracy"]] == [2]


def accuracy(output: Path, step: int) -> float:
    points = read_scalars(OutputPaths(output).eval)["test_accuracy"]
    (value,) = [p.value for p in points if p.step == step]
    assert value in {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}  # 5 test examples
    return value


def test_sigterm_before_the_final_step_scores_what_is_there_and_exits_143(
    output: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(output, 1)
    assert run(output, sigterm_after=0.5) == 143  # 128 + SIGTERM: the Job retries it
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"Checkpoint {OutputPaths(output).checkpoints / 'ckpt-1'}: step 1,")
    assert lines[1:] == ["Stopped before the final step 2 was evaluated"]


def test_a_final_checkpoint_that_appears_while_it_waits_ends_it(
    output: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(output, 1)
    # The final checkpoint appears while the evaluator waits: it looks again every poll
    # (0.2 s here), so it ends long before the SIGTERM that only guards against a hang.
    saver = threading.Timer(0.3, save, (output, 2))
    saver.start()
    started = time.monotonic()
    assert run(output, sigterm_after=60.0) == 0
    assert time.monotonic() - started < 45
    saver.join()
    out = capsys.readouterr().out
    assert "step 1, Test-Accuracy" in out and "step 2, Test-Accuracy" in out
    assert "Stopped before" not in out


def test_a_damaged_checkpoint_is_skipped_with_its_reason(
    output: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save(output, 1)
    checkpoints = OutputPaths(output).checkpoints
    data = next(checkpoints.glob("ckpt-1.data-*"))
    data.write_bytes(data.read_bytes()[:10])  # truncated after it was published
    assert run(output, sigterm_after=0.5) == 143
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"Skipping checkpoint {checkpoints / 'ckpt-1'}: ")
    assert lines[1:] == ["Stopped before the final step 2 was evaluated"]
