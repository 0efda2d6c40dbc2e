"""Fresh mutants by operators mutmut does not have: a check of the suite independent of
the mutmut score (`python -m bench.fresh_mutants`).

mutmut 3 changes one token: an operator, a constant, a name to None, an argument left out.
The edits that break a program in review are often larger. This script makes three kinds
at sites drawn at random (a seed makes the draw repeatable) in the modules it is given:

- `drop`: a statement of a function body becomes `pass` (a call, an assignment, a raise);
- `negate`: an `if`/`elif`/`while` condition or a conditional expression's test is turned
  around (`not (...)`);
- `return None`: a `return <value>` returns None instead.

Each is applied to a copy of the tracked files and the module's tests (bench.mutation's
selection, less those that fail in the copy without any mutant) run against it, stopping at
the first failure. A mutant is caught when a test fails or the run outlives TIMEOUT. The
verdicts and each survivor's diff go to docs/fresh-mutants.md.

    .venv/bin/python -m bench.fresh_mutants --per-module 3 --seed 7 infra.records.run_state
"""

from __future__ import annotations

import argparse
import ast
import difflib
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.mutation import _tracked, module_path, test_selection
from bench.session import TIMED_OUT, run_session, stop_on_sigterm

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "fresh-mutants.md"
TIMEOUT = 900  # s for one mutant's tests: past it, a loop that no longer ends is caught
# pytest's summary line of a failed test: "FAILED <node id> - <message>"; a parametrized
# id may hold spaces, so the id runs to the " - " before the message (or the line's end).
FAILED_LINE = r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$"
PYTEST = ("-m", "pytest", "-x", "-q", "-n", "2", "-p", "no:randomly", "-p", "no:cacheprovider")


@dataclass(frozen=True)
class Mutant:
    module: str
    kind: str  # drop, negate, return None
    line: int  # 1-based, where the change starts
    source: str  # the whole module, changed

    @property
    def name(self) -> str:
        return f"{self.module}:{self.line} {self.kind}"


def _own_line(lines: list[str], node: ast.stmt) -> bool:
    """The statement fills its lines alone (no `a; b`, nothing after it but a comment).
    ast's column offsets count UTF-8 bytes."""
    first = lines[node.lineno - 1].encode()
    last = lines[node.end_lineno - 1].encode()  # type: ignore[operator]
    after = last[node.end_col_offset :].strip()  # type: ignore[misc]
    return not first[: node.col_offset].strip() and (not after or after.startswith(b"#"))


def _replace(source: str, node: ast.AST, text: str) -> str:
    """`source` with `node`'s exact span replaced by `text`."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    start = offsets[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
    end = offsets[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
    return (data[:start] + text.encode() + data[end:]).decode()


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def mutants_of(module: str, source: str) -> Iterator[Mutant]:
    """Every mutant of the three kinds the module's functions give, in source order."""
    tree = ast.parse(source)
    lines = source.splitlines()
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function in functions:
        for node in ast.walk(function):
            if node is function:
                continue
            if (
                isinstance(node, ast.Expr | ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Raise)
                and not _is_docstring(node)
                and _own_line(lines, node)
                and not (isinstance(node, ast.AnnAssign) and node.value is None)
            ):
                yield Mutant(module, "drop", node.lineno, _replace(source, node, "pass"))
            if isinstance(node, ast.If | ast.While | ast.IfExp):
                test = ast.get_source_segment(source, node.test)
                negated = _replace(source, node.test, f"not ({test})")
                yield Mutant(module, "negate", node.test.lineno, negated)
            if (
                isinstance(node, ast.Return)
                and node.value is not None
                # None for None or False changes nothing a test of the value's truth sees.
                and not (isinstance(node.value, ast.Constant) and node.value.value in (None, False))
            ):
                none = _replace(source, node.value, "None")
                yield Mutant(module, "return None", node.lineno, none)


def drawn(module: str, per_module: int, seed: int) -> list[Mutant]:
    source = (ROOT / module_path(module)).read_text()
    every = [m for m in mutants_of(module, source) if _compiles(m.source)]
    return random.Random(f"{seed}:{module}").sample(every, min(per_module, len(every)))


def _compiles(source: str) -> bool:
    try:
        compile(source, "<mutant>", "exec")
    except SyntaxError:  # `pass` where an expression's value was needed cannot happen, but
        return False  # a negated test inside an f-string's braces can
    return True


def _copy(into: Path) -> None:
    for name in _tracked():
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)


def _pytest(copy: Path, tests: Sequence[str], *extra: str) -> tuple[int, str]:
    """pytest in its own session: past TIMEOUT the whole group goes, replicas and their
    supervisors too."""
    command = ["nice", "-n", "10", sys.executable, *PYTEST, *extra, *tests]
    with tempfile.TemporaryFile("w+") as out:
        code = run_session(command, copy, out, timeout=TIMEOUT)
        out.seek(0)
        return (TIMED_OUT, "timed out") if code == TIMED_OUT else (code, out.read())


def failing_without_a_mutant(copy: Path, tests: Sequence[str]) -> list[str]:
    """The tests that fail in the copy as it is (a git checkout's own, say): left out."""
    code, out = _pytest(copy, tests, "--maxfail=1000")
    if code == 0:
        return []
    return re.findall(FAILED_LINE, out, flags=re.MULTILINE)


def verdict(copy: Path, mutant: Mutant, tests: Sequence[str], deselect: Sequence[str]) -> str:
    path = copy / module_path(mutant.module)
    original = path.read_text()
    path.write_text(mutant.source)
    try:
        code, out = _pytest(copy, tests, *(a for t in deselect for a in ("--deselect", t)))
    finally:
        path.write_text(original)
    if code == -1:
        return "caught (timeout)"
    if code == 0:
        return "survived"
    failed = re.search(FAILED_LINE, out, flags=re.MULTILINE)
    if failed is None:
        return f"caught (pytest exit {code})"
    # On a busy machine a timing test can fail by itself: a failure counts only if the same
    # test passes on the copy without the mutant.
    if _pytest(copy, [failed[1]])[0] != 0:
        return f"undecided: {failed[1]} fails without the mutant too"
    return f"caught by {failed[1]}"


def diff(mutant: Mutant) -> str:
    before = (ROOT / module_path(mutant.module)).read_text().splitlines()
    after = mutant.source.splitlines()
    return "\n".join(
        line
        for line in difflib.unified_diff(before, after, lineterm="", n=0)
        if not line.startswith(("---", "+++", "@@"))
    )


def report(
    results: list[tuple[Mutant, str]], planned: int, args: argparse.Namespace, seconds: float
) -> str:
    caught = sum(1 for _, v in results if v.startswith("caught"))
    decided = [v for _, v in results if not v.startswith("undecided")]
    rows = [f"| {m.module} | {m.line} | {m.kind} | {v} |" for m, v in results]
    survivors = [
        f"### {m.name}\n\n```diff\n{diff(m)}\n```\n" for m, v in results if v == "survived"
    ]
    return "\n".join(
        [
            "# Fresh mutants",
            "",
            "Mutants of kinds mutmut does not make (a statement dropped, a condition turned "
            "around, a value returned as None), at sites drawn at random, each run against "
            "its module's tests: a check of the suite independent of "
            "[the mutmut score](mutation-score.md). Written by `bench/fresh_mutants.py`.",
            "",
            f"Command: `.venv/bin/python -m bench.fresh_mutants --per-module {args.per_module} "
            f"--seed {args.seed} {' '.join(args.modules)}`",
            "",
            f"Run {time.strftime('%Y-%m-%d', time.gmtime())}: {len(results)} of the {planned} "
            f"mutants drawn, in {seconds / 60:.0f} minutes.",
            "",
            f"**Caught {caught} of {len(decided)}**"
            + (f" ({caught / len(decided):.0%})" if decided else "")
            + f"; {len(results) - len(decided)} undecided (a test that also failed without "
            "the mutant).",
            "",
            "| module | line | kind | verdict |",
            "|---|---:|---|---|",
            *rows,
            "",
            "## Survivors",
            "",
            *(survivors or ["None."]),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="+")
    parser.add_argument("--per-module", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    stop_on_sigterm()
    started = time.monotonic()
    draw = {module: drawn(module, args.per_module, args.seed) for module in args.modules}
    planned = sum(len(mutants) for mutants in draw.values())
    results: list[tuple[Mutant, str]] = []
    with tempfile.TemporaryDirectory(prefix="tftrain-fresh-") as scratch:
        copy = Path(scratch)
        _copy(copy)
        for module, mutants in draw.items():
            tests = test_selection(module)
            if not tests:
                continue
            deselect = failing_without_a_mutant(copy, tests)
            for mutant in mutants:
                results.append((mutant, verdict(copy, mutant, tests, deselect)))
                print(f"{mutant.name}: {results[-1][1]}", flush=True)
                # After each verdict: a run stopped part way still leaves what it found.
                seconds = time.monotonic() - started
                REPORT.write_text(report(results, planned, args, seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
