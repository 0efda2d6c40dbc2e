"""SVG charts (`infra.charts`): round ticks worked out by hand, and the drawn document read
back as XML: where points land against the ticks and the frame, log spacing, what is left
out, the legend, text escaping, the file written whole."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from infra.charts import Panel, Series, linear_axis, log_axis, nice_step, render, write
from tests.chart_helpers import SVG


@pytest.mark.parametrize(
    ("raw", "step"),
    [(0.15, 0.2), (0.1, 0.1), (0.11, 0.2), (0.3, 0.5), (0.51, 1.0), (7, 10), (2, 2),
     (250, 500), (0.02, 0.02), (0.1 / 5, 0.02), (1e-5, 1e-5), (3e4, 5e4)],
)  # fmt: skip
def test_a_step_is_one_two_or_five_times_a_power_of_ten(raw: float, step: float) -> None:
    assert nice_step(raw) == pytest.approx(step)


@pytest.mark.parametrize(
    ("values", "labels"),
    [
        # 0.25..1 and 5 % more each side: 0.2125..1.0375; (1.0375 - 0.2125) / 5 = 0.165 → 0.2.
        ([0.25, 1.0], ["0.4", "0.6", "0.8", "1.0"]),
        # -100..2100: 440 → 500.
        ([0, 2000], ["0", "500", "1000", "1500", "2000"]),
        # One value: 3 ± 1.5, then ± 5 %: 1.35..4.65, 0.66 → 1.
        ([3], ["2", "3", "4"]),
        # None: 0..1 ± 5 %: 0.22 → 0.5.
        ([], ["0.0", "0.5", "1.0"]),
        # Zero reads 0.0, never -0.0.
        ([-1, 1], ["-1.0", "-0.5", "0.0", "0.5", "1.0"]),
        ([0.93, 0.98], ["0.94", "0.96", "0.98"]),
    ],
)
def test_linear_ticks_are_round_and_inside_the_range(values: list, labels: list) -> None:
    axis = linear_axis(values)
    assert [label for _, label in axis.ticks] == labels
    assert all(axis.low <= value <= axis.high for value, _ in axis.ticks)
    assert all(axis.low < v < axis.high for v in values)  # no point on the frame


@pytest.mark.parametrize(
    ("values", "labels"),
    [
        ([1, 100], ["1", "10", "100"]),
        ([0.001, 0.1], ["0.001", "0.01", "0.1"]),
        # Less than two powers of ten in range: 2 and 5 times them too.
        ([0.0125, 0.65], ["0.02", "0.05", "0.1", "0.2", "0.5"]),
        # 7 alone: half a decade each side and 5 % more, 10^0.295..10^1.395 = 1.97..24.8.
        ([7], ["2", "5", "10", "20"]),
    ],
)
def test_log_ticks_are_powers_of_ten(values: list, labels: list) -> None:
    axis = log_axis(values)
    assert [label for _, label in axis.ticks] == labels
    assert axis.log and all(axis.low < v < axis.high for v in values)


def _document(panels: list[Panel], width: int = 700) -> ElementTree.Element:
    return ElementTree.fromstring(render(panels, width))


def _dots(root: ElementTree.Element, label: str) -> list[tuple[float, float]]:
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("data-label") == label]
    return [(float(c.get("cx", "")), float(c.get("cy", ""))) for c in group.iter(f"{SVG}circle")]


def _texts(root: ElementTree.Element, kind: str) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text") if t.get("class") == kind]


def _tick_y(root: ElementTree.Element, label: str) -> float:
    (tick,) = [t for t in root.iter(f"{SVG}text") if t.get("class") == "y-tick" and t.text == label]
    return float(tick.get("y", "")) - 4  # the label's baseline sits 4 px under its grid line


def test_points_land_on_their_ticks_inside_the_frame() -> None:
    series = Series("loss", [(0, 0.5), (1000, 1.0), (2000, 0.0)])
    root = _document([Panel("loss: Run x", "step", "loss", [series])])
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == (
        "700", "400", "0 0 700 400"
    )  # fmt: skip
    dots = _dots(root, "loss")
    # Each value lies on the grid line of the tick that reads it.
    assert [y for _, y in dots] == [_tick_y(root, t) for t in ("0.5", "1.0", "0.0")]
    # Larger values higher up (SVG's y grows downwards), steps left to right, evenly.
    assert dots[1][1] < dots[0][1] < dots[2][1]
    assert dots[1][0] - dots[0][0] == pytest.approx(dots[2][0] - dots[1][0])
    (frame,) = [r for r in root.iter(f"{SVG}rect") if r.get("stroke") == "#444"]
    left, top = float(frame.get("x", "")), float(frame.get("y", ""))
    right, bottom = left + float(frame.get("width", "")), top + float(frame.get("height", ""))
    assert all(left < x < right and top < y < bottom for x, y in dots)
    assert _texts(root, "title") == ["loss: Run x"]
    assert (_texts(root, "x-label"), _texts(root, "y-label")) == (["step"], ["loss"])
    (line,) = root.iter(f"{SVG}polyline")
    assert [tuple(map(float, p.split(","))) for p in line.get("points", "").split()] == dots


def test_a_log_axis_spaces_equal_ratios_equally_and_drops_what_it_cannot_place() -> None:
    series = Series("loss", [(1, 100.0), (2, 10.0), (3, 1.0), (4, 0.0), (5, -1.0), (6, math.nan)])
    root = _document([Panel("", "step", "loss", [series], y_log=True)])
    (top, middle, low) = [y for _, y in _dots(root, "loss")]  # 0, -1 and NaN are left out
    assert middle - top == pytest.approx(low - middle)
    assert _texts(root, "y-tick") == ["1", "10", "100"]
    assert [y for _, y in _dots(root, "loss")] == [_tick_y(root, t) for t in ("100", "10", "1")]


def test_non_finite_values_are_left_out_on_a_linear_axis_too() -> None:
    series = Series("loss", [(1, 1.0), (2, math.inf), (math.nan, 2.0), (3, 2.0)])
    assert len(_dots(_document([Panel("", "step", "loss", [series])]), "loss")) == 2


def test_categories_label_their_ticks_in_the_order_given() -> None:
    trials = Series("", [(1.0, 0.9), (0.0, 0.95), (1.0, 0.91)], joined=False)
    root = _document([Panel("", "optimizer", "acc", [trials], categories=["adam", "sgd"])])
    assert _texts(root, "x-tick") == ["adam", "sgd"]
    xs = [x for x, _ in _dots(root, "")]
    ticks = {t.text: float(t.get("x", "")) for t in root.iter(f"{SVG}text")
             if t.get("class") == "x-tick"}  # fmt: skip
    assert xs == [ticks["sgd"], ticks["adam"], ticks["sgd"]]
    assert list(root.iter(f"{SVG}polyline")) == []  # points alone: no line between trials


def test_the_ringed_point_is_circled_where_its_dot_is_and_named_in_the_legend() -> None:
    trials = Series("", [(0.001, 0.97), (0.01, 0.95)], joined=False)
    best = Series("best: trial 2", [(0.01, 0.95)])
    root = _document([Panel("", "lr", "acc", [trials], x_log=True, ringed=best)])
    (ring,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "ringed"]
    (circle,) = ring.iter(f"{SVG}circle")
    assert circle.get("fill") == "none" and float(circle.get("r", "")) > 4
    assert (float(circle.get("cx", "")), float(circle.get("cy", ""))) == _dots(root, "")[1]
    # The unnamed scatter has no legend entry; the ring has.
    assert _texts(root, "legend-label") == ["best: trial 2"]


def test_the_legend_names_each_series_in_order_and_hides_no_point() -> None:
    rising = Series("train/accuracy", [(s, 0.8 + s / 10000) for s in range(0, 2001, 100)])
    test = Series("eval/test_accuracy = 0.9928", [(2000, 0.9928)], note="0.9928")
    root = _document([Panel("", "step", "accuracy", [rising, test])])
    assert _texts(root, "legend-label") == ["train/accuracy", "eval/test_accuracy = 0.9928"]
    assert _texts(root, "note") == ["0.9928"]
    (legend,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]
    box = next(legend.iter(f"{SVG}rect"))
    left, top = float(box.get("x", "")), float(box.get("y", ""))
    right, bottom = left + float(box.get("width", "")), top + float(box.get("height", ""))
    dots = _dots(root, "train/accuracy") + _dots(root, "eval/test_accuracy = 0.9928")
    assert not [(x, y) for x, y in dots if left <= x <= right and top <= y <= bottom]
    # Each series its own colour, the legend's swatch the same.
    swatches = [line.get("stroke") for line in legend.iter(f"{SVG}line")]
    (polyline,) = root.iter(f"{SVG}polyline")
    assert swatches[0] == polyline.get("stroke") and len(set(swatches)) == 2


def test_a_long_line_has_no_dots_a_short_one_has() -> None:
    long = Series("long", [(s, s) for s in range(101)])
    short = Series("short", [(s, s) for s in range(100)])
    root = _document([Panel("", "step", "x", [long, short])])
    assert (len(_dots(root, "long")), len(_dots(root, "short"))) == (0, 100)


def test_text_is_escaped() -> None:
    odd = Series('a<b & "c"', [(1, 1.0)])
    root = _document([Panel("<title>", "x & y", "y", [odd])])  # parses: escaped
    assert _texts(root, "title") == ["<title>"]
    assert _texts(root, "legend-label") == ['a<b & "c"']


def test_panels_sit_side_by_side(tmp_path: Path) -> None:
    panels = [Panel(f"panel {i}", "x", "y", [Series("s", [(1, i)])]) for i in range(3)]
    path = tmp_path / "chart.svg"
    write(path, panels, 450)
    root = ElementTree.parse(path).getroot()
    assert root.get("width") == "1350"
    lefts = [float(r.get("x", "")) for r in root.iter(f"{SVG}rect") if r.get("stroke") == "#444"]
    assert [b - a for a, b in itertools.pairwise(lefts)] == [450, 450]
    assert [p.name for p in tmp_path.iterdir()] == ["chart.svg"]  # no partial file left
