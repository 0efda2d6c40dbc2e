"""The object-aware unified diff (infra/render/unified.py) on small renders worked out by hand:
hunk headers as unified diffs write them (1-based start, a length of 1 left out, an empty
range at the line before it), the section title after each header, added and removed objects
whole; and GNU patch, from outside, applies every diff here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from infra.render.unified import unified_diff


def _text(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines)


def test_the_same_text_has_no_diff() -> None:
    text = _text("# Job t/a", "x: 1")
    assert unified_diff(text, text, "a", "b") == []
    assert unified_diff("", "", "a", "b") == []


def test_one_changed_line_without_titles() -> None:
    assert unified_diff(_text("a", "b", "c"), _text("a", "B", "c"), "old", "new") == [
        "--- old",
        "+++ new",
        "@@ -1,3 +1,3 @@",
        " a",
        "-b",
        "+B",
        " c",
    ]


def test_single_lines_and_empty_sides_in_hunk_headers() -> None:
    assert unified_diff(_text("a"), "", "o", "n") == ["--- o", "+++ n", "@@ -1 +0,0 @@", "-a"]
    assert unified_diff("", _text("a"), "o", "n") == ["--- o", "+++ n", "@@ -0,0 +1 @@", "+a"]
    assert unified_diff(_text("a"), _text("b"), "o", "n") == [
        "--- o",
        "+++ n",
        "@@ -1 +1 @@",
        "-a",
        "+b",
    ]


PS = ("# Job t/ps-0", "image: x", "args: [ps]")
WORKER = ("# Job t/worker-2", "image: x", "args: [worker]")


def test_an_object_added_before_a_similar_one_is_added_whole() -> None:
    # A line diff could keep `image: x` and call ps-0 changed; the object diff adds worker-2.
    assert unified_diff(_text(*PS), _text(*WORKER, *PS), "o", "n") == [
        "--- o",
        "+++ n",
        "@@ -1,3 +1,6 @@",
        "+# Job t/worker-2",
        "+image: x",
        "+args: [worker]",
        " # Job t/ps-0",
        " image: x",
        " args: [ps]",
    ]


def test_an_object_removed_is_removed_whole_and_a_matched_one_diffed_by_line() -> None:
    old = _text(*WORKER, *PS)
    new = _text(*PS[:2], "args: [ps, x]")
    assert unified_diff(old, new, "o", "n") == [
        "--- o",
        "+++ n",
        "@@ -1,6 +1,3 @@",
        "-# Job t/worker-2",
        "-image: x",
        "-args: [worker]",
        " # Job t/ps-0",
        " image: x",
        "-args: [ps]",
        "+args: [ps, x]",
    ]


def test_lines_before_the_first_title_are_a_section_of_their_own() -> None:
    # The header line before the first object changes (a new stack name): one hunk for it.
    assert unified_diff(_text("# Stack a", *PS), _text("# Stack b", *PS), "o", "n") == [
        "--- o",
        "+++ n",
        "@@ -1,4 +1,4 @@",
        "-# Stack a",
        "+# Stack b",
        " # Job t/ps-0",
        " image: x",
        " args: [ps]",
    ]
    # And an object added after them is still added whole.
    assert unified_diff(_text("top", *PS), _text("top", *WORKER, *PS), "o", "n")[2:] == [
        "@@ -1,4 +1,7 @@",
        " top",
        "+# Job t/worker-2",
        "+image: x",
        "+args: [worker]",
        " # Job t/ps-0",
        " image: x",
        " args: [ps]",
    ]


def _long_section(name: str, changed: int | None = None) -> list[str]:
    return [f"# Job t/{name}"] + [f"k{i}: {'new' if i == changed else 'old'}" for i in range(1, 10)]


def test_a_hunk_inside_a_section_is_labelled_with_its_title() -> None:
    old = _text("banner", *_long_section("a"), *_long_section("b"))
    new = _text("banner", *_long_section("a"), *_long_section("b", changed=8))
    # b's title is line 12 (1-based), k8 line 20; three lines of context each side.
    assert unified_diff(old, new, "o", "n") == [
        "--- o",
        "+++ n",
        "@@ -17,5 +17,5 @@ Job t/b",
        " k5: old",
        " k6: old",
        " k7: old",
        "-k8: old",
        "+k8: new",
        " k9: old",
    ]


def test_a_hunk_that_starts_on_a_title_is_labelled_with_the_section_before() -> None:
    cloud = "alicloud:vpc/network:Network  vpc"
    old = _text(f"# {cloud}", "#   cidr: a", "# Job t/x", "k: 1")
    new = _text(f"# {cloud}", "#   cidr: a", "# Job t/x", "k: 2")
    # The hunk opens at line 1, before any title: no label, as git does at the top of a file.
    assert unified_diff(old, new, "o", "n")[2] == "@@ -1,4 +1,4 @@"
    old = _text("one", "two", "three", "four", f"# {cloud}", "#   cidr: a", "# Job t/x", "k: 1")
    new = _text("one", "two", "three", "four", f"# {cloud}", "#   cidr: a", "# Job t/x", "k: 2")
    assert unified_diff(old, new, "o", "n")[2] == "@@ -5,4 +5,4 @@"
    old = _text(f"# {cloud}", *(f"#   in{i}: a" for i in range(5)), "# Job t/x", "k: 1")
    new = _text(f"# {cloud}", *(f"#   in{i}: a" for i in range(5)), "# Job t/x", "k: 2")
    assert unified_diff(old, new, "o", "n")[2] == f"@@ -5,4 +5,4 @@ {cloud}"


def test_changes_far_apart_are_two_hunks_and_near_ones_one() -> None:
    old = _text(*(f"l{i}" for i in range(20)))
    far = _text(*("X" if i in (1, 18) else f"l{i}" for i in range(20)))
    headers = [line for line in unified_diff(old, far, "o", "n") if line.startswith("@@")]
    assert headers == ["@@ -1,5 +1,5 @@", "@@ -16,5 +16,5 @@"]
    # Six unchanged lines between two changes: the contexts meet, one hunk.
    near = _text(*("X" if i in (1, 8) else f"l{i}" for i in range(20)))
    headers = [line for line in unified_diff(old, near, "o", "n") if line.startswith("@@")]
    assert headers == ["@@ -1,12 +1,12 @@"]


CASES = {
    "added": (_text(*PS), _text(*WORKER, *PS)),
    "removed": (_text(*WORKER, *PS), _text(*PS)),
    "reordered": (_text(*WORKER, *PS), _text(*PS, *WORKER)),
    "changed-and-added": (
        _text("top", *_long_section("a"), *_long_section("b")),
        _text("top", *_long_section("a", 3), *WORKER, *_long_section("b", 9)),
    ),
    "from-nothing": ("", _text(*PS)),
    "to-nothing": (_text(*PS, *WORKER), ""),
}


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
@pytest.mark.parametrize("case", CASES)
def test_gnu_patch_applies_the_diff(case: str, tmp_path: Path) -> None:
    old, new = CASES[case]
    (tmp_path / "render.yaml").write_text(old)
    diff = unified_diff(old, new, "a/render.yaml", "b/render.yaml")
    done = subprocess.run(
        ["patch", "-p1", "--quiet", "--no-backup-if-mismatch", "--force"],
        cwd=tmp_path,
        input="\n".join(diff) + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "render.yaml").read_text() == new


def test_a_script_of_many_alike_lines_shows_only_the_line_added() -> None:
    # A ConfigMap's script repeats lines (`fi`, `done`, blank lines) hundreds of times:
    # difflib's automatic junk heuristic would stop matching them and replace every line
    # after the change.
    script = ["    fi", "    done"] * 150
    old = _text("# ConfigMap t/scripts", *script)
    new = _text("# ConfigMap t/scripts", *script[:150], "    exit 1", *script[150:])
    diff = unified_diff(old, new, "o", "n")
    assert [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "+    exit 1"
    ]
