"""Which keys a platform and a run stack may set (infra/config/roles.py), as README "Teams and
many runs" divides them: a platform holds the cloud (network, cluster and pools, NAS, bucket),
a run holds the run (images, Jobs, hyperparameters, TensorBoard, pull credentials). A key of
the other side is refused, with the same two sentences each time."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import ConfigError, parse_config
from infra.config.roles import misplaced_keys

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
PLATFORM = {"cluster": {"kind": "ack", "role": "platform"}}
RUN = {"cluster": {"kind": "ack", "role": "run", "platformStack": "o/tftrain/p"}}

RUN_SECTIONS = [
    "image", "job", "chief", "master", "worker", "ps", "evaluator", "hyperparams",
    "tensorboard", "imageRegistry",
]  # fmt: skip
CLOUD_KEYS = [
    "cluster.name", "cluster.kubernetesVersion", "cluster.publicApiServer",
    "cluster.networkPlugin", "cluster.gpuPool", "cluster.cpuPool", "cluster.spotGpuPool",
    "cluster.runNamespaces",
    "storage.nasStorageType", "storage.nasProtocol", "storage.retainOnDestroy",
    "storage.fileSystemId", "data.createBucket", "data.retainOnDestroy",
]  # fmt: skip
# Keys of the same sections that both sides use.
SHARED_KEYS = [
    "cluster.kind", "cluster.eciGpuSpec", "storage.kind", "storage.size", "storage.mountPath",
    "data.bucket",
]  # fmt: skip


def with_key(base: dict[str, Any], key: str, value: Any = "x") -> dict[str, Any]:
    section, _, name = key.partition(".")
    raw = {**base}
    raw[section] = {**raw.get(section, {}), name: value} if name else value
    return raw


@pytest.mark.parametrize("section", RUN_SECTIONS)
def test_a_platform_stack_refuses_each_run_section(section: str) -> None:
    assert list(misplaced_keys(with_key(PLATFORM, section, {}))) == [(section, NO_RUN)]
    assert list(misplaced_keys(with_key(RUN, section, {}))) == []


@pytest.mark.parametrize("key", CLOUD_KEYS)
def test_a_run_stack_refuses_each_cloud_key(key: str) -> None:
    assert list(misplaced_keys(with_key(RUN, key))) == [(key, NO_CLOUD)]
    assert list(misplaced_keys(with_key(PLATFORM, key))) == []


def test_a_run_stack_refuses_the_whole_network_section() -> None:
    assert list(misplaced_keys({**RUN, "network": {}})) == [("network", NO_CLOUD)]
    # Whatever its value: the section itself is the platform's.
    assert list(misplaced_keys({**RUN, "network": None})) == [("network", NO_CLOUD)]


# A run's volumes are its platform's: their keys are the platform's alone (issue 37).
VOLUME_KEYS = [
    "storage.pvLabels", "storage.nfsServer", "storage.nfsPath", "storage.hostPath",
    "data.credentials", "data.rrsaRoleName", "data.credentialsSecret", "data.endpoint",
    "data.bucketOwner",
]  # fmt: skip


@pytest.mark.parametrize("key", VOLUME_KEYS)
def test_a_run_stack_refuses_the_keys_of_the_volumes_its_platform_issues(key: str) -> None:
    assert list(misplaced_keys(with_key(RUN, key))) == [(key, ISSUED)]
    # The platform decides them; a Secret of the run's own is no platform's key either.
    platform_refuses = [(key, NO_RUN)] if key == "data.credentialsSecret" else []
    assert list(misplaced_keys(with_key(PLATFORM, key))) == platform_refuses


@pytest.mark.parametrize("key", SHARED_KEYS)
def test_shared_keys_are_refused_by_neither(key: str) -> None:
    assert list(misplaced_keys(with_key(RUN, key))) == []
    assert list(misplaced_keys(with_key(PLATFORM, key))) == []


def test_a_standalone_stack_may_set_everything() -> None:
    raw: dict[str, Any] = {"cluster": {"kind": "ack"}, "network": {}}
    for key in [*RUN_SECTIONS, *CLOUD_KEYS]:
        raw = with_key(raw, key, {} if "." not in key else "x")
    assert list(misplaced_keys(raw)) == []


def test_every_misplaced_key_is_listed_at_once() -> None:
    raw = {**RUN, "network": {}, "storage": {"nasProtocol": "NFS", "fileSystemId": "x"}}
    assert [key for key, _ in misplaced_keys(raw)] == [
        "network", "storage.nasProtocol", "storage.fileSystemId"
    ]  # fmt: skip


@pytest.mark.parametrize(
    "raw",
    [{}, {"cluster": None}, {"cluster": "run"}, {"cluster": {"role": 3}}, {"network": {}}],
)
def test_no_role_refuses_nothing(raw: dict[str, Any]) -> None:
    assert list(misplaced_keys(raw)) == []


def test_the_config_names_each_misplaced_key_with_its_sentence() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config({**RUN, "image": "registry.example.com/tftrain/trainer:1",
                      "data": {"createBucket": True}})  # fmt: skip
    assert f"tftrain:data.createBucket: {NO_CLOUD}" in str(raised.value)
