"""A unified diff of two renders that knows where each object and resource begins.

A plain line diff (`difflib.unified_diff`) goes wrong on renders: many objects share most of
their lines, so adding worker 2 before ps 0 can come out as "ps 0 removed, worker 2 and ps 0
added". Here the titled sections (`# Job tftrain/mnist-worker-0`, a cloud resource) are matched
by title first and diffed line by line only within a matched pair, so an added object shows as
added, whole, and a changed one as its changed lines. Every hunk header names the section it
starts in, as `git diff` names the enclosing function.

The output is an ordinary unified diff (`patch` applies it).
"""

from __future__ import annotations

import difflib

from infra.render.style import title_of

CONTEXT = 3
Opcode = tuple[str, int, int, int, int]


def _sections(lines: list[str]) -> list[tuple[str, int, int]]:
    """(title, start, end) of each section: a title line up to the next one; lines before
    the first title are a section without a title."""
    starts = [i for i, line in enumerate(lines) if title_of(line)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    ends = [*starts[1:], len(lines)]
    return [(title_of(lines[s]) or "", s, e) for s, e in zip(starts, ends, strict=True) if e > s]


def _span(sections: list[tuple[str, int, int]], first: int, stop: int, total: int) -> range:
    """The lines of sections[first:stop], or an empty range where they would be."""
    if first < stop:
        return range(sections[first][1], sections[stop - 1][2])
    position = sections[first][1] if first < len(sections) else total
    return range(position, position)


def _opcodes(old: list[str], new: list[str]) -> list[Opcode]:
    """difflib opcodes over all lines, aligned section by section."""
    a, b = _sections(old), _sections(new)
    outer = difflib.SequenceMatcher(None, [s[0] for s in a], [s[0] for s in b], autojunk=False)
    codes: list[Opcode] = []
    for tag, i1, i2, j1, j2 in outer.get_opcodes():
        if tag == "equal":
            for (_, a1, a2), (_, b1, b2) in zip(a[i1:i2], b[j1:j2], strict=True):
                inner = difflib.SequenceMatcher(None, old[a1:a2], new[b1:b2], autojunk=False)
                codes += [
                    (t, a1 + x1, a1 + x2, b1 + y1, b1 + y2)
                    for t, x1, x2, y1, y2 in inner.get_opcodes()
                ]
        else:
            lost, gained = _span(a, i1, i2, len(old)), _span(b, j1, j2, len(new))
            codes.append(("replace", lost.start, lost.stop, gained.start, gained.stop))
    return _merged(codes)


def _merged(codes: list[Opcode]) -> list[Opcode]:
    """Adjacent opcodes of one kind (equal, or any change) as one: a change's lines are
    printed from its ranges, and hunks are grouped by which opcodes are equal (difflib's
    get_grouped_opcodes reads no other tag), so every change is a "replace"."""
    merged: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if merged and (merged[-1][0] == "equal") == (tag == "equal"):
            _, i1, _, j1, _ = merged.pop()
        merged.append((tag if tag == "equal" else "replace", i1, i2, j1, j2))
    return merged


class _Aligned(difflib.SequenceMatcher):
    """A SequenceMatcher with given opcodes, for its hunk grouping."""

    def __init__(self, codes: list[Opcode]) -> None:
        super().__init__(None, [], [], autojunk=False)
        self.codes = codes

    def get_opcodes(self) -> list[Opcode]:
        return list(self.codes)  # get_grouped_opcodes edits the list it gets


def _range(start: int, stop: int) -> str:
    """A hunk range as unified diffs write it (difflib's rule: 1-based; empty = line before)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    groups = _Aligned(_opcodes(old_lines, new_lines)).get_grouped_opcodes(CONTEXT)
    lines: list[str] = []
    for group in groups:
        if not lines:
            lines += [f"--- {old_name}", f"+++ {new_name}"]
        first, last = group[0], group[-1]
        header = f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
        section = _section_before(old_lines, first[1])
        lines.append(f"{header} {section}" if section else header)
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [f" {line}" for line in old_lines[i1:i2]]
            else:
                lines += [f"-{line}" for line in old_lines[i1:i2]]
                lines += [f"+{line}" for line in new_lines[j1:j2]]
    return lines


def _section_before(lines: list[str], start: int) -> str | None:
    """The title of the section that line `start` (0-based) of the old render is in, looking
    from the line before it, as git does."""
    for line in reversed(lines[:start]):
        found = title_of(line)
        if found:
            return found
    return None
