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


def test_a_recheck_moves_what_it_caught_and_keeps_the_rest() -> None:
    _, survivors = mutation.earlier(EXCERPT)
    lines = [*survivors["pkg.alpha"], "- `pkg.alpha.x_f__mutmut_8` (no tests)"]
    row = "| pkg.alpha | 97 / 100 | 97.0% | 3 | 1 | 0 |"
    verdicts = {
        "pkg.alpha.x_f__mutmut_3": "timeout",  # mutmut's timeout counts as caught
        "pkg.alpha.x_f__mutmut_4": "survived",
        "pkg.alpha.x_f__mutmut_8": "survived",  # run now: its line says so
    }
    # 97 of 100 with 3 not caught; one of the three caught now: 98 of 100, 2 not caught.
    assert mutation.rechecked(row, lines, verdicts) == (
        "| pkg.alpha | 98 / 100 | 98.0% | 2 | 1 | 0 |",
        ["- `pkg.alpha.x_f__mutmut_4` (survived)", "- `pkg.alpha.x_f__mutmut_8` (survived)"],
    )


def test_a_not_caught_mutant_whose_code_is_gone_leaves_the_count() -> None:
    _, survivors = mutation.earlier(EXCERPT)
    row = "| pkg.alpha | 98 / 100 | 98.0% | 2 | 1 | 0 |"
    verdicts = {"pkg.alpha.x_f__mutmut_3": "gone", "pkg.alpha.x_f__mutmut_4": "survived"}
    # 98 caught of 100; one of the 2 not caught no longer exists: 98 of 99, 1 not caught.
    assert mutation.rechecked(row, survivors["pkg.alpha"], verdicts) == (
        "| pkg.alpha | 98 / 99 | 99.0% | 1 | 1 | 0 |",
        ["- `pkg.alpha.x_f__mutmut_4` (survived)"],
    )


def test_a_recheck_that_did_not_reach_a_mutant_keeps_its_line() -> None:
    line = "- `pkg.alpha.x_f__mutmut_4` (no tests)"
    row = "| pkg.alpha | 99 / 100 | 99.0% | 1 | 0 | 0 |"
    verdicts = {"pkg.alpha.x_f__mutmut_4": "not checked"}
    assert mutation.rechecked(row, [line], verdicts) == (row, [line])
    assert mutation.rechecked(row, [line], {}) == (row, [line])


def test_the_score_file_applies_a_recheck_to_the_kept_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    score = tmp_path / "mutation-score.md"
    score.write_text(EXCERPT)
    monkeypatch.setattr(mutation, "SCORE_FILE", score)
    monkeypatch.setattr(mutation, "every_module", lambda: ["pkg.alpha", "pkg.beta"])
    monkeypatch.setattr(mutation, "EQUIVALENT", {})
    for where in ("repo/pkg", "work/pkg.alpha/pkg"):  # the recheck's copy: today's source
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "alpha.py").write_text("A = 1\n")
    monkeypatch.setattr(mutation, "ROOT", tmp_path / "repo")
    monkeypatch.setattr(mutation, "WORK", tmp_path / "work")
    verdicts = {"pkg.alpha.x_f__mutmut_3": "killed", "pkg.alpha.x_f__mutmut_4": "killed"}
    mutation.write_score({}, {"pkg.alpha": verdicts})
    text = score.read_text()
    # Both not caught are caught now: 100 of 100; pkg.beta, not run, stays as it was.
    assert "| pkg.alpha | 100 / 100 | 100.0% | 0 | 1 | 0 |" in text
    assert "| pkg.beta | - | not yet run | - | - | - |" in text
    assert "x_f__mutmut_3` (" not in text and "x_f__mutmut_4` (" not in text
    assert "Changed since" not in text


def test_a_module_listed_as_changed_stays_listed_until_it_is_run_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    score = tmp_path / "mutation-score.md"
    score.write_text(
        EXCERPT + "\nChanged since their last run, so their rows count the code as it was "
        "then: pkg.alpha, pkg.beta.\n"
    )
    assert mutation.changed_before(score.read_text()) == {"pkg.alpha", "pkg.beta"}
    root, work = tmp_path / "repo", tmp_path / "work"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "beta.py").write_text("B = 1\n")
    (work / "pkg.beta" / "pkg").mkdir(parents=True)
    (work / "pkg.beta" / "pkg" / "beta.py").write_text("B = 1\n")  # run on today's source
    for name, value in {"SCORE_FILE": score, "ROOT": root, "WORK": work, "EQUIVALENT": {}}.items():
        monkeypatch.setattr(mutation, name, value)
    monkeypatch.setattr(mutation, "every_module", lambda: ["pkg.alpha", "pkg.beta"])
    # pkg.beta run whole now on today's source; pkg.alpha not run (a recheck is not whole).
    mutation.write_score({"pkg.beta": {"pkg.beta.x_g__mutmut_1": "killed"}})
    assert "then: pkg.alpha.\n" in score.read_text()
    assert mutation.changed_before(score.read_text()) == {"pkg.alpha"}
