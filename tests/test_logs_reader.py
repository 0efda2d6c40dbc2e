"""`tftrain logs` on this machine, in process (`infra.status.logs`): which replica it picks,
which attempt, the rotated part of a log before the rest, and `-f` step by step. The runs are
laid out by hand in the supervisor's formats (tests/test_everyday_verbs.py's `attempt`); `-f`
is driven by its own sleep, so each change lands between two of its polls, never by timing.
The command as a process following a real rotation: test_everyday_verbs.py."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from infra.records.run_state import read_run
from infra.status import logs
from infra.status.logs import (
    Follower,
    choose_replica,
    default_replica,
    follow,
    main,
    print_attempt,
    replica_matches,
)
from tests.test_everyday_verbs import GEN, KEY, attempt, failed_run


@pytest.mark.parametrize(
    ("name", "wanted", "matches"),
    [
        ("mnist-worker-1", "mnist-worker-1", True),
        ("mnist-worker-1", "worker-1", True),
        ("mnist-worker-1", "worker:1", True),  # TFJob's type:index
        ("mnist-worker-11", "worker-1", False),
        ("mnist-worker-1", "orker-1", False),  # a whole name part, not a suffix of one
        ("mnist-worker-1", "worker-11", False),
    ],
)
def test_a_replica_is_named_whole_by_type_and_index(name: str, wanted: str, matches: bool) -> None:
    assert replica_matches(name, wanted) is matches


@pytest.mark.parametrize(
    ("names", "failed", "chosen"),
    [
        (["r-chief-0", "r-worker-1"], "r-worker-1", "r-worker-1"),  # the failed one first
        (["r-ps-0", "r-chief-0", "r-worker-0"], None, "r-chief-0"),
        (["r-ps-0", "r-chief-0"], "r-gone-0", "r-chief-0"),  # a failure not in this run
        (["r-ps-0", "r-worker-0", "r-master-0"], None, "r-master-0"),
        (["r-ps-0", "r-worker-1", "r-worker-0"], None, "r-worker-0"),
        (["r-ps-0", "r-worker-10"], None, "r-ps-0"),  # worker 10 is not worker 0
        ([], None, None),
    ],
)
def test_the_default_replica_is_the_failed_one_else_the_one_that_ends_the_run(
    names: list[str], failed: str | None, chosen: str | None
) -> None:
    assert default_replica(names, failed) == chosen


def test_a_replica_named_twice_or_never_is_refused_with_the_runs_replicas() -> None:
    with pytest.raises(LookupError) as error:
        choose_replica(["a-worker-1", "b-worker-1"], "worker-1", None)
    assert (
        str(error.value)
        == "no replica 'worker-1' in this run (its replicas: a-worker-1, b-worker-1)"
    )
    with pytest.raises(LookupError) as error:
        choose_replica([], "worker-1", None)
    assert str(error.value) == "no replica 'worker-1' in this run (its replicas: none)"
    with pytest.raises(LookupError) as error:
        choose_replica([], None, None)
    assert str(error.value) == "no replica has started"


def test_an_attempts_log_is_its_rotated_part_then_the_rest(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"third\n")
    (tmp_path / "a.log.1").write_bytes(b"first\nsecond\n")
    (tmp_path / "a.log.2").write_bytes(b"never: the supervisor keeps one rotated part\n")
    out = io.BytesIO()
    print_attempt(log, out)
    assert out.getvalue() == b"first\nsecond\nthird\n"


def test_the_follower_reads_growth_a_rotation_and_a_truncation_each_once(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    out = io.BytesIO()
    follower = Follower(path, out)
    follower.pump()  # not written yet: nothing, no error
    assert out.getvalue() == b""
    path.write_bytes(b"one\n")
    follower.pump()
    with path.open("ab") as log:
        log.write(b"two\n")
    follower.pump()
    follower.pump()  # nothing new: nothing printed twice
    assert out.getvalue() == b"one\ntwo\n"
    # Rotated: the old file, renamed, still gets a line; then a new file of the same name.
    path.rename(tmp_path / "a.log.1")
    with (tmp_path / "a.log.1").open("ab") as old:
        old.write(b"three\n")
    path.write_bytes(b"four, longer than what follows\n")
    follower.pump()
    assert out.getvalue() == b"one\ntwo\nthree\nfour, longer than what follows\n"
    path.write_bytes(b"five\n")  # truncated in place, then written: read from its start
    follower.pump()
    assert out.getvalue().endswith(b"longer than what follows\nfive\n")
    path.unlink()  # gone: what was read stays, nothing fails
    follower.pump()
    follower.close()
    assert out.getvalue() == b"one\ntwo\nthree\nfour, longer than what follows\nfive\n"


def _stepper(steps: list[Callable[[], None]]) -> Callable[[float], None]:
    """A sleep for `follow` that makes the next change instead of waiting."""

    def sleep(seconds: float) -> None:
        assert 0 < seconds <= 1, seconds  # a poll, not a wait a user would notice
        assert steps, "follow kept polling after the run ended"
        steps.pop(0)()

    return sleep


def test_follow_reads_on_into_the_next_attempt_and_stops_when_the_run_ends(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    now = time.time()
    first = attempt(run, "mnist-chief-0", 1, ["one"], None, now, now)
    attempt(run, "mnist-worker-0", 1, ["w"], None, now, now)  # another replica: never printed
    state = read_run(run, with_scalars=False)
    assert state is not None and state.outcome == "running"

    def grow() -> None:
        with first.open("a") as log:
            log.write("two\n")

    def end_first() -> None:
        with first.open("a") as log:
            log.write("tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 1\n")

    def second() -> None:
        attempt(run, "mnist-chief-0", 2, ["second attempt"], None, time.time(), time.time())

    def succeed() -> None:
        (run / ".tftrain-run" / f"succeeded.{KEY}").write_text("mnist-chief-0\n")
        with (run / "replicas" / "mnist-chief-0" / "logs" / f"{KEY}.{GEN}.mnist-chief-0.2.log"
              ).open("a") as log:  # fmt: skip
            log.write("its last line\n")

    steps = [grow, end_first, second, succeed]
    out = io.BytesIO()
    follow(run, "mnist-chief-0", state.attempts["mnist-chief-0"][0], out, _stepper(steps))
    assert steps == []
    assert out.getvalue().decode().splitlines() == [
        "one",
        "two",
        "tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 1",
        "second attempt",
        "its last line",  # written as the run ended: read before returning
    ]


def test_follow_returns_when_the_run_directory_is_gone(tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "run"
    now = time.time()
    attempt(run, "mnist-chief-0", 1, ["one"], None, now, now)
    state = read_run(run, with_scalars=False)
    assert state is not None
    out = io.BytesIO()
    steps = [lambda: shutil.rmtree(run)]
    follow(run, "mnist-chief-0", state.attempts["mnist-chief-0"][0], out, _stepper(steps))
    assert steps == [] and out.getvalue() == b"one\n"


def test_logs_names_what_it_cannot_print_and_exits_so(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["dev", "--runs-dir", "runs"]) == 1
    assert capfdbinary.readouterr().err.decode() == (
        "tftrain logs: no runs of dev under runs; start one with: tftrain run dev\n"
    )
    failed_run(tmp_path / "runs" / "mnist" / "run-aaaa1111")
    assert main(["dev", "worker-1", "--attempt", "2", "--runs-dir", "runs"]) == 2
    assert capfdbinary.readouterr().err.decode() == (
        "tftrain logs: mnist-worker-1 has no attempt 2 (its attempts: 1)\n"
    )
    # An attempt whose log could not be written: its claim only.
    claim = tmp_path / "runs/mnist/run-aaaa1111/.tftrain-run/attempts"
    (claim / f"{KEY}.{GEN}.mnist-ps-0.1").mkdir()
    assert main(["dev", "ps-0", "--runs-dir", "runs"]) == 1
    assert capfdbinary.readouterr().err.decode() == (
        "tftrain logs: mnist-ps-0 attempt 1 left no log\n"
    )
    assert main(["no-such-stack", "--runs-dir", "runs"]) == 2
    assert capfdbinary.readouterr().err.decode().startswith("tftrain logs: ")


def test_an_attempt_asked_for_by_number_is_printed_not_followed(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "runs" / "mnist" / "run-aaaa1111"
    now = time.time()
    attempt(run, "mnist-chief-0", 1, ["first"], 1, now - 60, now - 50)
    attempt(run, "mnist-chief-0", 2, ["second, still running"], None, now, now)
    monkeypatch.chdir(tmp_path)
    # The run runs on: following would not return; an attempt by number is printed as it is.
    assert main(["dev", "chief-0", "--attempt", "1", "-f", "--runs-dir", "runs"]) == 0
    captured = capfdbinary.readouterr()
    assert captured.out.decode() == (
        "first\ntftrain-supervise: mnist-chief-0 attempt 1 ended: exit 1\n"
    )
    log = f"runs/mnist/run-aaaa1111/replicas/mnist-chief-0/logs/{KEY}.{GEN}.mnist-chief-0.1.log"
    assert captured.err.decode() == f"==> {log} <==\n"


def test_the_newest_run_with_a_replica_started_is_the_one_read(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    import os

    failed_run(tmp_path / "mnist" / "run-aaaa1111")
    os.utime(tmp_path / "mnist" / "run-aaaa1111" / ".tftrain-run", (1000, 1000))
    (tmp_path / "mnist" / "run-bbbb2222" / ".tftrain-run").mkdir(parents=True)  # none started
    assert main(["dev", "worker-1", "--runs-dir", str(tmp_path)]) == 0
    assert capfdbinary.readouterr().out.decode().startswith("Traceback (most recent call last):")


HELP = """\
usage: tftrain logs [-h] [-f] [--attempt N] [--stacks-dir DIR] [--runs-dir DIR] [--cluster]
                    [--kubeconfig FILE]
                    STACK [REPLICA]

Print a replica's log: the chief's, or the failed replica's, by default.

positional arguments:
  STACK              stack name (stacks/Pulumi.STACK.yaml)
  REPLICA            e.g. mnist-worker-1 or worker-1 (default: the failed one, else the chief)

options:
  -h, --help         show this help message and exit
  -f, --follow       follow it while it runs
  --attempt N        this attempt (default: newest)
  --stacks-dir DIR   where Pulumi.STACK.yaml lives
  --runs-dir DIR     a run's output dir, or a directory of JOB/RUN_ID runs (default: runs/STACK)
  --cluster          the run in the stack's cluster
  --kubeconfig FILE  a kubeconfig (implies --cluster)

examples:
  tftrain logs dev                     the chief's log of dev's newest run (or the failed one's)
  tftrain logs dev worker-1 -f         follow worker 1 while it runs, through its restarts
  tftrain logs dev mnist-ps-0 --attempt 1
  tftrain logs ack-gpu --cluster       the chief's pod in the stack's cluster (kubectl logs)

exit status:
  0  the log was printed (or followed to the run's end)
  1  no such run or log, or the cluster could not be read
  2  bad arguments or stack config
  130  interrupted (Ctrl-C) while following
"""


def test_the_help_in_full(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out == HELP


def test_the_options_read_as_their_types(tmp_path: Path) -> None:
    from infra.status.logs import parse_args

    args = parse_args(["dev", "--attempt", "2", "--stacks-dir", "s", "--runs-dir", "r",
                       "--kubeconfig", "k", "--cluster", "-f"])  # fmt: skip
    assert (args.attempt, args.stacks_dir, args.runs_dir, args.kubeconfig) == (
        2, Path("s"), Path("r"), Path("k")
    )  # fmt: skip
    assert args.cluster is True and args.follow is True and args.replica is None


def test_follow_of_an_ended_run_prints_its_log_and_returns(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from tests.test_everyday_verbs import succeeded_run

    succeeded_run(tmp_path / "mnist" / "run-aaaa1111")
    assert main(["dev", "-f", "--runs-dir", str(tmp_path)]) == 0
    assert capfdbinary.readouterr().out.decode().splitlines() == [
        "Step: 10",
        "Test-Accuracy: 0.9500",
        "tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 0",
    ]


def test_an_unknown_attempt_lists_the_replicas_attempts(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    run = tmp_path / "mnist" / "run-aaaa1111"
    attempt(run, "mnist-chief-0", 1, ["first"], 1, 1000.0, 1010.0)
    attempt(run, "mnist-chief-0", 2, ["second"], 0, 1020.0, 1030.0)
    assert main(["dev", "chief-0", "--attempt", "5", "--runs-dir", str(tmp_path)]) == 2
    assert capfdbinary.readouterr().err.decode() == (
        "tftrain logs: mnist-chief-0 has no attempt 5 (its attempts: 1, 2)\n"
    )


def test_the_follower_closes_its_file(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"x\n")
    follower = Follower(path, io.BytesIO())
    follower.pump()
    stream = follower.stream
    assert stream is not None and not stream.closed
    follower.close()
    assert stream.closed


def test_follow_waits_through_a_relaunch_that_has_not_started_the_replica_yet(
    tmp_path: Path,
) -> None:
    # A relaunch (a new deploy generation) started its chief only: the followed worker has no
    # attempt in it yet. Following goes on; the run's success ends it.
    run = tmp_path / "run"
    now = time.time()
    attempt(run, "mnist-chief-0", 1, ["c"], None, now - 5, now - 5)
    worker = attempt(run, "mnist-worker-0", 1, ["w"], None, now - 5, now - 5)
    state = read_run(run, with_scalars=False)
    assert state is not None

    def relaunch() -> None:
        name = f"{KEY}.newgen000000.mnist-chief-0.1"
        claim = run / ".tftrain-run" / "attempts" / name
        claim.mkdir()
        (claim / "start").write_text(f"{int(time.time()) + 1}\n")
        (claim / "beat").write_text(f"{int(time.time()) + 1}\n")

    def succeed() -> None:
        (run / ".tftrain-run" / f"succeeded.{KEY}").write_text("mnist-chief-0\n")

    steps = [relaunch, succeed]
    out = io.BytesIO()
    follow(run, "mnist-worker-0", state.attempts["mnist-worker-0"][0], out, _stepper(steps))
    assert steps == [] and out.getvalue() == worker.read_bytes()


def test_a_stack_from_another_directory_and_ctrl_c(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.status import logs as module

    stacks = tmp_path / "stacks"
    stacks.mkdir()
    source = Path(__file__).resolve().parents[1] / "stacks" / "Pulumi.dev.yaml"
    (stacks / "Pulumi.mine.yaml").write_text(source.read_text())
    failed_run(tmp_path / "runs" / "mnist" / "run-aaaa1111")
    args = ["mine", "--stacks-dir", str(stacks), "--runs-dir", str(tmp_path / "runs")]
    assert main(args) == 0
    assert capfdbinary.readouterr().out.decode().startswith("Traceback")

    def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "local_logs", interrupted)
    assert main(args) == 130


def test_logs_follow_reads_on_into_the_replicas_next_attempt(tmp_path: Path) -> None:
    """`tftrain logs dev chief-0 -f`: the chief's first attempt failed; as its log is printed
    the second starts and the run succeeds: both are printed, the second after the first."""
    from infra.status.logs import local_logs, parse_args

    run = tmp_path / "mnist" / "run-aaaa1111"
    now = time.time()
    attempt(run, "mnist-chief-0", 1, ["first"], 1, now - 60, now - 50)

    class Terminal(io.BytesIO):
        def write(self, data: bytes) -> int:  # type: ignore[override]
            if b"first" in data:  # the second attempt starts and succeeds meanwhile
                attempt(run, "mnist-chief-0", 2, ["second"], None, now, now)
                (run / ".tftrain-run" / f"succeeded.{KEY}").write_text("mnist-chief-0\n")
            return super().write(data)

    out = Terminal()
    args = parse_args(["dev", "chief-0", "-f", "--runs-dir", str(tmp_path)])
    assert local_logs(args, tmp_path, out, read_run(run, with_scalars=False)) == 0
    assert out.getvalue().decode().splitlines() == [
        "first",
        "tftrain-supervise: mnist-chief-0 attempt 1 ended: exit 1",
        "second",
    ]


def test_logs_f_follows_the_named_replica_into_its_next_attempt(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `tftrain logs dev worker-0 -f`: the worker restarts while followed, then the run ends.
    run = tmp_path / "runs" / "mnist" / "run-aaaa1111"
    now = time.time()
    attempt(run, "mnist-chief-0", 1, ["chief"], None, now, now)
    attempt(run, "mnist-worker-0", 1, ["first"], 1, now, now)

    def second() -> None:
        attempt(run, "mnist-worker-0", 2, ["second"], None, time.time(), time.time())

    def succeed() -> None:
        (run / ".tftrain-run" / f"succeeded.{KEY}").write_text("mnist-chief-0\n")

    steps = [second, succeed]
    real_follow = logs.follow

    def driven(*args: Any) -> None:
        real_follow(*args, sleep=_stepper(steps))

    monkeypatch.setattr(logs, "follow", driven)
    monkeypatch.chdir(tmp_path)
    assert main(["dev", "worker-0", "-f", "--runs-dir", "runs"]) == 0
    assert steps == []
    assert capfdbinary.readouterr().out.decode().splitlines() == [
        "first",
        "tftrain-supervise: mnist-worker-0 attempt 1 ended: exit 1",
        "second",
    ]
