"""The typed, validated model of one stack's configuration.

Built from a plain dict (the `tftrain:` keys of a stack, prefix removed), so the Pulumi
program, the offline render and the local launcher all read a stack the same way. Every
problem is reported at once, each naming the key as a user would type it for
`pulumi config set --path`, the value found and what is allowed; a stack that fails here
creates nothing.

- `model`: the sections and their keys (pydantic dataclasses); `types`: what each key accepts;
- `rules`: rules between keys; `errors`: pydantic's errors worded as a user would fix them.
Stack files are read by `infra.stack_file` (YAML 1.2, as the Pulumi engine reads them), which
also defines ConfigError; `infra.config_schema` writes their JSON Schema for editors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from infra.config.errors import describe
from infra.config.model import (
    ClusterConfig,
    Hyperparams,
    JobConfig,
    NetworkConfig,
    NodePoolConfig,
    ReplicaGroup,
    StackConfig,
    StorageConfig,
    TensorBoardConfig,
)
from infra.config.rules import check_rules
from infra.config.types import LATEST_VERSION
from infra.stack_file import PROJECT, ConfigError, StackFile, read_stack, strip_project_prefix

# fmt: off
__all__ = [
    "KUBECONFIG_KEY", "LATEST_VERSION", "PROJECT", "ClusterConfig", "ConfigError", "Hyperparams",
    "JobConfig", "NetworkConfig", "NodePoolConfig", "ReplicaGroup", "StackConfig", "StackFile",
    "StorageConfig", "TensorBoardConfig", "derive_run_id", "load_stack", "load_stack_file",
    "parse_config", "read_stack", "read_stack_entries", "read_stack_file",
    "settings_fingerprint", "stack_file", "strip_project_prefix",
]
# fmt: on

_STACK = TypeAdapter(StackConfig)
# A secret the program reads itself (`infra.program`); never part of the model.
KUBECONFIG_KEY = "kubeconfig"


def _without_nulls(value: Any) -> Any:
    """`key: ~` (or an empty `key:`) means the default, as if the key were not there."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _validate(raw: Mapping[str, Any]) -> StackConfig:
    data = _without_nulls(raw)
    if isinstance(data, dict):
        data.pop(KUBECONFIG_KEY, None)
    try:
        stack = _STACK.validate_python(data, by_alias=True, by_name=False)
    except ValidationError as error:
        raise ConfigError(describe(error, StackConfig)) from None
    problems = check_rules(stack)
    if problems:
        raise ConfigError(problems)
    return stack


def settings_fingerprint(stack: StackConfig) -> str:
    """A digest of what the training computes and runs, from the validated values: so 20 and
    20.0, a default written out or left out, `auto` or the strategy it resolves to, the stack's
    `image` or the same image per group, all give the same run id."""
    job = stack.job
    relevant = {
        "job": {"command": job.command, "args": job.args, "dataDir": job.data_dir},
        # How many checkpoints are kept changes nothing the training computes: the same run.
        "hyperparams": {
            **asdict(stack.hyperparams),
            "strategy": stack.effective_strategy,
            "keep_checkpoints": None,
        },
        "replicas": {
            group.type: {"number": group.number, "image": group.image, "gpus": group.gpu_count}
            for group in stack.replica_groups
            if group.number
        },
    }
    digest = hashlib.sha256(json.dumps(relevant, sort_keys=True).encode())
    return "run-" + digest.hexdigest()[:8]


def derive_run_id(raw: Mapping[str, Any]) -> str:
    """The run id a stack's config gets when `job.runId` is not set (validated first)."""
    return settings_fingerprint(_validate(raw))


def parse_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate a stack's `tftrain:` config (prefix removed) into a StackConfig."""
    stack = _validate(raw)
    if stack.job.run_id:
        return stack
    return replace(stack, job=replace(stack.job, run_id=settings_fingerprint(stack)))


def stack_file(stack: str, stacks_dir: Path | None = None) -> Path:
    directory = stacks_dir or Path(__file__).resolve().parents[2] / "stacks"
    return directory / f"Pulumi.{stack}.yaml"


def read_stack_entries(path: Path) -> dict[str, Any]:
    """Every config entry of a stack file, all namespaces (`alicloud:region` too), as written."""
    return read_stack(path).entries


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `tftrain:` config of a stack file, as the Pulumi engine would hand it over."""
    return read_stack(path).config


def load_stack_file(path: Path) -> StackConfig:
    """Read and validate a stack file; each problem also names its line in the file."""
    stack = read_stack(path)
    try:
        return parse_config(stack.config)
    except ConfigError as error:
        raise stack.locate(error) from None


def load_stack(stack: str, stacks_dir: Path | None = None) -> StackConfig:
    """Read and validate `stacks/Pulumi.<stack>.yaml` (the offline targets' entry point)."""
    return load_stack_file(stack_file(stack, stacks_dir))
