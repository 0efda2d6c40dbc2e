"""From a stack file to the exact processes to start: pure, except for reading the file.

Each replica is the Pulumi program's replica plan (`infra.replica_plan.plan`), at this machine's
`Place`: localhost ports instead of Services, the output dir under the repo instead of the
volume, the repo's scripts, a scratch dir per replica. A process gets the plan's env and,
of this machine's environment, only what a process needs to run here (`HOST_ENV`): what a
pod would not get, a replica does not get here either.
"""

from __future__ import annotations

import os
import shlex
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
from infra.config.model import ReplicaGroup, is_bundled_command, is_bundled_image
from infra.config.stack_file import parse_yaml
from infra.config.types import SECRET_PLACEHOLDER
from infra.lifecycle import EXPORT_SCRIPT, OUTCOMES_DIR, SCRIPT, ends_run
from infra.local.data import LocalData
from infra.replica_plan.plan import Place, expand, local_env, replica_plans
from infra.replica_plan.run_data import export_env, init_checkpoint_env, input_env
from infra.topology import Topology, build_topology

REPO = Path(__file__).resolve().parents[2]
LOCALHOST = "localhost"
# Of this machine's environment, what a process needs to run here (locale, proxies, the
# GPU libraries); the stack's env comes from the plan. PATH leads with INTERPRETER_DIR.
HOST_ENV = (
    "PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "USER", "LOGNAME",
    "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
    "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "TF_CPP_MIN_LOG_LEVEL",
)  # fmt: skip
# Quiet TF logs unless the user asked otherwise in their own environment. oneDNN stays on:
# disabling it (which would also silence its banner) halves the CNN's throughput on CPU.
_ENV_DEFAULTS = {"TF_CPP_MIN_LOG_LEVEL": "2"}
# In the launch's scratch root: `python`, `python3` and `python3.N` that run this
# interpreter, first on every replica's PATH, so `python` anywhere in a command (`sh -c`,
# `env X=1 python`) is the one whose packages the launcher has.
INTERPRETER_DIR = "bin"
INTERPRETER_NAMES = ("python", "python3", f"python3.{sys.version_info.minor}")


@dataclass(frozen=True)
class ProcessSpec:
    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    # Where it starts: what a pod's image WORKDIR is, whose code the supervisor puts first on
    # PYTHONPATH. The checkout for the bundled trainer; for a user's command, the directory
    # the launcher was started in (the user's project), so the checkout's own `trainer`
    # package never shadows the user's.
    cwd: Path = REPO


@dataclass(frozen=True)
class LocalPlan:
    config: StackConfig
    topology: Topology  # with localhost addresses
    output_dir: Path
    replicas: tuple[ProcessSpec, ...]
    scratch_root: Path  # the replicas' TMPDIRs and the interpreter shims
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


def secrets_on_command_lines(config: StackConfig) -> list[str]:
    """Each command or args key that names a secret env value as `$(NAME)`: expanded here it
    would sit in the replica's command line, which `ps` shows every user of this machine."""
    problems = []
    for group in config.replica_groups:
        secret = {name for name, value in config.env_of(group).items()
                  if value == SECRET_PLACEHOLDER}  # fmt: skip
        for key, words in (("command", config.command_of(group)), ("args", config.args_of(group))):
            section = group.type if getattr(group, key) else "job"
            named = sorted({name for word in words for name in secret if f"$({name})" in word})
            where = f"{PROJECT}:{section}.{key}"
            problems += [
                f"{where}: $({name}) is a Pulumi secret; on this machine it would be on the "
                f"replica's command line, visible to every user in ps: read {name} from the "
                "environment in the trainer instead"
                for name in named
            ]
    return sorted(set(problems))


def resolve_secret_env(config: StackConfig, environ: Mapping[str, str]) -> StackConfig:
    """`config` with each secret env value (`job.env`, `<group>.env`) taken from this
    shell's variable of the same name: the launcher cannot decrypt Pulumi secrets, and
    refuses to put one on a command line (`secrets_on_command_lines`)."""
    on_command_lines = secrets_on_command_lines(config)
    if on_command_lines:
        raise ValueError("; ".join(on_command_lines))
    missing = []

    def resolved(section: str, env: Mapping[str, str]) -> dict[str, str]:
        out = dict(env)
        for name, value in env.items():
            if value != SECRET_PLACEHOLDER:
                continue
            if name in environ:
                out[name] = environ[name]
            else:
                missing.append(f"{PROJECT}:{section}.env.{name}")
        return out

    job = replace(config.job, env=resolved("job", config.job.env))
    groups = {g.type: replace(g, env=resolved(g.type, g.env)) for g in config.replica_groups}
    if missing:
        names = ", ".join(key.rpartition(".")[2] for key in missing)
        raise ValueError(
            f"{', '.join(missing)}: a Pulumi secret, which the launcher cannot decrypt; "
            f"set it in this shell to run locally (export {names.split(', ')[0]}=...)"
        )
    return replace(config, job=job, **groups)


def stack_secret_env_names(config: StackConfig) -> frozenset[str]:
    """The env names whose value is a Pulumi secret in any section (before resolving them)."""
    envs = [config.job.env, *(group.env for group in config.replica_groups)]
    return frozenset(name for env in envs for name, value in env.items()
                     if value == SECRET_PLACEHOLDER)  # fmt: skip


def default_output_dir(stack: str, config: StackConfig) -> Path:
    """`runs/<stack>/<job>/<run id>`: the volume's `<mount>/<job>/<run id>`, per stack."""
    return REPO / "runs" / stack / config.job.name / config.job.run_id


def write_interpreters(scratch_root: Path) -> Path:
    """The `python` shims of INTERPRETER_DIR; each execs this interpreter by its own path,
    so a virtual environment stays active (a symlink would lose it)."""
    bin_dir = scratch_root / INTERPRETER_DIR
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in INTERPRETER_NAMES:
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        shim.chmod(0o755)
    return bin_dir


def _no_proxy(env: Mapping[str, str]) -> str:
    # An http_proxy would otherwise catch gRPC between replicas on localhost and hang it.
    existing = env.get("no_proxy") or env.get("NO_PROXY") or ""
    hosts = [LOCALHOST, "127.0.0.1", *(h for h in existing.split(",") if h)]
    return ",".join(dict.fromkeys(hosts))


def process_env(
    base: Mapping[str, str], replica: Mapping[str, str], scratch_root: Path
) -> dict[str, str]:
    """HOST_ENV of the launcher's env, the replica's env on top, then the proxy bypass and
    the interpreter shims first on PATH."""
    env = {**_ENV_DEFAULTS, **{k: base[k] for k in HOST_ENV if k in base}, **replica}
    env["no_proxy"] = env["NO_PROXY"] = _no_proxy(base)
    path = base.get("PATH", os.defpath)
    env["PATH"] = f"{scratch_root / INTERPRETER_DIR}{os.pathsep}{path}"
    return env


def primary_replica(topology: Topology) -> str:
    """The replica that ends the run (`infra.lifecycle.ends_run`)."""
    return next(r.name for r in topology.replicas if ends_run(r, topology))


def replica_names(config: StackConfig) -> list[str]:
    return [replica.name for replica in build_topology(config).replicas]


def data_env(config: StackConfig, data: LocalData, stack: str, ends: bool) -> dict[str, str]:
    """The input, init checkpoint and (for the replica that ends the run) export env,
    with this machine's directories in place of the bucket's mounts
    (`infra.replica_plan.run_data`)."""
    env = {
        **input_env(config, str(data.input_dir) if data.input_dir else ""),
        **init_checkpoint_env(data.init_checkpoint),
    }
    if ends and data.export_dir is not None:
        env.update(export_env(config, str(data.export_dir), stack, images=False))
    return env


def local_place(
    config: StackConfig,
    topology: Topology,
    output_dir: Path,
    scratch_root: Path,
    data: LocalData,
    stack: str,
) -> Place:
    """This machine's side of the replica plan (`infra.manifests.workloads.pod_place` is the
    pod's)."""
    return Place(
        topology=topology,
        output_dir=str(output_dir),
        supervisor=str(SCRIPT),
        export_script=str(EXPORT_SCRIPT) if data.export_dir is not None else "",
        scratch=lambda replica: str(scratch_root / replica.name),
        data_env=lambda ends: data_env(config, data, stack, ends),
    )


def build_plan(
    config: StackConfig,
    ports: Mapping[str, int],
    output_dir: Path,
    scratch_root: Path,
    base_env: Mapping[str, str] | None = None,
    data: LocalData | None = None,
    stack: str = "",
    start_dir: Path | None = None,
) -> LocalPlan:
    """`scratch_root`: where the replicas' TMPDIRs and the interpreter shims go (made by
    the launcher, `write_interpreters`); `start_dir`: where a user's command starts
    (default: this process's working directory)."""
    topology = build_topology(config)
    local = topology.with_addresses({name: (LOCALHOST, port) for name, port in ports.items()})
    base = os.environ if base_env is None else base_env
    # Each launch is a deploy of its own: a failure of an earlier launch does not end it.
    generation = uuid.uuid4().hex[:12]
    place = local_place(
        config, local, output_dir, scratch_root, data or LocalData(None, None, ""), stack
    )
    replicas = []
    for plan in replica_plans(config, place, generation):
        own = local_env(plan, config.job.namespace)
        env = process_env(base, own, scratch_root)
        cwd = REPO if runs_bundled_trainer(config, plan.group) else (start_dir or Path.cwd())
        # `$(VAR)` from the container's own env only, as the kubelet: not the launcher's.
        replicas.append(ProcessSpec(plan.replica.name, expand_argv(plan.argv, own), env, cwd))
    outcomes = output_dir / OUTCOMES_DIR
    return LocalPlan(
        config,
        local,
        output_dir,
        tuple(replicas),
        scratch_root,
        primary_replica(local),
        outcomes,
        generation,
    )


def runs_bundled_trainer(config: StackConfig, group: ReplicaGroup) -> bool:
    """Whether `python -m trainer` means tftrain's trainer here, as it would in the pod: the
    command is the bundled one and the image is tftrain's, whose WORKDIR holds it. In a
    user's image it is the user's `trainer`, so here it is the one where the user stands."""
    return is_bundled_command(config.command_of(group)) and is_bundled_image(group.image)


def expand_argv(argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """`$(VAR)` in a command and its args, expanded as the kubelet does in a pod."""
    return tuple(expand(arg, env) for arg in argv)


TENSORBOARD = "tensorboard"


def tensorboard_process(
    logdir: Path, port: int, base_env: Mapping[str, str], scratch_root: Path
) -> ProcessSpec:
    """TensorBoard over every run of the job, so runs overlay as they do in the cluster."""
    argv = (sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir),
            "--host", "127.0.0.1", "--port", str(port))  # fmt: skip
    return ProcessSpec(TENSORBOARD, argv, process_env(base_env, {}, scratch_root))
