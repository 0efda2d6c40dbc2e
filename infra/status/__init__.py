"""`python -m infra.status <stack>`: what a stack's runs are doing, and what they did.

One command for both places a stack runs:
- on this machine (the runs the local launcher left under `runs/<stack>/`): each run's
  outcome (running, succeeded, failed and why), step, headline metric, wall time, attempts
  and restarts per replica, where each replica's log and the run's report are; for a failed
  run, the failing replica, attempt, exit code or signal and its last log lines;
- in the cluster (`--cluster`, or `--kubeconfig`, or when there are no local runs and the
  stack has a cluster, its stack output `kubeconfig`): each
  replica's phase and restarts, and for anything not running its cause, named, with the
  stack config key that changes it (`infra.status.causes`); a failed replica's last lines;
  with `--report`, the run's report rendered here (`infra.status.cloud_report`).
Exit status: 0 answered; 1 the cluster could not be read; 2 bad arguments or stack config.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from infra.config import ConfigError, StackConfig, load_stack
from infra.lifecycle import ends_run
from infra.records.run_state import RunState, read_run
from infra.status.cloud import (
    ClusterError,
    ReplicaLine,
    fetch,
    kubeconfig_file,
    last_lines,
    replica_lines,
    run_phase,
)
from infra.status.cloud_report import cloud_report
from infra.status.local import (
    FAILURE_LINES,
    describe_run,
    inert,
    pasteable,
    run_dirs,
    run_record,
    runs_root,
)
from infra.topology import build_topology

PROG = "tftrain status"
EXIT_CLUSTER = 1
EXIT_USAGE = 2


EXAMPLES = """\
examples:
  tftrain status dev                       the runs of stack dev on this machine
  tftrain status dev --json                the same, as JSON for scripts
  tftrain status ack-gpu                   the run in the stack's cluster, causes named
  tftrain status ack-gpu --report          fetch a cluster run's logs and write its report here

exit status:
  0  answered (also: no runs yet)
  1  the cluster could not be read
  2  bad arguments or stack config
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Show a stack's runs: on this machine (runs/STACK/) or in its cluster.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("stack", metavar="STACK", help="stack name (stacks/Pulumi.STACK.yaml)")
    parser.add_argument(
        "--stacks-dir", type=Path, metavar="DIR", help="where Pulumi.STACK.yaml lives"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="only the runs on this machine")
    where.add_argument(
        "--cluster",
        action="store_true",
        help="only the run in the cluster (default: asked only when there are no local runs "
        "and the stack has a cluster: --kubeconfig or its stack output `kubeconfig`)",
    )
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="FILE",
        help="the cluster's kubeconfig (default: the stack output `kubeconfig`, else kubectl's)",
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        metavar="DIR",
        help="a run's output dir, or a directory of JOB/RUN_ID runs (default: runs/STACK)",
    )
    parser.add_argument(
        "--last", type=int, default=3, metavar="N", help="how many local runs (default 3)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument(
        "--report",
        action="store_true",
        help="cluster: fetch the run's records, logs and event files (through TensorBoard's "
        "pod) into runs/STACK/cluster/ and write its report there",
    )
    return parser.parse_args(argv)


def _no_runs(args: argparse.Namespace, root: Path) -> list[str]:
    return [
        f"no runs of {args.stack} on this machine (none under {pasteable(root)})",
        f"start one with: tftrain run {args.stack}",
    ]


def _local(args: argparse.Namespace, runs: list[RunState], root: Path) -> int:
    last = max(1, args.last)
    if not runs and not args.json:
        print("\n".join(_no_runs(args, root)))
    if args.json:
        print(json.dumps({"stack": args.stack, "runs": [run_record(s) for s in runs[:last]]}))
        return 0
    for state in runs[:last]:
        for line in describe_run(state):
            print(line)
    if len(runs) > last:
        print(f"({len(runs) - last} older runs: --last N shows more)")
    return 0


def _cluster_lines(config: StackConfig, path: str | None) -> tuple[list[ReplicaLine], str]:
    lines = replica_lines(config, fetch(config, path))
    topology = build_topology(config)
    primary = next(r.name for r in topology.replicas if ends_run(r, topology))
    return lines, run_phase(lines, primary)


def _cluster_json(args: argparse.Namespace, config: StackConfig, path: str | None) -> None:
    lines, phase = _cluster_lines(config, path)
    replicas = [
        {
            "name": line.replica,
            "phase": line.phase,
            "failed_pods": line.restarts,
            "pod": line.pod or None,
            "cause": line.cause and {"what": line.cause.what, "key": line.cause.key},
        }
        for line in lines
    ]
    job = config.job
    answer = {"stack": args.stack, "job": job.name, "run_id": job.run_id}
    answer |= {"namespace": job.namespace, "phase": phase, "replicas": replicas}
    print(json.dumps(answer))


def _cluster(args: argparse.Namespace, config: StackConfig, root: Path, path: str | None) -> int:
    if args.json:
        _cluster_json(args, config, path)
        return 0
    print(
        f"stack {args.stack} in its cluster: job {config.job.name}, run {config.job.run_id}, "
        f"namespace {config.job.namespace}"
    )
    lines, phase = _cluster_lines(config, path)
    width = max(len(line.replica) for line in lines)
    for line in lines:
        restarts = f"{line.restarts} failed pod{'s' * (line.restarts != 1)}"
        print(f"  {line.replica:<{width}}  {line.phase:<12} {restarts}")
        if line.cause is not None:
            print(f"    {inert(line.cause.line())}")
        if line.phase == "Failed" and line.pod:
            for text in last_lines(path, config.job.namespace, line.pod, FAILURE_LINES):
                print(f"    | {inert(text)}")
    print(f"run: {phase}")
    if args.report:
        print(f"report: {pasteable(cloud_report(args.stack, config, path, root))}")
    elif phase in ("succeeded", "failed"):
        print(f"its report: {PROG} {args.stack} --report")
    return 0


def _ask_cluster(args: argparse.Namespace, config: StackConfig, root: Path, asked: bool) -> int:
    """The cluster's answer; without --cluster or --kubeconfig, only where the stack has a
    cluster (its stack output `kubeconfig`), never kubectl's default guessed at."""
    if not config.has_run:
        print(f"{PROG}: {args.stack} is a platform stack: it has no run", file=sys.stderr)
        return EXIT_USAGE
    try:
        with kubeconfig_file(args.stack, args.kubeconfig) as path:
            if path is None and not asked:
                if args.json:
                    return _local(args, [], root)
                print(
                    f"no cluster known for {args.stack}: it has no stack output `kubeconfig` "
                    f"(not deployed with `pulumi up -s {args.stack}` from here); "
                    f"`{PROG} {args.stack} --cluster` asks kubectl's default cluster, "
                    "--kubeconfig FILE another"
                )
                return 0
            return _cluster(args, config, root, path)
    except (ClusterError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_CLUSTER


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = load_stack(args.stack, args.stacks_dir)
    except (ConfigError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_USAGE
    root = runs_root(args.stack, args.runs_dir)
    asked = args.cluster or args.kubeconfig is not None
    if not asked:
        runs = [state for path in run_dirs(root) if (state := read_run(path)) is not None]
        if runs or args.local:
            return _local(args, runs, root)
        if not args.json:
            print("\n".join(_no_runs(args, root)))
    return _ask_cluster(args, config, root, asked)
