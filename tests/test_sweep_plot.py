"""The sweep's picture (`infra.sweep.plot`): which points go on each panel, the best trial
ringed, a log axis exactly when the positive values span a decade, categories in sorted order,
the curves' legend and labels, the panels side by side in one SVG file."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from infra.charts import Series
from infra.records.tensorboard_scalars import Point
from infra.sweep.plot import against, plot
from infra.sweep.results import TrialResult
from tests.chart_helpers import SVG, chart_texts

KEY, METRIC = "hyperparams.learningRate", "test_accuracy"


def _trial(
    number: int,
    value: object,
    metric: float | None,
    outcome: str = "succeeded",
    curve: tuple[Point, ...] = (),
    tag: str = "",
    **point: object,
) -> TrialResult:
    return TrialResult(
        number, f"run-{number}", {KEY: value, **point}, metric, None, None, outcome, Path("."),
        curve, tag,
    )  # fmt: skip


def test_numbers_are_scattered_and_the_best_trial_ringed_and_named() -> None:
    # The best: the first succeeded trial with the metric (trial 2; trial 1 failed).
    results = [
        _trial(1, 0.001, 0.97, outcome="failed"),
        _trial(2, 0.01, 0.95),
        _trial(3, 0.1, 0.93),
        _trial(4, 0.5, None),  # no metric: not on the panel
    ]
    panel = against(KEY, results, METRIC)
    assert panel.series == [Series("", [(0.001, 0.97), (0.01, 0.95), (0.1, 0.93)], joined=False)]
    assert panel.ringed == Series("best: trial 2", [(0.01, 0.95)])
    assert panel.x_log  # 0.1 / 0.001: two decades
    assert (panel.x_label, panel.y_label, panel.categories) == (KEY, METRIC, [])


@pytest.mark.parametrize(
    ("values", "log"),
    [
        ([1, 10], True),  # exactly a decade
        ([1, 9.99], False),
        ([2, 3, 20], True),
        ([0, 10], False),  # zero has no place on a log axis
        ([-1, 100], False),
        ([5], False),
    ],
)
def test_a_log_axis_exactly_when_positive_values_span_a_decade(values: list, log: bool) -> None:
    results = [_trial(n, v, 0.5 + n / 100, outcome="failed") for n, v in enumerate(values)]
    panel = against(KEY, results, METRIC)
    assert panel.x_log is log
    assert panel.ringed is None  # no succeeded trial: none is best


def test_categories_are_placed_in_sorted_order_and_ticked() -> None:
    results = [_trial(1, "sgd", 0.9), _trial(2, "adam", 0.95), _trial(3, "sgd", 0.91)]
    panel = against(KEY, results, METRIC)
    assert panel.categories == ["adam", "sgd"]
    assert panel.series == [Series("", [(1, 0.9), (0, 0.95), (1, 0.91)], joined=False)]
    assert panel.ringed == Series("best: trial 1", [(1, 0.9)])
    assert not panel.x_log
    # A flag is a category, not the numbers 0 and 1.
    flags = against(KEY, [_trial(1, True, 0.9), _trial(2, False, 0.8)], METRIC)
    assert flags.categories == ["False", "True"]


def test_one_panel_per_swept_key_then_the_curves(tmp_path: Path) -> None:
    loss = (Point(10, 2.0, 0.0), Point(20, 1.0, 0.0))
    accuracy = (Point(10, 0.5, 0.0), Point(20, 0.9, 0.0))
    results = [
        _trial(2, 0.01, 0.95, curve=accuracy, tag=METRIC, batch=64),
        _trial(1, 0.1, 0.93, curve=loss, tag="loss", batch=128),
        _trial(3, 0.5, None, outcome="failed"),  # no curve
    ]
    path = tmp_path / "sweep.svg"
    plot(results, METRIC, path)
    root = ElementTree.parse(path).getroot()
    assert (root.get("width"), root.get("height")) == ("1350", "400")  # 3 panels of 450
    texts = chart_texts(path)
    assert texts["x-label"] == [KEY, "batch", "step"]
    assert texts["y-label"] == [METRIC, METRIC, "loss, test_accuracy"]
    assert texts["title"] == ["", "", "training curves (legend: trial number)"]
    # The best trial ringed on both parameter panels, then the curves' legend.
    assert texts["legend-label"] == ["best: trial 2", "best: trial 2", "2 (best)", "1"]
    curves = [
        [tuple(map(float, p.split(","))) for p in line.get("points", "").split()]
        for line in root.iter(f"{SVG}polyline")
    ]
    assert len(curves) == 2  # trial 3 has none
    # Trial 2's accuracy rises (its line goes up: SVG's y grows downwards), trial 1's loss falls.
    assert curves[0][1][1] < curves[0][0][1] and curves[1][1][1] > curves[1][0][1]


def test_without_curves_the_curves_panel_has_no_legend(tmp_path: Path) -> None:
    path = tmp_path / "sweep.svg"
    plot([_trial(1, 0.1, 0.9), _trial(2, 0.2, 0.8)], METRIC, path)
    assert ElementTree.parse(path).getroot().get("width") == "900"
    texts = chart_texts(path)
    assert texts["legend-label"] == ["best: trial 1"]  # the parameter panel's only
    assert texts["y-label"] == [METRIC, ""]
