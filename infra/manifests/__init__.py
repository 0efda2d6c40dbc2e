"""Layer 3: every Kubernetes object of a stack, as plain dicts, from (config, cluster facts).

Pure and deterministic: the same inputs give the same list in the same order, so the Pulumi
program and the offline render show identical objects, and diffs between two renders are
the real change. No Pulumi import anywhere in this package.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from infra.config import StackConfig
from infra.manifests.common import namespace
from infra.manifests.image_cache import image_cache
from infra.manifests.lifecycle import lifecycle_config_map
from infra.manifests.network_policy import network_policies
from infra.manifests.oss import oss_enabled, oss_objects
from infra.manifests.registry import pull_secret, uses_registry_credentials
from infra.manifests.secret_env import env_secret
from infra.manifests.storage import persistent_volume, persistent_volume_claim
from infra.manifests.tensorboard import tensorboard_deployment, tensorboard_service
from infra.manifests.workloads import replica_jobs, replica_service
from infra.platform.cluster_facts import ClusterFacts
from infra.topology import build_topology

__all__ = ["build_objects", "object_key"]


def build_objects(
    config: StackConfig, facts: ClusterFacts, secret_sections: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """Objects in creation order: namespace (a run stack's is its platform's), registry
    credentials, secret env, network policies, storage, image cache, the supervisor script,
    replicas, TensorBoard. The policies come first: no pod may start before its isolation
    exists. A platform stack has no run, so none. A sweep's trials share everything but their
    own replicas and training policy.
    `secret_sections`: the env sections the engine marked secret (`infra.program`)."""
    if not config.has_run:
        return []
    secret = frozenset(secret_sections)
    env_secret_object = env_secret(config, secret)
    # A run stack's namespace and volumes are its platform's (run_access.py): its credentials
    # reach that namespace only, so it makes no cluster-scoped object.
    issued = config.cluster.role == "run"
    objects: list[dict[str, Any]] = [
        *([] if issued else [namespace(config)]),
        *([pull_secret(config)] if uses_registry_credentials(config) else []),
        *([env_secret_object] if env_secret_object else []),
        *network_policies(config),
        *([] if issued else [persistent_volume(config, facts)]),
        persistent_volume_claim(config),
        *oss_objects(config, facts),
    ]
    if config.cluster.image_cache:  # validated: ask only
        objects.append(image_cache(config))
    objects.append(lifecycle_config_map(config, exports=oss_enabled(config)))
    # Every replica's DNS name is registered before any replica starts dialling its peers.
    # A sweep: each trial is a run of its own, with its own Services and Jobs.
    runs = [(run, build_topology(run)) for run in config.runs]
    objects += [replica_service(run, r) for run, topology in runs for r in topology.replicas]
    for run, topology in runs:
        objects += replica_jobs(run, facts, topology, secret)
    if config.tensorboard.enabled:
        objects += [tensorboard_deployment(config, facts), tensorboard_service(config, facts)]
    return objects


def object_key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace, name): unique per object in a cluster."""
    meta = obj["metadata"]
    return (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])
