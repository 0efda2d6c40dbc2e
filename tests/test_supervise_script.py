"""The replica supervisor script, run as a pod runs it: PID 1 of its own PID namespace
(`unshare --pid --fork --mount-proc`, as root), several replicas against one outcome directory,
repeated attempts of one replica with its Job's retry count, under dash, bash (as `sh`) and
busybox sh. Expected outcomes come from TFJob's rules as README "Lifecycle" states them: the
chief's success ends the run; exit 2/126/127, or any failure on a replica's last attempt,
fails it everywhere; a preempted attempt does not count.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from infra.lifecycle import EVALUATOR_STOP_GRACE, SCRIPT, TERMINATION_GRACE_SECONDS
from tests.cluster_helpers import wait_until

# How each shell is run as /bin/sh: bash in POSIX mode is what `sh` is on UBI/Amazon Linux.
SHELLS = {"dash": ("dash",), "bash": ("bash", "--posix"), "busybox": ("busybox", "sh")}
CAN_UNSHARE = os.geteuid() == 0 and shutil.which("unshare") is not None


def _shell_params() -> list[object]:
    return [
        pytest.param(
            argv,
            id=name,
            marks=pytest.mark.skipif(
                shutil.which(argv[0]) is None, reason=f"{argv[0]} is not installed"
            ),
        )
        for name, argv in SHELLS.items()
    ]


SERVE_FOREVER = (sys.executable, "-c", "import time\nwhile True: time.sleep(0.2)")
NOISE = ("Killed", "Terminated", "Done")


@dataclass
class Run:
    """One run's outcome directory and the shell its supervisors run under."""

    outcomes: Path
    shell: tuple[str, ...]
    pid1: bool
    run: str = "r1"
    generation: str = "g1"

    def start(
        self,
        role: str,
        *command: str,
        replica: str = "r-worker-0",
        backoff: int | None = None,
        grace: int | None = None,
        on_success: Path | None = None,
        generation: str | None = None,
        options: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        wrapper: tuple[str, ...] = (),
    ) -> subprocess.Popen[str]:
        argv = [*self.shell, str(SCRIPT), role, "--outcomes", str(self.outcomes)]
        argv += ["--run", self.run, "--generation", generation or self.generation]
        argv += ["--replica", replica]
        if backoff is not None:
            argv += ["--backoff-limit", str(backoff)]
        if grace is not None:
            argv += ["--stop-grace", str(grace)]
        if on_success is not None:
            argv += ["--on-success", str(on_success)]
        argv += [*options, "--", *command]
        if self.pid1:
            # runc makes a container's PID 1 a session leader (setsid() in nsexec.c's last
            # stage); setsid here does the same for the namespace's PID 1.
            argv = ["unshare", "--pid", "--fork", "--mount-proc", "setsid", *argv]
        argv = [*wrapper, *argv]
        # A group leader, as a container's PID 1 and the local launcher's replicas are.
        return subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env=env,
        )

    def signal(self, process: subprocess.Popen[str], signum: int) -> None:
        """As the kubelet does: to the supervisor itself, which is PID 1 under unshare."""
        pid = process.pid
        if self.pid1:
            children = Path(f"/proc/{pid}/task/{pid}/children")
            assert wait_until(lambda: children.read_text().strip() != "", 5)
            pid = int(children.read_text().split()[0])
        os.kill(pid, signum)

    @property
    def failed(self) -> Path:
        return self.outcomes / f"failed.{self.run}.{self.generation}"

    @property
    def succeeded(self) -> Path:
        return self.outcomes / f"succeeded.{self.run}"

    def leftovers(self) -> list[str]:
        return [p.name for p in self.outcomes.glob(".partial*")] if self.outcomes.exists() else []


def finish(process: subprocess.Popen[str], timeout: float = 15) -> tuple[int, str]:
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # everything it started: a session of its own
        out, _ = process.communicate()
        raise AssertionError(f"still running after {timeout}s:\n{out}") from None
    return process.returncode, out


def started(path: Path) -> str:
    """A command that records its start in `path`, then serves forever."""
    return f"echo started >> {path}; while :; do sleep 0.1; done"


@pytest.fixture(params=[False, True], ids=["process", "pid1"])
def pid1(request: pytest.FixtureRequest) -> bool:
    if request.param and not CAN_UNSHARE:
        pytest.skip("unshare --pid needs root and util-linux: CI runs as root")
    return bool(request.param)


@pytest.fixture(params=_shell_params())
def run(request: pytest.FixtureRequest, tmp_path: Path, pid1: bool) -> Run:
    return Run(tmp_path / "out" / ".tftrain-run", request.param, pid1)


def test_the_chief_publishes_and_the_others_stop_within_two_seconds(
    run: Run, tmp_path: Path
) -> None:
    flag = tmp_path / "follower-started"
    follower = run.start("--follows-run", "sh", "-c", started(flag), replica="r-ps-0")
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    published = time.monotonic()
    status, out = finish(follower)
    assert status == 0, out
    assert time.monotonic() - published < 2.5
    assert "run r1 succeeded: stopping" in out
    assert run.succeeded.read_text().startswith("r1 r-chief-0 attempt 1 on ")
    assert run.leftovers() == []
    assert not any(word in out for word in NOISE), out


def test_replicas_failing_at_once_always_publish_the_failure(run: Run) -> None:
    # One bad flag in the stack: every replica exits 2 at the same moment, in every round.
    for round_ in range(8):
        run.generation = f"g{round_}"
        replicas = [
            run.start("--follows-run", "sh", "-c", "sleep 0.3; exit 2", replica=f"r-worker-{i}")
            for i in range(3)
        ]
        results = [finish(replica) for replica in replicas]
        assert [status for status, _ in results] == [2, 2, 2], results
        assert run.failed.read_text().split()[1:3] == ["exit", "2"], results
        assert run.leftovers() == [], round_


def test_the_last_attempt_of_any_exit_code_fails_the_run(run: Run, tmp_path: Path) -> None:
    flag = tmp_path / "chief-started"
    chief = run.start("--ends-run", "sh", "-c", started(flag), replica="r-chief-0", backoff=1)
    assert wait_until(flag.exists, 10)
    # Attempt 1 of 2 (backoffLimit 1): an ordinary failure, the Job will retry it.
    status, out = finish(
        run.start("--follows-run", "sh", "-c", "exit 1", replica="r-ps-0", backoff=1)
    )
    assert status == 1 and not run.failed.exists(), out
    # Attempt 2, the last the Job allows: its failure is the run's.
    status, out = finish(
        run.start("--follows-run", "sh", "-c", "exit 137", replica="r-ps-0", backoff=1)
    )
    assert status == 137, out
    assert "attempt 2, its last of 2" in out
    assert run.failed.read_text().startswith("r-ps-0 exit 137 attempt 2 ")
    status, out = finish(chief)
    assert status == 2 and "failed in another replica" in out, out


def test_a_replica_starting_after_the_failure_exits_at_once(run: Run, tmp_path: Path) -> None:
    status, _ = finish(run.start("--follows-run", "sh", "-c", "exit 2", replica="r-ps-0"))
    assert status == 2
    flag = tmp_path / "late-started"
    begun = time.monotonic()
    status, out = finish(
        run.start("--follows-run", "sh", "-c", started(flag), replica="r-worker-1")
    )
    assert status == 2 and "has already failed" in out, out
    assert time.monotonic() - begun < 2 and not flag.exists()


def test_a_failure_of_another_deploy_generation_is_ignored(run: Run, tmp_path: Path) -> None:
    finish(run.start("--follows-run", "sh", "-c", "exit 2", generation="old"))
    flag = tmp_path / "follower-started"
    follower = run.start("--follows-run", "sh", "-c", started(flag), replica="r-ps-0")
    assert wait_until(flag.exists, 10), "a new deploy's replica must start"
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    assert finish(follower)[0] == 0


def test_a_follower_stopped_by_the_success_exits_0_whatever_its_command_says(
    run: Run, tmp_path: Path
) -> None:
    flag = tmp_path / "trapped"
    command = ("sh", "-c", f"trap 'exit 2' TERM; touch {flag}; while :; do sleep 0.1; done")
    follower = run.start("--follows-run", *command, replica="r-ps-0")
    assert wait_until(flag.exists, 10)  # the command has trapped TERM before the run ends
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    status, out = finish(follower)
    assert status == 0, out
    assert not run.failed.exists()


def test_a_command_ignoring_sigterm_is_killed_after_the_grace_and_it_is_said(
    run: Run, tmp_path: Path
) -> None:
    flag = tmp_path / "trapped"
    command = ("sh", "-c", f"trap '' TERM; touch {flag}; while :; do sleep 0.1; done")
    follower = run.start("--follows-run", *command, replica="r-ps-0", grace=1)
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    begun = time.monotonic()
    status, out = finish(follower)
    assert status == 0, out
    assert "did not stop within 1s of SIGTERM: SIGKILL" in out
    assert 0.9 < time.monotonic() - begun < 3.5
    assert not any(word in out for word in NOISE), out


def test_the_evaluator_gets_its_longer_grace_to_finish(run: Run, tmp_path: Path) -> None:
    done = tmp_path / "scored"
    flag = tmp_path / "evaluating"
    # Scores the final checkpoint for 2 s after SIGTERM, then exits.
    script = f"trap 'sleep 2; touch {done}; exit 0' TERM; touch {flag}; while :; do sleep 0.1; done"
    evaluator = run.start("--follows-run", "sh", "-c", script, replica="r-evaluator-0", grace=4)
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    status, out = finish(evaluator)
    assert status == 0 and done.exists(), out
    assert "did not stop within" not in out


def test_sigterm_reaches_a_trainer_behind_a_shell_wrapper(run: Run, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    trainer = (
        "import signal, sys, time, pathlib\n"
        f"save = lambda *_: (pathlib.Path({str(saved)!r}).touch(), sys.exit(143))\n"
        "signal.signal(signal.SIGTERM, save)\n"
        "print('ready', flush=True)\n"
        "while True: time.sleep(0.1)\n"
    )
    # Not `exec`: the shell stays the supervisor's child, the trainer is its child.
    wrapper = f'{sys.executable} -c "$0"; echo wrapper-done'
    process = run.start("--ends-run", "sh", "-c", wrapper, trainer, replica="r-chief-0")
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    run.signal(process, signal.SIGTERM)
    _, out = finish(process)
    assert saved.exists(), out
    assert not run.failed.exists() and not run.succeeded.exists()


def test_a_preempted_attempt_does_not_count_against_the_retries(run: Run, tmp_path: Path) -> None:
    flag = tmp_path / "running"
    # backoffLimit 0: one attempt. Preempted (SIGTERM), it is given back, as Kubernetes ignores
    # a DisruptionTarget pod; the retry is still that one attempt, and its failure is final.
    command = ("sh", "-c", f"touch {flag}; trap 'exit 143' TERM; while :; do sleep 0.1; done")
    process = run.start("--follows-run", *command, replica="r-worker-1", backoff=0)
    assert wait_until(flag.exists, 10)
    run.signal(process, signal.SIGTERM)
    status, out = finish(process)
    assert status == 143 and not run.failed.exists(), out
    status, out = finish(
        run.start("--follows-run", "sh", "-c", "exit 1", replica="r-worker-1", backoff=0)
    )
    assert status == 1 and "attempt 1, its last of 1" in out, out
    assert run.failed.exists()


def test_on_success_runs_after_the_success_and_again_on_a_retry(run: Run, tmp_path: Path) -> None:
    hook = tmp_path / "export.sh"
    log = tmp_path / "exports"
    hook.write_text(f'[ -e "{run.succeeded}" ] || exit 9\necho exported >> {log}\nexit 0\n')
    status, out = finish(run.start("--ends-run", "true", replica="r-chief-0", on_success=hook))
    assert status == 0, out
    assert log.read_text() == "exported\n"  # it saw the success already published
    # The chief's Job retries after a failed export: the run has succeeded, the hook runs again.
    hook.write_text(f"echo again >> {log}\nexit 3\n")
    status, out = finish(run.start("--ends-run", "true", replica="r-chief-0", on_success=hook))
    assert status == 3 and log.read_text() == "exported\nagain\n", out


def test_usage_errors_and_missing_commands_are_final(run: Run) -> None:
    status, out = finish(run.start("--sideways", "true"))
    assert status == 2 and "unknown option --sideways" in out
    status, out = finish(run.start("--ends-run", "/no/such/trainer", replica="r-chief-0"))
    assert status == 127 and "cannot run /no/such/trainer: command not found" in out
    assert run.failed.read_text().startswith("r-chief-0 exit 127 ")


def test_a_killed_supervisor_takes_its_command_along(tmp_path: Path) -> None:
    # The local launcher's case (in a pod, PID 1's death ends the namespace): not PID 1.
    outcomes = Run(tmp_path / "out", SHELLS["dash"], pid1=False)
    pid_file = tmp_path / "pid"
    command = ("sh", "-c", f"echo $$ > {pid_file}; exec sleep 600")
    process = outcomes.start("--follows-run", *command)
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "", 10)
    child = int(pid_file.read_text())
    process.kill()
    process.wait()

    def gone() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        return False

    assert wait_until(gone, timeout=5)


def test_the_pod_grace_covers_every_grace_inside() -> None:
    from trainer.preemption import PS_GRACE_SECONDS

    assert TERMINATION_GRACE_SECONDS > EVALUATOR_STOP_GRACE + 2
    assert TERMINATION_GRACE_SECONDS > PS_GRACE_SECONDS + 2
