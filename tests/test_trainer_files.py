"""The trainer's small file helpers, exactly: `sha256sum`'s line format (GNU coreutils:
`<hex digest><space><space or *><file name>`, `-c` accepting either marker), the output
dir's layout (docs/trainer.md "Output dir") and its early check, and the start-up line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from trainer import startup
from trainer.checksums import file_sha256, format_sha256sums, parse_sha256sums
from trainer.output_dir import OutputDirError, OutputPaths, prepare_output_dir
from trainer.startup import StartupClock

A, B = "a" * 64, "0123456789abcdef" * 4


def test_sha256sum_lines_in_text_and_binary_mode() -> None:
    text = f"{A}  ckpt-5.index\n\n{B.upper()} *ckpt-5.data-00000-of-00001\n  \n"
    assert parse_sha256sums(text) == {
        "ckpt-5.index": A,
        "ckpt-5.data-00000-of-00001": B,  # lower-cased
    }


def test_a_file_name_may_hold_spaces() -> None:
    assert parse_sha256sums(f"{A}  my data/train file.gz\n") == {"my data/train file.gz": A}


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (f"{A} ckpt-5.index", f"{A} ckpt-5.index"),  # one space, no marker
        (f"{A[:63]}  ckpt-5.index", f"{A[:63]}  ckpt-5.index"),  # 63 digits
        (f"{'g' * 64}  ckpt-5.data-00000-of-00001", f"{'g' * 64}  ckpt-5.data-00"),  # 80 kept
        (f"{A}  ", f"{A}  "),  # no name
    ],
)
def test_a_malformed_line_is_named_with_its_number(line: str, shown: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_sha256sums(f"{B}  first\n{line}\n")
    assert str(error.value) == f"line 2 is not `<sha256>  <file name>`: {shown!r}"


def test_written_sorted_by_name_in_sha256sum_s_text_mode() -> None:
    assert format_sha256sums({"b.gz": B, "a.gz": A}) == f"{A}  a.gz\n{B}  b.gz\n"
    assert format_sha256sums({}) == ""


def test_a_file_s_digest(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    # FIPS 180-2's example: SHA-256("abc").
    assert file_sha256(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert file_sha256(path) == hashlib.sha256(b"abc").hexdigest()


def test_the_output_layout(tmp_path: Path) -> None:
    paths = OutputPaths(tmp_path)
    assert (paths.checkpoints, paths.train, paths.eval, paths.saved_model, paths.metrics) == (
        tmp_path / "checkpoints",
        tmp_path / "train",
        tmp_path / "eval",
        tmp_path / "saved_model",
        tmp_path / "metrics.txt",
    )


def test_a_missing_output_dir_is_created_and_left_empty(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "a" / "output"
    prepare_output_dir(target)
    assert target.is_dir()
    assert list(target.iterdir()) == []  # the write check leaves nothing behind
    prepare_output_dir(target)  # there already: fine


def test_a_file_where_the_output_dir_should_be(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("")
    with pytest.raises(OutputDirError) as error:
        prepare_output_dir(tmp_path / "out")
    assert str(error.value) == f"output dir {tmp_path / 'out'} is a file, not a directory"


def test_a_file_in_the_output_dir_s_path(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("")
    with pytest.raises(OutputDirError) as error:
        prepare_output_dir(tmp_path / "runs" / "a" / "out")
    assert str(error.value) == (
        f"output dir {tmp_path / 'runs' / 'a' / 'out'} cannot be created: "
        f"{tmp_path / 'runs'} is a file, not a directory"
    )


def test_an_output_dir_that_cannot_be_created(tmp_path: Path) -> None:
    # /proc refuses new directories to everyone, root included.
    with pytest.raises(OutputDirError) as error:
        prepare_output_dir(Path("/proc/tftrain-output"))
    assert str(error.value).startswith("output dir /proc/tftrain-output cannot be created: ")
    assert "None" not in str(error.value)


def test_an_output_dir_that_is_not_writable() -> None:
    # A directory no one may create files in, root included: /proc/self.
    with pytest.raises(OutputDirError) as error:
        prepare_output_dir(Path("/proc/self"))
    assert str(error.value).startswith("output dir /proc/self is not writable: ")
    assert "None" not in str(error.value)


def test_the_start_up_line_splits_the_time_into_phases(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(startup.time, "monotonic", lambda: now[0])
    clock = StartupClock()
    now[0] = 100.4
    clock.lap("settings")
    now[0] = 103.0
    clock.lap("data")
    now[0] = 110.25
    clock.lap("TensorFlow import")
    now[0] = 111.0  # after the last lap: counted by elapsed, not by the line
    assert clock.summary() == ("Start-up: 10.2s (settings 0.4s, data 2.6s, TensorFlow import 7.2s)")
    assert clock.elapsed() == 11.0
