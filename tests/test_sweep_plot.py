"""The sweep's picture (`infra.sweep.plot`), drawn on recording stand-ins for matplotlib's
axes and pyplot: which points go on each panel, the best trial ringed, a log axis exactly when
the positive values span a decade, categories in sorted order, the curves' legend and labels,
the file written at 100 dpi. Fast (no matplotlib import); the real drawing:
test_sweep_results.py's slow test."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from infra.records.tensorboard_scalars import Point
from infra.sweep.plot import _against, plot
from infra.sweep.results import TrialResult

KEY, METRIC = "hyperparams.learningRate", "test_accuracy"


class Recorder:
    """Every method call, in order, as (name, args, kwargs)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> None:
            self.calls.append((name, args, kwargs))

        return record

    def named(self, name: str) -> list[tuple[tuple, dict]]:
        return [(args, kwargs) for called, args, kwargs in self.calls if called == name]


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


def _panel(results: list[TrialResult]) -> Recorder:
    axes = Recorder()
    _against(axes, KEY, results, METRIC)
    return axes


def test_numbers_are_scattered_and_the_best_trial_ringed_and_named() -> None:
    # The best: the first succeeded trial with the metric (trial 2; trial 1 failed).
    results = [
        _trial(1, 0.001, 0.97, outcome="failed"),
        _trial(2, 0.01, 0.95),
        _trial(3, 0.1, 0.93),
        _trial(4, 0.5, None),  # no metric: not on the panel
    ]
    axes = _panel(results)
    assert axes.calls == [
        ("scatter", ([0.001, 0.01, 0.1], [0.97, 0.95, 0.93]), {}),
        ("scatter", ([0.01], [0.95]),
         {"s": 160, "facecolors": "none", "edgecolors": "tab:red", "label": "best: trial 2"}),
        ("legend", (), {"fontsize": "small"}),
        ("set_xscale", ("log",), {}),  # 0.1 / 0.001: two decades
        ("set_xlabel", (KEY,), {}),
        ("set_ylabel", (METRIC,), {}),
    ]  # fmt: skip


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
    axes = _panel([_trial(n, v, 0.5 + n / 100, outcome="failed") for n, v in enumerate(values)])
    assert bool(axes.named("set_xscale")) is log
    assert axes.named("legend") == []  # no succeeded trial: none is best


def test_categories_are_placed_in_sorted_order_and_ticked() -> None:
    results = [_trial(1, "sgd", 0.9), _trial(2, "adam", 0.95), _trial(3, "sgd", 0.91)]
    axes = _panel(results)
    assert axes.calls == [
        ("scatter", ([1, 0, 1], [0.9, 0.95, 0.91]), {}),
        ("set_xticks", (range(2), ["adam", "sgd"]), {}),
        ("set_xlabel", (KEY,), {}),
        ("set_ylabel", (METRIC,), {}),
    ]
    # A flag is a category, not the numbers 0 and 1.
    flags = _panel([_trial(1, True, 0.9), _trial(2, False, 0.8)])
    assert flags.named("set_xticks") == [((range(2), ["False", "True"]), {})]


@pytest.fixture
def pyplot(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Recorder, Recorder, list[Recorder], Recorder]:
    """matplotlib and pyplot stand-ins: the figure, pyplot, the panels made, the backend."""
    figure, backend, made = Recorder(), Recorder(), []
    fake_plt = Recorder()

    def subplots(rows: int, columns: int, **kwargs: Any) -> tuple[Recorder, list[Recorder]]:
        fake_plt.calls.append(("subplots", (rows, columns), kwargs))
        made.extend(Recorder() for _ in range(columns))
        return figure, made

    fake_plt.subplots = subplots  # type: ignore[method-assign]
    matplotlib = types.ModuleType("matplotlib")
    matplotlib.use = backend.use  # type: ignore[attr-defined]
    pyplot_module = types.ModuleType("matplotlib.pyplot")
    pyplot_module.subplots = subplots  # type: ignore[attr-defined]
    pyplot_module.close = fake_plt.close  # type: ignore[attr-defined]
    matplotlib.pyplot = pyplot_module  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "matplotlib", matplotlib)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot_module)
    return figure, fake_plt, made, backend


def test_one_panel_per_swept_key_then_the_curves_written_at_100_dpi(
    pyplot: tuple, tmp_path: Path
) -> None:
    figure, fake_plt, panels, backend = pyplot
    loss = (Point(10, 2.0, 0.0), Point(20, 1.0, 0.0))
    accuracy = (Point(10, 0.5, 0.0), Point(20, 0.9, 0.0))
    results = [
        _trial(2, 0.01, 0.95, curve=accuracy, tag=METRIC, batch=64),
        _trial(1, 0.1, 0.93, curve=loss, tag="loss", batch=128),
        _trial(3, 0.5, None, outcome="failed"),  # no curve
    ]
    path = tmp_path / "sweep.png"
    plot(results, METRIC, path)
    assert backend.calls == [("use", ("Agg",), {})]  # no display: a file only
    assert fake_plt.calls[0] == ("subplots", (1, 3), {"figsize": (13.5, 4)})
    assert [p.named("set_xlabel") for p in panels] == [
        [((KEY,), {})], [(("batch",), {})], [(("step",), {})]
    ]  # fmt: skip
    assert [p.named("set_ylabel") for p in panels[:2]] == [[((METRIC,), {})]] * 2
    curves = panels[-1]
    assert curves.named("plot") == [
        (([10, 20], [0.5, 0.9]), {"label": "2 (best)"}),
        (([10, 20], [2.0, 1.0]), {"label": "1"}),
    ]
    assert curves.named("set_ylabel") == [(("loss, test_accuracy",), {})]
    assert curves.named("set_title") == [(("training curves (legend: trial number)",), {})]
    assert curves.named("legend") == [((), {"fontsize": "small"})]
    assert figure.calls == [("tight_layout", (), {}), ("savefig", (path,), {"dpi": 100})]
    assert fake_plt.calls[-1] == ("close", (figure,), {})


def test_without_curves_the_curves_panel_has_no_legend(pyplot: tuple, tmp_path: Path) -> None:
    _, fake_plt, panels, _ = pyplot
    plot([_trial(1, 0.1, 0.9), _trial(2, 0.2, 0.8)], METRIC, tmp_path / "sweep.png")
    assert fake_plt.calls[0] == ("subplots", (1, 2), {"figsize": (9.0, 4)})
    assert panels[-1].named("legend") == [] and panels[-1].named("plot") == []
    assert panels[-1].named("set_ylabel") == [(("",), {})]


def test_without_matplotlib_the_reason_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.sweep.plot import matplotlib_missing

    monkeypatch.setitem(sys.modules, "matplotlib", types.ModuleType("matplotlib"))
    assert matplotlib_missing() is None
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as when not installed
    assert matplotlib_missing() == (
        "matplotlib is not installed (pip install matplotlib): no PNG written"
    )
