"""The shell mutants by rule (bench/shell_mutants.py), each line's set worked out by hand, and
the run's clean-up of what a failed test left running (bench/shell_mutation.py)."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
import subprocess
from pathlib import Path

import pytest

from bench import shell_mutation
from bench.shell_mutants import Mutant, apply, code_part, line_mutants, script_mutants

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ('[ -d "$x" ] || continue # a # comment', '[ -d "$x" ] || continue'),
        ('say "a # b"', 'say "a # b"'),
        ("x=${y#*/}", "x=${y#*/}"),
        ("n=$# # how many", "n=$#"),
        ("echo 'it''s' \\# # note", "echo 'it''s' \\#"),
    ],
)
def test_the_code_of_a_line_stops_at_its_comment(line: str, code: str) -> None:
    assert code_part(line) == code


def mutated(line: str, previous: str = "") -> set[str]:
    return {m.mutated for m in line_mutants("s.sh", 7, line, previous)}


def test_a_comparison_a_list_an_exit_status_a_number_and_the_command_itself() -> None:
    assert mutated('    [ "$a" -gt 0 ] && exit 2') == {
        '    [ "$a" -ge 0 ] && exit 2',
        '    [ "$a" -gt 0 ] || exit 2',
        '    [ "$a" -gt 0 ] && exit 0',
        '    [ "$a" -gt 1 ] && exit 2',
        "    :",
    }


def test_a_number_in_quotes_or_naming_a_descriptor_is_left_alone() -> None:
    assert mutated('say "wait 5 s" 2>/dev/null >>"$log"') == {
        'say "wait 5 s" 2>/dev/null >"$log"',
        ":",
    }


def test_a_negation_is_dropped_and_an_if_line_is_not_deleted() -> None:
    assert mutated('if ! mkdir "$d"; then') == {'if mkdir "$d"; then'}
    assert mutated("while ! [ -e x ]; do") == {"while [ -e x ]; do", "while ! [ ! -e x ]; do"}


def test_string_tests_turn_around() -> None:
    assert mutated('[ -z "$r" ] || return 0  # why') == {
        '[ -n "$r" ] || return 0  # why',
        '[ -z "$r" ] && return 0  # why',
        '[ -z "$r" ] || return 1  # why',
        ":  # why",
    }
    assert mutated('[ "$a" = b ]') == {'[ "$a" != b ]', ":"}


@pytest.mark.parametrize("line", ["    done", "fi", "# a comment", "", "    ;;", "f() {", "}"])
def test_lines_that_only_shape_the_script_make_no_mutant(line: str) -> None:
    assert mutated(line) == set()


def test_a_line_continued_from_the_one_before_is_not_deleted() -> None:
    assert mutated("    --on-success", previous="case $1 in --run | \\") == set()


def test_apply_replaces_only_its_own_line_and_refuses_a_changed_one() -> None:
    text = "a=1\nb=1\n"
    mutant = Mutant("s.sh", 2, "b=1", "b=2")
    assert apply(text, mutant) == "a=1\nb=2\n"
    with pytest.raises(ValueError, match=re.escape("s.sh:2 is no longer 'b=1'")):
        apply("a=1\nb=3\n", mutant)


def test_the_key_follows_the_text_not_the_line_number() -> None:
    assert Mutant("s.sh", 2, "b=1", "b=2").key == Mutant("s.sh", 9, "b=1", "b=2").key
    assert Mutant("s.sh", 2, "b=1", "b=2").key != Mutant("t.sh", 2, "b=1", "b=2").key


def test_two_lines_with_the_same_text_make_mutants_of_their_own() -> None:
    script = "f() {\n    sep=''\n}\ng() {\n    sep=''\n}\n"
    first, second = script_mutants("s.sh", script)
    assert (first.line, second.line) == (2, 5)
    assert first.mutated == second.mutated == "    :"
    assert first.key != second.key


def test_a_script_gets_every_line_mutated_in_line_order() -> None:
    script = 'f() {\n    [ -n "$1" ] || return 1\n}\nf x && echo yes\n'
    assert [(m.line, m.mutated) for m in script_mutants("s.sh", script)] == [
        (2, '    [ -z "$1" ] || return 1'),
        (2, '    [ -n "$1" ] && return 1'),
        (2, '    [ -n "$1" ] || return 0'),
        (2, "    :"),
        (4, "f x || echo yes"),
        (4, ":"),
    ]


@pytest.mark.parametrize(("text", "expected"), [("0/1", (0, 1)), ("2/3", (2, 3))])
def test_a_shard_is_its_index_and_count(text: str, expected: tuple[int, int]) -> None:
    assert shell_mutation._shard(text) == expected


@pytest.mark.parametrize("text", ["3/3", "1", "-1/2", "a/b", "1/0", ""])
def test_a_shard_out_of_its_count_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="0 <= I < N"):
        shell_mutation._shard(text)


def test_shards_recording_at_once_keep_every_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each shard adds its verdict to what the file holds now, not to what it read at its
    start: eight writers of 25 verdicts each leave 200."""
    monkeypatch.setattr(shell_mutation, "VERDICTS", tmp_path / "verdicts.json")

    def record(shard: int) -> None:
        for n in range(25):
            shell_mutation._record_verdict(f"{shard}-{n}", {"verdict": "killed", "tests": "t"})

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(record, range(8)))
    assert len(json.loads((tmp_path / "verdicts.json").read_text())) == 200


def test_a_mutants_tests_run_in_a_pid_namespace_of_their_own_with_a_reaping_init() -> None:
    """A mutant's `kill 1` reaches the namespace's init, not this machine's; the init reaps
    orphans (the tests check that processes are gone) and passes the command's status on.
    A stray in a session of its own ends with the namespace: alive, it would hold the output
    pipe open past the timeout."""
    probe = "echo $$; setsid sleep 300 & exit 3"
    done = subprocess.run(
        shell_mutation._isolated(["sh", "-c", probe]), capture_output=True, text=True, timeout=60
    )
    assert (done.stdout.split(), done.returncode) == (["2"], 3), done.stderr
