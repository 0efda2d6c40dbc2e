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
        # Zero alone: ± 1, then ± 5 %: -1.1..1.1, 0.44 → 0.5.
        ([0], ["-1.0", "-0.5", "0.0", "0.5", "1.0"]),
        # The padded range ends exactly on a tick: 0.0..11.0 (2.2 → 5), then -1.0..10.0.
        ([0.5, 10.5], ["0", "5", "10"]),
        ([-0.5, 9.5], ["0", "5", "10"]),
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
        ([1, 10], ["1", "10"]),  # two powers of ten: enough
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


# What SVG 1.1 names, of what this project draws: anything else is a typo a viewer ignores.
ELEMENTS = {"svg", "rect", "line", "polyline", "circle", "text", "g"}
ATTRIBUTES = {
    "xmlns", "width", "height", "viewBox", "font-family", "font-size", "x", "y", "x1", "y1",
    "x2", "y2", "cx", "cy", "r", "points", "fill", "fill-opacity", "stroke", "stroke-width",
    "text-anchor", "transform", "class", "data-label",
}  # fmt: skip
ANCHORS = {"start", "middle", "end"}
CHAR = 7.0  # at most this wide, a 12 px sans-serif character, on average (digits: 6.7)


def _number(element: ElementTree.Element, name: str) -> float:
    return float(element.get(name, "nan"))


def _elements(root: ElementTree.Element, tag: str, kind: str | None = None) -> list:
    return [e for e in root.iter(f"{SVG}{tag}") if kind is None or e.get("class") == kind]


def _layout_sample() -> tuple[ElementTree.Element, dict[str, float]]:
    rising = Series("train/accuracy", [(s, 0.8 + s / 10000) for s in range(0, 2001, 100)])
    test = Series("eval/test_accuracy = 0.9928", [(2000, 0.9928)], note="0.9928")
    root = _document([Panel("accuracy: Run x", "step", "accuracy", [rising, test])])
    (frame,) = [r for r in _elements(root, "rect") if r.get("stroke") == "#444"]
    left, top = _number(frame, "x"), _number(frame, "y")
    box = {"left": left, "top": top, "right": left + _number(frame, "width"),
           "bottom": top + _number(frame, "height")}  # fmt: skip
    return root, box


def test_the_document_is_plain_svg() -> None:
    root, _ = _layout_sample()
    trials = Series("", [(1.0, 0.5), (10.0, 0.7)], joined=False)
    ringed = _document([Panel("", "x", "y", [trials], x_log=True, ringed=Series("b", [(1, 0.5)]))])
    for element in [*root.iter(), *ringed.iter()]:
        namespace, _, tag = element.tag.partition("}")
        assert namespace == "{http://www.w3.org/2000/svg" and tag in ELEMENTS, element.tag
        assert set(element.attrib) <= ATTRIBUTES, (tag, element.attrib)
        assert element.get("text-anchor", "start") in ANCHORS
        # Characters only inside <text>: none between elements, where a viewer shows nothing.
        assert tag == "text" or not (element.text or "").strip(), tag
        assert not (element.tail or "").strip(), tag


def test_the_frame_sits_inside_the_panel_with_grid_lines_across_it() -> None:
    root, box = _layout_sample()
    assert 0 < box["left"] < box["right"] < 700 and 0 < box["top"] < box["bottom"] < 400
    grid = [line for line in _elements(root, "line") if line.get("stroke") == "#ddd"]
    verticals = [g for g in grid if g.get("x1") == g.get("x2")]
    horizontals = [g for g in grid if g.get("y1") == g.get("y2")]
    assert len(verticals) == len(_texts(root, "x-tick")) and verticals
    assert len(horizontals) == len(_texts(root, "y-tick")) and horizontals
    for line in verticals:
        assert (_number(line, "y1"), _number(line, "y2")) == (box["top"], box["bottom"])
        assert box["left"] <= _number(line, "x1") <= box["right"]
    for line in horizontals:
        assert (_number(line, "x1"), _number(line, "x2")) == (box["left"], box["right"])
        assert box["top"] <= _number(line, "y1") <= box["bottom"]


def test_texts_sit_around_the_frame_where_they_are_read() -> None:
    root, box = _layout_sample()
    middle = (box["left"] + box["right"]) / 2
    x_ticks, y_ticks = _elements(root, "text", "x-tick"), _elements(root, "text", "y-tick")
    lowest_tick = max(_number(t, "y") for t in x_ticks)
    for tick in x_ticks:  # centred under their grid line, just below the frame
        assert tick.get("text-anchor") == "middle"
        assert box["bottom"] + 12 <= _number(tick, "y") <= box["bottom"] + 24
    widest = max(len(t.text or "") for t in y_ticks) * CHAR
    for tick in y_ticks:  # ending just left of the frame, level with their grid line
        assert tick.get("text-anchor") == "end"
        assert box["left"] - 12 <= _number(tick, "x") < box["left"]
    (title,) = _elements(root, "text", "title")
    assert title.get("text-anchor") == "middle" and _number(title, "x") == middle
    assert 12 <= _number(title, "y") < box["top"]
    (x_label,) = _elements(root, "text", "x-label")
    assert x_label.get("text-anchor") == "middle" and _number(x_label, "x") == middle
    assert lowest_tick + 12 <= _number(x_label, "y") <= 400
    (y_label,) = _elements(root, "text", "y-label")
    # Turned a quarter anticlockwise about its anchor, left of the tick labels, centred.
    moved, turned = y_label.get("transform", "").split(" ")
    x, y = map(float, moved.removeprefix("translate(").removesuffix(")").split(","))
    assert turned == "rotate(-90)" and y_label.get("text-anchor") == "middle"
    assert 12 <= x <= box["left"] - 6 - widest and y == (box["top"] + box["bottom"]) / 2


def test_each_y_tick_label_is_level_with_its_grid_line() -> None:
    root, _ = _layout_sample()
    lines = [g for g in _elements(root, "line") if g.get("stroke") == "#ddd"]
    levels = sorted(_number(g, "y1") for g in lines if g.get("y1") == g.get("y2"))
    baselines = sorted(_number(t, "y") for t in _elements(root, "text", "y-tick"))
    # A 12 px label's middle is about 4 px above its baseline.
    assert [b - level for b, level in zip(baselines, levels, strict=True)] == [4.0] * len(levels)


def test_the_legend_fits_its_entries_in_order_inside_the_frame() -> None:
    root, box = _layout_sample()
    (legend,) = _elements(root, "g", "legend")
    (frame,) = legend.iter(f"{SVG}rect")
    left, top = _number(frame, "x"), _number(frame, "y")
    right, bottom = left + _number(frame, "width"), top + _number(frame, "height")
    assert box["left"] < left < right < box["right"] and box["top"] < top < bottom < box["bottom"]
    swatches, labels = list(legend.iter(f"{SVG}line")), list(legend.iter(f"{SVG}text"))
    assert [t.text for t in labels] == ["train/accuracy", "eval/test_accuracy = 0.9928"]
    baselines = [_number(t, "y") for t in labels]
    assert top + 12 <= baselines[0] and baselines[-1] + 4 <= bottom  # room above and below
    assert baselines[1] - baselines[0] >= 14  # 12 px text, a line apart
    for swatch, label in zip(swatches, labels, strict=True):
        x1, x2 = _number(swatch, "x1"), _number(swatch, "x2")
        assert left < x1 < x2 < _number(label, "x")  # the swatch, then its label
        assert _number(label, "x") + CHAR * len(label.text or "") <= right
        # Level with the label's middle, horizontal.
        assert _number(swatch, "y1") == _number(swatch, "y2") == _number(label, "y") - 4


def _legend_box(root: ElementTree.Element) -> tuple[float, float, float, float]:
    (legend,) = _elements(root, "g", "legend")
    box = next(legend.iter(f"{SVG}rect"))
    left, top = _number(box, "x"), _number(box, "y")
    return left, top, left + _number(box, "width"), top + _number(box, "height")


def _frame(root: ElementTree.Element) -> tuple[float, float, float, float]:
    (frame,) = [r for r in _elements(root, "rect") if r.get("stroke") == "#444"]
    left, top = _number(frame, "x"), _number(frame, "y")
    return left, top, left + _number(frame, "width"), top + _number(frame, "height")


CORNERS = {"top left": (0.0, 1.0), "top right": (1.0, 1.0), "bottom left": (0.0, 0.0),
           "bottom right": (1.0, 0.0)}  # fmt: skip


@pytest.mark.parametrize("free", [*CORNERS, None])
def test_the_legend_takes_the_free_corner_top_right_first(free: str | None) -> None:
    # A point in each data corner but the free one; none free: the top right all the same.
    taken = [xy for corner, xy in CORNERS.items() if corner != free]
    root = _document([Panel("", "x", "y", [Series("a long enough label", taken, joined=False)])])
    left, top, right, bottom = _legend_box(root)
    frame_left, frame_top, frame_right, frame_bottom = _frame(root)
    # Inside the frame, a few pixels off its edges.
    assert frame_left < left < right < frame_right and frame_top < top < bottom < frame_bottom
    corner = free or "top right"
    middle_x, middle_y = (frame_left + frame_right) / 2, (frame_top + frame_bottom) / 2
    assert (right < middle_x) == ("left" in corner) and (bottom < middle_y) == ("top" in corner)
    assert min(left - frame_left, frame_right - right) <= 8  # in the corner, not near it
    assert min(top - frame_top, frame_bottom - bottom) <= 8


def test_the_ringed_point_counts_for_the_axes_and_the_legend() -> None:
    # The ring alone is far above the trials: the axis reaches it, and the legend keeps off.
    trials = Series("", [(0, 0.0), (10, 0.0)], joined=False)
    best = Series("best", [(10, 10.0)])
    root = _document([Panel("", "x", "y", [trials], ringed=best)])
    (ring,) = _elements(root, "g", "ringed")
    (circle,) = ring.iter(f"{SVG}circle")
    x, y = _number(circle, "cx"), _number(circle, "cy")
    left, top, right, bottom = _frame(root)
    assert left < x < right and top < y < bottom
    assert _texts(root, "y-tick")[-1] == "10"
    box_left, box_top, box_right, box_bottom = _legend_box(root)
    assert not (box_left <= x <= box_right and box_top <= y <= box_bottom)


def test_a_scatter_s_points_are_larger_than_a_line_s_dots_and_a_ring_circles_them() -> None:
    line = Series("line", [(0, 0.0), (1, 1.0)])
    points = Series("points", [(0, 1.0), (1, 0.0)], joined=False)
    root = _document([Panel("", "x", "y", [line, points], ringed=Series("r", [(0, 1.0)]))])
    radius = {g.get("data-label"): {_number(c, "r") for c in g.iter(f"{SVG}circle")}
              for g in _elements(root, "g") if g.get("data-label")}  # fmt: skip
    (dot,), (point,), (ring,) = radius["line"], radius["points"], radius["r"]
    assert 0 < dot < point < ring


def test_a_note_sits_above_and_left_of_its_point() -> None:
    root, _ = _layout_sample()
    (note,) = _elements(root, "text", "note")
    ((x, y),) = _dots(root, "eval/test_accuracy = 0.9928")
    assert note.get("text-anchor") == "end"
    assert x - 8 <= _number(note, "x") < x and y - 12 <= _number(note, "y") < y


@pytest.mark.parametrize("log", [False, True])
def test_the_data_has_the_same_room_above_and_below(log: bool) -> None:
    series = Series("s", [(1, 1.0), (2, 100.0)])
    root = _document([Panel("", "x", "y", [series], x_log=log, y_log=log)])
    (frame,) = [r for r in _elements(root, "rect") if r.get("stroke") == "#444"]
    top, left = _number(frame, "y"), _number(frame, "x")
    bottom, right = top + _number(frame, "height"), left + _number(frame, "width")
    (low_x, low_y), (high_x, high_y) = _dots(root, "s")
    assert bottom - low_y == pytest.approx(high_y - top, abs=0.11)  # coordinates: 0.1 px
    assert low_x - left == pytest.approx(right - high_x, abs=0.11)
    assert bottom - low_y > 0


def test_categories_get_half_a_step_of_room_at_either_end() -> None:
    trials = Series("", [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)], joined=False)
    root = _document([Panel("", "c", "y", [trials], categories=["a", "b", "c"])])
    (frame,) = [r for r in _elements(root, "rect") if r.get("stroke") == "#444"]
    left, right = _number(frame, "x"), _number(frame, "x") + _number(frame, "width")
    xs = [x for x, _ in _dots(root, "")]
    step = xs[1] - xs[0]
    assert xs[0] - left == pytest.approx(step / 2, abs=0.11)
    assert right - xs[-1] == pytest.approx(step / 2, abs=0.11)


def test_on_a_log_x_axis_zero_is_left_out_and_ticks_are_powers_of_ten() -> None:
    trials = Series("", [(0.0, 0.5), (0.001, 0.6), (0.1, 0.7)], joined=False)
    ringed = Series("best", [(0.0, 0.5)])  # no place on the axis: not drawn, no crash
    root = _document([Panel("", "lr", "acc", [trials], x_log=True, ringed=ringed)])
    assert len(_dots(root, "")) == 2
    assert _texts(root, "x-tick") == ["0.001", "0.01", "0.1"]
    (ring,) = _elements(root, "g", "ringed")
    assert list(ring.iter(f"{SVG}circle")) == []
    y_log = _document([Panel("", "x", "y", [trials], y_log=True, ringed=Series("b", [(1, 0.0)]))])
    (ring,) = _elements(y_log, "g", "ringed")
    assert list(ring.iter(f"{SVG}circle")) == []
