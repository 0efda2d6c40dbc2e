"""The local launcher with real processes: a fake TFJob-style trainer in every replica
(`tests/cluster_helpers.py`). Restarts are tested in `test_fault_tolerance.py`; the stacks
here have `job.backoffLimit: 0`, so a failure ends the job at once.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.config import load_stack
from infra.local.cli import main
from infra.local.plan import REPO
from infra.records.launch_record import Launch, read_launch
from infra.records.run_state import read_run
from infra.topology import build_topology
from tests.cluster_helpers import (
    REPLICAS,
    STACK,
    Launcher,
    alive,
    assert_all_gone,
    fake_stacks_dir,
    launcher_args,
    reaping,
    records,
    summary_line,
    wait_until,
    write_stack,
)


@pytest.fixture
def stacks_dir(tmp_path: Path) -> Path:
    return fake_stacks_dir(tmp_path)


def test_every_replica_gets_its_localhost_tf_config_and_the_stack_env(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, "--set", "job.args=[--flag-for-the-trainer]"))
    out = capsys.readouterr().out
    assert status == 0, out

    got = records(stacks_dir)
    assert sorted(got) == ["chief-0", "ps-0", "worker-0", "worker-1"]
    config = load_stack(STACK, stacks_dir)
    expected_shape = build_topology(config).cluster_spec
    cluster = got["chief-0"]["tf_config"]["cluster"]
    assert {kind: len(hosts) for kind, hosts in cluster.items()} == {
        kind: len(hosts) for kind, hosts in expected_shape.items()
    }
    addresses = [address for hosts in cluster.values() for address in hosts]
    assert all(re.fullmatch(r"localhost:[0-9]+", address) for address in addresses)
    assert len(set(addresses)) == len(addresses)
    for role, record in got.items():
        kind, index = role.split("-")
        assert record["tf_config"] == {
            "cluster": cluster,  # every replica sees the same cluster
            "task": {"type": kind, "index": int(index)},
            "environment": "cloud",
        }
        env = record["env"]
        # The stack's maxSteps 5 and learningRate 0.01, the rest the documented defaults
        # (docs/hyperparameters.md), under the trainer's names (trainer/settings.py).
        assert {
            "TFTRAIN_EPOCHS": "4",
            "TFTRAIN_BATCH_SIZE": "128",
            "TFTRAIN_LEARNING_RATE": "0.01",
            "TFTRAIN_STRATEGY": "auto",
            "TFTRAIN_CHECKPOINT_STEPS": "500",
            "TFTRAIN_KEEP_CHECKPOINTS": "3",
            "TFTRAIN_LOG_STEPS": "100",
            "TFTRAIN_STEPS_PER_EXECUTION": "50",
            "TFTRAIN_MAX_STEPS": "5",
        }.items() <= env.items()
        assert env["TFTRAIN_OUTPUT_DIR"] == str(stacks_dir / "out")
        assert {"localhost", "127.0.0.1"} <= set(env["no_proxy"].split(","))
        assert record["argv"] == ["--flag-for-the-trainer"]  # command + args, unchanged

    # Each replica's stdout and stderr, prefixed with its name, prefixes aligned.
    for name in REPLICAS:
        role = name.removeprefix("mnist-").replace("-", ":")
        assert re.search(rf"^\[{name}\] +stderr of {role}$", out, re.MULTILINE), out
        assert re.search(rf"^\[{name}\] +TF_CONFIG \{{", out, re.MULTILINE)
        assert "exit 0" in summary_line(out, name)
    lines = out.splitlines()
    columns = {line.index(text) for text in ("TF_CONFIG {", "stack fake:") for line in lines
               if text in line}  # fmt: skip
    assert len(columns) == 1, "the text after the prefixes starts in one column"
    assert f"output dir {stacks_dir / 'out'}" in out


def test_exit_status_is_the_chiefs(stacks_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, "--set", "job.args=[--fail, 'chief:0:7']"))
    out = capsys.readouterr().out
    assert status == 7
    assert "FAILED: mnist-chief-0 exit 7 (job.backoffLimit 0: no restarts)" in out
    assert "restart" not in summary_line(out, "mnist-chief-0")
    assert_all_gone([record["pid"] for record in records(stacks_dir).values()])


def test_a_failing_worker_ends_the_run_everywhere(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # backoffLimit 0: worker 1's first attempt is its last, so exit 3 fails the run, and the
    # other replicas' supervisors (not the launcher) stop them with exit 2, as in the cluster.
    args = "job.args=[--hang, --fail, 'worker:1:3']"
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, "--set", args))
    out = capsys.readouterr().out
    assert status == 3, out
    assert "FAILED: mnist-worker-1 exit 3" in out
    assert "run test" in out and "failed in another replica" in out
    assert "exit 2" in summary_line(out, "mnist-chief-0")
    assert "stopped by the launcher" not in summary_line(out, "mnist-chief-0")
    assert_all_gone([record["pid"] for record in records(stacks_dir).values()])


def test_without_a_chief_worker_0_decides(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_stack(stacks_dir, {"chief": {"number": 0}, "ps": {"number": 0}})
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir))
    out = capsys.readouterr().out
    assert status == 0, out
    assert "succeeded: mnist-worker-0 exit 0" in out
    assert sorted(records(stacks_dir)) == ["worker-0", "worker-1"]


def test_the_others_end_with_the_chief_under_their_supervisors(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ps and workers that serve forever are stopped by their supervisor, not the launcher."""
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir))
    out = capsys.readouterr().out
    assert status == 0, out
    for name in REPLICAS[1:]:
        assert re.search(rf"^\[{name}\] +tftrain-supervise: run test\.\w+ succeeded: stopping ",
                         out, re.MULTILINE), out  # fmt: skip
        assert summary_line(out, name).split()[2:4] == ["exit", "0"]
    assert "stopped by the launcher" not in out and "terminating" not in out
    assert_all_gone([record["pid"] for record in records(stacks_dir).values()])


def test_replicas_that_outstay_the_grace_are_terminated(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ignoring SIGTERM, the others take their supervisor's stop grace (2 s) to end: longer
    # than the launcher's safety net allows here.
    options = ("--set", "job.args=[--ignore-sigterm]", "--grace", "0")
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, *options))
    out = capsys.readouterr().out
    assert status == 0, out
    assert "0s after the job succeeded, terminating: mnist-worker-0, mnist-worker-1, " in out
    assert "stopped by the launcher" in summary_line(out, "mnist-ps-0")
    assert_all_gone([record["pid"] for record in records(stacks_dir).values()])


def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = "job.args=[--hang, --ignore-sigterm]"
    options = ("--set", args, "--timeout", "2", "--stop-grace", "0.5")
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, *options))
    out = capsys.readouterr().out
    assert status == 124
    assert "timed out after 2s" in out
    line = summary_line(out, "mnist-worker-0")
    assert "killed by SIGKILL" in line
    # Its wall time: from its start, just after the timeout's clock started, to the timeout
    # plus the 0.5 s stop grace. A doubled timeout or grace would show 4 s or more.
    wall = re.search(r"SIGKILL\)? +([0-9.]+)s", line)
    assert wall and 1.0 < float(wall.group(1)) < 4.0, line
    assert_all_gone([record["pid"] for record in records(stacks_dir).values()])


def test_the_stacks_deadline_is_the_default_timeout(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("--set", "job.args=[--hang]", "--set", "job.activeDeadlineSeconds=2")
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, *options))
    out = capsys.readouterr().out
    assert status == 124, out
    assert "deadline: job.activeDeadlineSeconds 2" in out
    assert "timed out after 2s" in out
    assert_all_gone([record["pid"] for record in records(stacks_dir).values()])


def test_a_config_error_is_reported_with_status_2(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(launcher_args(stacks_dir, "--set", "worker.numbr=3"))
    assert status == 2
    assert "tftrain:worker.numbr: unknown key" in capsys.readouterr().err


def test_a_command_that_cannot_start_fails_the_job(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ("--set", "job.command=[/nonexistent/trainer]", "--set", "job.backoffLimit=3")
    status = main(launcher_args(stacks_dir, *options))
    assert status == 127
    out = capsys.readouterr().out
    assert "tftrain-supervise: cannot run /nonexistent/trainer: command not found" in out
    # As podFailurePolicy does: exit 127 is final, whatever the backoff limit.
    assert re.search(r"FAILED: mnist-\S+ exit 127 \(exit code 127 is final: no restarts", out)
    assert "restarts:" not in out.split("summary:")[1]


@pytest.fixture
def hanging_launcher(stacks_dir: Path) -> Iterator[tuple[Launcher, list[int]]]:
    """A launcher whose four replicas run until killed, once all four have started."""
    with reaping(stacks_dir):
        launcher = Launcher(stacks_dir, "--set", "job.args=[--hang]", "--timeout", "120")
        try:
            assert wait_until(lambda: len(records(stacks_dir)) == 4)
            pids = [record["pid"] for record in records(stacks_dir).values()]
            assert all(alive(pid) for pid in pids)
            yield launcher, pids
        finally:
            launcher.close()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_launcher_stops_every_replica(
    hanging_launcher: tuple[Launcher, list[int]], signum: signal.Signals
) -> None:
    launcher, pids = hanging_launcher
    launcher.popen.send_signal(signum)
    assert launcher.finish() == 128 + signum
    launcher.wait_for_line(rf"{signum.name} received: stopping mnist-chief-0")
    launcher.wait_for_line(r"stopping the other replicas")
    assert_all_gone(pids)


def test_sigkill_of_the_launcher_kills_the_replicas_too_and_frees_its_output_dir(
    hanging_launcher: tuple[Launcher, list[int]], stacks_dir: Path
) -> None:
    launcher, pids = hanging_launcher
    launcher.popen.kill()  # no handler, no finally: only PR_SET_PDEATHSIG can act
    launcher.finish()
    assert_all_gone(pids)
    assert main(launcher_args(stacks_dir)) == 0  # its hold on the dir died with it


def test_a_second_launch_into_a_running_launchs_output_dir_is_refused(
    hanging_launcher: tuple[Launcher, list[int]],
    stacks_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Both would share the checkpoints and the run records: the first one's end would stop
    # the second one's servers under a chief that then waits for them until its timeout.
    launcher, pids = hanging_launcher
    output = stacks_dir / "out"
    started = records(stacks_dir)
    for options in ((), ("--fresh",), ("--set", "hyperparams.epochs=2")):
        assert main(launcher_args(stacks_dir, *options)) == 2
        err = capsys.readouterr().err
        assert (
            f"tftrain run: output dir {output} is in use by another launch "
            f"(launcher pid {launcher.popen.pid}): wait for it to end, stop it, or choose "
            "another --output-dir"
        ) in err, err
    assert not list(stacks_dir.glob("out.before-*"))  # --fresh moved nothing aside
    assert records(stacks_dir) == started  # no replica started again
    assert all(alive(pid) for pid in pids)
    launcher.popen.send_signal(signal.SIGINT)
    assert launcher.finish() == 130
    assert main(launcher_args(stacks_dir)) == 0  # free once that launch has ended


def test_tensorboard_serves_while_training_and_stops_at_exit(stacks_dir: Path) -> None:
    with reaping(stacks_dir):
        launcher = Launcher(
            stacks_dir, "--set", "job.args=[--hang]", "--tensorboard", "--timeout", "120"
        )
        try:
            url = launcher.wait_for_line(r"TensorBoard: (http://\S+)").group(1)
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

            def serving() -> bool:
                with contextlib.suppress(OSError), opener.open(url, timeout=2) as response:
                    return response.status == 200
                return False

            assert wait_until(serving, timeout=90)
            launcher.popen.send_signal(signal.SIGINT)
            assert launcher.finish() == 130
            assert not serving()
        finally:
            launcher.close()


def test_a_finished_run_says_so_and_fresh_trains_again_keeping_the_old_output(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(launcher_args(stacks_dir)) == 0
    first = capsys.readouterr().out
    assert "nothing was trained" not in first
    output = stacks_dir / "out"
    assert (output / "chief-0.json").exists()

    # The same config again: the supervisors find the run succeeded and start nothing.
    assert main(launcher_args(stacks_dir)) == 0
    again = capsys.readouterr().out
    assert "run test had already succeeded before this launch: nothing was trained" in again
    assert "--fresh" in again

    assert main(launcher_args(stacks_dir, "--fresh")) == 0
    fresh = capsys.readouterr().out
    assert "nothing was trained" not in fresh
    [aside] = stacks_dir.glob("out.before-*")
    assert (aside / "chief-0.json").exists()  # the earlier run, moved, not deleted
    assert (output / "chief-0.json").exists()  # and trained again


def test_another_runs_success_record_is_not_this_runs_success(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An earlier run of other settings (another run key) succeeded in the same output dir.
    # The followers end once this run's chief publishes, 4 s in: had the launcher taken the
    # stale record for this run's success, they would have ended 4 s after it.
    outcomes = stacks_dir / "out" / ".tftrain-run"
    outcomes.mkdir(parents=True)
    (outcomes / "succeeded.run-0badc0de").write_text("mnist-chief-0\n")
    assert main(launcher_args(stacks_dir, "--set", "job.args=[--chief-seconds, '4']")) == 0
    out = capsys.readouterr().out
    for name in ("mnist-worker-0", "mnist-ps-0"):
        note = re.search(r"\(ended ([\d.]+)s (after|before) the run's success was published\)",
                         summary_line(out, name))  # fmt: skip
        assert note is not None and note[2] == "after" and float(note[1]) < 3.0, out


def test_the_others_end_times_count_from_the_published_success_not_the_chiefs_exit(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # With an evaluator and an export, the chief's supervisor publishes the success, then its
    # export waits for the evaluator (here for its 4 s finish window): the chief's process
    # ends seconds after the success, the workers and the ps within a second of it.
    options = ("--set", "evaluator.number=1", "--set", "job.evaluatorFinishSeconds=4")
    export = stacks_dir / "exports"
    assert main(launcher_args(stacks_dir, *options, "--export", str(export))) == 0
    out = capsys.readouterr().out
    chief = re.search(r"mnist-chief-0 +exit 0 +([\d.]+)s", out)
    assert chief is not None, out
    for name in ("mnist-worker-0", "mnist-worker-1", "mnist-ps-0"):
        note = re.search(r"\(ended ([\d.]+)s (after|before) the run's success was published\)",
                         summary_line(out, name))  # fmt: skip
        assert note is not None and note[2] == "after" and float(note[1]) < 3.0, out


def test_sigkill_of_the_launcher_leaves_no_wrapped_trainer_behind(tmp_path: Path) -> None:
    # `sh -c "python train.py; ..."`, as Kubeflow's examples wrap trainers: the launcher's
    # death signal reaches each supervisor only; its watcher takes the replica's whole
    # process group along, the trainer under the wrapper included.
    stacks_dir = fake_stacks_dir(tmp_path)
    wrapped = f"python {tmp_path / 'fake.py'} --hang; echo wrapper-done"
    write_stack(stacks_dir, {"job": {"command": ["sh", "-c", wrapped], "runId": "test",
                                     "backoffLimit": 0}})  # fmt: skip
    with reaping(stacks_dir):
        launcher = Launcher(stacks_dir, "--timeout", "120")
        try:
            assert wait_until(lambda: len(records(stacks_dir)) == 4)
            pids = [record["pid"] for record in records(stacks_dir).values()]
            launcher.popen.kill()
            launcher.finish()
            assert_all_gone(pids)
        finally:
            launcher.close()


@pytest.mark.parametrize("module", ["trainer.task", "trainer"])
def test_a_users_own_trainer_package_is_not_shadowed_by_the_checkout(
    tmp_path: Path, module: str
) -> None:
    # Google Cloud's layout: trainer/task.py, run as `python -m trainer.task` from the
    # project's directory (a pod's image WORKDIR), or as `python -m trainer`: the very
    # command of the bundled trainer, which the checkout has. In the user's image, theirs runs.
    project = tmp_path / "project"
    (project / "trainer").mkdir(parents=True)
    (project / "trainer" / "__init__.py").write_text("")
    (project / "trainer" / "__main__.py").write_text("from trainer import task  # noqa\n")
    # The chief ends the run once every replica has said so: a replica slow to start under
    # load is not stopped before its line.
    marks = tmp_path / "started"
    marks.mkdir()
    (project / "trainer" / "task.py").write_text(
        "import json, os, time\n"
        "task = json.loads(os.environ['TF_CONFIG'])['task']\n"
        "print('users-own-trainer', task['type'], flush=True)\n"
        f"open(os.path.join({str(marks)!r}, task['type'] + str(task['index'])), 'w').close()\n"
        "if task['type'] != 'chief':\n"
        "    while True: time.sleep(0.1)\n"
        f"while len(os.listdir({str(marks)!r})) < 4: time.sleep(0.05)\n"
    )
    stacks_dir = tmp_path / "stacks"
    stacks_dir.mkdir()
    write_stack(stacks_dir, {"job": {"command": ["python", "-m", module],
                                     "runId": "own", "backoffLimit": 0}})  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "infra.local", *launcher_args(stacks_dir, "--timeout", "60")],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("users-own-trainer") == 4, done.stdout


@pytest.mark.slow
def test_a_chief_killed_whole_on_its_last_attempt_ends_the_run_locally_too(
    stacks_dir: Path,
) -> None:
    # The group OOM kill as the launcher sees it: the chief's supervisor and command die
    # together (kill -9 of its process group), backoffLimit 0. The other supervisors notice
    # by its heartbeat and end their replicas within the stated bound, before the launcher's
    # safety net; the failure is recorded as a lost replica.
    with reaping(stacks_dir):
        launcher = Launcher(stacks_dir, "--set", "job.args=[--hang]", "--timeout", "120")
        try:
            assert wait_until(lambda: len(records(stacks_dir)) == 4)
            chief = records(stacks_dir)["chief-0"]["pid"]
            os.killpg(os.getpgid(chief), signal.SIGKILL)
            assert launcher.finish() != 0
        finally:
            launcher.close()
    out = launcher.text()
    assert "FAILED: mnist-chief-0 killed by SIGKILL" in out, out
    for name in ("mnist-worker-0", "mnist-worker-1", "mnist-ps-0"):
        line = summary_line(out, name)
        assert "exit 2" in line and "stopped by the launcher" not in line, line
    [record] = (stacks_dir / "out" / ".tftrain-run").glob("failed.*")
    assert record.read_text().startswith("mnist-chief-0 lost attempt 1 on "), record.read_text()


def test_an_output_dir_others_may_write_or_own_is_refused(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whoever can write there can plant a checkpoint the run resumes from, or a
    `succeeded` record that makes the launch train nothing."""
    out = stacks_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    assert main(launcher_args(stacks_dir)) == 2
    err = capsys.readouterr().err
    assert f"output dir {out} is writable by every user (mode 0777): chmod o-w" in err
    assert not records(stacks_dir)  # nothing started
    out.chmod(0o755)
    stacks_dir.chmod(0o777)  # the job dir: TensorBoard reads every run in it
    try:
        assert main(launcher_args(stacks_dir)) == 2
        assert f"output dir {stacks_dir} is writable by every user" in capsys.readouterr().err
    finally:
        stacks_dir.chmod(0o755)
    if os.geteuid() == 0:  # only root can give a directory away
        os.chown(out, 65534, 65534)
        assert main(launcher_args(stacks_dir)) == 2
        assert f"output dir {out} is owned by uid 65534, not by you" in capsys.readouterr().err


def test_the_launchers_own_lines_tell_the_launch_from_plan_to_exit_status(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Worker 1 fails its first start and is restarted once (job.backoffLimit 1): what the
    # launcher says, first to last, is held line by line where it is not a pid, port or time.
    options = ("--set", "job.backoffLimit=1", "--set", "job.args=[--fail-starts, 'worker:1:1']")
    started = time.monotonic()
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, *options))
    elapsed = time.monotonic() - started
    out = capsys.readouterr().out
    assert status == 0, out
    said = [line.split("] ", 1)[1].strip() for line in out.splitlines()
            if line.startswith("[launcher]")]  # fmt: skip
    output = stacks_dir / "out"
    fake = stacks_dir / "fake.py"
    assert said[:4] == [
        f"stack {STACK}: job mnist, run test",
        "replicas: 1 chief, 2 worker, 1 ps",
        "hyperparameters: learning rate 0.01, batch size 128, epochs 4, max steps 5, "
        "strategy parameter_server",
        f"command chief/worker/ps: python {fake} --fail-starts worker:1:1 (each replica under "
        "infra/lifecycle/supervise.sh)",
    ]
    cluster = said[4].removeprefix("cluster: ").split(", ")
    assert tuple(entry.split("=")[0] for entry in cluster) == REPLICAS
    assert all(re.fullmatch(r"localhost:\d+", entry.split("=")[1]) for entry in cluster), said
    assert said[6] == f"output dir: {output}"
    assert "mnist-worker-1 exited 3; restart 1 of 1 in 1.0s" in said, said
    summary = said.index("summary:")
    rows = {row.split()[0]: row for row in said[summary + 1 : summary + 5]}
    assert sorted(rows) == sorted(REPLICAS), said
    # The followers were stopped by the run's success, which the launcher saw published.
    for name in ("mnist-worker-0", "mnist-ps-0"):
        assert "after the run's success was published)" in rows[name], rows
    assert "1 restart (after exit 3)" in rows["mnist-worker-1"], rows
    total = re.fullmatch(
        rf"total ([\d.]+)s; output dir {re.escape(str(output))}", said[summary + 5]
    )
    # Printed to a tenth of a second: rounded, it may exceed the time measured here by 0.05.
    assert total is not None and 0 < float(total[1]) <= elapsed + 0.05, (said, elapsed)
    assert said[-2:] == [f"report: {output / 'report' / 'report.md'}", "exit status 0"]
    report = (output / "report" / "report.md").read_text()
    assert report.startswith(f"# Run test of stack {STACK}: succeeded\n"), report[:200]
    # Its own record says it ended, under the generation its replicas ran in.
    state = read_run(output, with_scalars=False)
    assert state is not None
    assert read_launch(output / ".tftrain-run", state.generation) is Launch.ENDED


def _supervisor_of(pid: int) -> int:
    """A process's parent (proc(5) stat field 4): a replica's trainer's is its supervisor."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rpartition(")")[2].split()[1])


def test_a_replica_told_to_stop_from_outside_is_given_back_not_failed(
    stacks_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # backoffLimit 0: a failure of worker 1 would end the run. SIGTERM to its supervisor, as
    # the kubelet sends it on a preemption, is no failure: it is given back and started again.
    go = tmp_path / "go"
    options = ("--set", f"job.args=[--chief-until, '{go}']", "--set", "job.backoffLimit=0")
    starts = stacks_dir / "out" / "worker-1.starts"

    def preempt_worker_1() -> None:
        if wait_until(lambda: len(records(stacks_dir)) == 4, 60):
            os.kill(_supervisor_of(records(stacks_dir)["worker-1"]["pid"]), signal.SIGTERM)
            wait_until(lambda: starts.exists() and len(starts.read_text().splitlines()) == 2, 30)
        go.touch()

    watcher = threading.Thread(target=preempt_worker_1, daemon=True)
    watcher.start()
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, *options))
    watcher.join()
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.search(r"mnist-worker-1 exited 143\S*; given back \(told to stop from outside\), "
                     r"not counted: restart in ", out), out  # fmt: skip
    assert len(starts.read_text().splitlines()) == 2


def test_a_launch_stopped_by_ctrl_c_says_how_to_continue_and_exits_130(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ctrl-C reaches the launcher (this process) once every replica serves: it stops them,
    # then says the run can go on, last before its status.
    def interrupt_once_all_serve() -> None:
        if wait_until(lambda: len(records(stacks_dir)) == 4, 60):
            os.kill(os.getpid(), signal.SIGINT)

    watcher = threading.Thread(target=interrupt_once_all_serve, daemon=True)
    watcher.start()
    with reaping(stacks_dir):
        status = main(launcher_args(stacks_dir, "--set", "job.args=[--hang]"))
    watcher.join()
    out = capsys.readouterr().out
    assert status == 130, out
    said = [line.split("] ", 1)[1].strip() for line in out.splitlines()
            if line.startswith("[launcher]")]  # fmt: skip
    assert said[-2:] == [
        "stopped: run the same command again to continue from its last checkpoint",
        "exit status 130",
    ], said
