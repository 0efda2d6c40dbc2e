"""Charts written as SVG text: the run report's loss and accuracy plots, the sweep's comparison.

No plotting library: the report is written as every local run ends, and importing matplotlib
took 0.3 of the launcher's last 0.5 seconds (docs/benchmarks.md). SVG is text, sharp at any
zoom, and shows in a browser, an editor's Markdown preview and a pull request.

A chart is one or more panels side by side. Each has a linear, logarithmic or categorical x
axis and a linear or logarithmic y axis, with ticks at round values. Its series are lines,
with a dot per point when they are few enough to tell apart, or points alone. One set of
points can be circled and named in the legend, to mark the best trial.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

# The colours series take, in order: the "Tableau 10" palette, which is also matplotlib's default.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
RING_COLOUR = "#d62728"
HEIGHT = 400
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 30, 45  # the plot area's margins in the panel, px
TICKS = 5  # about this many intervals on a linear axis
PAD = 0.05  # room beyond the data on each side, as a share of its range: no point on the frame
DOTS_UP_TO = 100  # a line of more points gets no dots: they would merge into a thick line


@dataclass(frozen=True)
class Series:
    """Named (x, y) points, drawn as a line or, not `joined`, as points alone."""

    label: str
    points: Sequence[tuple[float, float]]
    joined: bool = True
    note: str = ""  # written beside the last point (a test metric's value)


@dataclass(frozen=True)
class Panel:
    """One plot: its texts, its series, and how each axis is scaled."""

    title: str
    x_label: str
    y_label: str
    series: Sequence[Series]
    x_log: bool = False
    y_log: bool = False
    categories: Sequence[str] = ()  # x values are indexes into these, which label the ticks
    ringed: Series | None = None  # circled and named in the legend

    def placeable(self, series: Series) -> list[tuple[float, float]]:
        """The points of `series` this panel's axes can place."""
        return drawable(series.points, self.x_log, self.y_log)

    def every_point(self) -> list[tuple[float, float]]:
        """The placeable points of every series and the ring: what the axes must reach and
        the legend should not hide."""
        shown = [*self.series, *([self.ringed] if self.ringed else [])]
        return [p for s in shown for p in self.placeable(s)]


@dataclass(frozen=True)
class Axis:
    """A value range, with where its ticks are and what they read."""

    low: float
    high: float
    log: bool
    ticks: tuple[tuple[float, str], ...]

    def fraction(self, value: float) -> float:
        """Where `value` lies between low (0) and high (1)."""
        if self.log:
            low, high, value = math.log10(self.low), math.log10(self.high), math.log10(value)
        else:
            low, high = self.low, self.high
        return (value - low) / (high - low)


def nice_step(raw: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least `raw` (> 0)."""
    power = 10.0 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5):
        if raw <= multiple * power * (1 + 1e-9):  # 0.1 / 5 is 0.020000000000000004
            return multiple * power
    return 10 * power


def linear_axis(values: Sequence[float]) -> Axis:
    """The data's range and PAD more each side, a tick at each multiple of a round step."""
    low, high = min(values, default=0.0), max(values, default=1.0)
    if low == high:  # one value: a range around it
        pad = abs(low) / 2 or 1.0
        low, high = low - pad, high + pad
    low, high = low - PAD * (high - low), high + PAD * (high - low)
    step = nice_step((high - low) / TICKS)
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    digits = max(0, -math.floor(math.log10(step)))
    ticks = tuple((k * step, f"{k * step:.{digits}f}") for k in range(first, last + 1))
    return Axis(low, high, False, ticks)


def _powers(low: float, high: float, multiples: Sequence[int]) -> list[tuple[float, str]]:
    """Each multiple of each power of ten whose log lies in low..high, with its label."""
    return [
        (m * 10.0**k, f"{m * 10.0**k:g}")
        for k in range(math.floor(low), math.ceil(high) + 1)
        for m in multiples
        if low - 1e-9 <= math.log10(m * 10.0**k) <= high + 1e-9
    ]


def log_axis(values: Sequence[float]) -> Axis:
    """The (positive) data's range and PAD of it more each side, in powers: a tick at each
    power of ten, and at 2 and 5 times them where the range holds fewer than two."""
    low, high = math.log10(min(values)), math.log10(max(values))
    if low == high:
        low, high = low - 0.5, high + 0.5
    low, high = low - PAD * (high - low), high + PAD * (high - low)
    ticks = _powers(low, high, (1,))
    if len(ticks) < 2:
        ticks = _powers(low, high, (1, 2, 5))
    return Axis(10.0**low, 10.0**high, True, tuple(ticks))


def category_axis(categories: Sequence[str]) -> Axis:
    """Category i at i, half a step of room at either end."""
    ticks = tuple((float(i), name) for i, name in enumerate(categories))
    return Axis(-0.5, len(categories) - 0.5, False, ticks)


def drawable(points: Sequence[tuple[float, float]], x_log: bool, y_log: bool) -> list:
    """The points a chart can place: finite, and positive on a log axis (a diverged NaN loss
    or a learning rate of 0 has no place there)."""
    return [
        (x, y)
        for x, y in points
        if math.isfinite(x) and math.isfinite(y) and (x > 0 or not x_log) and (y > 0 or not y_log)
    ]


def _axes(panel: Panel) -> tuple[Axis, Axis]:
    points = panel.every_point()
    xs, ys = [x for x, _ in points], [y for _, y in points]
    if panel.categories:
        x_axis = category_axis(panel.categories)
    else:
        x_axis = log_axis(xs) if panel.x_log and xs else linear_axis(xs)
    return x_axis, (log_axis(ys) if panel.y_log and ys else linear_axis(ys))


def _text(x: float, y: float, text: str, **attributes: str) -> str:
    # class_ for class, text_anchor for text-anchor
    names = {name: name.rstrip("_").replace("_", "-") for name in attributes}
    extra = "".join(f" {names[name]}={quoteattr(value)}" for name, value in attributes.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(text)}</text>'


class _Frame:
    """A panel's plot area on the page: where a data point is drawn."""

    def __init__(self, left: float, width: float, x_axis: Axis, y_axis: Axis) -> None:
        self.x0, self.x1 = left + LEFT, left + width - RIGHT
        self.y0, self.y1 = TOP, HEIGHT - BOTTOM  # y0 the top: SVG's y grows downwards
        self.x_axis, self.y_axis = x_axis, y_axis

    def at(self, x: float, y: float) -> tuple[float, float]:
        return (
            self.x0 + self.x_axis.fraction(x) * (self.x1 - self.x0),
            self.y1 - self.y_axis.fraction(y) * (self.y1 - self.y0),
        )

    def grid(self) -> list[str]:
        """The frame, a grid line and label per tick, and nothing outside the frame."""
        parts = [
            f'<rect x="{self.x0:.1f}" y="{self.y0:.1f}" width="{self.x1 - self.x0:.1f}" '
            f'height="{self.y1 - self.y0:.1f}" fill="none" stroke="#444"/>'
        ]
        for value, label in self.x_axis.ticks:
            x, _ = self.at(value, self.y_axis.low)
            parts.append(f'<line x1="{x:.1f}" y1="{self.y0:.1f}" x2="{x:.1f}" y2="{self.y1:.1f}" '
                         'stroke="#ddd"/>')  # fmt: skip
            parts.append(_text(x, self.y1 + 16, label, text_anchor="middle", class_="x-tick"))
        for value, label in self.y_axis.ticks:
            _, y = self.at(self.x_axis.low, value)
            parts.append(f'<line x1="{self.x0:.1f}" y1="{y:.1f}" x2="{self.x1:.1f}" y2="{y:.1f}" '
                         'stroke="#ddd"/>')  # fmt: skip
            parts.append(_text(self.x0 - 6, y + 4, label, text_anchor="end", class_="y-tick"))
        return parts


def _series(frame: _Frame, series: Series, colour: str, panel: Panel) -> list[str]:
    placed = [frame.at(x, y) for x, y in panel.placeable(series)]
    parts = [f"<g class={quoteattr('series')} data-label={quoteattr(series.label)}>"]
    if series.joined and len(placed) > 1:
        coordinates = " ".join(f"{x:.1f},{y:.1f}" for x, y in placed)
        parts.append(f'<polyline points="{coordinates}" fill="none" stroke="{colour}" '
                     'stroke-width="1.5"/>')  # fmt: skip
    if not series.joined or len(placed) <= DOTS_UP_TO:
        radius = 2.5 if series.joined else 4
        parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{colour}"/>'
                  for x, y in placed]  # fmt: skip
    if series.note and placed:
        x, y = placed[-1]
        parts.append(_text(x - 4, y - 6, series.note, text_anchor="end", class_="note"))
    return [*parts, "</g>"]


def _ring(frame: _Frame, ringed: Series, panel: Panel) -> list[str]:
    placed = [frame.at(x, y) for x, y in panel.placeable(ringed)]
    parts = [f"<g class={quoteattr('ringed')} data-label={quoteattr(ringed.label)}>"]
    parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="none" stroke="{RING_COLOUR}" '
              'stroke-width="1.5"/>' for x, y in placed]  # fmt: skip
    return [*parts, "</g>"]


def _legend(frame: _Frame, entries: Sequence[tuple[str, str]], points: Sequence) -> list[str]:
    """Each (label, colour) in the corner of the plot area that hides the fewest `points`."""
    if not entries:
        return []
    width, height = 28 + 7 * max(len(label) for label, _ in entries), 16 * len(entries) + 6
    corners = [  # top right first: where a falling loss leaves room
        (frame.x1 - width - 6, frame.y0 + 6), (frame.x1 - width - 6, frame.y1 - height - 6),
        (frame.x0 + 6, frame.y0 + 6), (frame.x0 + 6, frame.y1 - height - 6),
    ]  # fmt: skip

    def hidden(corner: tuple[float, float]) -> int:
        left, top = corner
        return sum(left <= x <= left + width and top <= y <= top + height for x, y in points)

    left, top = min(corners, key=hidden)
    parts = [f'<g class="legend"><rect x="{left:.1f}" y="{top:.1f}" width="{width}" '
             f'height="{height}" fill="white" fill-opacity="0.85" stroke="#bbb"/>']  # fmt: skip
    for i, (label, colour) in enumerate(entries):
        y = top + 14 + 16 * i
        parts.append(f'<line x1="{left + 6:.1f}" y1="{y - 4:.1f}" x2="{left + 20:.1f}" '
                     f'y2="{y - 4:.1f}" stroke="{colour}" stroke-width="3"/>')  # fmt: skip
        parts.append(_text(left + 24, y, label, class_="legend-label"))
    return [*parts, "</g>"]


def _panel(panel: Panel, left: float, width: float) -> list[str]:
    frame = _Frame(left, width, *_axes(panel))
    parts = frame.grid()
    entries = []
    points = [frame.at(*p) for p in panel.every_point()]
    for i, series in enumerate(panel.series):
        colour = PALETTE[i % len(PALETTE)]
        parts += _series(frame, series, colour, panel)
        entries.append((series.label, colour))
    if panel.ringed is not None:
        parts += _ring(frame, panel.ringed, panel)
        entries.append((panel.ringed.label, RING_COLOUR))
    middle = (frame.x0 + frame.x1) / 2
    parts += [
        _text(middle, TOP - 10, panel.title, text_anchor="middle", class_="title"),
        _text(middle, HEIGHT - 10, panel.x_label, text_anchor="middle", class_="x-label"),
        f'<text transform="translate({left + 16:.1f},{(frame.y0 + frame.y1) / 2:.1f}) '
        f'rotate(-90)" text-anchor="middle" class="y-label">{escape(panel.y_label)}</text>',
    ]
    # Only series with a name get a legend entry (a scatter of trials needs none).
    return parts + _legend(frame, [(label, c) for label, c in entries if label], points)


def render(panels: Sequence[Panel], panel_width: int) -> str:
    """The SVG document: the panels left to right, each `panel_width` px wide."""
    width = panel_width * len(panels)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
        f'viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="12">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for i, panel in enumerate(panels):
        parts += _panel(panel, i * panel_width, panel_width)
    return "\n".join([*parts, "</svg>", ""])


def write(path: Path, panels: Sequence[Panel], panel_width: int) -> None:
    """Write the chart to `path` whole: a reader never sees half a file."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(render(panels, panel_width), encoding="utf-8")
    partial.replace(path)
