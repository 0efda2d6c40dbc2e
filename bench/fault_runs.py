"""Fault runs: the dev stack's topology under the local launcher, one replica signalled.

Runs of one small configuration (1 ps, 2 workers, chief; the first 8,192 training
examples; a checkpoint every 50 steps): a baseline with no fault, then a run each in which
worker 1, the chief or the ps gets SIGKILL (a crash) or SIGTERM (a preemption notice) once
the chief has logged a step drawn at random (seeded) between the first checkpoint and the
last one. The launcher restarts the replica on its port (`job.backoffLimit`); after a chief
or ps fault the restarted chief resumes from the latest checkpoint: after a SIGKILL the
last periodic one, after a SIGTERM the one the chief saved at its current step
(`trainer.preemption`). Prints one Markdown table: where each fault hit, the
step training resumed from, the steps lost, restarts, the final step, test accuracy and the
wall time against the baseline.

    .venv/bin/python -m bench.fault_runs       # baseline + worker, chief, ps; KILL and TERM
    .venv/bin/python -m bench.fault_runs --faults ps --signals TERM --seed 3 --echo

The driver is tests/fault_harness.py, which tests/test_fault_tolerance.py asserts on.
Wall times are of a 2-core machine: anything else running on it shows in them.
"""

from __future__ import annotations

import argparse
import random
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tests.fault_harness import FAULTS, SIGNALS, Fault, Outcome, RunConfig, run


def table(outcomes: Sequence[Outcome]) -> list[str]:
    baseline = next((o.seconds for o in outcomes if o.fault is None), None)
    rows = [
        "| fault | chief's last step K | resumed at R | steps lost K-R | restarts "
        "| kill to training again, s | final step | test accuracy | wall s "
        "| extra s vs baseline | exit |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for outcome in outcomes:
        fault = outcome.fault
        restarted = ", ".join(
            f"{name.removeprefix('mnist-')} {count}"
            for name, count in outcome.restarts.items()
            if count
        )
        extra = f"{outcome.seconds - baseline:+.1f}" if baseline and fault else ""
        cells = [
            f"{fault.target.removeprefix('mnist-')} {fault.signal.name} at {fault.at}"
            if fault
            else "none (baseline)",
            _cell(outcome.last_step_before_fault),
            _cell(outcome.resumed_step),
            str(outcome.steps_lost) if fault else "",
            restarted or "none",
            _cell(outcome.recovery_seconds, ".1f"),
            f"{_cell(outcome.final_step)} of {outcome.planned_step}",
            _cell(outcome.accuracy),
            f"{outcome.seconds:.1f}",
            extra,
            str(outcome.status),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _cell(value: float | None, spec: str = "g") -> str:
    return "" if value is None else format(value, spec)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", nargs="+", choices=FAULTS, default=list(FAULTS))
    parser.add_argument("--signals", nargs="+", choices=SIGNALS, default=list(SIGNALS))
    parser.add_argument("--seed", type=int, default=1, help="draws the step of each kill")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--echo", action="store_true", help="stream the launcher's output")
    parser.add_argument(
        "--keep", type=Path, help="keep each run's output dir, and its output with times, here"
    )
    args = parser.parse_args(argv)

    config = RunConfig()
    rng = random.Random(args.seed)
    faults: list[Fault | None] = [] if args.no_baseline else [None]
    faults += [
        Fault(kind, config.random_step(rng), signal.Signals[f"SIG{name}"])
        for name in args.signals
        for kind in args.faults
    ]
    # The first TensorFlow import after a while reads its libraries from disk again: that
    # added up to 15 s to whichever run came first. One import first makes the runs equal.
    subprocess.run([sys.executable, "-c", "import tensorflow"], check=True, capture_output=True)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="fault-runs-") as scratch:
        root = args.keep or Path(scratch)
        for fault in faults:
            name = fault.name if fault else "baseline"
            outcome = run(config, root / name, fault, echo=args.echo)
            outcomes.append(outcome)
            if args.keep:
                (root / f"{name}.log").write_text(outcome.timed_output())
            print(f"{name}: exit {outcome.status} in {outcome.seconds:.1f}s", file=sys.stderr)
    invoked = ["python", "-m", "bench.fault_runs", *(sys.argv[1:] if argv is None else argv)]
    print(f"Fault runs, seed {args.seed}: {shlex.join(invoked)}")
    print(f"Each run: {config.shell_command(Path('<output dir>'))}")
    print()
    print("\n".join(table(outcomes)))
    return 0 if all(outcome.status == 0 for outcome in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
