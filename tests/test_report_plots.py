"""What the report's plots say (issue 38): which run they belong to, a log axis where a loss
spans decades, the test accuracy labelled with its value. Decided by `plot_spec` before any
drawing, so checked without reading pixels."""

from __future__ import annotations

from infra.records.report import plot_spec
from infra.records.tensorboard_scalars import Point

RUN = "Run run-2c4524ae of stack dev: succeeded"


def points(*pairs: tuple[int, float]) -> list[Point]:
    return [Point(step, value, 0.0) for step, value in pairs]


def test_a_loss_over_two_decades_is_on_a_log_axis_and_titled_with_its_run() -> None:
    # MNIST's cross-entropy starts near ln(10) = 2.30 and ends near 0.02.
    spec = plot_spec("loss", RUN, {"train/loss": points((100, 2.30), (1800, 0.02))})
    assert spec.title == "loss: Run run-2c4524ae of stack dev: succeeded"
    assert spec.log_scale is True
    assert spec.labels == {"train/loss": "train/loss"}


def test_an_accuracy_stays_linear_and_the_test_value_is_in_its_label() -> None:
    lines = {
        "train/accuracy": points((100, 0.80), (1800, 0.99)),
        "eval/test_accuracy": points((1876, 0.9921)),
    }
    spec = plot_spec("accuracy", RUN, lines)
    assert spec.log_scale is False  # 0.80 to 0.99: not a decade
    assert spec.labels == {
        "train/accuracy": "train/accuracy",
        "eval/test_accuracy": "eval/test_accuracy = 0.9921",
    }


def test_a_loss_that_reaches_zero_stays_linear() -> None:
    # No log axis can show a 0 (a user's trainer may log one).
    assert plot_spec("loss", RUN, {"loss": points((1, 1.0), (2, 0.0))}).log_scale is False
