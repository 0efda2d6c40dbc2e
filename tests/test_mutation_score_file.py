"""bench/mutation.py's score file: what it keeps of an earlier run's rows and survivors
when a module is not run again. Inputs are hand-written score-file excerpts in the format
docs/mutation-score.md states; expected rows are worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import mutation

EXCERPT = """\
| module | caught / counted | score | not caught | equivalent (left out) | not run |
|---|---|---|---|---|---|
| pkg.alpha | 98 / 100 | 98.0% | 2 | 1 | 0 |
| pkg.beta | - | not yet run | - | - | - |

## Left out as equivalent

- `pkg.alpha.x_f__mutmut_9`: a reason
- `pkg.alpha.x_f__mutmut_3`: listed after the run below

## Not caught

- `pkg.alpha.x_f__mutmut_3` (survived)
- `pkg.alpha.x_f__mutmut_4` (survived)
- `pkg.alpha.x_f__mutmut_4` (survived)
- `pkg.gamma.xǁKǁm__mutmut_1` (no tests)
"""


def test_earlier_takes_run_rows_and_status_lines_only() -> None:
    rows, survivors = mutation.earlier(EXCERPT)
    assert rows == {"pkg.alpha": "| pkg.alpha | 98 / 100 | 98.0% | 2 | 1 | 0 |"}
    # Not the equivalents' "- `name`: why" lines; a repeated line once.
    assert survivors == {
        "pkg.alpha": [
            "- `pkg.alpha.x_f__mutmut_3` (survived)",
            "- `pkg.alpha.x_f__mutmut_4` (survived)",
        ],
        "pkg.gamma": ["- `pkg.gamma.xǁKǁm__mutmut_1` (no tests)"],
    }


def test_a_survivor_listed_equivalent_since_leaves_the_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mutation, "EQUIVALENT", {"pkg.alpha.x_f__mutmut_3": "a reason"})
    rows, survivors = mutation.earlier(EXCERPT)
    row, kept = mutation.reconciled(rows["pkg.alpha"], survivors["pkg.alpha"])
    # 98 of 100 with 2 not caught; one of the two is equivalent now: 98 of 99 (98.99 %).
    assert row == "| pkg.alpha | 98 / 99 | 99.0% | 1 | 2 | 0 |"
    assert kept == ["- `pkg.alpha.x_f__mutmut_4` (survived)"]


def test_rows_without_new_equivalents_are_kept_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mutation, "EQUIVALENT", {})
    lines = ["- `pkg.alpha.x_f__mutmut_4` (survived)"]
    row = "| pkg.alpha | 98 / 100 | 98.0% | 2 | 1 | 0 |"
    assert mutation.reconciled(row, lines) == (row, lines)
    not_yet = "| pkg.beta | - | not yet run | - | - | - |"
    assert mutation.reconciled(not_yet, []) == (not_yet, [])


def test_every_survivor_equivalent_leaves_a_partial_row_none_reached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mutation, "EQUIVALENT", {"pkg.delta.x_g__mutmut_1": "a reason"})
    row, kept = mutation.reconciled(
        "| pkg.delta | 0 / 1 | 0.0% | 1 | 0 | 7 |", ["- `pkg.delta.x_g__mutmut_1` (survived)"]
    )
    assert (row, kept) == ("| pkg.delta | 0 / 0 | none reached | 0 | 1 | 7 |", [])


def test_a_module_changed_since_its_run_is_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, work = tmp_path / "repo", tmp_path / "work"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "alpha.py").write_text("A = 1\n")
    (work / "pkg.alpha" / "pkg").mkdir(parents=True)
    monkeypatch.setattr(mutation, "ROOT", root)
    monkeypatch.setattr(mutation, "WORK", work)
    assert mutation.source_changed("pkg.alpha")  # no copy: never run on this source
    (work / "pkg.alpha" / "pkg" / "alpha.py").write_text("A = 1\n")
    assert not mutation.source_changed("pkg.alpha")
    (root / "pkg" / "alpha.py").write_text("A = 2\n")
    assert mutation.source_changed("pkg.alpha")
