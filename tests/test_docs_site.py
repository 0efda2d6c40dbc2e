"""The docs site (mkdocs.yml, docs/): grouped navigation, every page once, no page repeating its
title as its first section, examples that fit the page (issue 38)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
# The width docs/stylesheets/extra.css makes room for.
EXAMPLE_COLUMNS = 100
# Recorded benchmark output, kept as the machine printed it.
VERBATIM = {"benchmarks.md"}


def _site() -> dict[str, Any]:
    # mkdocs.yml may hold !!python/name tags (theme extensions): only the plain keys matter.
    return yaml.load((REPO / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)


def _pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _pages(item)]
    return [page for value in nav.values() for page in _pages(value)]


def test_the_navigation_is_grouped_and_lists_every_page_once() -> None:
    nav = _site()["nav"]
    sections = [next(iter(item)) for item in nav]
    assert sections == ["Home", "Getting started", "Guides", "Reference", "Development"]
    pages = _pages(nav)
    assert len(pages) == len(set(pages)), pages
    assert set(pages) == {p.name for p in DOCS.glob("*.md")}


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_no_page_repeats_its_title_as_its_first_section(page: str) -> None:
    lines = (DOCS / page).read_text().splitlines()
    assert lines[0].startswith("# ")
    first = next((line for line in lines[1:] if line.startswith("#")), None)
    assert first is None or first.lstrip("#").strip() != lines[0][2:].strip(), page


@pytest.mark.parametrize(
    "page", sorted(p.name for p in DOCS.glob("*.md") if p.name not in VERBATIM)
)
def test_examples_fit_the_page(page: str) -> None:
    fence, wide = False, []
    for number, line in enumerate((DOCS / page).read_text().splitlines(), 1):
        if re.match(r"^\s*```", line):
            fence = not fence
        elif fence and len(line) > EXAMPLE_COLUMNS:
            wide.append(number)
    assert wide == [], f"{page}: lines {wide} are wider than {EXAMPLE_COLUMNS} columns"


def test_the_theme_is_material_and_required_for_development() -> None:
    assert _site()["theme"]["name"] == "material"
    assert re.search(r"^mkdocs-material>=", (REPO / "requirements-dev.txt").read_text(), re.M)
