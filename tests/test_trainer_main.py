"""`python -m trainer`'s exit codes and lines (trainer/__main__.py's docstring: 0 done, 1 the
run failed, 2 a person must act, 143 stopped by SIGTERM after saving), in this process, up
to the point where TensorFlow would start. The same through a real process:
test_trainer_settings.py; training itself: the @slow multi-process tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainer import __main__ as entry
from trainer.errors import NoUsableCheckpoint, RunError
from trainer.preemption import Preempted

CLUSTER = {"chief": ["c:2222"], "worker": ["w:2222"], "ps": ["p:2222"]}


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `environment.prepare` sets, set here first so the test's values are restored."""
    for name in ("TF_CPP_MIN_LOG_LEVEL", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
        monkeypatch.setenv(name, "2")
    for name in ("TF_CONFIG", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("grpc_proxy", "all_proxy", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def tf_config(monkeypatch: pytest.MonkeyPatch, task: str, index: int = 0) -> None:
    value = {"cluster": CLUSTER, "task": {"type": task, "index": index}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(value))


def main(tmp_path: Path, *argv: str) -> int:
    return entry.main([f"--output-dir={tmp_path / 'out'}", *argv])


def test_a_bad_setting_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(tmp_path, "--epochs=0") == 2
    assert capsys.readouterr().err == (
        "tftrain: error: --epochs / TFTRAIN_EPOCHS must be an integer >= 1, got '0'\n"
    )


def test_a_bad_tf_config_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["w:1"]}, "task": {"type": "x"}}')
    assert main(tmp_path) == 2
    assert capsys.readouterr().err.startswith("tftrain: error: TF_CONFIG task type 'x' is unknown")


def test_a_strategy_that_does_not_fit_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tf_config(monkeypatch, "worker")
    assert main(tmp_path, "--strategy=multi_worker_mirrored") == 2
    assert "multi_worker_mirrored uses no ps" in capsys.readouterr().err


def test_an_output_dir_in_a_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out").write_text("")
    assert main(tmp_path) == 2
    assert (
        capsys.readouterr().err
        == f"tftrain: error: output dir {tmp_path / 'out'} is a file, not a directory\n"
    )


def test_an_idle_task_says_so_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tf_config(monkeypatch, "worker")
    assert main(tmp_path, "--strategy=single") == 0
    assert capsys.readouterr().out == (
        "tftrain: worker:0, strategy single, role idle\n"
        "strategy single trains in the chief (or worker 0) alone; nothing to do here\n"
    )
    assert (tmp_path / "out").is_dir()  # checked, and made, before anything else


def test_missing_data_exits_1_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(tmp_path, f"--data-dir={tmp_path}") == 1
    captured = capsys.readouterr()
    assert captured.out == "tftrain: single process, strategy single, role trainer\n"
    assert captured.err == (
        f"tftrain: error: cannot read checksum file {tmp_path / 'SHA256SUMS'}: "
        "No such file or directory\n"
    )


def test_a_missing_init_checkpoint_exits_2_before_the_data_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "ckpt-5"
    assert main(tmp_path, f"--init-checkpoint={missing}", f"--data-dir={tmp_path}") == 2
    assert capsys.readouterr().err.startswith(
        f"tftrain: error: --init-checkpoint / TFTRAIN_INIT_CHECKPOINT {missing} does not exist"
    )


@pytest.mark.parametrize(
    ("raised", "status", "out", "err"),
    [
        (Preempted(9, "SIGTERM"), 143,
         "tftrain: preempted (SIGTERM): saved a checkpoint at step 9; a restarted run resumes "
         "there\n", ""),
        (NoUsableCheckpoint("no checkpoint restores"), 2, "",
         "tftrain: error: no checkpoint restores\n"),
        (RunError("Parameter server unreachable"), 1, "",
         "tftrain: error: Parameter server unreachable\n"),
    ],
    ids=["sigterm", "no-usable-checkpoint", "run-error"],
)  # fmt: skip
def test_how_a_role_s_end_becomes_the_exit_status(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raised: Exception,
    status: int,
    out: str,
    err: str,
) -> None:
    def run_role(*args: object) -> int:
        raise raised

    monkeypatch.setattr(entry, "run_role", run_role)
    assert main(tmp_path) == status
    captured = capsys.readouterr()
    assert captured.out == "tftrain: single process, strategy single, role trainer\n" + out
    assert captured.err == err
