"""Which keys a stack may set for its `cluster.role`: a platform stack holds the cloud side
only, a run stack the run only. A key of the other side would be silently ignored (a platform
has no Jobs to take a learning rate; a run stack makes no node pool), so it is refused.

Read from the raw config: a default is not a key someone set.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# Top-level sections that describe a run: a platform stack has none.
RUN_SECTIONS = (
    "image", "job", "chief", "master", "worker", "ps", "evaluator", "hyperparams", "tensorboard",
    "imageRegistry", "sweep",
)  # fmt: skip
# Keys of other sections that only a run uses: the volumes' credentials (a platform has none).
RUN_KEYS = {
    "data": ("accessKeyId", "accessKeySecret", "credentialsSecret"),
    "budget": ("maxCnyPerRun", "maxCnyPerSweep"),
}
# Keys that describe cloud resources: a run stack takes them from its platform stack.
CLOUD_KEYS = {
    "network": None,  # the whole section
    "cluster": (
        "name", "kubernetesVersion", "publicApiServer", "networkPlugin", "gpuPool", "cpuPool",
        "spotGpuPool", "runNamespaces",
    ),
    "storage": ("nasStorageType", "nasProtocol", "retainOnDestroy", "fileSystemId"),
    "data": ("createBucket", "retainOnDestroy"),
}  # fmt: skip

# Keys of a run's volumes, which its platform issues to its namespace (a run's credentials
# cannot create a PersistentVolume): the platform's storage and data settings decide them.
ISSUED_KEYS = {
    "storage": ("pvLabels", "nfsServer", "nfsPath", "hostPath"),
    "data": ("credentials", "rrsaRoleName", "credentialsSecret", "endpoint", "bucketOwner"),
}

NO_RUN = (
    "a run's key, and a platform stack (cluster.role platform) has no run: remove it here "
    "and set it in a run stack"
)
NO_CLOUD = (
    "a cloud key, and a run stack (cluster.role run) creates no cloud resource: remove it "
    "here and set it in its platform stack"
)
ISSUED = (
    "a volume's key, and a run stack's volumes are the ones its platform issues to its "
    "namespace (cluster.runNamespaces): remove it here; the platform's storage and data decide it"
)


def _role(raw: Mapping[str, Any]) -> Any:
    cluster = raw.get("cluster")
    return cluster.get("role") if isinstance(cluster, Mapping) else None


def misplaced_keys(raw: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(key, why) for every key set that the stack's role does not use."""
    role = _role(raw)
    if role == "platform":
        for section in RUN_SECTIONS:
            if section in raw:
                yield section, NO_RUN
        for section, keys in RUN_KEYS.items():
            value = raw.get(section)
            for key in keys if isinstance(value, Mapping) else ():
                if key in value:
                    yield f"{section}.{key}", NO_RUN
    if role == "run":
        for section, keys in CLOUD_KEYS.items():
            value = raw.get(section)
            if keys is None and section in raw:
                yield section, NO_CLOUD
            elif isinstance(value, Mapping):
                for key in keys or ():
                    if key in value:
                        yield f"{section}.{key}", NO_CLOUD
        for section, keys in ISSUED_KEYS.items():
            value = raw.get(section)
            for key in keys if isinstance(value, Mapping) else ():
                if key in value:
                    yield f"{section}.{key}", ISSUED
