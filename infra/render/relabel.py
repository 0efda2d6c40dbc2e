"""The run-id relabelling folded out of the object diff, one line per kind.

A change that moves a stack to a new run id rewrites the id in every Job, Service and policy
(labels, selectors, paths, TF_CONFIG): a hunk per object that hides the lines that matter.
The diff is made with the old id read as the new one, so what is left is what else changed,
and a line per kind says where the id was rewritten. Only a stack with one run on each side
is folded: a sweep's trials are created and removed by id, which is the change itself.
"""

from __future__ import annotations

from collections import Counter

from infra.render.parsed import parse_render
from infra.render.run_line import run_ids
from infra.render.style import title_of


def _kind(title: str) -> str:
    return title.split(" ")[0] if "  " not in title else title.split("  ")[0].rsplit(":", 1)[-1]


def fold_run_id(old_text: str, new_text: str) -> tuple[str, list[str]]:
    """`old_text` with its run id replaced by the new one, and the lines saying where."""
    before, after = run_ids(parse_render(old_text)), run_ids(parse_render(new_text))
    if len(before) != 1 or len(after) != 1 or before == after:
        return old_text, []
    old_id, new_id = before[0], after[0]
    lines_by_kind: Counter[str] = Counter()
    objects_by_kind: dict[str, set[str]] = {}
    title = ""
    for line in old_text.splitlines():
        title = title_of(line) or title
        if old_id in line and title:
            kind = _kind(title)
            lines_by_kind[kind] += 1
            objects_by_kind.setdefault(kind, set()).add(title)
    folded = [
        f"  {kind}: {len(objects_by_kind[kind])} object{'s' * (len(objects_by_kind[kind]) != 1)}, "
        f"{count} line{'s' * (count != 1)}"
        for kind, count in sorted(lines_by_kind.items())
    ]
    header = f"Run id {old_id} → {new_id}, folded out of the diff below (labels, names, paths):"
    return old_text.replace(old_id, new_id), [header, *folded]
