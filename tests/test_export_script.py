"""infra/lifecycle/export.sh under dash, bash (POSIX mode) and busybox sh, as images ship them.

What it must do comes from its contract (docs/data.md "Bring your data", HELPERS' export hook):
everything the run wrote except the run's bookkeeping lands in <export>/<job>/<runId>/, with
a JSON run manifest, and the marker last; an export with its marker is never redone, one
without it always is. The expected trees are the ones these tests write.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from infra.lifecycle import EXPORT_SCRIPT
from tests.test_supervise_script import _shell_params

MARKER = "_TFTRAIN_EXPORTED"
MANIFEST = "tftrain-run.json"
# What a run's output holds: the trainer's files, and bookkeeping that is not exported.
RUN_FILES = {
    "saved_model/saved_model.pb": b"model",
    "saved_model/variables/variables.index": b"index",
    "checkpoints/ckpt-20.index": b"ckpt",
    "train/events.out.tfevents.1.host": b"events",
    ".hidden-by-the-trainer": b"kept",
    "metrics.txt": b'test_accuracy 0.9912\nglobal_step 20\nbad line here\nx"y 3\nloss NaN\n',
    # What a replica wrote to its working directory (docs/trainer.md "What your trainer gets").
    "replicas/mnist-worker-0/work/out/model.txt": b"a user's model",
}
# Not exported: the run's bookkeeping, and a replica's home (caches, not results).
BOOKKEEPING = {
    ".tftrain-run/succeeded.run-1": b"x",
    ".tftrain-preempt": b"y",
    "replicas/mnist-worker-0/home/.cache/pip/blob": b"cache",
}


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()
    }


@pytest.fixture
def output(tmp_path: Path) -> Path:
    root = tmp_path / "volume" / "mnist" / "run-1"
    _write(root, {**RUN_FILES, **BOOKKEEPING})
    return root


def export(
    shell: tuple[str, ...], output: Path, export_root: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {
        "PATH": os.environ["PATH"],
        "TFTRAIN_OUTPUT_DIR": str(output),
        "TFTRAIN_EXPORT_DIR": str(export_root),
        **env,
    }
    return subprocess.run(
        [*shell, str(EXPORT_SCRIPT)], env=environ, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("shell", _shell_params())
def test_a_run_is_exported_whole_with_its_manifest_and_the_marker_last(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    stack = 'team "a"\\b\tc'  # a quote, a backslash, a control character
    images = "chief=reg.example.com/t:1 worker=reg.example.com/t@sha256:ab"
    done = export(shell, output, tmp_path / "exports", TFTRAIN_STACK=stack, TFTRAIN_IMAGES=images)
    assert done.returncode == 0, done.stderr
    target = tmp_path / "exports" / "mnist" / "run-1"  # job and run id from the output dir
    tree = _tree(target)
    assert {name: tree[name] for name in RUN_FILES} == RUN_FILES
    assert set(tree) == {*RUN_FILES, MANIFEST, MARKER}  # no bookkeeping

    manifest = json.loads(tree[MANIFEST])
    assert manifest["runId"] == "run-1" and manifest["job"] == "mnist"
    assert manifest["stack"] == 'team "a"\\bc'  # escaped; the tab dropped
    assert manifest["images"] == {
        "chief": "reg.example.com/t:1",
        "worker": "reg.example.com/t@sha256:ab",
    }
    assert manifest["metrics"] == {"test_accuracy": 0.9912, "global_step": 20}

    # The marker lists every other file with its size, and was written after all of them.
    lines = tree[MARKER].decode().splitlines()
    assert lines[0] == "run run-1"
    # When, in UTC, to the second (ISO 8601 with Z): the same instant in both files.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", manifest["exportedAt"])
    assert lines[1] == f"exported {manifest['exportedAt']}"
    exported = datetime.strptime(manifest["exportedAt"], "%Y-%m-%dT%H:%M:%SZ")
    assert abs(exported.replace(tzinfo=UTC) - datetime.now(UTC)) < timedelta(minutes=5)
    listed = dict(reversed(line.split(" ", 1)) for line in lines[2:])
    assert listed == {name: str(len(content)) for name, content in tree.items() if name != MARKER}
    marker_time = (target / MARKER).stat().st_mtime_ns
    assert all(
        path.stat().st_mtime_ns <= marker_time for path in target.rglob("*") if path.is_file()
    )


@pytest.mark.parametrize("shell", _shell_params())
def test_an_exported_run_is_left_alone_and_a_partial_one_is_redone(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    env = {"TFTRAIN_JOB_NAME": "job-a", "TFTRAIN_RUN_ID": "run-a"}
    target = tmp_path / "exports" / "job-a" / "run-a"
    # What an interrupted export leaves: some files, no marker.
    _write(target, {"saved_model/saved_model.pb": b"half", "stale.txt": b"old"})
    done = export(shell, output, tmp_path / "exports", **env)
    assert done.returncode == 0 and "an interrupted export" in done.stderr, done.stderr
    exported = _tree(target)
    assert "stale.txt" not in exported and exported["saved_model/saved_model.pb"] == b"model"

    # The retry after a success (the supervisor runs the hook again): nothing changes.
    (output / "saved_model" / "saved_model.pb").write_bytes(b"changed since")
    again = export(shell, output, tmp_path / "exports", **env)
    assert again.returncode == 0 and "already exported" in again.stderr
    assert _tree(target) == exported


def _failing(tmp_path: Path, tool: str, when: str) -> str:
    """A PATH whose `tool` fails (as a full disk or a lost mount would make it) when one of its
    arguments contains `when`, and is the real one otherwise: a fault injected into one step."""
    bin_dir = tmp_path / "faulty-bin"
    bin_dir.mkdir(exist_ok=True)
    real = shutil.which(tool)
    assert real is not None
    wrapper = bin_dir / tool
    wrapper.write_text(
        f'#!/bin/sh\nfor arg; do case $arg in *{when}*) echo "{tool}: injected failure" >&2; '
        f'exit 1 ;; esac; done\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


@pytest.mark.parametrize("shell", _shell_params())
def test_an_export_root_that_cannot_be_made_fails_and_says_so(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # no directory under a file, not even for root
    done = export(shell, output, blocker / "exports")
    dest = blocker / "exports" / "mnist" / "run-1"
    assert done.returncode == 1, done.stderr
    # The script's own line, not mkdir's message ("cannot create directory"), and its last:
    # it stops there instead of failing again at the first copy.
    assert done.stderr.endswith(f"tftrain-export: cannot create {dest}\n"), done.stderr
    missing = export(shell, output, tmp_path / "exports", TFTRAIN_EXPORT_DIR="")
    assert missing.returncode == 2 and "TFTRAIN_EXPORT_DIR" in missing.stderr
    assert not (tmp_path / "exports").exists()


@pytest.mark.parametrize("shell", _shell_params())
@pytest.mark.parametrize(
    ("tool", "when", "said"),
    [
        ("cp", "checkpoints", "cannot copy {output}/checkpoints to {dest}"),
        ("cp", "work", "cannot copy {output}/replicas/mnist-worker-0/work to {dest}"),
        ("mv", MARKER, "cannot write {dest}/_TFTRAIN_EXPORTED"),
    ],
    ids=["copy", "replica-copy", "marker-rename"],
)
def test_a_failed_step_leaves_no_marker_and_fails(
    shell: tuple[str, ...], output: Path, tmp_path: Path, tool: str, when: str, said: str
) -> None:
    dest = tmp_path / "exports" / "mnist" / "run-1"
    done = export(shell, output, tmp_path / "exports", PATH=_failing(tmp_path, tool, when))
    assert done.returncode == 1, done.stderr
    assert f"{tool}: injected failure" in done.stderr, "the fault was not reached"
    assert "tftrain-export: " + said.format(output=output, dest=dest) in done.stderr, done.stderr
    assert not (dest / MARKER).exists()
    # The next attempt (the chief's Job retries the export) copies it whole.
    again = export(shell, output, tmp_path / "exports")
    assert again.returncode == 0 and (dest / MARKER).exists(), again.stderr


@pytest.mark.parametrize("shell", _shell_params())
def test_a_partial_export_that_cannot_be_removed_fails_the_attempt(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    """Copying over what an interrupted export left would mix its stale files into the new
    copy: the attempt fails (exit 1, the Job retries it) instead of going on or passing."""
    dest = tmp_path / "exports" / "mnist" / "run-1"
    _write(dest, {"stale.txt": b"old"})
    done = export(shell, output, tmp_path / "exports", PATH=_failing(tmp_path, "rm", "run-1"))
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith(f"tftrain-export: cannot remove the partial export {dest}\n")
    assert _tree(dest) == {"stale.txt": b"old"}  # nothing copied in, no marker


@pytest.mark.parametrize("shell", _shell_params())
def test_a_marker_that_cannot_be_written_fails_the_attempt(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    # A directory where the marker's temporary file goes: the shell cannot write it.
    (output / f".{MARKER}.partial").mkdir()
    done = export(shell, output, tmp_path / "exports")
    dest = tmp_path / "exports" / "mnist" / "run-1"
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith(f"tftrain-export: cannot write {dest}/.{MARKER}.partial\n")
    assert not (dest / MARKER).exists()


@pytest.mark.parametrize("shell", _shell_params())
def test_a_missing_output_dir_exports_nothing(shell: tuple[str, ...], tmp_path: Path) -> None:
    done = export(shell, tmp_path / "volume" / "mnist" / "run-9", tmp_path / "exports")
    assert done.returncode == 2, done.stderr
    assert "output dir" in done.stderr and "does not exist" in done.stderr
    assert not (tmp_path / "exports").exists()


@pytest.mark.parametrize("shell", _shell_params())
def test_a_manifest_that_cannot_be_written_leaves_no_marker_and_fails(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    # The trainer left a directory where the manifest goes: the copy takes it along, and the
    # manifest's write into it fails (as a full disk or a lost mount would make it).
    (output / MANIFEST).mkdir()
    dest = tmp_path / "exports" / "mnist" / "run-1"
    done = export(shell, output, tmp_path / "exports")
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith(f"tftrain-export: cannot write {dest}/{MANIFEST}\n"), done.stderr
    assert not (dest / MARKER).exists() and not (dest / f".{MARKER}.partial").exists()
    # Once the output is fixed, the retry redoes the partial copy whole.
    (output / MANIFEST).rmdir()
    again = export(shell, output, tmp_path / "exports")
    assert again.returncode == 0 and (dest / MARKER).exists(), again.stderr
    assert json.loads((dest / MANIFEST).read_text())["runId"] == "run-1"


@pytest.mark.parametrize("shell", _shell_params())
def test_only_json_numbers_with_plain_names_reach_the_manifest(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    # JSON's number grammar (RFC 8259 section 6) and a name of letters, digits, _ . -, not
    # starting with a digit, one pair per line: anything else is left out, never breaks it.
    (output / "metrics.txt").write_text(
        "neg -1.5e-3\nbig 1E+5\nzero 0\nint 42\nval.loss-1 0.25\n"
        "lead 01\nhalf .5\ndot 1.\ninf inf\nplus +1\n1name 3\nthree words 1\n"
    )
    done = export(shell, output, tmp_path / "exports")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "exports" / "mnist" / "run-1" / MANIFEST).read_text())
    assert manifest["metrics"] == {
        "neg": -1.5e-3, "big": 1e5, "zero": 0, "int": 42, "val.loss-1": 0.25
    }  # fmt: skip


@pytest.mark.parametrize("shell", _shell_params())
def test_a_line_left_out_does_not_end_the_reading(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    """Each refused line or image is followed by a good one, which still gets in; a `sep`
    the environment happens to carry does not leak into the JSON."""
    (output / "metrics.txt").write_text(
        "acc 0.5 extra\nfirst 1\n2bad 3\nsecond 2\nnan NaN\nthird 3\n"
    )
    images = "no-equals-sign chief=r/t:1"
    done = export(shell, output, tmp_path / "exports", TFTRAIN_IMAGES=images, sep="junk")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "exports" / "mnist" / "run-1" / MANIFEST).read_text())
    assert manifest["metrics"] == {"first": 1, "second": 2, "third": 3}
    assert manifest["images"] == {"chief": "r/t:1"}


@pytest.mark.parametrize("shell", _shell_params())
def test_a_run_without_metrics_exports_an_empty_set_without_a_word(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    (output / "metrics.txt").unlink()
    done = export(shell, output, tmp_path / "exports")
    dest = tmp_path / "exports" / "mnist" / "run-1"
    assert done.returncode == 0
    assert done.stderr == f"tftrain-export: run run-1 exported to {dest}\n"  # nothing else
    assert json.loads((dest / MANIFEST).read_text())["metrics"] == {}


NAMES = "job name and run id must be non-empty names"


@pytest.mark.parametrize("shell", _shell_params())
@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"TFTRAIN_RUN_ID": "a b"}, f"{NAMES}, got 'mnist' 'a b'"),
        ({"TFTRAIN_JOB_NAME": "x/y"}, f"{NAMES}, got 'x/y' 'run-1'"),
        ({"TFTRAIN_OUTPUT_DIR": ""}, "TFTRAIN_OUTPUT_DIR and TFTRAIN_EXPORT_DIR must both be set"),
    ],
    ids=["space", "slash", "no-output"],
)  # fmt: skip
def test_names_that_would_escape_the_export_root_are_refused(
    shell: tuple[str, ...], output: Path, tmp_path: Path, env: dict[str, str], said: str
) -> None:
    done = export(shell, output, tmp_path / "exports", **env)
    assert done.returncode == 2 and done.stderr == f"tftrain-export: {said}\n", done.stderr
    assert not (tmp_path / "exports").exists()


@pytest.mark.parametrize("shell", _shell_params())
def test_every_kind_of_top_level_name_is_exported(
    shell: tuple[str, ...], output: Path, tmp_path: Path
) -> None:
    # `*` misses dot-files: `.[!.]*` and `..?*` take them, but not `.` and `..`.
    _write(output, {"..two-dots": b"2", ".one": b"1", "-dash": b"d"})
    (output / "link").symlink_to("metrics.txt")
    done = export(shell, output, tmp_path / "exports")
    assert done.returncode == 0, done.stderr
    target = tmp_path / "exports" / "mnist" / "run-1"
    assert (target / "..two-dots").read_bytes() == b"2" and (target / ".one").read_bytes() == b"1"
    assert (target / "-dash").read_bytes() == b"d"
    assert (target / "link").read_bytes() == RUN_FILES["metrics.txt"]


@pytest.mark.parametrize("shell", _shell_params())
def test_a_pattern_that_matches_nothing_skips_only_itself(
    shell: tuple[str, ...], tmp_path: Path
) -> None:
    """No single-dot name (`.[!.]*` stays unmatched) and no replica with a work directory
    (`*/work` stays unmatched): the names the later patterns match are exported all the same."""
    output = tmp_path / "volume" / "mnist" / "run-1"
    files = {
        "..two-dots": b"2",
        "model.txt": b"m",
        "replicas/mnist-chief-0/logs/a.1.log": b"log",
        "replicas/mnist-chief-0/home/.cache/x": b"cache",
    }
    _write(output, files)
    done = export(shell, output, tmp_path / "exports")
    assert done.returncode == 0, done.stderr
    target = _tree(tmp_path / "exports" / "mnist" / "run-1")
    assert {name: target[name] for name in target if name not in {MARKER, MANIFEST}} == {
        "..two-dots": b"2",
        "model.txt": b"m",
        "replicas/mnist-chief-0/logs/a.1.log": b"log",
    }
