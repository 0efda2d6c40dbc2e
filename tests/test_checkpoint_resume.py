"""The real trainer resuming from damaged checkpoints, and refusing unusable output dirs.

One small single-process run leaves ckpt-10, -20 and -30, as a run that died there would;
each test damages a copy the way a crash mid-write or a flaky NFS mount would, runs
the trainer on to step 40 in this process (TensorFlow is imported once), and checks that it
resumed from the newest intact checkpoint, reached step 40, and left every earlier
checkpoint file as it was. The slow test SIGKILLs the chief of the dev topology inside a
save, under the local launcher.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from infra.local.plan import REPO
from tests.cluster_helpers import wait_until
from tests.shared_values import SHARED_SCOPE

# A sitecustomize that injects faults into the trainer (tests/faults/sitecustomize.py).
FAULTS = Path(__file__).resolve().parent / "faults"

SMALL = ["--batch-size=16", "--epochs=2", "--checkpoint-steps=10", "--log-steps=10",
         "--steps-per-execution=5", "--keep-checkpoints=5"]  # fmt: skip
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2  # <linux/prctl.h>, capability.h


def train(output_dir: Path, final_step: int) -> int:
    from trainer.__main__ import main

    os.environ["TFTRAIN_TRAIN_EXAMPLES"] = "512"
    try:
        return main([*SMALL, f"--output-dir={output_dir}", f"--max-steps={final_step}"])
    finally:
        del os.environ["TFTRAIN_TRAIN_EXAMPLES"]


def tree(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope=SHARED_SCOPE)
def died_at_30(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("base") / "out"
    assert train(output, 30) == 0  # a later run to step 40 resumes as if it had died at 30
    return output


def ckpt(output: Path, name: str) -> Path:
    return output / "checkpoints" / name


def truncate_data(output: Path) -> None:
    data = ckpt(output, "ckpt-30.data-00000-of-00001")
    data.write_bytes(data.read_bytes()[:500_000])


def flip_data(output: Path) -> None:
    data = ckpt(output, "ckpt-30.data-00000-of-00001")
    raw = bytearray(data.read_bytes())
    raw[600_000:600_004] = b"\xde\xad\xbe\xef"
    data.write_bytes(bytes(raw))


def flip_index(output: Path) -> None:
    index = ckpt(output, "ckpt-30.index")
    raw = bytearray(index.read_bytes())
    raw[900] ^= 0xFF
    index.write_bytes(bytes(raw))


def delete_index(output: Path) -> None:
    ckpt(output, "ckpt-30.index").unlink()


def unpublish(output: Path) -> None:
    ckpt(output, "ckpt-30.sha256").unlink()  # killed between TensorFlow's write and publishing


def garble_state(output: Path) -> None:
    ckpt(output, "checkpoint").write_bytes(b'model_checkpoint_path: "ckpt-30\xff{{ garbage')


def empty_state(output: Path) -> None:
    ckpt(output, "checkpoint").write_bytes(b"")


def state_names_a_missing_checkpoint(output: Path) -> None:
    ckpt(output, "checkpoint").write_text('model_checkpoint_path: "ckpt-99"\n')


@pytest.mark.parametrize(
    ("damage", "resumed_at"),
    [
        (truncate_data, 20),
        (unpublish, 20),
        (garble_state, 30),  # the state file is not a checkpoint: ckpt-30 is intact
        # The same mechanisms again (SHA-256 mismatch, state file ignored): under -m slow.
        pytest.param(flip_data, 20, marks=pytest.mark.slow),
        pytest.param(flip_index, 20, marks=pytest.mark.slow),
        pytest.param(delete_index, 20, marks=pytest.mark.slow),
        pytest.param(empty_state, 30, marks=pytest.mark.slow),
        pytest.param(state_names_a_missing_checkpoint, 30, marks=pytest.mark.slow),
    ],
)
def test_resumes_from_the_newest_intact_checkpoint(
    died_at_30: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], None],
    resumed_at: int,
) -> None:
    output = tmp_path / "out"
    shutil.copytree(died_at_30, output)
    damage(output)
    before = tree(output / "checkpoints")

    assert train(output, 40) == 0
    out = capsys.readouterr().out
    assert f"Resumed from checkpoint {ckpt(output, f'ckpt-{resumed_at}')} at step " in out
    assert re.search(r"^Step: 40/", out, re.MULTILINE), out
    after = tree(output / "checkpoints")
    assert "ckpt-40.sha256" in after
    # Nothing that was there is modified or deleted: earlier checkpoints stay as they were,
    # the damaged one sits byte for byte under damaged/.
    moved = [name for name in after if name.startswith("damaged/")]
    for name, digest in before.items():
        if name == "checkpoint":
            continue  # TensorFlow's state file, rewritten
        if int(re.match(r"ckpt-(\d+)", name).group(1)) <= resumed_at:
            assert after[name] == digest, name
        else:
            [copy] = [path for path in moved if path.endswith("/" + name)]
            assert after[copy] == digest, name
    if resumed_at == 20:
        assert "Checkpoint ckpt-30 is damaged (" in out, out
        assert after["ckpt-30.sha256"] != before.get("ckpt-30.sha256")  # a new ckpt-30
    assert ckpt(output, "checkpoint").read_text().startswith('model_checkpoint_path: "ckpt-40"')


@pytest.mark.slow
def test_a_damaged_final_checkpoint_is_trained_again(
    died_at_30: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Restarted after its last save, the chief would only evaluate and export; not from a
    final checkpoint that is damaged."""
    output = tmp_path / "out"
    shutil.copytree(died_at_30, output)
    truncate_data(output)
    assert train(output, 30) == 0
    out = capsys.readouterr().out
    assert "Checkpoint ckpt-30 is damaged (" in out
    assert f"Resumed from checkpoint {ckpt(output, 'ckpt-20')} at step 20" in out
    assert re.search(r"^Step: 30/", out, re.MULTILINE), out
    assert "ckpt-30.sha256" in tree(output / "checkpoints")


def test_when_every_checkpoint_is_damaged_nothing_changes(
    died_at_30: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out"
    shutil.copytree(died_at_30, output)
    for data in (output / "checkpoints").glob("*.data-*"):
        data.write_bytes(data.read_bytes()[:1000])
    before = tree(output)

    assert train(output, 40) == 2
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.startswith("tftrain: error:")]
    assert "none of the 3 checkpoints in" in line
    assert "training from step 0 would write over them, so nothing was changed" in line
    for step in (10, 20, 30):
        assert f"ckpt-{step}: ckpt-{step}.data-00000-of-00001 (1000 bytes) does not match" in line
    assert tree(output) == before


# --- the output dir, checked before TensorFlow or any replica starts -------------------


def obeying_permissions() -> None:
    """Root writes anywhere: the child (still root, so it can run the venv's Python under
    /root) loses the capabilities that override permission bits, as a read-only mount or a
    squashed NFS export would take them away."""
    if os.geteuid() == 0:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
            if prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def unusable_output_dirs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o555)
    a_file = tmp_path / "a-file"
    a_file.write_text("in the way")
    return {
        "read-only": (read_only, f"output dir {read_only} is not writable: Permission denied"),
        "under read-only": (
            read_only / "run",
            f"output dir {read_only / 'run'} cannot be created: Permission denied",
        ),
        "a file": (a_file, f"output dir {a_file} is a file, not a directory"),
        "under a file": (
            a_file / "run" / "1",
            f"output dir {a_file / 'run' / '1'} cannot be created: {a_file} is a file",
        ),
    }


@pytest.mark.parametrize("case", ["read-only", "under read-only", "a file", "under a file"])
@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        (["-m", "trainer", "--output-dir"], "tftrain: error: "),
        (["-m", "infra.local", "dev", "--output-dir"], "tftrain run: "),
    ],
    ids=["trainer", "launcher"],
)
def test_an_unusable_output_dir_is_one_line_and_exit_2(
    tmp_path: Path, case: str, command: list[str], prefix: str
) -> None:
    output, message = unusable_output_dirs(tmp_path)[case]
    done = subprocess.run(
        [sys.executable, *command, str(output)],
        cwd=REPO,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=obeying_permissions,
    )
    assert done.returncode == 2, done
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(prefix + message), done.stderr
    assert "mnist-" not in done.stdout  # no replica started


# --- a chief SIGKILLed inside a save, under the local launcher --------------------------


@pytest.mark.slow
def test_a_chief_killed_while_saving_resumes_from_the_checkpoint_before(tmp_path: Path) -> None:
    output, held = tmp_path / "out", tmp_path / "held"
    # A replica gets only the stack's env (and what a process needs here): the test's knobs
    # go through job.env, as a user's would.
    sets = ["hyperparams.maxSteps=30", "hyperparams.checkpointSteps=10", "hyperparams.logSteps=10",
            "hyperparams.stepsPerExecution=5", "job.backoffLimit=1",
            "job.env.TFTRAIN_TRAIN_EXAMPLES=2048",
            # The fault, from outside the trainer: a sitecustomize on the replica's path.
            f"job.env.PYTHONPATH={json.dumps(str(FAULTS))}",
            f"job.env.TFTRAIN_FAULT_HOLD_SAVE={json.dumps(f'20:{held}')}"]  # fmt: skip
    launcher = subprocess.Popen(
        [sys.executable, "-m", "infra.local", "dev", "--output-dir", str(output),
         "--timeout", "400", *(arg for item in sets for arg in ("--set", item))],
        cwd=REPO,
        env=os.environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        assert wait_until(lambda: held.exists() and held.read_text().endswith("\n"), 300)
        # Held after TensorFlow wrote ckpt-20's files, before its manifest: the worst moment.
        checkpoints = output / "checkpoints"
        assert (checkpoints / "ckpt-20.index").exists()
        assert not (checkpoints / "ckpt-20.sha256").exists()
        ckpt_10 = {k: v for k, v in tree(checkpoints).items() if k.startswith("ckpt-10.")}
        os.kill(int(held.read_text()), signal.SIGKILL)
        out, _ = launcher.communicate(timeout=450)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()
    assert launcher.returncode == 0, out
    # 137 = 128 + SIGKILL: the supervisor reports its command's death as a shell does.
    assert "mnist-chief-0 exited 137; restart 1 of 1" in out, out
    assert re.search(r"Checkpoint ckpt-20 is damaged \(unpublished: .*\); moved to ", out), out
    assert f"Resumed from checkpoint {checkpoints / 'ckpt-10'} at step 10" in out, out
    assert re.search(r"\[mnist-chief-0\] +Step: 30/", out), out
    after = tree(checkpoints)
    assert {name: after[name] for name in ckpt_10} == ckpt_10
    assert {"ckpt-20.sha256", "ckpt-30.sha256"} <= after.keys()
    assert [name for name in after if name.startswith("damaged/") and name.endswith(".index")]
