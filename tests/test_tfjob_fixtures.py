"""Trainers written the classic TFJob way (`tests/fixtures/tfjob_trainer.py`: ps and workers
`join()` forever, the chief trains with ParameterServerStrategy; a `master` variant; a
MultiWorkerMirrored one) through the local launcher, which runs each replica under the same
supervisor script as the Kubernetes Jobs. The run ends with the chief: every replica exits
0 within 3 s of its success and none is left to the launcher's grace timer. A usage error
(exit 2) fails the run at once; a crash (exit 1) is restarted and the run succeeds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infra.lifecycle import OUTCOMES_DIR
from infra.local.cli import main
from tests.cluster_helpers import REPLICAS, STACK, summary_line, write_stack

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "tfjob_trainer.py"
RUN_ID = "fixture"
END_WITHIN = 3.0  # seconds after the chief's success
_ENDED = re.compile(r"\(ended ([\d.]+)s (after|before) the run's success was published\)")


def run_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *, args: list[str], backoff: int = 0,
    **groups: dict,
) -> tuple[int, str]:  # fmt: skip
    """The fixture as a stack's `job.command` with `job.args`; the status and the output."""
    job = {"command": ["python", str(FIXTURE)], "args": args, "runId": RUN_ID}
    write_stack(tmp_path, {"job": {**job, "backoffLimit": backoff}, **groups})
    argv = [STACK, "--stacks-dir", str(tmp_path), "--output-dir", str(tmp_path / "out"),
            "--timeout", "300"]  # fmt: skip
    return main(argv), capsys.readouterr().out


def assert_ended_with_the_chief(status: int, out: str, replicas: tuple[str, ...]) -> None:
    """Exit 0 everywhere, nothing left to the launcher, and every replica but the primary
    (the first named) gone no later than END_WITHIN seconds after the job's success."""
    assert status == 0, out
    assert "stopped by the launcher" not in out and "terminating" not in out, out
    for name in replicas:
        assert summary_line(out, name).split()[2:4] == ["exit", "0"], out
    for name in replicas[1:]:
        ended = _ENDED.search(summary_line(out, name))
        assert ended, summary_line(out, name)
        assert ended.group(2) == "before" or float(ended.group(1)) <= END_WITHIN, ended[0]


def test_parameter_server_trainer_ends_with_its_chief(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_fixture(tmp_path, capsys, args=[])
    assert_ended_with_the_chief(status, out, REPLICAS)
    assert "[mnist-chief-0]  chief:0 trained 6 steps" in out
    for name in REPLICAS[1:]:
        assert re.search(rf"^\[{name}\] +tftrain-supervise: run {RUN_ID}\.\w+ succeeded: stopping",
                         out, re.MULTILINE), out  # fmt: skip
    # The supervisor's "stopping" line is the proof that each replica was stopped by the
    # run's end rather than finishing alone; assert_ended_with_the_chief timed it.
    succeeded = list((tmp_path / "out" / OUTCOMES_DIR).glob(f"succeeded.{RUN_ID}.*"))
    assert [path.read_text().split()[1] for path in succeeded] == ["mnist-chief-0"]


def test_a_usage_error_fails_the_run_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_fixture(tmp_path, capsys, args=["--no-such-flag"], backoff=3)
    assert status == 2, out
    assert "error: unrecognized arguments: --no-such-flag" in out
    assert re.search(r"FAILED: mnist-\S+ exit 2 \(exit code 2 is final: no restarts", out), out
    assert "restart 1 of 3" not in out and "restarts:" not in out.split("summary:")[1]
    # The failure is published for the replicas on other nodes: they stop with exit 2 too.
    (failed,) = (tmp_path / "out" / OUTCOMES_DIR).glob(f"failed.{RUN_ID}.*")
    assert re.match(r"mnist-\S+ exit 2 attempt 1 on ", failed.read_text()), failed.read_text()


@pytest.mark.slow
def test_master_variant_ends_with_its_master(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = run_fixture(tmp_path, capsys, args=["--master"])
    assert_ended_with_the_chief(status, out, REPLICAS)
    assert "[mnist-chief-0]  chief:0 trained 6 steps" in out


@pytest.mark.slow
def test_multi_worker_mirrored_trainer_ends_with_worker_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    groups = {"chief": {"number": 0}, "ps": {"number": 0}, "worker": {"number": 2}}
    status, out = run_fixture(tmp_path, capsys, args=[], **groups)
    workers = ("mnist-worker-0", "mnist-worker-1")
    assert_ended_with_the_chief(status, out, workers)
    assert "succeeded: mnist-worker-0 exit 0" in out
    for index in (0, 1):
        assert f"worker:{index} trained 6 steps" in out


@pytest.mark.slow
def test_a_crash_is_restarted_and_the_run_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flag = tmp_path / "failed-once"
    status, out = run_fixture(tmp_path, capsys, args=["--fail-once", str(flag)], backoff=1)
    assert_ended_with_the_chief(status, out, REPLICAS)
    assert "mnist-chief-0 exited 1; restart 1 of 1 in 1.0s" in out
    assert "1 restart (after exit 1)" in summary_line(out, "mnist-chief-0")
    assert flag.exists()
