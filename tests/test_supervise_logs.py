"""The supervisor keeps each attempt's output (`--logs`), as its header states: CMD's
stdout and stderr in order, plus its own lines, in DIR/KEY.G.NAME.N.log, CMD's output
followed by "... ended: exit STATUS"; the same output still on stdout (what `kubectl logs`
reads); CMD's exit status unchanged; past --log-cap the log moves to .log.1; a copier that
dies, a full or unwritable log volume, or an image without tee never fails nor blocks it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from infra.lifecycle import OUTCOMES_DIR
from infra.records.run_state import read_run
from tests.cluster_helpers import wait_until
from tests.test_supervise_script import CAN_UNSHARE, SHELLS, Run, _shell_params, finish

REPLICA = "r-worker-0"


@pytest.fixture(params=[False, True], ids=["process", "pid1"])
def as_pid1(request: pytest.FixtureRequest) -> bool:
    if request.param and not CAN_UNSHARE:
        pytest.skip("unshare --pid needs root and util-linux: CI runs as root")
    return bool(request.param)


@pytest.fixture(params=_shell_params())
def shell(request: pytest.FixtureRequest) -> tuple[str, ...]:
    return tuple(request.param)


def log_of(logs: Path, attempt: int) -> Path:
    return logs / f"r1.g1.{REPLICA}.{attempt}.log"


def printing(lines: int, pause: float, width: int = 0, code: int = 0) -> tuple[str, ...]:
    """A command printing `lines` numbered lines (padded to `width`), `pause` s apart."""
    script = (
        "import sys, time\n"
        f"for i in range({lines}):\n"
        f"    print(f'line {{i}}'.ljust({width}), flush=True)\n"
        f"    time.sleep({pause})\n"
        f"sys.exit({code})\n"
    )
    return (sys.executable, "-c", script)


def test_every_attempt_keeps_its_output_in_order_and_stdout_shows_it(
    shell: tuple[str, ...], as_pid1: bool, tmp_path: Path
) -> None:
    run = Run(tmp_path / "out" / ".tftrain-run", shell, as_pid1)
    logs = tmp_path / "out" / "logs"
    options = ("--logs", str(logs))
    command = "echo one; echo two >&2; echo three; exit {}"
    first = run.start("--follows-run", "sh", "-c", command.format(1), backoff=1, options=options)
    status, out = finish(first)
    assert status == 1, out
    assert out.splitlines()[:3] == ["one", "two", "three"]
    assert log_of(logs, 1).read_text() == (
        f"one\ntwo\nthree\ntftrain-supervise: {REPLICA} attempt 1 ended: exit 1\n"
    )
    # The last attempt the Job allows: its failure is the run's, and the log says so too.
    second = run.start("--follows-run", "sh", "-c", command.format(4), backoff=1, options=options)
    status, out = finish(second)
    assert status == 4, out
    lines = log_of(logs, 2).read_text().splitlines()
    assert lines[:4] == [
        "one",
        "two",
        "three",
        f"tftrain-supervise: {REPLICA} attempt 2 ended: exit 4",
    ]
    assert lines[4].startswith(f"tftrain-supervise: run r1 cannot succeed ({REPLICA} exit 4, ")


def _tee_of(log: Path) -> int | None:
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:1] == [b"tee"] and str(log).encode() in argv:
            return int(proc.name)
    return None


def test_a_killed_copier_neither_fails_nor_blocks_the_command(
    shell: tuple[str, ...], as_pid1: bool, tmp_path: Path
) -> None:
    run = Run(tmp_path / "out" / ".tftrain-run", shell, as_pid1)
    logs, go = tmp_path / "logs", tmp_path / "go"
    # Prints, waits until tee is dead, then prints more than a pipe's buffer (64 KiB):
    # with nobody reading it would block, with no reader at all it would get SIGPIPE.
    script = (
        "import os, time\n"
        "print('ready', flush=True)\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.01)\n"
        "for i in range(600): print(f'line {i}'.ljust(200), flush=True)\n"
    )
    process = run.start(
        "--follows-run", sys.executable, "-c", script, options=("--logs", str(logs))
    )
    assert wait_until(lambda: _tee_of(log_of(logs, 1)) is not None, 10)
    tee = _tee_of(log_of(logs, 1))
    assert tee is not None
    os.kill(tee, signal.SIGKILL)
    go.touch()
    status, out = finish(process)
    assert status == 0, out[-500:]  # not 141: no SIGPIPE
    assert out.splitlines()[-1].rstrip() == "line 599"
    assert f"{REPLICA} attempt 1 ended: exit 0" in log_of(logs, 1).read_text()


@pytest.mark.parametrize("volume", ["full", "unwritable"])
def test_a_full_or_unwritable_log_volume_changes_nothing_for_the_command(
    shell: tuple[str, ...], volume: str, tmp_path: Path
) -> None:
    run = Run(tmp_path / "out" / ".tftrain-run", shell, pid1=False)
    logs = tmp_path / "logs"
    wrapper: tuple[str, ...] = ()
    if volume == "full":
        if not CAN_UNSHARE:
            pytest.skip("a small tmpfs needs root and unshare --mount")
        logs.mkdir()
        # A 16 KiB volume in a mount namespace of the supervisor's own: writes past it fail
        # with ENOSPC, as on a full NAS.
        mount = f'mount -t tmpfs -o size=16k tftrain-test {logs} && exec "$@"'
        wrapper = ("unshare", "--mount", "sh", "-c", mount, "sh")
    else:
        logs.write_text("a file where the directory should be")
    # 600 lines of 200 bytes: more than a pipe's buffer, and than the volume.
    process = run.start(
        "--follows-run",
        *printing(600, 0, 200, code=3),
        options=("--logs", str(logs)),
        wrapper=wrapper,
    )
    status, out = finish(process)
    assert status == 3, out[-500:]
    numbered = [line.rstrip() for line in out.splitlines() if line.startswith("line ")]
    assert numbered == [f"line {i}" for i in range(600)]
    if volume == "unwritable":
        assert f"cannot write {logs}" in out


def test_a_burst_past_the_cap_loses_no_byte_and_stays_bounded(
    shell: tuple[str, ...], tmp_path: Path
) -> None:
    # The case: 200,000 short lines as fast as Python prints them, a 200 kB cap.
    # The copier moves the log aside itself once it holds the cap, so what is kept (.log.1,
    # then .log) is exactly the newest output, each at most the cap plus one 4 KiB read.
    run = Run(tmp_path / "out" / ".tftrain-run", shell, pid1=False)
    logs = tmp_path / "logs"
    cap = 200_000
    script = "import sys\nsys.stdout.writelines(f'{i}\\n' for i in range(200_000))\n"
    options = ("--logs", str(logs), "--log-cap", str(cap))
    status, out = finish(run.start("--follows-run", sys.executable, "-c", script, options=options))
    assert status == 0, out[-500:]
    printed = "".join(f"{i}\n" for i in range(200_000))
    assert printed in out  # stdout (kubectl logs) has every line
    log, older = log_of(logs, 1), Path(f"{log_of(logs, 1)}.1")
    closing = f"tftrain-supervise: {REPLICA} attempt 1 ended: exit 0\n"
    assert log.read_text().endswith(closing)
    kept = older.read_text() + log.read_text().removesuffix(closing)
    assert printed.endswith(kept), "a byte of the newest output was lost in a move"
    assert cap <= older.stat().st_size <= cap + 4096
    assert log.stat().st_size <= cap + 4096 + len(closing)


def _mounted_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tftrain-test", str(path)],
        capture_output=True,
        check=False,
    )
    return mount.returncode == 0


@pytest.mark.parametrize("shell", [SHELLS["dash"], SHELLS["busybox"]], ids=["dash", "busybox"])
def test_a_log_that_fills_the_volume_does_not_cost_the_outcome(
    shell: tuple[str, ...], tmp_path: Path
) -> None:
    # The run's output dir on a 512 KiB volume, the log on it too: the chief prints 2 MB,
    # which fills it, then exits 0. The success, the attempt's exit and start must be there.
    volume = tmp_path / "out"
    if not _mounted_tmpfs(volume, "512k"):
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    try:
        run = Run(volume / OUTCOMES_DIR, shell, pid1=False, run="key", generation="g1")
        logs = volume / "replicas" / "mnist-chief-0" / "logs"
        script = "import sys\nsys.stdout.writelines(f'{i:099d}\\n' for i in range(20_000))\n"
        process = run.start(
            "--ends-run",
            sys.executable,
            "-c",
            script,
            replica="mnist-chief-0",
            backoff=0,
            options=("--logs", str(logs)),
        )
        status, out = finish(process)
        assert status == 0, out[-2000:]
        assert out.count("\n") >= 20_000  # stdout has it all, whatever the volume did
        assert "could not be written" not in out, out[-2000:]
        assert run.succeeded.exists()
        claim = run.attempt("mnist-chief-0", 1)
        assert (claim / "exit").read_text() == "0 exited\n"
        assert (claim / "start").read_text().strip().isdigit()
        assert run.leftovers() == []  # no empty partial record
        state = read_run(volume, with_scalars=False)
        assert state is not None and state.outcome == "succeeded"
    finally:
        with contextlib.suppress(OSError):
            subprocess.run(["umount", str(volume)], check=False)


def test_without_tee_in_the_image_the_output_still_reaches_stdout(tmp_path: Path) -> None:
    # An image's PATH with what the supervisor uses, but no tee.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in (
        "dash",
        "sh",
        "uname",
        "sleep",
        "mkdir",
        "rm",
        "mv",
        "cat",
        "mkfifo",
        "wc",
        "cp",
        "tail",
    ):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    run = Run(tmp_path / "out" / ".tftrain-run", SHELLS["dash"], pid1=False)
    logs = tmp_path / "logs"
    env = {"PATH": str(bin_dir)}
    process = run.start(
        "--follows-run", "sh", "-c", "echo hello; exit 5", options=("--logs", str(logs)), env=env
    )
    status, out = finish(process)
    assert status == 5, out
    assert "hello" in out.splitlines()
    assert "no tee in this image" in out


def test_a_given_back_attempt_says_so_in_its_log_record_and_status(
    shell: tuple[str, ...], tmp_path: Path
) -> None:
    # A graceful-shutdown handler exits 0 on SIGTERM; the supervisor exits 143 (the Job is
    # not done): its log and its record say 143 and why, never "exit 0".
    run = Run(tmp_path / "out" / ".tftrain-run", shell, pid1=False)
    logs, flag = tmp_path / "logs", tmp_path / "trapped"
    command = ("sh", "-c", f"trap 'exit 0' TERM; touch {flag}; while :; do sleep 0.05; done")
    process = run.start("--follows-run", *command, options=("--logs", str(logs)))
    assert wait_until(flag.exists, 10)
    run.signal(process, signal.SIGTERM)
    status, out = finish(process)
    assert status == 143, out
    ended = [line for line in log_of(logs, 1).read_text().splitlines() if " ended: " in line]
    assert ended == [
        f"tftrain-supervise: {REPLICA} attempt 1 ended: exit 143 (its command: exit 0; given "
        "back: told to stop from outside, not counted against the backoff limit)"
    ]
    assert (run.attempt(REPLICA, 1) / "exit").read_text() == "143 given-back\n"
