"""Mutation score of the lifecycle shell scripts: `python -m bench.shell_mutation`.

mutmut mutates Python only; the supervisor (`infra/lifecycle/supervise.sh`) and the export
(`export.sh`) decide how every run ends. Two sets of one-change mutants of them run here,
each applied to a copy of the tracked files with that script's tests run against it (`-x`:
the first failure kills it):

- MUTANTS below, written by hand, each breaking a behaviour the reference states;
- every mutant the rules of bench/shell_mutants.py make, at every line of code
  (`--generated`): the shell's counterparts of mutmut's operators, not a chosen list.

Verdicts are kept in .mutation/shell/verdicts.json (a mutant is run again only when its
script's tests changed), so a long run can stop and go on; the score is written to
docs/shell-mutation-score.md from every kept verdict.

    .venv/bin/python -m bench.shell_mutation                  # the hand-written mutants
    .venv/bin/python -m bench.shell_mutation --generated export.sh supervise.sh
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import shell_mutants

REPO = Path(__file__).resolve().parent.parent
SUPERVISE = "infra/lifecycle/supervise.sh"
EXPORT = "infra/lifecycle/export.sh"
SUPERVISE_TESTS = ("tests/test_supervise_script.py", "tests/test_supervise_logs.py")
EXPORT_TESTS = ("tests/test_export_script.py",)
STOP_TESTS = ("tests/test_supervise_stops.py",)
SCORE_FILE = REPO / "docs" / "shell-mutation-score.md"
VERDICTS = REPO / ".mutation" / "shell" / "verdicts.json"
GENERATED_TESTS = {SUPERVISE: (*SUPERVISE_TESTS, *STOP_TESTS), EXPORT: EXPORT_TESTS}
TIMEOUT = 900  # s: the slowest script's tests take ~2 min on a loaded machine
# Generated mutants (their key: `--generated` prints it) that change nothing observable.
EQUIVALENT: dict[str, str] = {
    "4cc6db72f16b": "export.sh metrics_json `return 0` -> `return 1` when there is no "
    "metrics.txt: the function runs inside `$(...)`, an argument of printf, whose status "
    "nobody reads; its output, empty, is the same",
}


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


# PID 1 of the namespace: runs the command and reaps every orphan, as a machine's init does
# (the tests check that processes are gone; an unreaped one would linger as a zombie). When it
# exits, or is killed at the timeout (--kill-child), the kernel ends whatever a failed test
# left in the namespace, even in a session of its own.
_INIT = """
import os, subprocess, sys
main = subprocess.Popen(sys.argv[1:])
while True:
    pid, status = os.wait()
    if pid == main.pid:
        sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""


def _isolated(command: Sequence[str]) -> list[str]:
    """`command` as PID 1 of a PID namespace of its own. A mutant can turn the supervisor's
    `kill -TERM 0` (its own group) into `kill -TERM 1`: outside a namespace that signals this
    machine's init, which took every process down with it."""
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    namespace = ["unshare", *user, "--pid", "--fork", "--mount-proc", "--kill-child"]
    return [*namespace, sys.executable, "-c", _INIT, *command]


def _tests_fail(copy: Path, path: str, mutated: str, tests: Sequence[str]) -> bool:
    script = copy / path
    text = script.read_text()
    script.write_text(mutated)
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "2", "-p", "no:cacheprovider"]
    try:
        done = subprocess.run(
            _isolated([*command, *tests]), cwd=copy, capture_output=True, timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired:
        return True  # the mutant keeps a run from ending: caught, as mutmut counts it
    finally:
        script.write_text(text)
    return done.returncode != 0


def _inputs_hash(path: str, tests: Sequence[str], root: Path = REPO) -> str:
    """What a verdict depends on: the script and its tests, as they are under root."""
    digest = hashlib.sha1()
    for name in (path, *tests, "tests/conftest.py"):
        digest.update((root / name).read_bytes())
    return digest.hexdigest()[:12]


def _load_verdicts() -> dict[str, dict[str, str]]:
    return json.loads(VERDICTS.read_text()) if VERDICTS.exists() else {}


def _record_verdict(key: str, verdict: dict[str, str]) -> None:
    """Read, add one verdict, write back, under a lock: shards running at once share the file."""
    VERDICTS.parent.mkdir(parents=True, exist_ok=True)
    with open(VERDICTS.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        verdicts = _load_verdicts()
        verdicts[key] = verdict
        partial = VERDICTS.with_suffix(f".partial.{os.getpid()}")
        partial.write_text(json.dumps(verdicts, indent=1, sort_keys=True))
        partial.replace(VERDICTS)


def _known(verdicts: dict[str, dict[str, str]], key: str, tests: str) -> bool | None:
    kept = verdicts.get(key)
    return None if kept is None or kept["tests"] != tests else kept["verdict"] == "killed"


def _hand_written_text(mutant: Mutant) -> str:
    text = (REPO / mutant.path).read_text()
    if text.count(mutant.original) != 1:
        raise SystemExit(f"{mutant.name}: the original text is not in {mutant.path} exactly once")
    return text.replace(mutant.original, mutant.mutated)


def _run(copy: Path, jobs: list[tuple[str, str, str, Sequence[str]]]) -> None:
    """Each job: (key, script path, mutated text, tests); verdicts kept after each."""
    verdicts = _load_verdicts()
    for key, path, mutated, tests in jobs:
        tests_hash = _inputs_hash(path, tests, copy)  # what runs, not what has changed since
        if _known(verdicts, key, tests_hash) is not None:
            continue
        started = time.monotonic()
        killed = _tests_fail(copy, path, mutated, tests)
        _record_verdict(key, {"verdict": "killed" if killed else "survived", "tests": tests_hash})
        state = "killed " if killed else "SURVIVED"
        print(f"{state} {time.monotonic() - started:5.1f}s  {key}", flush=True)


def _generated(scripts: Sequence[str]) -> list[shell_mutants.Mutant]:
    chosen = [path for path in GENERATED_TESTS if Path(path).name in scripts or path in scripts]
    return [m for path in chosen for m in shell_mutants.script_mutants(path, _source(path))]


def _source(path: str) -> str:
    return (REPO / path).read_text()


def _score_lines() -> list[str]:
    verdicts = _load_verdicts()
    hand = [(m, _known(verdicts, m.name, _inputs_hash(m.path, m.tests))) for m in MUTANTS]
    caught = sum(k is True for _, k in hand)
    lines = [
        "# Shell mutation score",
        "",
        "One-change mutants of the lifecycle scripts, run against each script's tests, by",
        "`bench/shell_mutation.py` (it writes this file from its kept verdicts). Command:",
        "`.venv/bin/python -m bench.shell_mutation` (the hand-written mutants), with",
        "`--generated export.sh supervise.sh` (every mutant the rules make).",
        "",
        "## Hand-written: each breaks a behaviour the reference states",
        "",
        f"**{caught} / {len(hand)} killed.**",
        "",
        "| script | behaviour broken | killed |",
        "| --- | --- | --- |",
        *(f"| `{m.path}` | {m.name} | {_verdict_word(k)} |" for m, k in hand),
    ]
    return [*lines, *_generated_lines(verdicts)]


def _verdict_word(killed: bool | None) -> str:
    return {True: "yes", False: "**no**", None: "not run"}[killed]


def _generated_lines(verdicts: dict[str, dict[str, str]]) -> list[str]:
    lines = [
        "",
        "## By rule: every line of code (bench/shell_mutants.py)",
        "",
        "| script | caught / counted | score | not caught | equivalent (left out) | not run |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    survivors: list[str] = []
    for path, tests in GENERATED_TESTS.items():
        tests_hash = _inputs_hash(path, tests)
        mutants = shell_mutants.script_mutants(path, _source(path))
        known = {m: _known(verdicts, m.key, tests_hash) for m in mutants}
        counted = [m for m in mutants if known[m] is not None and m.key not in EQUIVALENT]
        missed = [m for m in counted if not known[m]]
        kept = len(counted) - len(missed)
        score = f"{kept / len(counted):.1%}" if counted else "-"
        not_run = sum(known[m] is None for m in mutants)
        equivalent = sum(m.key in EQUIVALENT for m in mutants)
        lines.append(
            f"| `{path}` | {kept} / {len(counted)} | {score} | {len(missed)} | {equivalent} "
            f"| {not_run} |"
        )
        survivors += [
            f"- `{path}:{m.line}` `{m.original.strip()}` → `{m.mutated.strip()}` ({m.key})"
            for m in missed
        ]
    lines += ["", "### Not caught", "", *(survivors or ["none"])]
    lines += ["", "### Left out as equivalent", ""]
    lines += [f"- {key}: {reason}" for key, reason in EQUIVALENT.items()] or ["none"]
    return lines


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
        raise argparse.ArgumentTypeError(f"{text!r}: expected I/N with 0 <= I < N, as 1/3")
    return int(index), int(count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.shell_mutation", description=__doc__)
    parser.add_argument(
        "--only", action="append", help="run the mutants whose name contains this text (repeat)"
    )
    parser.add_argument(
        "--generated",
        nargs="+",
        metavar="SCRIPT",
        help="every mutant the rules make of these scripts (export.sh, supervise.sh)",
    )
    parser.add_argument(
        "--shard",
        type=_shard,
        default=(0, 1),
        metavar="I/N",
        help="run every N-th mutant from the I-th (0-based); start N of these at once: the "
        "scripts' tests mostly wait, so N runs share 2 cores well",
    )
    args = parser.parse_args(argv)
    if args.generated:
        jobs = [
            (m.key, m.path, shell_mutants.apply(_source(m.path), m), GENERATED_TESTS[m.path])
            for m in _generated(args.generated)
        ]
    else:
        chosen = [m for m in MUTANTS if not args.only or any(t in m.name for t in args.only)]
        jobs = [(m.name, m.path, _hand_written_text(m), m.tests) for m in chosen]
    index, count = args.shard
    jobs = jobs[index::count]
    with tempfile.TemporaryDirectory(prefix="tftrain-shell-mutants-") as tmp:
        copy = Path(tmp)
        _copy_tracked(copy)
        try:
            _run(copy, jobs)
        finally:
            SCORE_FILE.write_text("\n".join(_score_lines()) + "\n")
    verdicts = _load_verdicts()
    return 0 if all(verdicts.get(key, {}).get("verdict") == "killed" for key, *_ in jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
