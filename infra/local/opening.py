"""What the launcher says before anything starts: what this launch trains, with which
command, on which addresses, where its output goes and how it ends."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from pathlib import Path

from infra.config import StackConfig
from infra.lifecycle import FINAL_EXIT_CODES, SCRIPT
from infra.local.plan import REPO, TENSORBOARD, LocalPlan
from infra.local.ports import HOST, PortReservation


def opening_lines(stack: str, config: StackConfig) -> list[str]:
    """What this launch trains with, first: stack, run id, replicas and the hyperparameters,
    so a --set shows before the first step."""
    hyper = config.hyperparams
    replicas = ", ".join(
        f"{group.number} {group.type}" for group in config.replica_groups if group.number
    )
    length = f"epochs {hyper.epochs}" + (
        f", max steps {hyper.max_steps}" if hyper.max_steps else ""
    )
    return [
        f"stack {stack}: job {config.job.name}, run {config.job.run_id}",
        f"replicas: {replicas}",
        f"hyperparameters: learning rate {hyper.learning_rate:g}, batch size "
        f"{hyper.batch_size}, {length}, strategy {config.effective_strategy}",
    ]


def command_lines(plan: LocalPlan) -> list[str]:
    """Each group's command and args, once per group."""
    lines = {}
    for group in plan.config.replica_groups:
        if group.number:
            argv = (*plan.config.command_of(group), *plan.config.args_of(group))
            lines.setdefault(shlex.join(argv), []).append(group.type)
    return [f"{'/'.join(types)}: {command}" for command, types in lines.items()]


def data_lines(config: StackConfig) -> list[str]:
    data = config.data
    lines = [f"input: {data.local_input_dir}"] if data.local_input_dir else []
    if data.local_export_dir:
        target = Path(data.local_export_dir) / config.job.name / config.job.run_id
        lines.append(f"export: {target} once the run succeeds")
    if config.job.init_checkpoint:
        lines.append(f"fine-tuning from {config.job.init_checkpoint} (job.initCheckpoint)")
    return lines


def say_plan(
    say: Callable[[str], None],
    plan: LocalPlan,
    args: argparse.Namespace,
    ports: PortReservation,
    network_line: str,
) -> None:
    """The launcher's opening lines: what this launch trains, where, and how it ends."""
    config = plan.config
    for line in opening_lines(args.stack, config):
        say(line)
    for line in command_lines(plan):
        say(f"command {line} (each replica under {SCRIPT.relative_to(REPO)})")
    say("cluster: " + ", ".join(f"{r.name}={r.address}" for r in plan.topology.replicas))
    say(network_line)
    say(f"output dir: {plan.output_dir}")
    for line in data_lines(plan.config):
        say(line)
    limit = config.job.backoff_limit
    final = ", ".join(map(str, FINAL_EXIT_CODES))
    say(
        f"restarts: a failed replica starts again on its port, up to {limit} times "
        f"(job.backoffLimit {limit}); exit codes {final} end the job at once"
        if limit
        else "restarts: none (job.backoffLimit 0): a failed replica ends the job"
    )
    if config.job.active_deadline_seconds and args.timeout is None:
        say(f"deadline: job.activeDeadlineSeconds {config.job.active_deadline_seconds}")
    if config.job.data_dir and not Path(config.job.data_dir).is_dir():
        say(f"warning: job.dataDir {config.job.data_dir} does not exist on this machine")
    if args.tensorboard:
        say(f"TensorBoard: http://{HOST}:{ports.port(TENSORBOARD)}/")
