"""What TensorFlow's CPU allocator costs a training process: malloc against BFC.

The trainer turns on TensorFlow's BFC allocator (`TF_CPU_ALLOCATOR_USE_BFC=1`,
`trainer/environment.py`). This runs the same short training with it off and on, alternated
(off, on, off, on, ...) so drifting load hits both alike, and reads each process's CPU time
split into user and kernel (system) time, and its peak resident memory, from `wait4`:

- `mwms`: two MultiWorkerMirrored workers on this machine, as the launcher runs them;
- `single`: one process, the whole batch.

    .venv/bin/python -m bench.allocator                       # 2 rounds of 600 steps each
    .venv/bin/python -m bench.allocator --rounds 3 --steps 1000 --setups mwms
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.time_to_accuracy import base_env
from infra.local.ports import PortReservation

ALLOCATORS = {"malloc": "0", "bfc": "1"}
EXAMPLES_PER_SEC = re.compile(r"Examples/sec: ([0-9.]+)")


@dataclass(frozen=True)
class Sample:
    setup: str
    allocator: str
    examples_per_sec: float
    user_s: float
    system_s: float
    peak_rss_mb: float  # the largest of the setup's processes


def task_envs(setup: str) -> list[dict[str, str]]:
    """Each process's TF_CONFIG (none for the single process)."""
    if setup == "single":
        return [{}]
    # The launcher's reservation, closed at once: ports nobody held a moment ago.
    with PortReservation(["worker-0", "worker-1"]) as reservation:
        workers = [f"localhost:{port}" for port in reservation.ports.values()]
    return [
        {"TF_CONFIG": json.dumps({"cluster": {"worker": workers},
                                  "task": {"type": "worker", "index": index}})}
        for index in range(len(workers))
    ]  # fmt: skip


def run(setup: str, allocator: str, steps: int, work: Path) -> Sample:
    processes = []
    for index, extra in enumerate(task_envs(setup)):
        env = {**base_env(), **extra, "TF_CPU_ALLOCATOR_USE_BFC": ALLOCATORS[allocator]}
        output_dir = work / f"{setup}-{allocator}-{index}-{time.time_ns()}"
        argv = [sys.executable, "-m", "trainer", "--max-steps", str(steps),
                "--checkpoint-steps", str(steps * 10), "--output-dir", str(output_dir)]  # fmt: skip
        # A file, not a pipe: a full pipe nobody reads yet would stall that worker, and with
        # it the other, which waits for its all-reduce.
        log_path = work / f"{output_dir.name}.log"
        with log_path.open("w") as log:
            processes.append((subprocess.Popen(argv, env=env, stdout=log, stderr=log), log_path))
    user = system = peak = 0.0
    rates = []
    for process, log_path in processes:
        _pid, status, usage = os.wait4(process.pid, 0)
        output = log_path.read_text()
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise SystemExit(f"{setup}/{allocator}: exit {process.returncode}\n{output[-3000:]}")
        user += usage.ru_utime
        system += usage.ru_stime
        peak = max(peak, usage.ru_maxrss / 1024)  # KiB on Linux
        rates += [float(rate) for rate in EXAMPLES_PER_SEC.findall(output)]
    return Sample(setup, allocator, max(rates), user, system, peak)


def table(samples: Sequence[Sample]) -> list[str]:
    lines = [
        "| setup | allocator | examples/s | user CPU s | system CPU s | peak RSS MB |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for setup in dict.fromkeys(sample.setup for sample in samples):
        for allocator in ALLOCATORS:
            runs = [s for s in samples if (s.setup, s.allocator) == (setup, allocator)]

            def cell(values: list[float], fmt: str) -> str:
                shown = ", ".join(format(value, fmt) for value in values)
                return f"{format(statistics.median(values), fmt)} ({shown})"

            lines.append(
                f"| {setup} | {allocator} | {cell([r.examples_per_sec for r in runs], '.0f')} "
                f"| {cell([r.user_s for r in runs], '.1f')} "
                f"| {cell([r.system_s for r in runs], '.1f')} "
                f"| {cell([r.peak_rss_mb for r in runs], '.0f')} |"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.allocator", description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=600, help="training steps a run")
    parser.add_argument("--setups", nargs="+", choices=("mwms", "single"),
                        default=["mwms", "single"])  # fmt: skip
    args = parser.parse_args(argv)
    samples = []
    with tempfile.TemporaryDirectory(prefix="tftrain-allocator-") as work:
        for round_ in range(1, args.rounds + 1):
            for setup in args.setups:
                for allocator in ALLOCATORS:
                    sample = run(setup, allocator, args.steps, Path(work))
                    samples.append(sample)
                    print(f"round {round_} {setup} {allocator}: {sample}", flush=True)
    print("\n".join(table(samples)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
