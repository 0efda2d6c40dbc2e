"""The replica supervisor script, run as a pod runs it: several replicas against one outcome
directory, repeated attempts of one replica with its Job's retry count, under dash, bash (as
`sh`) and busybox sh. Cases about signals, kills and process groups run the supervisor as
PID 1 of its own PID namespace (`unshare --pid --fork --mount-proc`, as root), as a
container runs it; the rest run it as a group-leading process, which behaves the same there
and is quicker to start. Expected outcomes come from TFJob's rules as docs/lifecycle.md "Lifecycle"
states them: the chief's success ends the run; a final exit code (POSIX: 126 not executable,
127 not found; argparse's usage error 2), or any failure on a replica's last attempt, fails
it everywhere; a preempted attempt does not count; a replica on its last attempt that stops
beating fails the run within the stated bound.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from infra.lifecycle import (
    EVALUATOR_STOP_GRACE,
    FINAL_EXIT_CODES,
    SCRIPT,
    TERMINATION_GRACE_SECONDS,
)
from tests.cluster_helpers import wait_until

# How each shell is run as /bin/sh: bash in POSIX mode is what `sh` is on UBI/Amazon Linux.
SHELLS = {"dash": ("dash",), "bash": ("bash", "--posix"), "busybox": ("busybox", "sh")}
CAN_UNSHARE = os.geteuid() == 0 and shutil.which("unshare") is not None
FIXTURE = Path(__file__).parent / "fixtures" / "graceful_trainer.py"


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


NOISE = ("Killed", "Terminated", "Done")

# Run by a supervised command (its parent is the supervisor): waits up to 5 s for the
# supervisor's watcher, the one copy of the supervisor whose output is /dev/null, and stops
# it. The watcher starts just after the command, hence the wait.
FREEZE_WATCHER = (
    "for _ in $(seq 100); do"
    " for p in /proc/[0-9]*; do"
    ' [ "${p#/proc/}" != "$PPID" ] && cmp -s "$p/cmdline" "/proc/$PPID/cmdline"'
    ' && [ "$(readlink "$p/fd/1")" = /dev/null ] && kill -STOP "${p#/proc/}" && break 2;'
    " done; sleep 0.05;"
    " done"
)


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
        outcomes: Path | None = None,
    ) -> subprocess.Popen[str]:
        argv = [*self.shell, str(SCRIPT), role, "--outcomes", str(outcomes or self.outcomes)]
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
        # A group leader, as a container's PID 1 and the local launcher's replicas are; with
        # every stop signal at its default and unblocked, as a container's process starts (a
        # signal ignored on entry cannot be trapped by a shell; the test runner's may be).
        return subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env=env,
            preexec_fn=_default_stop_signals,
        )

    def supervisor_pid(self, process: subprocess.Popen[str]) -> int:
        """The supervisor itself: PID 1 of the namespace under unshare."""
        pid = process.pid
        if self.pid1:
            children = Path(f"/proc/{pid}/task/{pid}/children")
            assert wait_until(lambda: children.read_text().strip() != "", 5)
            pid = int(children.read_text().split()[0])
        return pid

    def signal(self, process: subprocess.Popen[str], signum: int) -> None:
        """As the kubelet does: to the supervisor itself."""
        os.kill(self.supervisor_pid(process), signum)

    @property
    def failed(self) -> Path:
        return self.outcomes / f"failed.{self.run}.{self.generation}"

    @property
    def succeeded(self) -> Path:
        return self.outcomes / f"succeeded.{self.run}"

    def attempt(self, replica: str, number: int) -> Path:
        return self.outcomes / "attempts" / f"{self.run}.{self.generation}.{replica}.{number}"

    def leftovers(self) -> list[str]:
        return [p.name for p in self.outcomes.glob(".partial*")] if self.outcomes.exists() else []


def finish(process: subprocess.Popen[str], timeout: float = 15) -> tuple[int, str]:
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # A namespace's PID 1 is a session of its own (setsid): SIGKILL ends the namespace.
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        for pid in children.read_text().split() if children.exists() else ():
            os.kill(int(pid), signal.SIGKILL)
        os.killpg(process.pid, signal.SIGKILL)  # everything it started: a session of its own
        out, _ = process.communicate()
        raise AssertionError(f"still running after {timeout}s:\n{out}") from None
    return process.returncode, out


def started(path: Path) -> str:
    """A command that records its start in `path`, then serves forever."""
    return f"echo started >> {path}; while :; do sleep 0.1; done"


def _default_stop_signals() -> None:
    stop = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    for signum in stop:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stop)  # a blocked signal is inherited too


def trapping(path: Path, action: str) -> tuple[str, ...]:
    """A command that traps TERM with `action`, records that it has in `path`, serves."""
    return ("sh", "-c", f"trap '{action}' TERM; touch {path}; while :; do sleep 0.05; done")


def at_once(scenario: Callable[[Run, Path], None], tmp_path: Path, pid1: bool) -> None:
    """`scenario` under every installed shell, all at the same time: a case bound by waits
    (a grace, a heartbeat's silence) costs one wait, not one per shell."""
    if pid1 and not CAN_UNSHARE:
        pytest.skip("unshare --pid needs root and util-linux: CI runs as root")
    shells = {name: argv for name, argv in SHELLS.items() if shutil.which(argv[0])}
    with ThreadPoolExecutor(len(shells)) as pool:
        futures = {}
        for name, argv in shells.items():
            (tmp_path / name).mkdir()
            run = Run(tmp_path / name / "out" / ".tftrain-run", argv, pid1)
            futures[name] = pool.submit(scenario, run, tmp_path / name)
    for name, future in futures.items():
        try:
            future.result()
        except AssertionError as error:
            raise AssertionError(f"under {name}: {error}") from error


@pytest.fixture(params=_shell_params())
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Run:
    """A plain group-leading process: for cases that do not depend on being PID 1."""
    return Run(tmp_path / "out" / ".tftrain-run", request.param, pid1=False)


@pytest.fixture(params=_shell_params())
def pid1_run(request: pytest.FixtureRequest, tmp_path: Path) -> Run:
    """PID 1 of its own PID namespace: for signals, kills and process groups."""
    if not CAN_UNSHARE:
        pytest.skip("unshare --pid needs root and util-linux: CI runs as root")
    return Run(tmp_path / "out" / ".tftrain-run", request.param, pid1=True)


# --- How a run ends: the records (a group-leading process) -------------------------------


def test_the_chief_publishes_and_the_others_stop_within_two_seconds(tmp_path: Path) -> None:
    at_once(_the_chief_publishes_and_the_others_stop_within_two_seconds, tmp_path, pid1=False)


def _the_chief_publishes_and_the_others_stop_within_two_seconds(run: Run, tmp_path: Path) -> None:
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
    # Each attempt says how it ended, for whoever reads the run's records later.
    assert (run.attempt("r-chief-0", 1) / "exit").read_text() == "0 exited\n"
    assert (run.attempt("r-ps-0", 1) / "exit").exists()


def test_replicas_failing_at_once_always_publish_the_failure(run: Run) -> None:
    # One bad flag in the stack: every replica exits 2 at the same moment, in every round.
    for round_ in range(3):
        run.generation = f"g{round_}"
        replicas = [
            run.start("--follows-run", "sh", "-c", "sleep 0.3; exit 2", replica=f"r-worker-{i}")
            for i in range(3)
        ]
        results = [finish(replica) for replica in replicas]
        assert [status for status, _ in results] == [2, 2, 2], results
        assert run.failed.read_text().split()[1:3] == ["exit", "2"], results
        assert run.leftovers() == [], round_


@pytest.mark.parametrize("code", [3, 2])
def test_a_replica_failing_by_itself_after_the_failure_keeps_its_own_end(
    run: Run, code: int
) -> None:
    # Another replica's failure is published, and this command fails by itself at once,
    # before the watcher's next look: it was not stopped at the run's end, and the first
    # failure stays the run's (a final code too is no reason to overwrite it). The command
    # freezes the watcher first (SIGSTOP; the supervisor SIGKILLs it at the end), so that
    # "before the next look" holds on a loaded machine too, not by a 0.5 s nap's luck.
    first = "r-ps-0 exit 2 attempt 1 on host-a\n"
    run.outcomes.mkdir(parents=True)
    partial = run.outcomes / ".other-replica"
    command = (
        f"{FREEZE_WATCHER}; printf '{first}' > {partial}; mv {partial} {run.failed}; exit {code}"
    )
    status, out = finish(run.start("--follows-run", "sh", "-c", command, replica="r-worker-1"))
    assert status == code, out
    assert (run.attempt("r-worker-1", 1) / "exit").read_text() == f"{code} exited\n"
    assert run.failed.read_text() == first, out
    assert "run's end" not in out and "published" not in out, out
    # A final code would fail the run: said, with the failure that stands. Exit 3 on a first
    # attempt is the Job's to retry, and that retry exits at once (the run has failed).
    said = "it had already failed (r-ps-0 exit 2 attempt 1 on host-a)" in out
    assert said is (code == 2), out


def test_a_replica_stopped_by_the_failure_ends_run_ended_with_2(run: Run, tmp_path: Path) -> None:
    flag = tmp_path / "started"
    follower = run.start("--follows-run", "sh", "-c", started(flag), replica="r-worker-1")
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--follows-run", "sh", "-c", "exit 2", replica="r-ps-0"))[0] == 2
    status, out = finish(follower)
    assert status == 2 and "failed in another replica" in out, out
    assert (run.attempt("r-worker-1", 1) / "exit").read_text() == "2 run-ended\n"


# POSIX: 126 a command found but not executable, 127 not found; argparse: 2 a usage error.
# Kubernetes' podFailurePolicy fails the Job at once on them; any other code is retried.
@pytest.mark.parametrize(("code", "final"), [(2, True), (126, True), (127, True), (1, False)])
def test_final_exit_codes_fail_the_run_on_the_first_attempt(
    run: Run, code: int, final: bool
) -> None:
    status, out = finish(
        run.start("--follows-run", "sh", "-c", f"exit {code}", replica="r-ps-0", backoff=3)
    )
    assert status == code, out
    assert run.failed.exists() is final, out
    if final:
        assert run.failed.read_text().startswith(f"r-ps-0 exit {code} attempt 1 on "), out


def test_the_final_exit_codes_are_the_documented_ones() -> None:
    # The hand-worked table above; infra/lifecycle reads them from supervise.sh.
    assert FINAL_EXIT_CODES == (2, 126, 127)
    text = SCRIPT.read_text()
    assert text.count("FINAL_EXIT_CODES=") == 1


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


@pytest.mark.parametrize("role", ["--follows-run", "--ends-run"])
def test_a_replica_starting_after_the_success_trains_nothing(
    run: Run, tmp_path: Path, role: str
) -> None:
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    flag = tmp_path / "late-started"
    status, out = finish(run.start(role, "sh", "-c", started(flag), replica="r-worker-1"))
    assert status == 0 and "nothing to train" in out, out
    assert not flag.exists()


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
    follower = run.start("--follows-run", *trapping(flag, "exit 2"), replica="r-ps-0")
    assert wait_until(flag.exists, 10)  # the command has trapped TERM before the run ends
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    status, out = finish(follower)
    assert status == 0, out
    assert not run.failed.exists()


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


def test_on_success_is_the_chiefs_alone(run: Run, tmp_path: Path) -> None:
    hook = tmp_path / "export.sh"
    log = tmp_path / "exports"
    hook.write_text(f"echo {{}} >> {log}\nexit 0\n")
    flag = tmp_path / "ps-started"
    ps = run.start("--follows-run", "sh", "-c", started(flag), replica="r-ps-0", on_success=hook)
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    assert finish(ps)[0] == 0
    # A follower starting after the success exits at once, without it too.
    late = run.start("--follows-run", "true", replica="r-worker-1", on_success=hook)
    assert finish(late)[0] == 0
    assert not log.exists()


def test_usage_errors_and_missing_commands_are_final(run: Run) -> None:
    status, out = finish(run.start("--sideways", "true"))
    assert status == 2 and "unknown option --sideways" in out
    status, out = finish(run.start("--ends-run", "/no/such/trainer", replica="r-chief-0"))
    assert status == 127 and "cannot run /no/such/trainer: command not found" in out
    assert run.failed.read_text().startswith("r-chief-0 exit 127 ")


def test_a_workdir_that_cannot_be_made_fails_the_run(run: Run, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    options = ("--workdir", str(blocker / "work"))
    status, out = finish(run.start("--follows-run", "true", replica="r-ps-0", options=options))
    assert status == 2 and "cannot create" in out, out
    assert run.failed.read_text().startswith("r-ps-0 exit 2 attempt 1 on "), out


def test_an_unwritable_outcomes_dir_is_said_and_the_status_kept(run: Run, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a directory cannot be made under a file, not even by root
    status, out = finish(run.start("--follows-run", "sh", "-c", "exit 2", outcomes=blocker / "out"))
    assert status == 2, out
    assert f"cannot write to {blocker / 'out'}: attempts are not counted" in out
    assert f"but {blocker / 'out'}/failed.r1.g1 could not be written" in out


def test_the_evaluator_finishes_its_last_evaluation_and_the_export_waits_for_it(
    tmp_path: Path,
) -> None:
    at_once(
        _the_evaluator_finishes_its_last_evaluation_and_the_export_waits_for_it,
        tmp_path,
        pid1=False,
    )


def _the_evaluator_finishes_its_last_evaluation_and_the_export_waits_for_it(
    run: Run, tmp_path: Path
) -> None:
    # TensorFlow's sidecar evaluator, no signal handler: it scores checkpoints as they come
    # and ends once it has scored the final one, which the chief writes as it ends.
    checkpoints = tmp_path / "ckpt"
    checkpoints.mkdir()
    evaluator = run.start(
        "--follows-run", sys.executable, str(FIXTURE), "--role", "evaluate",
        "--dir", str(checkpoints), "--eval-seconds", "0.8",
        replica="r-evaluator-0", options=("--finish-grace", "20"),
    )  # fmt: skip
    assert evaluator.stdout is not None and evaluator.stdout.readline().strip() == "ready"
    hook = tmp_path / "export.sh"
    hook.write_text(f"cat {checkpoints}/eval-final || exit 9\n")
    chief = run.start(
        "--ends-run", "sh", "-c", f"touch {checkpoints}/ckpt-final", replica="r-chief-0",
        on_success=hook, options=("--await", "r-evaluator-0", "--await-limit", "20"),
    )  # fmt: skip
    status, out = finish(chief, 30)
    assert status == 0 and "accuracy 0.97" in out, out
    assert "waiting for r-evaluator-0 to finish" in out
    status, out = finish(evaluator, 30)
    assert status == 0 and "scored ckpt-final" in out, out
    assert "may finish by itself (up to 20s" in out
    assert "SIGTERM, SIGKILL" not in out  # it ended by itself


def test_a_lost_peer_after_the_success_does_not_fail_the_run(tmp_path: Path) -> None:
    at_once(_a_lost_peer_after_the_success_does_not_fail_the_run, tmp_path, pid1=False)


def _a_lost_peer_after_the_success_does_not_fail_the_run(run: Run, tmp_path: Path) -> None:
    # The evaluator still scores after the success while a ps's node is lost (it never beats
    # again, on its last attempt): the run has succeeded, and stays so.
    flag = tmp_path / "evaluating"
    options = ("--finish-grace", "1", "--peers", "r-ps-0 r-evaluator-0", "--lost-after", "1")
    evaluator = run.start(
        "--follows-run", "sh", "-c", started(flag), replica="r-evaluator-0", backoff=0,
        options=options,
    )  # fmt: skip
    assert wait_until(flag.exists, 10)
    run.succeeded.write_text("r1 r-chief-0 attempt 1 on test\n")
    ghost = run.attempt("r-ps-0", 1)
    ghost.mkdir(parents=True)
    (ghost / "beat").write_text("1\n")  # 1970: long silent
    status, out = finish(evaluator)
    assert status == 0, out
    assert not run.failed.exists(), out


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
    assert wait_until(lambda: not _alive(child), timeout=5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_pod_grace_covers_every_grace_inside() -> None:
    from trainer.preemption import PS_GRACE_SECONDS

    assert TERMINATION_GRACE_SECONDS > EVALUATOR_STOP_GRACE + 2
    assert TERMINATION_GRACE_SECONDS > PS_GRACE_SECONDS + 2


# --- Signals, kills and process groups: PID 1 of a PID namespace, as in a container -------


def test_a_command_ignoring_sigterm_is_killed_after_the_grace_and_it_is_said(
    tmp_path: Path,
) -> None:
    at_once(
        _a_command_ignoring_sigterm_is_killed_after_the_grace_and_it_is_said, tmp_path, pid1=True
    )


def _a_command_ignoring_sigterm_is_killed_after_the_grace_and_it_is_said(
    run: Run, tmp_path: Path
) -> None:
    flag = tmp_path / "trapped"
    follower = run.start("--follows-run", *trapping(flag, ""), replica="r-ps-0", grace=2)
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    begun = time.monotonic()
    status, out = finish(follower)
    assert status == 0, out
    assert "did not stop within 2s of SIGTERM: SIGKILL" in out
    # Seen within a watcher's look (0.5 s), then the grace: 2 s, not more.
    assert 1.9 < time.monotonic() - begun < 3.6
    assert not any(word in out for word in NOISE), out


def test_an_evaluator_past_its_finish_grace_is_stopped_within_its_stop_grace(
    tmp_path: Path,
) -> None:
    at_once(
        _an_evaluator_past_its_finish_grace_is_stopped_within_its_stop_grace, tmp_path, pid1=True
    )


def _an_evaluator_past_its_finish_grace_is_stopped_within_its_stop_grace(
    run: Run, tmp_path: Path
) -> None:
    # Still scoring when its finish grace (1 s) is over: SIGTERM; it saves for 1 s and exits,
    # inside its stop grace (4 s: room for a loaded machine, which CI once took past 2 s with
    # three shells at once), so no SIGKILL.
    done, flag = tmp_path / "scored", tmp_path / "evaluating"
    command = trapping(flag, f"sleep 1; touch {done}; exit 0")
    evaluator = run.start(
        "--follows-run", *command, replica="r-evaluator-0", grace=4,
        options=("--finish-grace", "1"),
    )  # fmt: skip
    assert wait_until(flag.exists, 10)
    assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
    begun = time.monotonic()
    status, out = finish(evaluator)
    assert status == 0 and done.exists(), out
    assert "may finish by itself (up to 1s" in out and "stopping sh (SIGTERM" in out, out
    assert "did not stop within" not in out
    # The finish grace, a look, the 1 s save: it ended as soon as its command did (a SIGKILL
    # at the stop grace would come 5 s or more after the run's end).
    assert 1.9 < time.monotonic() - begun < 4.5, out


def test_sigterm_reaches_a_trainer_behind_a_shell_wrapper(pid1_run: Run, tmp_path: Path) -> None:
    run = pid1_run
    wrapper = f"{sys.executable} {FIXTURE} --role train --dir {tmp_path} --save-seconds 0"
    process = run.start("--ends-run", "sh", "-c", wrapper, replica="r-chief-0")
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    run.signal(process, signal.SIGTERM)
    _, out = finish(process)
    assert "saved" in out and list(tmp_path.glob("ckpt-*")), out
    assert not run.failed.exists() and not run.succeeded.exists()


def test_a_wrapped_trainer_saving_on_sigterm_gets_its_time(tmp_path: Path) -> None:
    at_once(_a_wrapped_trainer_saving_on_sigterm_gets_its_time, tmp_path, pid1=True)


def _a_wrapped_trainer_saving_on_sigterm_gets_its_time(run: Run, tmp_path: Path) -> None:
    # `sh -c "python train.py; echo done"`: the shell dies at SIGTERM at once, the trainer is
    # still saving; PID 1 leaving now would take it along, unsaved.
    wrapper = (
        f"{sys.executable} {FIXTURE} --role train --dir {tmp_path} --save-seconds 1; "
        "echo wrapper-done"
    )
    process = run.start("--ends-run", "sh", "-c", wrapper, replica="r-chief-0")
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    run.signal(process, signal.SIGTERM)
    status, out = finish(process)
    assert "saving" in out and "saved" in out, out
    assert list(tmp_path.glob("ckpt-*")), out
    assert status != 0 and not run.succeeded.exists(), out


def test_a_preempted_attempt_does_not_count_against_the_retries(
    pid1_run: Run, tmp_path: Path
) -> None:
    run = pid1_run
    flag = tmp_path / "running"
    # backoffLimit 1: two attempts. Preempted (SIGTERM), attempt 1 is given back, as
    # Kubernetes ignores a DisruptionTarget pod: it keeps its number (its log is its own),
    # and attempts 2 and 3 are still the two the Job allows; only 3's failure is final.
    process = run.start(
        "--follows-run", *trapping(flag, "exit 143"), replica="r-worker-1", backoff=1
    )
    assert wait_until(flag.exists, 10)
    run.signal(process, signal.SIGTERM)
    status, out = finish(process)
    assert status == 143 and not run.failed.exists(), out
    first = run.attempt("r-worker-1", 1)
    assert (first / "exit").read_text() == "143 given-back\n"
    assert (first / "start").read_text().strip().isdigit()
    failing = ("--follows-run", "sh", "-c", "exit 1")
    status, out = finish(run.start(*failing, replica="r-worker-1", backoff=1))
    assert status == 1 and not run.failed.exists(), out
    status, out = finish(run.start(*failing, replica="r-worker-1", backoff=1))
    assert status == 1 and "attempt 3, its last of 2" in out, out
    assert run.failed.exists()


@pytest.mark.parametrize("role", ["--ends-run", "--follows-run"])
def test_an_attempt_told_to_stop_never_ends_the_run_even_exiting_0(
    pid1_run: Run, tmp_path: Path, role: str
) -> None:
    # A user's graceful-shutdown handler saves and exits 0. A preempted chief must not end the
    # run half-trained, and a follower must not complete its Job: both exit 143 (128 +
    # SIGTERM), which Kubernetes retries; the attempt is given back.
    run = pid1_run
    flag = tmp_path / "trapped"
    process = run.start(role, *trapping(flag, "exit 0"), replica="r-chief-0", backoff=0)
    assert wait_until(flag.exists, 10)
    run.signal(process, signal.SIGTERM)
    status, out = finish(process)
    assert status == 143, out
    assert not run.succeeded.exists() and not run.failed.exists(), out
    # The next attempt trains: the run is not over.
    status, out = finish(run.start(role, "true", replica="r-chief-0", backoff=0))
    assert status == 0 and "nothing to train" not in out, out


def test_the_commands_own_status_after_sigterm_survives(pid1_run: Run, tmp_path: Path) -> None:
    run = pid1_run
    for round_ in range(3):  # the command exits at once: the race dash used to lose
        flag = tmp_path / f"trapped-{round_}"
        process = run.start("--follows-run", *trapping(flag, "exit 7"), replica="r-ps-0")
        assert wait_until(flag.exists, 10)
        run.signal(process, signal.SIGTERM)
        status, out = finish(process)
        assert status == 7, out


def test_sigint_is_passed_on_as_sigterm(pid1_run: Run, tmp_path: Path) -> None:
    run = pid1_run
    flag, heard = tmp_path / "trapped", tmp_path / "heard"
    process = run.start("--follows-run", *trapping(flag, f"touch {heard}; exit 5"))
    assert wait_until(flag.exists, 10)
    run.signal(process, signal.SIGINT)
    status, out = finish(process)
    assert status == 5 and heard.exists(), out


def _catches_sigterm(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def _command_started(pid: int, marker: str) -> bool:
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        try:
            if marker in Path(f"/proc/{child}/cmdline").read_text(errors="replace"):
                return True
        except FileNotFoundError:
            continue
    return False


def test_a_signal_during_the_start_is_passed_on(run: Run) -> None:
    # Caught while the replica starts (its trap set, its claim and checks under way, no
    # command yet): the supervisor is frozen there, signalled, and let go; the command must
    # hear it. As a plain process: the supervisor is then the process polled, with no
    # namespace to set up first, and a trap works alike as PID 1.
    marker = "start-window-marker"
    command = ("sh", "-c", f"trap 'exit 0' TERM; while :; do sleep 0.05; done # {marker}")
    for _ in range(10):
        process = run.start("--follows-run", *command)
        pid = process.pid
        deadline = time.monotonic() + 10
        while not _catches_sigterm(pid):  # as soon as can be, yet leaving it the CPU
            assert time.monotonic() < deadline, "the supervisor never set its trap"
            time.sleep(0.0005)
        os.kill(pid, signal.SIGSTOP)
        in_start = not _command_started(pid, marker)
        os.kill(pid, signal.SIGTERM)
        os.kill(pid, signal.SIGCONT)
        status, out = finish(process)
        if in_start:
            break
    else:
        pytest.fail("never caught the supervisor before its command's start")
    # It heard SIGTERM: its trap ran, or it died of it before it could set one.
    assert status == 143, out


def test_a_group_kill_on_the_last_attempt_ends_every_replica_within_the_bound(
    tmp_path: Path,
) -> None:
    at_once(
        _a_group_kill_on_the_last_attempt_ends_every_replica_within_the_bound, tmp_path, pid1=True
    )


def _a_group_kill_on_the_last_attempt_ends_every_replica_within_the_bound(
    run: Run, tmp_path: Path
) -> None:
    # cgroup v2 group OOM kill (Kubernetes >= 1.28), or a lost node: the chief's container
    # dies whole, supervisor included, on its last attempt; nothing is said. No launcher:
    # the other supervisors must notice. Bound (infra.lifecycle.lost_bound): --lost-after (1 s
    # here), one heartbeat (1 s), the stop grace (1 s), and a second and a half of polling.
    peers = ("--peers", "r-chief-0 r-ps-0 r-worker-0", "--lost-after", "1")
    flags = [tmp_path / f"started-{i}" for i in range(3)]
    chief = run.start(
        "--ends-run", "sh", "-c", started(flags[0]), replica="r-chief-0", backoff=0,
        options=peers,
    )  # fmt: skip
    followers = [
        run.start(
            "--follows-run",
            "sh",
            "-c",
            started(flag),
            replica=name,
            backoff=0,
            grace=1,
            options=peers,
        )
        for name, flag in (("r-ps-0", flags[1]), ("r-worker-0", flags[2]))
    ]
    assert wait_until(lambda: all(flag.exists() for flag in flags), 10)
    os.kill(run.supervisor_pid(chief), signal.SIGKILL)  # PID 1 dies: its namespace with it
    killed = time.monotonic()
    finish(chief)
    for follower in followers:
        status, out = finish(follower, 15)
        assert status == 2, out
    elapsed = time.monotonic() - killed
    assert elapsed < 1 + 1 + 1 + 1.5, elapsed
    assert run.failed.read_text().startswith("r-chief-0 lost attempt 1 on "), run.failed
    assert "no heartbeat for" in run.failed.read_text()


@pytest.mark.slow
def test_a_silent_death_before_the_last_attempt_is_left_to_the_retry(
    pid1_run: Run, tmp_path: Path
) -> None:
    run = pid1_run
    peers = ("--peers", "r-chief-0 r-ps-0", "--lost-after", "1")
    flag, ps_flag = tmp_path / "chief", tmp_path / "ps"
    chief = run.start(
        "--ends-run", "sh", "-c", started(flag), replica="r-chief-0", backoff=1, options=peers
    )
    ps = run.start(
        "--follows-run", "sh", "-c", started(ps_flag), replica="r-ps-0", backoff=1, options=peers
    )
    assert wait_until(lambda: flag.exists() and ps_flag.exists(), 10)
    os.kill(run.supervisor_pid(chief), signal.SIGKILL)
    finish(chief)
    time.sleep(2)  # twice --lost-after: its Job would start attempt 2
    assert ps.poll() is None and not run.failed.exists()
    assert finish(run.start("--ends-run", "true", replica="r-chief-0", backoff=1))[0] == 0
    assert finish(ps)[0] == 0


# --- Outcome records on NFS: the other client sees them late ------------------------------
# The NAS PV mounts with `lookupcache=positive` (infra/manifests/storage.py), so a new record
# is found by its first lookup, and records are read by opening them (close-to-open): the
# delay left is an RPC's. These cases give the other client a modelled delay instead (1 s
# here for tens of seconds of default caching) and check the bounds stretch by that delay
# and no more, and that a late heartbeat is not taken for a death.
NFS_DELAY = 1.0


def test_a_success_seen_late_stops_the_followers_by_the_delay_later(tmp_path: Path) -> None:
    from tests.nfs_view import DelayedView

    run = Run(tmp_path / "server" / ".tftrain-run", SHELLS["dash"], pid1=False)
    view = tmp_path / "client" / ".tftrain-run"
    flag = tmp_path / "ps-started"
    with DelayedView(run.outcomes.parent, view.parent, NFS_DELAY):
        run.outcomes.mkdir(parents=True)
        ps = run.start("--follows-run", "sh", "-c", started(flag), replica="r-ps-0", outcomes=view)
        assert wait_until(flag.exists, 10)
        assert finish(run.start("--ends-run", "true", replica="r-chief-0"))[0] == 0
        published = time.monotonic()
        status, out = finish(ps)
        elapsed = time.monotonic() - published
    assert status == 0 and "run r1 succeeded: stopping" in out, out
    # The delay, a watcher's look (0.5 s), the stop (a second at most for `sh`).
    assert NFS_DELAY - 0.1 < elapsed < NFS_DELAY + 0.5 + 1.5, elapsed


@pytest.mark.slow
def test_late_heartbeats_are_no_death_and_a_real_one_is_seen_a_delay_later(
    tmp_path: Path,
) -> None:
    from tests.nfs_view import DelayedView

    run = Run(tmp_path / "server" / ".tftrain-run", SHELLS["dash"], pid1=False)
    view = tmp_path / "client" / ".tftrain-run"
    peers = ("--peers", "r-chief-0 r-ps-0", "--lost-after", "3")
    flags = (tmp_path / "chief", tmp_path / "ps")
    with DelayedView(run.outcomes.parent, view.parent, NFS_DELAY):
        run.outcomes.mkdir(parents=True)
        chief = run.start(
            "--ends-run", "sh", "-c", started(flags[0]), replica="r-chief-0", backoff=0,
            options=peers,
        )  # fmt: skip
        ps = run.start(
            "--follows-run", "sh", "-c", started(flags[1]), replica="r-ps-0", backoff=0,
            grace=1, options=peers, outcomes=view,
        )  # fmt: skip
        assert wait_until(lambda: all(flag.exists() for flag in flags), 10)
        time.sleep(5)  # beats arrive a second late, for longer than --lost-after
        assert ps.poll() is None, "a late heartbeat was taken for a death"
        os.killpg(chief.pid, signal.SIGKILL)  # the chief's container, whole
        killed = time.monotonic()
        finish(chief)
        status, out = finish(ps)
        elapsed = time.monotonic() - killed
    assert status == 2 and "r-chief-0 lost attempt 1" in out, out
    # --lost-after 3, its last beat up to 1 s old, the delay, one look per beat, the stop.
    assert elapsed < 3 + 1 + NFS_DELAY + 1 + 1.5, elapsed
