"""`python -m infra.status <stack>`: what a stack's runs are doing, and what they did.

One command for both places a stack runs:
- on this machine (the runs the local launcher left under `runs/<stack>/`): each run's
  outcome (running, succeeded, failed and why), step, headline metric, wall time, attempts
  and restarts per replica, where each replica's log and the run's report are; for a failed
  run, the failing replica, attempt, exit code or signal and its last log lines;
- in the cluster (`--cluster`, or `--kubeconfig`, or when there are no local runs): each
  replica's phase and restarts, and for anything not running its cause, named, with the
  stack config key that changes it (`infra.status.causes`); a failed replica's last lines;
  with `--report`, the run's report rendered here (`infra.status.cloud_report`).
Exit status: 0 answered; 1 the cluster could not be read; 2 bad arguments or stack config.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from infra.config import ConfigError, StackConfig, load_stack
from infra.lifecycle import ends_run
from infra.local.plan import REPO
from infra.run_state import read_run
from infra.status.cloud import (
    ClusterError,
    fetch,
    kubeconfig_file,
    last_lines,
    replica_lines,
    run_phase,
)
from infra.status.cloud_report import cloud_report
from infra.status.local import FAILURE_LINES, describe_run, run_dirs
from infra.topology import build_topology

PROG = "tftrain status"
EXIT_CLUSTER = 1
EXIT_USAGE = 2


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Show a stack's runs: on this machine (runs/<stack>/) or in its cluster.",
    )
    parser.add_argument("stack", help="stack name (stacks/Pulumi.<stack>.yaml)")
    parser.add_argument("--stacks-dir", type=Path, help="where Pulumi.<stack>.yaml lives")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="only the runs on this machine")
    where.add_argument("--cluster", action="store_true", help="only the run in the cluster")
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        help="the cluster's kubeconfig (default: the stack output `kubeconfig`, else kubectl's)",
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        help="a run's output dir, or a directory of <job>/<run id> runs (default: runs/<stack>)",
    )
    parser.add_argument("--last", type=int, default=3, help="how many local runs (default 3)")
    parser.add_argument(
        "--report",
        action="store_true",
        help="cluster: fetch the run's records, logs and event files (through TensorBoard's "
        "pod) into runs/<stack>/cluster/ and write its report there",
    )
    return parser.parse_args(argv)


def _local(root: Path, last: int) -> int:
    runs = [state for path in run_dirs(root) if (state := read_run(path)) is not None]
    if not runs:
        print(f"no runs under {root}")
        return 0
    for state in runs[: max(1, last)]:
        for line in describe_run(state, root):
            print(line)
    if len(runs) > last:
        print(f"({len(runs) - last} older runs under {root}: --last N shows more)")
    return 0


def _cluster(args: argparse.Namespace, config: StackConfig, root: Path) -> int:
    print(
        f"stack {args.stack} in its cluster: job {config.job.name}, run {config.job.run_id}, "
        f"namespace {config.job.namespace}"
    )
    with kubeconfig_file(args.stack, args.kubeconfig) as path:
        lines = replica_lines(config, fetch(config, path))
        topology = build_topology(config)
        primary = next(r.name for r in topology.replicas if ends_run(r, topology))
        width = max(len(line.replica) for line in lines)
        for line in lines:
            restarts = f"{line.restarts} failed pod{'s' * (line.restarts != 1)}"
            print(f"  {line.replica:<{width}}  {line.phase:<12} {restarts}")
            if line.cause is not None:
                print(f"    {line.cause.line()}")
            if line.phase == "Failed" and line.pod:
                for text in last_lines(path, config.job.namespace, line.pod, FAILURE_LINES):
                    print(f"    | {text}")
        phase = run_phase(lines, primary)
        print(f"run: {phase}")
        if args.report:
            print(f"report: {cloud_report(args.stack, config, path, root)}")
        elif phase in ("succeeded", "failed"):
            print(f"its report: {PROG} {args.stack} --report")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = load_stack(args.stack, args.stacks_dir)
    except (ConfigError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_USAGE
    root = args.runs_dir.resolve() if args.runs_dir else REPO / "runs" / args.stack
    cluster = args.cluster or args.kubeconfig is not None or (not args.local and not root.exists())
    if not cluster:
        return _local(root, args.last)
    if not config.has_run:
        print(f"{PROG}: {args.stack} is a platform stack: it has no run", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _cluster(args, config, root)
    except (ClusterError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_CLUSTER
