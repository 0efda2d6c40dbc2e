"""Secret env values (`job.env`, `<group>.env` set with `pulumi config set --secret`) in a
Kubernetes Secret of the stack, reaching containers through `valueFrom.secretKeyRef`.

A pod template is readable by anyone who may `get` Jobs or pods (the built-in `view` role,
which deliberately excludes Secrets) and `kubectl describe pod` prints its env: a literal
there is no secret. The Secret holds one key per (group, name), `<group>.<NAME>`, because a
group's env may give a name another value than `job.env`.

Which values are secret: offline a `{secure: ...}` value reads as SECRET_PLACEHOLDER; in the
program the engine hands a section (`job`, `worker`, ...) decrypted and marks the whole of it
secret, so every value of a marked section is treated as one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from infra.config import StackConfig
from infra.config.model import ReplicaGroup
from infra.config.types import SECRET_PLACEHOLDER
from infra.manifests.common import base64_text, metadata, stable_labels


def env_secret_name(config: StackConfig) -> str:
    return f"{config.job.name}-env"


def env_secret_key(group: ReplicaGroup, name: str) -> str:
    return f"{group.type}.{name}"


def secret_env_names(
    config: StackConfig, group: ReplicaGroup, secret_sections: Iterable[str]
) -> frozenset[str]:
    """The names of `group`'s env (job.env under the group's own) whose values are secret."""
    sections = frozenset(secret_sections)
    own = group.env
    inherited = {name: value for name, value in config.job.env.items() if name not in own}
    return frozenset(
        name
        for section, env in (("job", inherited), (group.type, own))
        for name, value in env.items()
        if section in sections or value == SECRET_PLACEHOLDER
    )


def env_secret(config: StackConfig, secret_sections: Iterable[str]) -> dict[str, Any] | None:
    """The Secret holding every group's secret env values, or None when there are none.
    Secret env is refused in sweep values, so a sweep's trials share the base stack's."""
    sections = frozenset(secret_sections)
    data = {
        env_secret_key(group, name): base64_text(config.env_of(group)[name])
        for group in config.replica_groups
        for name in sorted(secret_env_names(config, group, sections))
    }
    if not data:
        return None
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(env_secret_name(config), stable_labels(config), config.job.namespace),
        "type": "Opaque",
        "data": data,
    }


def secret_env_ref(config: StackConfig, group: ReplicaGroup, name: str) -> dict[str, Any]:
    """A container env entry reading `name` from the stack's env Secret."""
    key = env_secret_key(group, name)
    return {
        "name": name,
        "valueFrom": {"secretKeyRef": {"name": env_secret_name(config), "key": key}},
    }
