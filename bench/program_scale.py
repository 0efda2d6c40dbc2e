"""Program scale: the whole Pulumi program under mocks with 1 … 512 workers.

For each worker count, runs `infra.program.build()` for a stack (default `ack-gpu`, the
heaviest: network, ACK cluster with both pools, NAS, every Kubernetes object) in-process
under the recording mocks the render uses (an offline preview: no engine, no cloud), and
reports wall seconds, resources registered and seconds per resource. Each size is measured
`--repeat` times and the best is kept, since a 2-core machine shared with other work is
noisy. Cost should grow linearly: one Service and one Job per worker, and every Job's
TF_CONFIG lists every replica, so bytes grow quadratically but stay small at 512 workers.

    .venv/bin/python -m bench.program_scale            # 1, 16, 128, 512 workers
    .venv/bin/python -m bench.program_scale --workers 1 512 --stack ack-cpu
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

from infra.config import read_stack_file, stack_file
from infra.config.stack_file import engine_config
from infra.mock_deploy import run_program


def with_workers(raw: dict[str, Any], workers: int) -> dict[str, Any]:
    return {**raw, "worker": {**(raw.get("worker") or {}), "number": workers}}


def measure(stack: str, workers: int, repeat: int) -> tuple[float, int, int]:
    """Best wall seconds over `repeat` runs, resources registered, TF_CONFIG bytes per Job."""
    raw = with_workers(read_stack_file(stack_file(stack)), workers)
    config = engine_config(raw)
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        recorded = run_program(config, stack=stack)
        best = min(best, time.perf_counter() - started)
    jobs = recorded.objects_of_kind("Job")
    tf_config = next(
        env["value"]
        for env in jobs[0]["spec"]["template"]["spec"]["containers"][0]["env"]
        if env["name"] == "TF_CONFIG"
    )
    return best, len(recorded.resources), len(tf_config)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="ack-gpu")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 16, 128, 512])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object per size")
    args = parser.parse_args(argv)

    measure(args.stack, 1, 1)  # first use imports the provider SDKs: not the program's cost
    if not args.json:
        print(f"Pulumi program under mocks, stack {args.stack}, best of {args.repeat}")
        print("| workers | resources | seconds | ms / resource | TF_CONFIG bytes |")
        print("| ---: | ---: | ---: | ---: | ---: |")
    for workers in args.workers:
        seconds, resources, tf_config_bytes = measure(args.stack, workers, args.repeat)
        row = {
            "workers": workers,
            "resources": resources,
            "seconds": round(seconds, 3),
            "ms_per_resource": round(1000 * seconds / resources, 2),
            "tf_config_bytes": tf_config_bytes,
        }
        if args.json:
            print(json.dumps(row))
        else:
            print(
                "| {workers} | {resources} | {seconds:.3f} | {ms_per_resource:.2f} | "
                "{tf_config_bytes} |".format(**row)
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
