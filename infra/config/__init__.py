"""The stack config, read the same way by the Pulumi program, the render and the launcher.

Top to bottom, a stack's `tftrain:` keys go through:
1. read: `infra.config.stack_file` reads the stack file as the Pulumi engine does (YAML 1.2, no
   duplicate keys) and defines ConfigError; the program gets the same dict from Pulumi;
2. validate per key: `model` (its sections, one line per key; `types` says what each key
   accepts), with pydantic's errors worded by `errors` as a user would fix them;
3. cross-key rules: `rules`, what Kubernetes, the cloud or the trainer would refuse later;
4. normalised run id: a digest of the validated values, so equal configs share their runs.
Every problem is reported at once, by the key as typed for `pulumi config set --path`; a
stack that fails creates nothing. `infra.config.schema` writes the JSON Schema for editors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from infra.config.errors import describe, fields_of
from infra.config.model import BUNDLED_COMMAND, INTERNAL_KEYS, StackConfig
from infra.config.roles import misplaced_keys
from infra.config.rules import check_rules
from infra.config.stack_file import PROJECT, ConfigError, read_stack, strip_project_prefix
from infra.config.sweep import expand
from infra.config.types import SECRET_KEYS, SECRET_PLACEHOLDER, is_secure

# The stack file's names every reader of a stack needs; the sections are in `model`.
__all__ = ["INTERNAL_KEYS", "PLAINTEXT_KUBECONFIG", "PROJECT", "strip_project_prefix"]

_STACK = TypeAdapter(StackConfig)
# A secret the program reads itself (`infra.program`); never part of the model.
KUBECONFIG_KEY = "kubeconfig"
# Typed without --secret it would sit in the stack file and the state in the clear.
PLAINTEXT_KUBECONFIG = (
    f"{PROJECT}:{KUBECONFIG_KEY}: must be a Pulumi secret (pulumi config set --secret "
    f"{PROJECT}:{KUBECONFIG_KEY} < ~/.kube/config); a plaintext kubeconfig would sit in the "
    "stack file and the state in the clear (value not shown)"
)


def stack_file(stack: str, stacks_dir: Path | None = None) -> Path:
    directory = stacks_dir or Path(__file__).resolve().parents[2] / "stacks"
    return directory / f"Pulumi.{stack}.yaml"


def read_stack_entries(path: Path) -> dict[str, Any]:
    """Every config entry of a stack file, all namespaces (`alicloud:region` too), as written."""
    return read_stack(path).entries


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `tftrain:` config of a stack file, as the Pulumi engine would hand it over."""
    return read_stack(path).config


def load_stack(stack: str, stacks_dir: Path | None = None) -> StackConfig:
    """Read and validate `stacks/Pulumi.<stack>.yaml` (the offline targets' entry point)."""
    return load_stack_file(stack_file(stack, stacks_dir))


def load_stack_file(path: Path) -> StackConfig:
    """Read and validate a stack file; each problem also names its line in the file."""
    stack = read_stack(path)
    try:
        return parse_config(stack.config)
    except ConfigError as error:
        raise stack.locate(error) from None


def _without_nulls(value: Any) -> Any:
    """`key: ~` (or an empty `key:`) means the default, as if the key were not there."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def parse_config(raw: Mapping[str, Any], secret_keys: Iterable[str] = ()) -> StackConfig:
    """Validate a stack's `tftrain:` config (prefix removed) into a StackConfig.

    `secret_keys`: the top-level keys (prefix removed) the engine marked secret, whose values
    arrive decrypted (the program's view); a stack file read offline has none.
    """
    secret_keys = frozenset(secret_keys)
    data = _without_nulls(raw)
    if isinstance(data, dict):
        kubeconfig = data.pop(KUBECONFIG_KEY, None)
        if kubeconfig and not is_secure(kubeconfig) and KUBECONFIG_KEY not in secret_keys:
            raise ConfigError([PLAINTEXT_KUBECONFIG])
    stack = _parse_run(data, secret_keys)
    if stack.sweep is None:
        return stack
    # Each trial is validated as a whole stack of its own (`infra.config.sweep`).
    return expand(stack, data, lambda trial: _parse_run(trial, secret_keys))


def _parse_run(data: Any, secret_keys: frozenset[str]) -> StackConfig:
    """One run's config (a sweep's own, or one trial's), with its run id."""
    internal = [key for key in INTERNAL_KEYS if isinstance(data, Mapping) and key in data]
    if internal:
        known = ", ".join(sorted(set(fields_of(StackConfig)) - set(INTERNAL_KEYS)))
        raise ConfigError(
            [f"{PROJECT}:{key}: unknown key; known keys here: {known}" for key in internal]
        )
    context = {SECRET_KEYS: secret_keys}
    try:
        stack = _STACK.validate_python(data, by_alias=True, by_name=False, context=context)
    except ValidationError as error:
        raise ConfigError(describe(error, StackConfig)) from None
    problems = [f"{PROJECT}:{key}: {why}" for key, why in misplaced_keys(data)]
    problems += check_rules(stack)
    if problems:
        raise ConfigError(problems)
    if stack.job.run_id:
        return stack
    fingerprint = settings_fingerprint(stack, secret_keys)
    return replace(stack, job=replace(stack.job, run_id=fingerprint))


def settings_fingerprint(
    stack: StackConfig, secret_sections: Iterable[str] = (), env_values: bool = True
) -> str:
    """A digest of what the training computes, from the validated values: 20 or 20.0, a default
    written out or not, `auto` or what it resolves to, one `image` or the same per group agree.

    Env values are how users tune their own trainers, so they count (`env_values`), except
    in a section holding a secret (`secret_sections`: marked so by the engine, or a secret's
    placeholder offline), which counts by its names only: a digest of a short secret could
    be brute-forced back from the run id, a label anyone may read."""
    secret = set(secret_sections)

    def env_of(section: str, env: Mapping[str, str]) -> Any:
        hidden = section in secret or SECRET_PLACEHOLDER in env.values() or not env_values
        return sorted(env) if hidden else sorted(env.items())

    job = stack.job
    relevant: dict[str, Any] = {
        "job": {
            "command": job.command or BUNDLED_COMMAND,
            "args": job.args,
            "dataDir": job.data_dir,
        },
        # How many checkpoints are kept changes nothing the training computes: the same run.
        "hyperparams": {
            **asdict(stack.hyperparams),
            "strategy": stack.effective_strategy,
            "keep_checkpoints": None,
        },
        "replicas": {
            group.type: {
                "number": group.number,
                "image": group.image,
                "gpus": group.gpu_count,
                # Only when set, so a stack without them keeps the run id it had.
                **({"command": group.command} if group.command else {}),
                **({"args": group.args} if group.args is not None else {}),
                **({"env": env_of(group.type, group.env)} if group.env else {}),
            }
            for group in stack.replica_groups
            if group.number
        },
    }
    if job.env:
        relevant["env"] = env_of("job", job.env)
    if stack.uses_oss:
        # Other data is another run, as another job.dataDir is (a stack without OSS input
        # keeps the run id it had). A derived or platform bucket is the stack's own.
        bucket = stack.data.bucket or "(the stack's bucket)"
        relevant["input"] = f"oss://{bucket}/{stack.data.input_prefix}"
    elif stack.data.local_input_dir:
        relevant["input"] = stack.data.local_input_dir  # the local launcher's stand-in
    if job.init_checkpoint:
        # Fine-tuning from another checkpoint is another run: it must not resume this one's.
        relevant["initCheckpoint"] = job.init_checkpoint
    digest = hashlib.sha256(json.dumps(relevant, sort_keys=True).encode())
    return "run-" + digest.hexdigest()[:8]
