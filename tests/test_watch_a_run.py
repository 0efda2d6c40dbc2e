"""Watching a run on this machine, end to end, with real processes: the supervisors keep
each attempt's log, the launcher writes the post-run report and prints its path, and
`python -m infra.status` reads it all back in seconds (docs/watch.md "Watch a run").

Default suite: one short run of the fake TFJob-style trainer (`cluster_helpers`) whose
worker 1 is SIGKILLed on its first start. Slow: an exit-2 failure, and the real trainer on
the dev stack.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from infra.local.cli import main as launch
from infra.status import main as status
from tests.cluster_helpers import STACK, fake_stacks_dir, launcher_args, reaping

SVG_ROOT = "{http://www.w3.org/2000/svg}svg"
STATUS_SECONDS = 5  # issue 30: the local status answers within 5 s


@pytest.fixture
def stacks_dir(tmp_path: Path) -> Path:
    return fake_stacks_dir(tmp_path)


def _report_path(out: str) -> Path:
    match = re.search(r"^\[launcher\] +report: (\S+)$", out, re.MULTILINE)
    assert match, out
    return Path(match.group(1))


def _status(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    begun = time.monotonic()
    assert status(list(args)) == 0
    assert time.monotonic() - begun < STATUS_SECONDS
    return capsys.readouterr().out


def _logs(run_dir: Path, replica: str) -> list[Path]:
    return sorted((run_dir / "replicas" / replica / "logs").glob("*.log"))


def test_a_worker_killed_once_shows_two_attempts_in_its_logs_status_and_report(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = "job.args=[--scalars, --kill-starts, 'worker:1:1', --chief-seconds, '2.5']"
    with reaping(stacks_dir):
        code = launch(launcher_args(stacks_dir, "--set", "job.backoffLimit=1", "--set", args))
    out = capsys.readouterr().out
    assert code == 0, out
    run_dir = stacks_dir / "out"

    # Logs: one per attempt; the killed one ends with the shell's status for SIGKILL, 128 + 9.
    first, second = _logs(run_dir, "mnist-worker-1")
    assert first.name.endswith(".mnist-worker-1.1.log") and second.name.endswith(".2.log")
    lines = first.read_text().splitlines()
    assert "killing myself on start 1" in lines
    assert lines[-1] == "tftrain-supervise: mnist-worker-1 attempt 1 ended: exit 137"
    assert "stderr of worker:1" in second.read_text().splitlines()
    assert len(_logs(run_dir, "mnist-chief-0")) == 1
    assert "chief done" in _logs(run_dir, "mnist-chief-0")[0].read_text().splitlines()

    # The report, whose path the launcher printed last.
    report = _report_path(out)
    assert report == run_dir / "report" / "report.md"
    text = report.read_text()
    assert "**Succeeded.**" in text
    assert re.search(r"^\| mnist-worker-1 \| 2 \| 1 \| [0-9.]+s \|", text, re.MULTILINE), text
    for plot in ("loss", "accuracy"):
        assert f"![{plot}]({plot}.svg)" in text
        assert ElementTree.parse(report.parent / f"{plot}.svg").getroot().tag == SVG_ROOT
    assert "| loss | 30 | 0.5 | train/ |" in text  # the fake's last loss (its SCALARS)

    # The status command, from the stack and the run directory.
    shown = _status(capsys, STACK, "--stacks-dir", str(stacks_dir), "--runs-dir", str(run_dir))
    assert shown.splitlines()[0] == f"{run_dir}: succeeded", shown  # pasteable: absolute here
    assert "step 30, test_accuracy 0.9000" in shown
    assert re.search(r"mnist-worker-1 +2 attempts, 1 restart: ", shown), shown
    assert f"report: {report}" in shown


@pytest.mark.slow
def test_an_exit_2_failure_names_the_replica_and_its_last_lines(
    stacks_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with reaping(stacks_dir):
        code = launch(launcher_args(stacks_dir, "--set", "job.args=[--fail, 'worker:1:2']"))
    out = capsys.readouterr().out
    assert code == 2, out
    run_dir = stacks_dir / "out"
    shown = _status(capsys, STACK, "--stacks-dir", str(stacks_dir), "--runs-dir", str(run_dir))
    assert shown.splitlines()[0] == f"{run_dir}: FAILED: mnist-worker-1 attempt 1 exit 2", shown
    assert "    | stderr of worker:1" in shown.splitlines()
    text = _report_path(out).read_text()
    assert "**Failed**: `mnist-worker-1` attempt 1 exit 2" in text
    assert "stderr of worker:1" in text.split("## Outcome")[1].split("## Metrics")[0]


@pytest.mark.slow
def test_a_short_dev_run_leaves_logs_a_report_and_a_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    options = ["--set", "hyperparams.maxSteps=40", "--set", "hyperparams.logSteps=10"]
    code = launch(["dev", "--output-dir", str(run_dir), *options])
    out = capsys.readouterr().out
    assert code == 0, out
    for replica in ("mnist-chief-0", "mnist-worker-0", "mnist-worker-1", "mnist-ps-0"):
        assert len(_logs(run_dir, replica)) == 1, replica
    chief_log = _logs(run_dir, "mnist-chief-0")[0].read_text()
    assert re.search(r"^Test-Accuracy: 0\.\d+$", chief_log, re.MULTILINE), chief_log[-2000:]
    report = _report_path(out)
    for plot in ("loss", "accuracy"):
        assert ElementTree.parse(report.parent / f"{plot}.svg").getroot().tag == SVG_ROOT
    shown = _status(capsys, "dev", "--runs-dir", str(run_dir))
    assert shown.splitlines()[0] == f"{run_dir}: succeeded", shown  # pasteable: absolute here
    assert re.search(r"step 40, test_accuracy 0\.\d{4}", shown), shown
