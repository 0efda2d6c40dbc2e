"""`python -m trainer`: read settings and TF_CONFIG, decide this process's role, run it.

Exit codes: 0 done; 1 the run failed (bad data, lost parameter server); 2 a person must
act, and a restart would fail the same way: a bad flag, env var, TF_CONFIG or output dir,
or checkpoints none of which restores; 143 stopped by SIGTERM after saving the step
(`trainer.preemption`). Configuration and the output dir are checked before TensorFlow is
imported (each role's module imports it), so a mistake costs a second, not a slow import or
a hang.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from trainer import environment
from trainer.data import load_mnist
from trainer.errors import NoUsableCheckpoint, RunError, UsageError
from trainer.gpu_check import require_gpus
from trainer.output_dir import prepare_output_dir
from trainer.plan import Plan, Role, make_plan
from trainer.preemption import EXIT_PREEMPTED, Preempted
from trainer.process_exit import exit_now
from trainer.settings import Settings, parse_settings
from trainer.startup import StartupClock
from trainer.tf_config import ClusterConfig, parse_tf_config
from trainer.warm_start import check_init_checkpoint, starts_from


def main(argv: Sequence[str] | None = None) -> int:
    clock = StartupClock()
    # Progress lines must reach `kubectl logs` as they happen, not when a buffer fills.
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    try:
        settings = parse_settings(sys.argv[1:] if argv is None else argv, os.environ)
        config = parse_tf_config(os.environ.get("TF_CONFIG"))
        plan = make_plan(settings.strategy, config)
        prepare_output_dir(settings.output_dir)
        environment.prepare(config, plan)
        task = str(config.task) if config else "single process"
        print(f"tftrain: {task}, strategy {plan.strategy}, role {plan.role.value}")
        clock.lap("settings")
        return run_role(plan, settings, config, clock)
    except (UsageError, NoUsableCheckpoint) as error:
        report_error(error)
        return 2
    except RunError as error:
        report_error(error)
        return 1
    except Preempted as stop:
        print(f"tftrain: {stop}; a restarted run resumes there")
        return EXIT_PREEMPTED


def report_error(error: Exception) -> None:
    # One write of the whole line: `print` writes the text and the newline separately, and
    # TensorFlow's threads logging their own errors in between glued their lines to ours.
    sys.stderr.write(f"tftrain: error: {error}\n")
    sys.stderr.flush()


def run_role(
    plan: Plan, settings: Settings, config: ClusterConfig | None, clock: StartupClock
) -> int:
    if plan.role is Role.IDLE:
        print("strategy single trains in the chief (or worker 0) alone; nothing to do here")
        return 0
    if plan.role is Role.SERVER:
        from trainer import server

        assert config is not None  # servers only exist in a cluster
        return server.serve(config, settings)
    # Before the slow TensorFlow import (each role module imports it): a broken data file
    # or a missing init checkpoint fails in a second.
    init = starts_from(settings)
    if plan.role is not Role.EVALUATOR and init is not None:
        check_init_checkpoint(init)
    data = load_mnist(settings.data_dir, settings.train_examples)
    require_gpus(settings.gpus)
    clock.lap("data")
    if plan.role is Role.EVALUATOR:
        from trainer import evaluator

        return evaluator.run(settings, data)
    from trainer import train_loop

    clock.lap("TensorFlow import")
    return train_loop.run(settings, plan, config, data, clock)


if __name__ == "__main__":
    # Here, not in `main`: a test calling `main` in its own process keeps its matplotlib.
    environment.skip_plotting_imports()
    exit_now(main())
