"""Pull credentials for a private registry (`imageRegistry`): one Secret in the job's namespace.

The Secret is of type `kubernetes.io/dockerconfigjson`, the format the kubelet reads for a
pod's `imagePullSecrets`: `.dockerconfigjson` holds, base64-encoded, the JSON of a Docker
config file, `{"auths": {<server>: {"username", "password", "auth"}}}`, where `auth` is
base64 of `username:password` (Kubernetes docs, "Pull an Image from a Private Registry").
Every pod names it, and so does the ECI ImageCache (as `namespace:name`), which pulls the
images itself. It outlives runs: its labels are the stable ones.

Offline the password reads as a placeholder (a secret cannot be decrypted without Pulumi), so
the render shows the Secret's shape with no credential in it; the program registers its data
as a Pulumi secret.
"""

from __future__ import annotations

import json
from typing import Any

from infra.config import StackConfig
from infra.manifests.common import base64_text, metadata, stable_labels

SECRET_TYPE = "kubernetes.io/dockerconfigjson"
DATA_KEY = ".dockerconfigjson"


def uses_registry_credentials(config: StackConfig) -> bool:
    return bool(config.image_registry.server)  # validated: then all three keys are set


def pull_secret_name(config: StackConfig) -> str:
    return f"{config.job.name}-registry"


def docker_config_json(server: str, username: str, password: str) -> str:
    """The Docker config file the kubelet reads, with one registry's credentials."""
    auth = base64_text(f"{username}:{password}")
    entry = {"username": username, "password": password, "auth": auth}
    return json.dumps({"auths": {server: entry}}, separators=(",", ":"))


def pull_secret(config: StackConfig) -> dict[str, Any]:
    registry = config.image_registry
    config_json = docker_config_json(registry.server, registry.username, registry.password)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(pull_secret_name(config), stable_labels(config), config.job.namespace),
        "type": SECRET_TYPE,
        "data": {DATA_KEY: base64_text(config_json)},
    }


def image_pull_secrets(config: StackConfig) -> dict[str, Any]:
    """A pod spec's `imagePullSecrets`, or nothing without credentials."""
    if not uses_registry_credentials(config):
        return {}
    return {"imagePullSecrets": [{"name": pull_secret_name(config)}]}


def image_cache_pull_secrets(config: StackConfig) -> dict[str, Any]:
    """The ECI ImageCache spec's `imagePullSecrets` (`namespace:secretName`), or nothing."""
    if not uses_registry_credentials(config):
        return {}
    return {"imagePullSecrets": [f"{config.job.namespace}:{pull_secret_name(config)}"]}
