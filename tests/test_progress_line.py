"""The progress line: the seed's shape with the run's totals and an ETA (issue 38)."""

from __future__ import annotations

import pytest

from trainer.progress_line import duration, progress_line
from trainer.steps import StepPlan

# MNIST at batch 128: 60,000 / 128 → 469 steps per epoch; 4 epochs → 1876 steps.
MNIST_4_EPOCHS = StepPlan(469, 1876, 100, 500, 50)


def test_a_line_carries_the_totals_and_the_time_left() -> None:
    # Step 900: epoch 2 (steps 470-938), its batch 900 - 469 = 431; 900/1876 = 47.97 %;
    # 976 steps left at 74 ms = 72.2 s.
    line = progress_line(MNIST_4_EPOCHS, 900, 0.0612, 0.074)
    assert line == (
        "Step: 900/1876 (47 %), Epoch: 2/4, Batch: 431 of 469, Cost: 0.0612, "
        "AvgTime: 74.0ms, ETA 1m12s"
    )


def test_max_steps_is_the_total_a_trial_shows() -> None:
    # maxSteps 200 of a 469-step epoch: one epoch touched, 200 steps in all.
    trial = StepPlan(469, 200, 100, 500, 50)
    assert progress_line(trial, 200, 0.5, 0.01) == (
        "Step: 200/200 (100 %), Epoch: 1/1, Batch: 200 of 469, Cost: 0.5000, "
        "AvgTime: 10.0ms, ETA 0s"
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0s"), (45, "45s"), (72.2, "1m12s"), (3599, "59m59s"), (7500, "2h05m")],
)
def test_durations_read_as_a_person_says_them(seconds: float, text: str) -> None:
    assert duration(seconds) == text
