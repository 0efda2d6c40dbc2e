"""One launch per output dir (infra/local/output_lock.py), checked with flock(2) itself: a
lock another open file description holds refuses the launch; the launch's own lock refuses
others while it runs and is gone once it ends."""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from infra.local.output_lock import hold
from infra.records.launch_record import write_launch_record
from trainer.output_dir import OutputDirError


@contextmanager
def held(path: Path) -> Iterator[None]:
    """What the launcher does: hold the dir until its launch ends."""
    descriptor = hold(path)
    try:
        yield
    finally:
        os.close(descriptor)


@contextmanager
def locked_elsewhere(path: Path) -> Iterator[None]:
    """The dir flock(2)ed through a descriptor of its own, as another launcher holds it."""
    descriptor = os.open(path, os.O_RDONLY)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(descriptor)


def free(path: Path) -> bool:
    """Whether `flock -n` (util-linux, another process) can take the dir's lock now."""
    return subprocess.run(["flock", "-n", str(path), "true"], check=False).returncode == 0


def test_the_dir_is_held_while_inside_and_free_after(tmp_path: Path) -> None:
    assert free(tmp_path)
    with held(tmp_path):
        assert not free(tmp_path)
    assert free(tmp_path)


def test_the_dir_is_free_after_a_refusal_too(tmp_path: Path) -> None:
    with locked_elsewhere(tmp_path), pytest.raises(OutputDirError), held(tmp_path):
        pass
    assert free(tmp_path)  # the refused attempt kept no descriptor that holds it


def test_a_held_dir_is_refused_naming_it_and_what_to_do(tmp_path: Path) -> None:
    with locked_elsewhere(tmp_path), pytest.raises(OutputDirError) as refused, held(tmp_path):
        pytest.fail("entered a dir another launch holds")
    assert str(refused.value) == (
        f"output dir {tmp_path} is in use by another launch: wait for it to end, stop it, "
        "or choose another --output-dir"
    )


def test_the_refusal_names_each_launcher_its_records_say_still_runs(tmp_path: Path) -> None:
    outcomes = tmp_path / ".tftrain-run"
    for generation in ("aaaa", "bbbb"):  # both name this process, which runs
        write_launch_record(outcomes, generation)
    (outcomes / "launcher.cccc").write_text("ended\n")
    with locked_elsewhere(tmp_path), pytest.raises(OutputDirError) as refused, held(tmp_path):
        pass
    pid = os.getpid()
    assert f"is in use by another launch (launcher pid {pid}, {pid}): wait" in str(refused.value)


def test_a_missing_dir_or_a_file_is_an_os_error_not_a_refusal(tmp_path: Path) -> None:
    # The launcher creates and checks the dir first (prepare_output_dir); a dir gone or
    # replaced by a file since is reported as the OSError it is, never locked as a file.
    with pytest.raises(FileNotFoundError), held(tmp_path / "gone"):
        pass
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError), held(tmp_path / "file"):
        pass
