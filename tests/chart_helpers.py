"""Reading an SVG chart (`infra.charts`) back in tests: its texts by kind."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"


def chart_texts(path: Path) -> dict[str, list[str]]:
    """The chart's texts by class (title, x-label, legend-label, note, ...), in order."""
    texts: dict[str, list[str]] = {}
    for text in ElementTree.parse(path).getroot().iter(f"{SVG}text"):
        texts.setdefault(text.get("class", ""), []).append(text.text or "")
    return texts
