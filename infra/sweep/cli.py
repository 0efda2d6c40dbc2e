"""`tftrain compare <stack>` (`python -m infra.sweep <stack>`): a sweep's trials, best first.

Reads each trial's run directory under DIR (default: the local launcher's
runs/<stack>/<job>; for the cluster, a copy of the volume's <mountPath>/<job> or of the
bucket's <exportPrefix><job>/), prints the table, and writes beside the runs
sweep-results.csv, sweep-results.md and sweep-results.svg, and `best`, a
link to the best trial's directory. Exit status: 0 compared; 2 a bad stack, a stack without a
sweep, or no such directory.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from infra.config import ConfigError, StackConfig
from infra.local.plan import default_output_dir, load_config
from infra.sweep.plot import plot
from infra.sweep.results import (
    TrialResult,
    best_trial,
    compare,
    missing_metric,
    to_csv,
    to_markdown,
    to_records,
)

PROG = "tftrain compare"
RESULTS = "sweep-results"
BEST = "best"


EXAMPLES = """\
examples:
  tftrain compare dev-sweep            the trials of dev-sweep, best first
  tftrain compare dev-sweep --json     the same, as JSON for scripts
  tftrain compare ack-sweep --runs-dir ./copied/mnist

exit status:
  0  compared
  1  no trial has written the sweep's metric (the scalars found are named)
  2  a bad stack, a stack without a sweep, or no such directory
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A sweep's trials in one table, best first; written beside the runs as "
        "sweep-results.csv, .md and .svg, with `best` linking the best trial's directory.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("stack", metavar="STACK", help="a stack with a sweep")
    parser.add_argument(
        "--stacks-dir", type=Path, metavar="DIR", help="where the stack files are (stacks/)"
    )
    parser.add_argument(
        "--runs-dir",
        type=Path,
        metavar="DIR",
        help="the directory holding the trials' RUN_ID/ directories "
        "(default: runs/STACK/JOB, where the local launcher writes)",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="as for tftrain run"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the trials as JSON (the files are written too)"
    )
    return parser.parse_args(argv)


def _link_best(runs_dir: Path, run_id: str) -> Path:
    """`<runs dir>/best` → the best trial's directory (relative, so a copied tree keeps it)."""
    link = runs_dir / BEST
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(run_id, target_is_directory=True)
    return link


def write_results(config: StackConfig, runs_dir: Path, results: list[TrialResult]) -> list[str]:
    """Write the files beside the runs; the lines to print."""
    assert config.sweep is not None
    metric = config.sweep.metric
    markdown = to_markdown(results, metric.name, metric.goal)
    (runs_dir / f"{RESULTS}.csv").write_text(to_csv(results, metric.name))
    (runs_dir / f"{RESULTS}.md").write_text(markdown)
    lines = [markdown.rstrip("\n"), ""]
    plot(results, metric.name, runs_dir / f"{RESULTS}.svg")
    lines.append(f"written in {runs_dir}: {RESULTS}.csv, {RESULTS}.md, {RESULTS}.svg")
    best = best_trial(results)
    if best is not None:
        lines.append(f"{_link_best(runs_dir, best.run_id)} → {best.run_id} (the best trial)")
        # Where the launcher exported the trials (data.localExportDir): <dir>/<job>/<run id>.
        exported = Path(config.data.local_export_dir or "/nonexistent") / config.job.name
        if (exported / best.run_id).is_dir():
            lines.append(f"{_link_best(exported, best.run_id)} → {best.run_id} (its export)")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = load_config(args.stack, args.stacks_dir, args.set)
    except (ConfigError, ValueError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    if not config.trials:
        print(f"{PROG}: {args.stack} has no tftrain:sweep: nothing to compare", file=sys.stderr)
        return 2
    runs_dir = args.runs_dir or default_output_dir(args.stack, config).parent
    if not runs_dir.is_dir():
        print(f"{PROG}: no run directory {runs_dir}: has the sweep run?", file=sys.stderr)
        return 2
    assert config.sweep is not None
    metric = config.sweep.metric.name
    try:
        results = compare(config, runs_dir.resolve())
        lines = write_results(config, runs_dir.resolve(), results)
    except OSError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    print(json.dumps(to_records(results, metric)) if args.json else "\n".join(lines))
    missing = missing_metric(results, metric)
    if missing is not None:
        print(f"{PROG}: {missing}", file=sys.stderr)
        return 1
    return 0
