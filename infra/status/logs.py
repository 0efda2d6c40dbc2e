"""`tftrain logs STACK [REPLICA] [-f]`: one replica's log, here or in the cluster.

By default the replica that failed the run, else the one that ends it (chief, master, else
worker 0). On this machine the log is the supervisor's per-attempt file of the newest run
under runs/STACK (`replicas/NAME/logs/KEY.G.NAME.N.log`, its rotated `.log.1` first); `-f`
follows it as it grows, through rotations and into the replica's next attempt, until the run
has ended. In the cluster it is `kubectl logs` of the replica's newest pod, with the stack's
kubeconfig; once the pods are gone, the kept per-attempt logs, fetched from the run's volume
through TensorBoard's pod (as `tftrain status --report` does).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from infra.config import ConfigError, StackConfig, load_stack
from infra.manifests.workloads import CONTAINER_NAME
from infra.records.run_state import Attempt, RunState, read_run
from infra.status.cloud import (
    ClusterError,
    fetch,
    kubeconfig_file,
    kubectl_argv,
    replica_lines,
)
from infra.status.cloud_report import fetch_run, mirror_dir
from infra.status.local import pasteable, run_dirs, runs_root

PROG = "tftrain logs"
EXIT_NO_LOG = 1
EXIT_USAGE = 2
POLL_SECONDS = 0.25
# The replica types that end a run, in TFJob's order of precedence.
_ENDS_RUN = ("chief", "master", "worker")

EXAMPLES = """\
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


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Print a replica's log: the chief's, or the failed replica's, by default.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("stack", metavar="STACK", help="stack name (stacks/Pulumi.STACK.yaml)")
    parser.add_argument(
        "replica",
        metavar="REPLICA",
        nargs="?",
        help="e.g. mnist-worker-1 or worker-1 (default: the failed one, else the chief)",
    )
    parser.add_argument("-f", "--follow", action="store_true", help="follow it while it runs")
    parser.add_argument("--attempt", type=int, metavar="N", help="this attempt (default: newest)")
    parser.add_argument(
        "--stacks-dir", type=Path, metavar="DIR", help="where Pulumi.STACK.yaml lives"
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        metavar="DIR",
        help="a run's output dir, or a directory of JOB/RUN_ID runs (default: runs/STACK)",
    )
    parser.add_argument("--cluster", action="store_true", help="the run in the stack's cluster")
    parser.add_argument(
        "--kubeconfig", type=Path, metavar="FILE", help="a kubeconfig (implies --cluster)"
    )
    return parser.parse_args(argv)


def replica_matches(name: str, wanted: str) -> bool:
    """`mnist-worker-1` is named by itself, `worker-1` or `worker:1`."""
    wanted = wanted.replace(":", "-")
    return name == wanted or name.endswith(f"-{wanted}")


def default_replica(names: Sequence[str], failed: str | None) -> str | None:
    """The failed replica, else the one that ends the run: chief, master, else worker 0."""
    if failed in names:
        return failed
    for kind in _ENDS_RUN:
        found = next((n for n in names if n.endswith(f"-{kind}-0")), None)
        if found:
            return found
    return names[0] if names else None


def choose_replica(names: Sequence[str], wanted: str | None, failed: str | None) -> str:
    if wanted is None:
        chosen = default_replica(names, failed)
        if chosen is None:
            raise LookupError("no replica has started")
        return chosen
    found = [n for n in names if replica_matches(n, wanted)]
    if len(found) != 1:
        known = ", ".join(names) or "none"
        raise LookupError(f"no replica {wanted!r} in this run (its replicas: {known})")
    return found[0]


def _pieces(log: Path) -> list[Path]:
    """An attempt's log as files in order: the rotated part first."""
    rotated = log.with_name(log.name + ".1")
    return [p for p in (rotated, log) if p.exists()]


def print_attempt(log: Path, out: BinaryIO) -> None:
    for piece in _pieces(log):
        with piece.open("rb") as stream:
            while chunk := stream.read(1 << 16):
                out.write(chunk)
    out.flush()


def _attempt(state: RunState, replica: str, number: int | None) -> Attempt:
    attempts = state.attempts[replica]
    if number is None:
        return attempts[-1]
    found = next((a for a in attempts if a.number == number), None)
    if found is None:
        numbers = ", ".join(str(a.number) for a in attempts)
        raise LookupError(f"{replica} has no attempt {number} (its attempts: {numbers})")
    return found


class Follower:
    """Reads a growing log to its end, again and again: a rename (rotation) is read to its
    end before the new file is opened; a truncation restarts at the beginning."""

    def __init__(self, path: Path, out: BinaryIO) -> None:
        self.path = path
        self.out = out
        self.stream: BinaryIO | None = None

    def _open(self) -> None:
        try:
            self.stream = self.path.open("rb")
        except OSError:
            self.stream = None

    def pump(self) -> None:
        if self.stream is None:
            self._open()
            if self.stream is None:
                return
        self._drain()
        try:
            current = self.path.stat()
        except OSError:
            return
        mine = os.fstat(self.stream.fileno())
        if (current.st_ino, current.st_dev) != (mine.st_ino, mine.st_dev):
            self._drain()  # rotated: what reached the old file since, then the new one
            self.stream.close()
            self._open()
            if self.stream is not None:
                self._drain()
        elif current.st_size < self.stream.tell():
            self.stream.seek(0)  # truncated in place
            self._drain()

    def _drain(self) -> None:
        assert self.stream is not None
        while chunk := self.stream.read(1 << 16):
            self.out.write(chunk)
        self.out.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()


def follow(run_dir: Path, replica: str, first: Attempt, out: BinaryIO,
           sleep: Callable[[float], None] = time.sleep) -> None:  # fmt: skip
    """Print the attempt's log as it grows, then each later attempt's, until the run ends."""
    attempt = first
    follower = Follower(attempt.log or Path("/nonexistent"), out)
    try:
        while True:
            follower.pump()
            state = read_run(run_dir, with_scalars=False)
            if state is None:
                return
            newest = state.attempts.get(replica, [attempt])[-1]
            if newest.number != attempt.number and newest.log is not None:
                follower.pump()
                follower.close()
                attempt, follower = newest, Follower(newest.log, out)
                continue
            if state.outcome != "running":
                follower.pump()
                return
            sleep(POLL_SECONDS)
    finally:
        follower.close()


def _newest_run(root: Path) -> RunState | None:
    for path in run_dirs(root):
        state = read_run(path, with_scalars=False)
        if state is not None:
            return state
    return None


def local_logs(args: argparse.Namespace, root: Path, out: BinaryIO, state: RunState | None) -> int:
    """The log of `state`, the newest run under `root` (None: there is none)."""
    if state is None:
        print(f"{PROG}: no runs of {args.stack} under {pasteable(root)}; start one with: "
              f"tftrain run {args.stack}", file=sys.stderr)  # fmt: skip
        return EXIT_NO_LOG
    failed = state.failure.replica if state.failure else None
    try:
        replica = choose_replica(list(state.attempts), args.replica, failed)
        attempt = _attempt(state, replica, args.attempt)
    except LookupError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_USAGE
    if attempt.log is None:
        print(f"{PROG}: {replica} attempt {attempt.number} left no log", file=sys.stderr)
        return EXIT_NO_LOG
    print(f"==> {pasteable(attempt.log)} <==", file=sys.stderr)
    if args.follow and args.attempt is None:
        follow(state.directory, replica, attempt, out)
    else:
        print_attempt(attempt.log, out)
    return 0


def _pod(config: StackConfig, kubeconfig: str | None, wanted: str | None) -> tuple[str, str]:
    """(replica, its newest pod, or "" if none is left)."""
    lines = replica_lines(config, fetch(config, kubeconfig))
    failed = next((line.replica for line in lines if line.phase == "Failed"), None)
    replica = choose_replica([line.replica for line in lines], wanted, failed)
    return replica, next(line.pod for line in lines if line.replica == replica)


def cluster_logs(args: argparse.Namespace, config: StackConfig, out: BinaryIO) -> int:
    root = runs_root(args.stack, args.runs_dir)
    with kubeconfig_file(args.stack, args.kubeconfig) as kubeconfig:
        replica, pod = _pod(config, kubeconfig, args.replica)
        if pod:
            extra = ["-f"] if args.follow else []
            argv = kubectl_argv(kubeconfig, config.job.namespace, "logs", pod, "-c",
                                CONTAINER_NAME, *extra)  # fmt: skip
            print(f"==> pod {pod} ({replica}) <==", file=sys.stderr)
            return subprocess.run(argv, stdout=out, check=False).returncode and EXIT_NO_LOG
        mirror = mirror_dir(root, config)
        print(f"{replica} has no pod left: reading its kept logs into {pasteable(mirror)}",
              file=sys.stderr)  # fmt: skip
        fetch_run(config, kubeconfig, mirror)
    args.replica, args.follow = replica, False
    return local_logs(args, mirror, out, _newest_run(mirror))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = load_stack(args.stack, args.stacks_dir)
    except (ConfigError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_USAGE
    out = sys.stdout.buffer
    try:
        root = runs_root(args.stack, args.runs_dir)
        newest = _newest_run(root)
        if args.cluster or args.kubeconfig is not None or newest is None:
            with kubeconfig_file(args.stack, args.kubeconfig) as known:
                has_cluster = known is not None or args.cluster
            if has_cluster:  # asked, or the stack has a cluster (its stack output)
                return cluster_logs(args, config, out)
        return local_logs(args, root, out, newest)
    except (ClusterError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_NO_LOG
    except LookupError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
