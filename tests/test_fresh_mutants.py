"""bench/fresh_mutants.py's mutants, on a hand-written module: each kind at each site the
docstring names, and nothing else (a docstring, a bare annotation and a statement that
shares its line are not sites)."""

from __future__ import annotations

import re

from bench.fresh_mutants import FAILED_LINE, mutants_of

SOURCE = '''\
def f(x: int) -> int:
    """A docstring is not dropped."""
    total: int
    y = x + 1  # a comment after it
    a = 1; b = 2
    if y > 2:
        print("é", y)
    return y if x else 0


def g() -> bool:
    if x:
        return False
    return None
'''


def changed_line(source: str, line: int) -> str:
    return source.splitlines()[line - 1]


def test_each_kind_at_each_site_and_nowhere_else() -> None:
    made = [(m.kind, m.line, changed_line(m.source, m.line)) for m in mutants_of("m", SOURCE)]
    assert sorted(made) == sorted([
        ("drop", 4, "    pass  # a comment after it"),
        ("negate", 6, "    if not (y > 2):"),
        ("drop", 7, "        pass"),
        ("return None", 8, "    return None"),
        ("negate", 8, "    return y if not (x) else 0"),
        ("negate", 12, "    if not (x):"),  # returning None for False or None is no change
    ])  # fmt: skip


def test_a_mutant_changes_only_its_site() -> None:
    for mutant in mutants_of("m", SOURCE):
        before, after = SOURCE.splitlines(), mutant.source.splitlines()
        pairs = enumerate(zip(before, after, strict=True), start=1)
        assert [number for number, (a, b) in pairs if a != b] == [mutant.line]


def test_a_failed_tests_id_is_read_whole_spaces_and_all() -> None:
    # pytest's short summary (-ra): "FAILED <node id> - <message>"; ERROR lines may lack one.
    summary = (
        "FAILED tests/test_a.py::test_b[x y-1] - AssertionError: a - b\n"
        "ERROR tests/test_c.py::test_d\n"
    )
    found = re.findall(FAILED_LINE, summary, flags=re.MULTILINE)
    assert found == ["tests/test_a.py::test_b[x y-1]", "tests/test_c.py::test_d"]
