"""Mutation score of the lifecycle shell scripts: `python -m bench.shell_mutation`.

mutmut mutates Python only; the supervisor (`infra/lifecycle/supervise.sh`) and the export
(`export.sh`) decide how every run ends, so each line below is a one-change mutant of them,
written by hand from a behaviour the README states. Each is applied to a copy of the tracked
files, the tests of that script run against it (`-x`: the first failure kills it), and the
score is written to docs/shell-mutation-score.md.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUPERVISE = "infra/lifecycle/supervise.sh"
EXPORT = "infra/lifecycle/export.sh"
SUPERVISE_TESTS = ("tests/test_supervise_script.py", "tests/test_supervise_logs.py")
EXPORT_TESTS = ("tests/test_export_script.py",)
STOP_TESTS = ("tests/test_supervise_stops.py",)
SCORE_FILE = REPO / "docs" / "shell-mutation-score.md"


@dataclass(frozen=True)
class Mutant:
    name: str  # the behaviour the change breaks
    path: str
    original: str  # must occur exactly once in the file
    mutated: str
    tests: tuple[str, ...]


def _supervise(name: str, original: str, mutated: str) -> Mutant:
    return Mutant(name, SUPERVISE, original, mutated, SUPERVISE_TESTS)


def _export(name: str, original: str, mutated: str) -> Mutant:
    return Mutant(name, EXPORT, original, mutated, EXPORT_TESTS)


def _stopping(name: str, original: str, mutated: str) -> Mutant:
    """How an attempt stops, its bounds and its log: tests/test_supervise_stops.py alone holds
    them, and runs in a fraction of the other files' time."""
    return Mutant(name, SUPERVISE, original, mutated, STOP_TESTS)


MUTANTS = (
    _supervise(
        "a replica starting after the run's success trains anyway",
        'if run_succeeded; then\n    say "run $run has already succeeded',
        'if false; then\n    say "run $run has already succeeded',
    ),
    _supervise(
        "exit 126 is no longer final", "FINAL_EXIT_CODES='2 126 127'", "FINAL_EXIT_CODES='2 127'"
    ),
    _supervise(
        "--on-success also runs in followers",
        '[ "$role" = ends ] && [ -n "$on_success" ] || exit 0',
        '[ -n "$on_success" ] || exit 0',
    ),
    _supervise("the stop grace doubled", "ticks=$((grace * 5))", "ticks=$((grace * 10))"),
    _supervise("SIGINT is not passed on", "trap on_signal TERM INT", "trap on_signal TERM"),
    _supervise(
        "a signal during start-up is not passed on",
        'child=$!\n[ -z "$signalled" ] || terminate',
        "child=$!",
    ),
    _supervise(
        "a workdir that cannot be made does not fail the run",
        '        exit_failure 2 "final"\n        finish_attempt 2 exited',
        "        finish_attempt 2 exited",
    ),
    _supervise(
        "a late failure after the success fails the run",
        "publish_failure() {\n    run_succeeded && return 0",
        "publish_failure() {",
    ),
    _supervise(
        "an exit 0 after SIGTERM completes the Job",
        '[ "$status" -ne 0 ] || status=143',
        ":",
    ),
    _supervise(
        "a peer lost on its last attempt is never noticed",
        "                beat\n                check_peers",
        "                beat",
    ),
    _supervise(
        "a non-zero exit on the last attempt does not fail the run",
        'elif [ -n "$last" ]; then',
        "elif false; then",
    ),
    _supervise(
        "the attempt's log does not say how it ended",
        'end_log "$status"',
        ":",
    ),
    _supervise(
        "a given-back attempt counts against the backoff limit",
        'given_back "$1" "$k" || counted=$((counted + 1))',
        "counted=$((counted + 1))",
    ),
    _supervise("an attempt's start is not recorded", 'note start "$(now)"', ":"),
    _supervise(
        "the copier never moves the log aside at the cap",
        '                mv -f "$log" "$log.1" 2>/dev/null\n',
        "",
    ),
    _supervise(
        "the copier rotates only once a chunk is past the cap (overshoot)",
        '[ "$blocks" -le 256 ] || blocks=256',
        "blocks=256",
    ),
    _supervise(
        "a record is not retried after freeing the reserve",
        "    rm -f \"$reserve\" 2>/dev/null\n    reserve=''\n    printf",
        "    return 1\n    printf",
    ),
    _supervise(
        "a given-back attempt's log says its command's exit status",
        'end_log "$status" "$why"',
        'end_log "$command_status" "$why"',
    ),
    _supervise(
        "a follower stopped at the run's end records its command's status",
        "    status=0 how=run-ended",
        "    how=run-ended",
    ),
    _supervise(
        "a replica that failed by itself after the run's failure reads as stopped by it",
        'elif run_failed && { [ -n "$signalled" ] || [ "$status" -eq 0 ]; }; then',
        "elif run_failed; then",
    ),
    _supervise(
        "a later failure overwrites the run's first",
        "    run_succeeded && return 0\n    if run_failed; then",
        "    run_succeeded && return 0\n    if false; then",
    ),
    _stopping(
        "the log's copier dies of SIGTERM, and with it what the trainer prints while it stops",
        "        trap '' TERM INT PIPE\n        rm -f \"$fifo\"",
        '        rm -f "$fifo"',
    ),
    _stopping(
        "an attempt told to stop does not say so (then killed, it is called lost)",
        'note term "signalled"',
        ":",
    ),
    _stopping(
        "a peer that said it was told to stop is still judged by its heartbeat",
        '[ -e "$dir/exit" ] || [ -e "$dir/term" ] && continue',
        '[ -e "$dir/exit" ] && continue',
    ),
    _stopping(
        "a peer is called lost after twice --lost-after",
        '[ "$((clock - beat))" -gt "$lost_after" ] || continue',
        '[ "$((clock - beat))" -gt "$((lost_after * 2))" ] || continue',
    ),
    _stopping(
        "a follower gets twice its --finish-grace",
        '[ "$finishing" -gt "$((finish_grace * 2))" ]',
        '[ "$finishing" -gt "$((finish_grace * 4))" ]',
    ),
    _stopping(
        "the export waits twice its --await-limit",
        '[ "$waited" -lt "$((await_limit * 5))" ]',
        '[ "$waited" -lt "$((await_limit * 10))" ]',
    ),
    _stopping(
        "the log keeps the trainer's lines but not how the attempt ended",
        "printf 'tftrain-supervise: %s attempt %s ended: exit %s%s\\n'",
        "printf 'tftrain-supervise: %s attempt %s ended: %s%s\\n'",
    ),
    _export(
        "a manifest that cannot be written is ignored and the marker written",
        '} >"$dest/$MANIFEST" || { say "cannot write $dest/$MANIFEST"; exit 1; }',
        '} >"$dest/$MANIFEST" || { say "cannot write $dest/$MANIFEST"; }',
    ),
    _export(
        "the run's bookkeeping is exported",
        ".tftrain*) continue ;;",
        ".tftrain-none*) continue ;;",
    ),
    _export(
        "a missing output dir is exported as empty",
        '[ -d "$src" ] || {',
        "true || {",
    ),
    _export(
        "an export root that cannot be made is ignored",
        'mkdir -p "$dest" || { say "cannot create $dest"; exit 1; }',
        'mkdir -p "$dest" || { say "cannot create $dest"; }',
    ),
    _export(
        "a failed copy is ignored",
        'cp -R "$entry" "$dest/" || { say "cannot copy $entry to $dest"; exit 1; }',
        'cp -R "$entry" "$dest/" || { say "cannot copy $entry to $dest"; }',
    ),
    _export(
        "a failed marker rename is ignored",
        'mv -f "$partial" "$dest/$MARKER" || { say "cannot write $dest/$MARKER"; exit 1; }',
        'mv -f "$partial" "$dest/$MARKER" || { say "cannot write $dest/$MARKER"; }',
    ),
)


def _copy_tracked(into: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        target = into / name.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name.decode(), target)


def _killed(copy: Path, mutant: Mutant, python: str) -> bool:
    script = copy / mutant.path
    text = (REPO / mutant.path).read_text()
    if text.count(mutant.original) != 1:
        raise SystemExit(f"{mutant.name}: the original text is not in {mutant.path} exactly once")
    script.write_text(text.replace(mutant.original, mutant.mutated))
    try:
        done = subprocess.run(
            [
                python,
                "-m",
                "pytest",
                "-q",
                "-x",
                "-n",
                "2",
                "-p",
                "no:cacheprovider",
                *mutant.tests,
            ],
            cwd=copy,
            capture_output=True,
            text=True,
        )
    finally:
        script.write_text(text)
        # A test that a mutant fails may stop before reaping what it started (a follower the
        # mutant never stops): whatever still runs from the copy goes now.
        subprocess.run(["pkill", "-KILL", "-f", str(copy)], check=False)
    return done.returncode != 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.shell_mutation", description=__doc__)
    parser.add_argument(
        "--only", action="append", help="run the mutants whose name contains this text (repeat)"
    )
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or any(text in m.name for text in args.only)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tftrain-shell-mutants-") as tmp:
        copy = Path(tmp)
        _copy_tracked(copy)
        for mutant in chosen:
            started = time.monotonic()
            killed = _killed(copy, mutant, sys.executable)
            seconds = time.monotonic() - started
            rows.append((mutant, killed))
            print(f"{'killed ' if killed else 'SURVIVED'} {seconds:5.1f}s  {mutant.name}")
    caught = sum(killed for _, killed in rows)
    print(f"{caught} / {len(rows)} killed")
    if not args.only:
        lines = [
            "# Shell mutation score",
            "",
            "One-change mutants of the lifecycle scripts, each breaking a behaviour the reference",
            "states, run against the scripts' tests. Command: `.venv/bin/python -m "
            "bench.shell_mutation` (it writes this file).",
            "",
            f"**{caught} / {len(rows)} killed.**",
            "",
            "| script | behaviour broken | killed |",
            "| --- | --- | --- |",
            *(f"| `{m.path}` | {m.name} | {'yes' if k else '**no**'} |" for m, k in rows),
        ]
        SCORE_FILE.write_text("\n".join(lines) + "\n")
    return 0 if caught == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
