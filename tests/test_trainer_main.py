"""`python -m trainer`'s exit codes and lines (trainer/__main__.py's docstring: 0 done, 1 the
run failed, 2 a person must act, 143 stopped by SIGTERM after saving), in this process, up
to the point where TensorFlow would start. The same through a real process:
test_trainer_settings.py; training itself: the @slow multi-process tests."""

from __future__ import annotations

import json
import os
import re
import sys
import types
from pathlib import Path

import pytest

import trainer
from trainer import __main__ as entry
from trainer.errors import NoUsableCheckpoint, RunError
from trainer.preemption import Preempted
from trainer.settings import BUNDLED_DATA_DIR

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


# --- Which role runs, and with what: the role modules stood in for ----------------------------


class Roles:
    """Stand-ins for the TensorFlow roles and the data loading, recording their calls."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, tuple[object, ...]]] = []
        self.data = object()
        for name, function in (("server", "serve"), ("evaluator", "run"), ("train_loop", "run")):
            fake = types.ModuleType(f"trainer.{name}")
            setattr(fake, function, self.recorder(name))
            monkeypatch.setitem(sys.modules, f"trainer.{name}", fake)
            monkeypatch.setattr(trainer, name, fake, raising=False)
        monkeypatch.setattr(entry, "load_mnist", self.recorder("load_mnist", self.data))
        monkeypatch.setattr(entry, "require_gpus", self.recorder("require_gpus", None))

    def recorder(self, name: str, result: object = 0):  # type: ignore[no-untyped-def]
        def record(*args: object) -> object:
            self.calls.append((name, args))
            return result

        return record


def test_a_ps_serves_with_its_cluster_and_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roles = Roles(monkeypatch)
    tf_config(monkeypatch, "ps")
    assert main(tmp_path, "--gpus=0") == 0
    [(name, (config, settings))] = roles.calls  # no data read, no GPU check: it only serves
    assert name == "server"
    assert (str(config.task), config.cluster["ps"]) == ("ps:0", ("p:2222",))  # type: ignore[attr-defined]
    assert settings.output_dir == tmp_path / "out"  # type: ignore[attr-defined]


def test_the_evaluator_scores_with_the_data_and_its_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roles = Roles(monkeypatch)
    tf_config(monkeypatch, "evaluator")
    assert main(tmp_path, "--train-examples=7", "--gpus=1") == 0
    names = [name for name, _ in roles.calls]
    assert names == ["load_mnist", "require_gpus", "evaluator"]
    (_, (data_dir, examples)), (_, (gpus,)), (_, (settings, data)) = roles.calls
    assert (data_dir, examples, gpus, data) == (BUNDLED_DATA_DIR, 7, 1, roles.data)
    assert settings.output_dir == tmp_path / "out"  # type: ignore[attr-defined]


def test_the_chief_trains_with_everything_and_says_where_start_up_went(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roles = Roles(monkeypatch)
    tf_config(monkeypatch, "chief")
    assert main(tmp_path, "--train-examples=9", f"--data-dir={tmp_path}") == 0
    assert [name for name, _ in roles.calls] == ["load_mnist", "require_gpus", "train_loop"]
    (_, (data_dir, examples)), (_, (gpus,)), (_, args) = roles.calls
    assert (data_dir, examples, gpus) == (tmp_path, 9, 0)
    settings, plan, config, data, clock = args
    assert (plan.strategy, plan.role.value) == ("parameter_server", "coordinator")  # type: ignore[attr-defined]
    assert str(config.task) == "chief:0"  # type: ignore[attr-defined]
    assert data is roles.data
    assert settings.train_examples == 9  # type: ignore[attr-defined]
    phases = re.findall(r"(\w[\w ]*?) \d+\.\ds", clock.summary())  # type: ignore[attr-defined]
    assert phases == ["settings", "data", "TensorFlow import"]


def test_the_arguments_come_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["python -m trainer", "--epochs=0"])
    assert entry.main() == 2
    assert "--epochs / TFTRAIN_EPOCHS must be an integer >= 1, got '0'" in capsys.readouterr().err


def test_progress_lines_leave_at_each_newline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Line-buffered stdout: `kubectl logs` sees each line as it is printed."""
    Roles(monkeypatch)
    assert main(tmp_path) == 0
    assert sys.stdout.line_buffering is True  # type: ignore[union-attr]


def test_the_cluster_s_hosts_bypass_a_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Roles(monkeypatch)
    monkeypatch.setenv("https_proxy", "http://proxy:3128")
    monkeypatch.setenv("no_proxy", "example.com")
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {"cluster": {"worker": ["localhost:1", "127.0.0.1:2"]}, "task": {"type": "worker"}}
        ),
    )
    assert main(tmp_path) == 0
    assert os.environ["no_proxy"] == "example.com,localhost,127.0.0.1,::1"
