"""From a stack file to the exact processes to start: pure, except for reading the file.

Reuses the Pulumi program's layers unchanged (config model, topology, replica env), so the
only local differences are the addresses (localhost ports instead of Services), the output
dir (under the repo instead of the volume) and a few env defaults for running many TF
processes on one machine.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.config import (
    PROJECT,
    ConfigError,
    StackConfig,
    parse_config,
    read_stack_file,
    stack_file,
)
from infra.lifecycle import EXPORT_SCRIPT, OUTCOMES_DIR, SCRIPT, ends_run, supervision
from infra.local.data import LocalData
from infra.run_data import export_env, init_checkpoint_env, input_env
from infra.stack_file import parse_yaml
from infra.topology import Topology, build_topology
from infra.trainer_env import replica_env

REPO = Path(__file__).resolve().parents[2]
LOCALHOST = "localhost"
# A leading interpreter of the container's command; locally it must be this venv's Python.
_PYTHON = re.compile(r"^python(3(\.[0-9]+)?)?$")
# Quiet TF logs unless the user asked otherwise in their own environment. oneDNN stays on:
# disabling it (which would also silence its banner) halves the CNN's throughput on CPU.
_ENV_DEFAULTS = {"TF_CPP_MIN_LOG_LEVEL": "2"}


@dataclass(frozen=True)
class ProcessSpec:
    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str]


@dataclass(frozen=True)
class LocalPlan:
    config: StackConfig
    topology: Topology  # with localhost addresses
    output_dir: Path
    command: tuple[str, ...]  # the stack's command + args, as every replica runs it
    replicas: tuple[ProcessSpec, ...]
    # The replica whose exit ends the job and gives the exit status: TFJob's success policy.
    primary: str
    # Where the replicas' supervisors record the run's outcome, and this launch's generation.
    outcomes: Path
    generation: str


def apply_override(raw: dict[str, Any], assignment: str) -> None:
    """`hyperparams.maxSteps=50` → raw["hyperparams"]["maxSteps"] = 50 (in place).

    Keys are the stack file's (as for `pulumi config set --path`, with or without the
    `tftrain:` prefix); the value is YAML 1.2, read as stack files are, so numbers,
    booleans and `[a, b]` lists work.
    """
    key, sep, text = assignment.partition("=")
    path = key.strip().removeprefix(f"{PROJECT}:").split(".")
    if not sep or not all(path):
        raise ValueError(f"--set {assignment!r}: expected key=value, e.g. hyperparams.epochs=1")
    node = raw
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    try:
        node[path[-1]] = parse_yaml(text, f"--set {key.strip()}") if text.strip() else ""
    except ConfigError as error:
        raise ValueError(f"--set {assignment!r}: {error.problems[0]}") from None


def load_config(
    stack: str, stacks_dir: Path | None = None, overrides: Sequence[str] = ()
) -> StackConfig:
    """`infra.config.load_stack` plus `--set` overrides applied before validation.

    Overrides go in before validation (so they are checked like the file) and before the
    run id is derived (so a changed hyperparameter gets a run directory of its own).
    """
    raw = read_stack_file(stack_file(stack, stacks_dir))
    for assignment in overrides:
        apply_override(raw, assignment)
    return parse_config(raw)


def default_output_dir(stack: str, config: StackConfig) -> Path:
    """`runs/<stack>/<job>/<run id>`: the volume's `<mount>/<job>/<run id>`, per stack."""
    return REPO / "runs" / stack / config.job.name / config.job.run_id


def local_command(command: Sequence[str]) -> tuple[str, ...]:
    if command and _PYTHON.match(command[0]):
        return (sys.executable, *command[1:])
    return tuple(command)


def _no_proxy(env: Mapping[str, str]) -> str:
    # An http_proxy would otherwise catch gRPC between replicas on localhost and hang it.
    existing = env.get("no_proxy") or env.get("NO_PROXY") or ""
    hosts = [LOCALHOST, "127.0.0.1", *(h for h in existing.split(",") if h)]
    return ",".join(dict.fromkeys(hosts))


def process_env(base: Mapping[str, str], replica: Mapping[str, str]) -> dict[str, str]:
    """The launcher's env, the replica's contract env on top, then what local runs need.

    The contract env wins over the launcher's env (TFTRAIN_MAX_STEPS comes from the stack,
    as in the cluster); knobs the stack does not set (e.g. TFTRAIN_TRAIN_EXAMPLES) pass
    through from the launcher's env.
    """
    env = {**_ENV_DEFAULTS, **base, **replica}
    env["no_proxy"] = env["NO_PROXY"] = _no_proxy(base)
    env["PYTHONUNBUFFERED"] = "1"  # lines reach the launcher as they are printed
    return env


def primary_replica(topology: Topology) -> str:
    """The replica that ends the run (`infra.lifecycle.ends_run`)."""
    return next(r.name for r in topology.replicas if ends_run(r, topology))


def replica_names(config: StackConfig) -> list[str]:
    return [replica.name for replica in build_topology(config).replicas]


def data_env(config: StackConfig, data: LocalData, stack: str, ends: bool) -> dict[str, str]:
    """The input, init checkpoint and (for the replica that ends the run) export env,
    with this machine's directories in place of the bucket's mounts (`infra.run_data`)."""
    env = {
        **input_env(config, str(data.input_dir) if data.input_dir else ""),
        **init_checkpoint_env(data.init_checkpoint),
    }
    if ends and data.export_dir is not None:
        env.update(export_env(config, str(data.export_dir), stack, images=False))
    return env


def build_plan(
    config: StackConfig,
    ports: Mapping[str, int],
    output_dir: Path,
    base_env: Mapping[str, str] | None = None,
    data: LocalData | None = None,
    stack: str = "",
) -> LocalPlan:
    topology = build_topology(config)
    local = topology.with_addresses({name: (LOCALHOST, port) for name, port in ports.items()})
    command = local_command((*config.job.command, *config.job.args))
    base = os.environ if base_env is None else base_env
    # Each launch is a deploy of its own: a failure of an earlier launch does not end it.
    generation = uuid.uuid4().hex[:12]
    data = data or LocalData(None, None, "")
    export_script = str(EXPORT_SCRIPT) if data.export_dir is not None else ""
    # Every replica under the same supervisor script as in the cluster, from the repo.
    replicas = tuple(
        ProcessSpec(
            name=replica.name,
            argv=tuple(
                supervision(config, local, replica, str(output_dir), export_script).wrap(
                    str(SCRIPT), command, generation
                )
            ),
            env=process_env(
                base,
                {
                    **replica_env(config, local, replica, str(output_dir)),
                    **data_env(config, data, stack, ends_run(replica, local)),
                },
            ),
        )
        for replica in local.replicas
    )
    outcomes = output_dir / OUTCOMES_DIR
    return LocalPlan(
        config, local, output_dir, command, replicas, primary_replica(local), outcomes, generation
    )


TENSORBOARD = "tensorboard"


def tensorboard_process(logdir: Path, port: int, base_env: Mapping[str, str]) -> ProcessSpec:
    """TensorBoard over every run of the job, so runs overlay as they do in the cluster."""
    argv = (sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir),
            "--host", "127.0.0.1", "--port", str(port))  # fmt: skip
    return ProcessSpec(TENSORBOARD, argv, process_env(base_env, {}))
