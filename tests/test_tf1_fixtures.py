"""Trainers written the TF1 TFJob way (`tests/fixtures/tf1_trainer.py`: between-graph
replication, `replica_device_setter`, `MonitoredTrainingSession`, ps in `join()`) through
the local launcher, in the topologies TFJob runs them: ps + workers with no chief (worker 0
is the chief), and a `master`. Each must end with exit 0, every replica ending by itself
or by its supervisor's SIGTERM; the trainer's relative and home writes land in the replica's
own directory of the run, `$(TFTRAIN_OUTPUT_DIR)` in args is expanded, a `job.env` value
arrives, and nothing lands in the project checkout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.local.cli import main
from infra.local.plan import REPO
from tests.cluster_helpers import STACK, summary_line, write_stack

# Relative to the repo, where the launcher starts each replica (as a pod starts in its
# image's WORKDIR): the supervisor resolves it before moving to the replica's directory.
FIXTURE = "tests/fixtures/tf1_trainer.py"
JOB = {
    "command": ["python", FIXTURE],
    "args": ["--out=$(TFTRAIN_OUTPUT_DIR)/x"],
    "env": {"FIXTURE_GREETING": "hello"},
    "runId": "tf1",
    "backoffLimit": 1,
}


def _checkout_state() -> set[Path]:
    """What a trainer writing relative to where it started would add to: the repo's top
    level and the fixture's directory (the replicas start in the repo)."""
    return {*REPO.iterdir(), *(REPO / "tests" / "fixtures").iterdir()}


def _launch(tmp_path: Path, capsys: pytest.CaptureFixture[str], groups: dict) -> tuple[int, str]:
    write_stack(tmp_path, {"job": JOB, **groups})
    argv = [STACK, "--stacks-dir", str(tmp_path), "--output-dir", str(tmp_path / "out"),
            "--timeout", "240"]  # fmt: skip
    return main(argv), capsys.readouterr().out


def _assert_ended(status: int, out: str, names: list[str]) -> None:
    assert status == 0, out
    assert "stopped by the launcher" not in out, out
    for name in names:
        assert summary_line(out, name).split()[2:4] == ["exit", "0"], out


def test_ps_and_workers_without_a_chief(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _checkout_state()
    ps_command = ["sh", "-c", 'echo "ps wrapper $FIXTURE_GREETING"; exec python "$0" "$@"', FIXTURE]
    groups = {
        "chief": {"number": 0},
        "worker": {"number": 2},
        # Its own command and args: a shell wrapper, the same trainer, a flag only ps gets
        # (a worker given --ps-only would exit 2 and fail the run).
        "ps": {"number": 1, "command": ps_command, "args": ["--out=unused", "--ps-only"]},
    }
    status, out = _launch(tmp_path, capsys, groups)
    _assert_ended(status, out, ["mnist-worker-0", "mnist-worker-1", "mnist-ps-0"])
    assert "[mnist-worker-0] worker:0 done at step" in out
    assert "ps wrapper hello" in out and "ps:0 greeting=hello" in out
    run = tmp_path / "out"
    assert (run / "x" / "checkpoint").is_file()  # $(TFTRAIN_OUTPUT_DIR)/x, expanded
    for name, kind in (("mnist-worker-0", "worker-0"), ("mnist-worker-1", "worker-1")):
        own = run / "replicas" / name
        assert (own / "work" / "out" / f"{kind}.txt").read_text() == kind.replace("-", ":") + "\n"
        assert (own / "home" / ".cache" / "tf1-fixture" / kind).is_file()
    assert _checkout_state() == before


# Slow: TFJob's `master` maps to chief by rule (tests/test_topology_rules.py); this runs it.
@pytest.mark.slow
def test_master_replica_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # ps runs a multi-line script, as a YAML block (`- |`) gives it: trailing newline included.
    script = 'set -e\necho "ps script $FIXTURE_GREETING"\nexec python "$0" "$@"\n'
    ps = {"number": 1, "command": ["sh", "-c", script, FIXTURE], "args": ["--out=u", "--ps-only"]}
    groups = {"chief": {"number": 0}, "master": {"number": 1}, "worker": {"number": 1}, "ps": ps}
    status, out = _launch(tmp_path, capsys, groups)
    _assert_ended(status, out, ["mnist-master-0", "mnist-worker-0", "mnist-ps-0"])
    assert "[mnist-master-0] master:0 done at step" in out
    assert "ps script hello" in out
    assert (tmp_path / "out" / "x" / "checkpoint").is_file()
    assert (tmp_path / "out" / ".tftrain-run" / "succeeded.tf1").exists() or any(
        (tmp_path / "out" / ".tftrain-run").glob("succeeded.tf1.*")
    )
