"""The everyday verbs (`status`, `logs`, `list`, `completion`, `--version`, every `--help`),
each checked against output written out by hand.

The runs are laid out by hand the way the replica supervisors leave them
(infra/lifecycle/supervise.sh, docs/watch.md): a claim per attempt under
`.tftrain-run/attempts/`, its log under `replicas/NAME/logs/`, ending with the supervisor's
`... ended: exit S` line, and the outcome record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from infra.cli import main as tftrain
from infra.config import load_stack
from infra.local.opening import opening_lines
from infra.local.plan import load_config
from infra.status import main as status
from infra.status.logs import main as logs
from infra.status.runs_list import main as list_runs
from tests.test_status_cloud import _fake_kubectl, running

REPO = Path(__file__).resolve().parents[1]
KEY = "run-aaaa1111.abc123"  # a run key as the launcher makes them: run id, config hash
GEN = "0123456789ab"
T0 = datetime(2026, 9, 21, 13, 46, 40, tzinfo=UTC).timestamp()


def attempt(run: Path, replica: str, number: int, lines: list[str], exit_code: int | None,
            started: float, ended: float) -> Path:  # fmt: skip
    name = f"{KEY}.{GEN}.{replica}.{number}"
    claim = run / ".tftrain-run" / "attempts" / name
    claim.mkdir(parents=True, exist_ok=True)
    log = run / "replicas" / replica / "logs" / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    end = [] if exit_code is None else [
        f"tftrain-supervise: {replica} attempt {number} ended: exit {exit_code}"
    ]  # fmt: skip
    log.write_text("".join(f"{line}\n" for line in [*lines, *end]))
    os.utime(claim, (started, started))
    os.utime(log, (ended, ended))
    return log


def succeeded_run(run: Path, start: float = T0) -> None:
    attempt(run, "mnist-chief-0", 1, ["Step: 10", "Test-Accuracy: 0.9500"], 0, start, start + 30)
    attempt(run, "mnist-worker-0", 1, ["worker up"], 143, start, start + 31)
    (run / "metrics.txt").write_text("test_accuracy 0.95\nglobal_step 120\n")
    (run / ".tftrain-run" / f"succeeded.{KEY}").write_text("mnist-chief-0\n")


def failed_run(run: Path, start: float = T0) -> None:
    attempt(run, "mnist-chief-0", 1, ["chief waiting"], 143, start, start + 12)
    painted = "\x1b[2K\x1b[32mrun succeeded\x1b[0m"
    attempt(run, "mnist-worker-1", 1, ["Traceback (most recent call last):", painted], 2,
            start, start + 10)  # fmt: skip
    record = "mnist-worker-1 exit 2 attempt 1 on host-a\n"
    (run / ".tftrain-run" / f"failed.{KEY}.{GEN}").write_text(record)


@pytest.fixture
def no_kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `kubectl` and a `pulumi` that only note that they were called."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    for name in ("kubectl", "pulumi"):
        tool = bin_dir / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> {calls}\nexit 1\n')
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return calls


def test_status_of_a_stack_with_no_runs_says_so_and_asks_no_cluster(
    tmp_path: Path, no_kubectl: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert status(["dev", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "no runs of dev on this machine (none under runs)",
        "start one with: tftrain run dev",
    ]
    assert "no cluster known for dev" in out.splitlines()[2]
    # The stack output was asked for (that is where the stack's cluster would be), kubectl never.
    assert no_kubectl.read_text().splitlines() == [
        "pulumi stack output kubeconfig --show-secrets --stack dev"
    ]
    assert status(["dev", "--runs-dir", str(tmp_path / "runs"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"stack": "dev", "runs": []}


def test_status_paths_are_pasteable_and_log_lines_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "runs" / "dev" / "mnist" / "run-aaaa1111"
    failed_run(run)
    monkeypatch.chdir(tmp_path)
    assert status(["dev", "--runs-dir", "runs/dev"]) == 0
    out = capsys.readouterr().out
    logs_of = "runs/dev/mnist/run-aaaa1111/replicas/{0}/logs/" + KEY + "." + GEN + ".{0}.1.log"
    assert out.splitlines() == [
        "runs/dev/mnist/run-aaaa1111: FAILED: mnist-worker-1 attempt 1 exit 2",
        "  step -, no metric yet, wall time 12.0s",
        "  mnist-chief-0        1 attempt: stopped at the run's end: killed by SIGTERM "
        f"(exit 143); {logs_of.format('mnist-chief-0')}",
        f"  mnist-worker-1       1 attempt: exit 2; {logs_of.format('mnist-worker-1')}",
        f"  last lines of {logs_of.format('mnist-worker-1')}:",
        "    | Traceback (most recent call last):",
        "    | \\x1b[2K\\x1b[32mrun succeeded\\x1b[0m",
        "    | tftrain-supervise: mnist-worker-1 attempt 1 ended: exit 2",
    ]
    for path in (logs_of.format("mnist-worker-1"),):
        assert Path(path).is_file()  # pasted where the user stands, it opens


def test_status_json_is_the_run_as_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "mnist" / "run-aaaa1111"
    succeeded_run(run)
    assert status(["dev", "--runs-dir", str(tmp_path), "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)["runs"]
    log = run / "replicas" / "mnist-chief-0" / "logs" / f"{KEY}.{GEN}.mnist-chief-0.1.log"
    assert record == {
        "directory": str(run),
        "job": "mnist",
        "run_id": "run-aaaa1111",
        "outcome": "succeeded",
        "step": 120,
        "metric": {"name": "test_accuracy", "value": 0.95},
        "started": "2026-09-21T13:46:40Z",
        "wall_seconds": 31.0,
        "failure": None,
        "replicas": [
            {"name": "mnist-chief-0", "attempts": 1, "result": "exit 0", "log": str(log)},
            {
                "name": "mnist-worker-0",
                "attempts": 1,
                "result": "stopped at the run's end: killed by SIGTERM (exit 143)",
                "log": str(log).replace("chief-0", "worker-0"),
            },
        ],
        "report": None,
    }


def _by_lines(text: str) -> list[list[str]]:
    return [line.split("  ") for line in text.splitlines()]


def test_list_shows_every_run_newest_first_and_a_sweep_with_its_trials_beneath(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    runs = tmp_path / "runs"
    succeeded_run(runs / "dev" / "mnist" / "run-aaaa1111", T0)
    failed_run(runs / "other" / "mnist" / "run-bbbb2222", T0 + 3600)
    sweep = runs / "my-sweep" / "mnist"
    succeeded_run(sweep / "run-cccc3333", T0 + 7200)
    succeeded_run(sweep / "run-dddd4444", T0 + 7300)
    (sweep / "sweep-results.csv").write_text(
        "trial,run_id,test_accuracy\n1,run-cccc3333,0.95\n2,run-dddd4444,0.95\n"
    )
    assert list_runs(["--runs-dir", str(runs), "--stacks-dir", str(tmp_path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows == [
        ["STACK", "JOB", "RUN", "ID", "OUTCOME", "STEP", "METRIC", "STARTED", "WALL"],
        ["my-sweep", "mnist", "sweep", "(2", "trials)", "2", "succeeded", "-", "-",
         "2026-09-21", "15:46", "-"],
        ["my-sweep", "mnist", "run-dddd4444", "succeeded", "120", "test_accuracy", "0.95",
         "2026-09-21", "15:48", "31.0s"],
        ["my-sweep", "mnist", "run-cccc3333", "succeeded", "120", "test_accuracy", "0.95",
         "2026-09-21", "15:46", "31.0s"],
        ["other", "mnist", "run-bbbb2222", "failed", "-", "-", "2026-09-21", "14:46", "12.0s"],
        ["dev", "mnist", "run-aaaa1111", "succeeded", "120", "test_accuracy", "0.95",
         "2026-09-21", "13:46", "31.0s"],
    ]  # fmt: skip
    assert list_runs(["--runs-dir", str(runs), "--stacks-dir", str(tmp_path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["kind"], e["stack"]) for e in listed] == [
        ("sweep", "my-sweep"), ("run", "other"), ("run", "dev")
    ]  # fmt: skip
    assert [t["run_id"] for t in listed[0]["trials"]] == ["run-dddd4444", "run-cccc3333"]


def test_logs_prints_the_failed_replicas_log_by_default_and_any_other_by_name(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    failed_run(tmp_path / "mnist" / "run-aaaa1111")
    assert logs(["dev", "--runs-dir", str(tmp_path)]) == 0
    out = capfdbinary.readouterr().out.decode()
    assert out.splitlines() == [
        "Traceback (most recent call last):",
        "\x1b[2K\x1b[32mrun succeeded\x1b[0m",  # a log is the log, as kubectl logs prints it
        "tftrain-supervise: mnist-worker-1 attempt 1 ended: exit 2",
    ]
    assert logs(["dev", "chief-0", "--runs-dir", str(tmp_path)]) == 0
    assert capfdbinary.readouterr().out.decode().splitlines()[0] == "chief waiting"
    assert logs(["dev", "ps-3", "--runs-dir", str(tmp_path)]) == 2
    err = capfdbinary.readouterr().err.decode()
    assert err.strip() == (
        "tftrain logs: no replica 'ps-3' in this run (its replicas: mnist-chief-0, mnist-worker-1)"
    )


def test_logs_f_follows_a_rotation_and_the_next_attempt_until_the_run_ends(
    tmp_path: Path,
) -> None:
    run = tmp_path / "mnist" / "run-aaaa1111"
    now = time.time()
    first = attempt(run, "mnist-chief-0", 1, ["one"], None, now, now)
    attempt(run, "mnist-worker-0", 1, ["w"], None, now, now)
    follower = subprocess.Popen(
        [sys.executable, "-m", "infra.cli", "logs", "dev", "-f", "--runs-dir", str(tmp_path)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert follower.stdout is not None
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(follower.stdout or []), daemon=True)
    reader.start()

    def wait_for(line: str) -> None:
        deadline = time.monotonic() + 60
        while line + "\n" not in seen:
            assert time.monotonic() < deadline, seen
            time.sleep(0.05)

    wait_for("one")
    with first.open("a") as log:
        log.write("two\n")
    wait_for("two")
    first.rename(first.with_name(first.name + ".1"))  # rotated: a new file of the same name
    first.write_text("three\ntftrain-supervise: mnist-chief-0 attempt 1 ended: exit 1\n")
    wait_for("three")
    attempt(run, "mnist-chief-0", 2, ["second attempt"], None, time.time(), time.time())
    wait_for("second attempt")
    (run / ".tftrain-run" / f"succeeded.{KEY}").write_text("mnist-chief-0\n")
    assert follower.wait(timeout=60) == 0
    reader.join(timeout=10)
    assert seen == [
        "one\n",
        "two\n",
        "three\n",
        "tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 1\n",
        "second attempt\n",
    ]


def test_version_is_the_projects(capsys: pytest.CaptureFixture[str]) -> None:
    assert tftrain(["--version"]) == 0
    assert capsys.readouterr().out == "tftrain 0.1.0\n"  # pyproject.toml's version


@pytest.mark.parametrize(
    "verb", ["run", "render", "status", "logs", "list", "compare", "review", "completion"]
)
def test_every_verbs_help_ends_with_examples_and_exit_codes(
    verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        tftrain([verb, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    examples, _, codes = text.partition("\nexit status:\n")
    assert f"\n  tftrain {verb} " in examples.split("\nexamples:\n")[1]
    assert codes.splitlines()[0].startswith("  0  ")
    assert "<stack>" not in text and "<run id>" not in text  # one placeholder style: STACK


def test_bash_completion_completes_verbs_and_stacks(tmp_path: Path) -> None:
    script = subprocess.run(
        [sys.executable, "-m", "infra.cli", "completion", "bash"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    probe = (
        f"{script}\n"
        'COMP_WORDS=(tftrain l); COMP_CWORD=1; _tftrain; echo "${COMPREPLY[*]}"\n'
        'COMP_WORDS=(tftrain run dev-s); COMP_CWORD=2; _tftrain; echo "${COMPREPLY[*]}"\n'
    )
    done = subprocess.run(["bash", "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.splitlines() == ["logs list", "dev-sweep"], done.stderr


def test_the_launchers_opening_lines_show_what_it_trains_with() -> None:
    # stacks/Pulumi.dev.yaml: 1 chief, 2 workers, 1 ps; epochs 4, batch 128; the --set shows.
    config = load_config("dev", None, ["hyperparams.learningRate=0.01", "hyperparams.maxSteps=200"])
    lines = opening_lines("dev", config)
    assert lines == [
        f"stack dev: job mnist, run {config.job.run_id}",
        "replicas: 1 chief, 2 worker, 1 ps",
        "hyperparameters: learning rate 0.01, batch size 128, epochs 4, max steps 200, "
        "strategy parameter_server",
    ]


def _cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_pods: bool) -> Path:
    """ack-gpu's run in a fake cluster: every Job running (with its pod, or with none left)."""
    config = load_stack("ack-gpu")
    jobs, pods = running(config, skip="")
    items = [*jobs, *(pods if with_pods else [])]
    bin_dir = _fake_kubectl(tmp_path, {"workloads": {"items": items}, "events": {"items": []}})
    (tmp_path / "logs.txt").write_text("Step: 100/1876 (5 %), from the pod\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "calls"


def test_logs_in_the_cluster_reads_the_chiefs_pod_and_follows_it(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _cluster(tmp_path, monkeypatch, with_pods=True)
    kubeconfig = tmp_path / "kubeconfig"
    assert logs(["ack-gpu", "-f", "--kubeconfig", str(kubeconfig)]) == 0
    captured = capfdbinary.readouterr()
    assert captured.out.decode() == "Step: 100/1876 (5 %), from the pod\n"
    assert "==> pod mnist-chief-0-abcde (mnist-chief-0) <==" in captured.err.decode()
    last = calls.read_text().splitlines()[-1]
    assert last.endswith("logs mnist-chief-0-abcde -c tensorflow -f"), last
    assert f"--kubeconfig {kubeconfig}" in last


def test_logs_in_the_cluster_reads_the_kept_logs_once_the_pods_are_gone(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _cluster(tmp_path, monkeypatch, with_pods=False)
    volume = tmp_path / "volume"
    succeeded_run(volume)  # the run's directory on NAS, as TensorBoard's pod streams it
    with tarfile.open(tmp_path / "run.tar", "w") as archive:
        archive.add(volume, arcname=".")
    runs = tmp_path / "runs"
    args = ["ack-gpu", "--kubeconfig", str(tmp_path / "k"), "--runs-dir", str(runs)]
    assert logs(args) == 0
    out = capfdbinary.readouterr().out.decode()
    assert out.splitlines() == [
        "Step: 10",
        "Test-Accuracy: 0.9500",
        "tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 0",
    ]
    assert " exec deployment/mnist-tensorboard " in calls.read_text()


def test_status_json_in_the_cluster_is_each_replicas_phase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _cluster(tmp_path, monkeypatch, with_pods=True)
    assert status(["ack-gpu", "--kubeconfig", str(tmp_path / "k"), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    run_id = load_stack("ack-gpu").job.run_id
    assert {k: answer[k] for k in ("stack", "job", "run_id", "namespace", "phase")} == {
        "stack": "ack-gpu", "job": "mnist", "run_id": run_id, "namespace": "tftrain",
        "phase": "running",
    }  # fmt: skip
    assert answer["replicas"][0] == {
        "name": "mnist-chief-0", "phase": "Running", "failed_pods": 0,
        "pod": "mnist-chief-0-abcde", "cause": None,
    }  # fmt: skip
    assert [r["name"] for r in answer["replicas"]] == [
        "mnist-chief-0", "mnist-worker-0", "mnist-worker-1", "mnist-ps-0", "mnist-ps-1"
    ]  # fmt: skip


def test_logs_in_the_cluster_default_to_the_failed_replica_and_write_where_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from infra.status.logs import cluster_logs, parse_args
    from tests.test_status_cloud import failed, job, pod

    config = load_stack("ack-gpu")
    jobs, pods = running(config, skip="mnist-worker-1")
    gone = failed("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    jobs.append(job("mnist-worker-1", config, failed=2, conditions=gone))
    pods.append(pod("mnist-worker-1-zzzzz", "mnist-worker-1", "Failed"))
    items = {"workloads": {"items": [*jobs, *pods]}, "events": {"items": []}}
    bin_dir = _fake_kubectl(tmp_path, items)
    (tmp_path / "logs.txt").write_text("Traceback: the worker's last words\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    kubeconfig = tmp_path / "kubeconfig"
    args = parse_args(["ack-gpu", "--kubeconfig", str(kubeconfig)])
    with (tmp_path / "out.log").open("wb") as out:
        assert cluster_logs(args, config, out) == 0
    assert (tmp_path / "out.log").read_text() == "Traceback: the worker's last words\n"
    assert capfdbinary.readouterr().err.decode() == (
        "==> pod mnist-worker-1-zzzzz (mnist-worker-1) <==\n"
    )
    calls = (tmp_path / "calls").read_text().splitlines()
    assert all(f"--kubeconfig {kubeconfig} " in call for call in calls), calls
    assert calls[-1].endswith(" logs mnist-worker-1-zzzzz -c tensorflow")  # not followed
    # A replica by name, and kubectl failing to print it: exit 1.
    (tmp_path / "logs.txt").unlink()
    assert logs(["ack-gpu", "ps-0", "--kubeconfig", str(kubeconfig)]) == 1
    assert " logs mnist-ps-0-abcde " in (tmp_path / "calls").read_text().splitlines()[-1]


def test_logs_in_the_cluster_without_pods_or_kept_logs_says_where_it_looked(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _cluster(tmp_path, monkeypatch, with_pods=False)
    empty = tmp_path / "volume"
    empty.mkdir()
    with tarfile.open(tmp_path / "run.tar", "w") as archive:
        archive.add(empty, arcname=".")
    monkeypatch.chdir(tmp_path)
    args = ["ack-gpu", "--kubeconfig", str(tmp_path / "k"), "--runs-dir", "runs"]
    assert logs(args) == 1
    mirror = f"runs/cluster/mnist/{load_stack('ack-gpu').job.run_id}"
    assert capfdbinary.readouterr().err.decode().splitlines() == [
        f"mnist-chief-0 has no pod left: reading its kept logs into {mirror}",
        f"tftrain logs: no runs of ack-gpu under {mirror}; start one with: tftrain run ack-gpu",
    ]
    assert all(f"--kubeconfig {tmp_path / 'k'} " in c for c in calls.read_text().splitlines())


def test_logs_asks_the_cluster_when_told_even_with_local_runs_and_says_its_errors(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _cluster(tmp_path, monkeypatch, with_pods=True)
    failed_run(tmp_path / "runs" / "mnist" / "run-aaaa1111")  # a local run too
    runs = ["--runs-dir", str(tmp_path / "runs")]
    for told in (["--cluster"], ["--kubeconfig", str(tmp_path / "k")]):
        assert logs(["ack-gpu", *told, *runs]) == 0
        assert capfdbinary.readouterr().out.decode() == "Step: 100/1876 (5 %), from the pod\n"
    assert logs(["ack-gpu", "nosuch", "--cluster", *runs]) == 2
    assert capfdbinary.readouterr().err.decode() == (
        "tftrain logs: no replica 'nosuch' in this run (its replicas: mnist-chief-0, "
        "mnist-worker-0, mnist-worker-1, mnist-ps-0, mnist-ps-1)\n"
    )
    (tmp_path / "workloads.json").write_text("not json")
    assert logs(["ack-gpu", "--cluster", *runs]) == 1
    assert capfdbinary.readouterr().err.decode() == (
        "tftrain logs: kubectl returned no JSON list: Expecting value: line 1 column 1 (char 0)\n"
    )
    assert calls.exists()


def test_logs_prefers_local_runs_over_a_stacks_cluster_unless_told(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _cluster(tmp_path, monkeypatch, with_pods=True)
    pulumi = tmp_path / "bin" / "pulumi"
    pulumi.write_text(f'#!/bin/sh\necho "pulumi $*" >> {calls}\necho "apiVersion: v1"\n')
    pulumi.chmod(0o755)
    runs = ["--runs-dir", str(tmp_path / "runs")]
    # No local run: the stack's own cluster (its stack output) is read.
    assert logs(["ack-gpu", *runs]) == 0
    assert capfdbinary.readouterr().out.decode() == "Step: 100/1876 (5 %), from the pod\n"
    assert "pulumi stack output kubeconfig --show-secrets --stack ack-gpu" in calls.read_text()
    # A local run: that one, without asking pulumi or kubectl.
    failed_run(tmp_path / "runs" / "mnist" / "run-aaaa1111")
    calls.unlink()
    assert logs(["ack-gpu", *runs]) == 0
    assert capfdbinary.readouterr().out.decode().startswith("Traceback")
    assert not calls.exists()
