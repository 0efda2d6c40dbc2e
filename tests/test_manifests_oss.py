"""`infra.manifests.oss`: the bucket's volumes, claims, credentials Secret, and what a pod
mounts, written out by hand from the Alibaba Cloud CSI OSS plugin's attributes (`bucket`,
`url`, `path`, `otherOpts`, `authType: rrsa` + `roleName`, a node publish Secret with `akId`
and `akSecret`: pkg/oss in alibaba-cloud-csi-driver, docs/cloud-evidence.md), ossfs's `-o`
options, and Kubernetes' static binding rules; checked against the newest OpenAPI schema.
"""

from __future__ import annotations

import base64
from typing import Any

import kubernetes_validate
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import parse_config, read_stack_file, stack_file
from infra.manifests.oss import (
    credentials_secret_ref,
    oss_env,
    oss_mounts,
    oss_objects,
    oss_volumes,
)
from infra.platform.cluster_facts import cluster_facts

NEWEST_SCHEMA = max(all_versions(), key=Version)
IMAGE = "registry.example.com/tftrain/trainer:1"
STABLE = {"app.kubernetes.io/name": "tftrain", "app.kubernetes.io/instance": "mnist"}
DATA = {
    "bucket": "team-data-01",
    "inputPrefix": "mnist/",
    "exportPrefix": "exports/",
    "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
}


def stack(kind: str, data: dict[str, Any], secret: bool = False, **job: Any) -> Any:
    return parse_config(
        {
            "image": IMAGE,
            "cluster": {"kind": kind},
            "network": {"zoneId": "cn-hangzhou-i"},
            "job": {"name": "mnist", "namespace": "team-a", "runId": "r1", **job},
            "data": {**DATA, **data},
        },
        ("data",) if secret else (),
    )


def volume(role: str, access: str, csi: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": f"team-a-mnist-{role}",
            "labels": {**STABLE, "tftrain.io/volume": role},
        },
        "spec": {
            "capacity": {"storage": "1Ti"},
            "accessModes": [access],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "namespace": "team-a",
                "name": f"mnist-{role}",
            },
            "csi": csi,
        },
    }


def claim(role: str, access: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"mnist-{role}", "namespace": "team-a", "labels": STABLE},
        "spec": {
            "accessModes": [access],
            "storageClassName": "",
            "volumeMode": "Filesystem",
            "selector": {"matchLabels": {**STABLE, "tftrain.io/volume": role}},
            "resources": {"requests": {"storage": "1Ti"}},
        },
    }


def attributes(path: str, options: str) -> dict[str, Any]:
    return {
        "bucket": "team-data-01",
        "url": "oss-cn-hangzhou-internal.aliyuncs.com",
        "path": path,
        "otherOpts": options,
    }


def test_on_ack_the_volumes_assume_the_stacks_ram_role() -> None:
    config = stack("ack", {})
    objects = oss_objects(config, cluster_facts(config, oss_role_name="tftrain-role"))
    rrsa = {"authType": "rrsa", "roleName": "tftrain-role"}
    driver = "ossplugin.csi.alibabacloud.com"
    assert objects == [
        volume(
            "input",
            "ReadOnlyMany",
            {
                "driver": driver,
                "volumeHandle": "team-a-mnist-input",
                "volumeAttributes": {**attributes("/mnist/", "-o uid=10000 -o gid=10000"), **rrsa},
                "readOnly": True,
            },
        ),
        claim("input", "ReadOnlyMany"),
        volume(
            "export",
            "ReadWriteMany",
            {
                "driver": driver,
                "volumeHandle": "team-a-mnist-export",
                "volumeAttributes": {
                    **attributes("/exports/", "-o uid=10000 -o gid=10000"),
                    **rrsa,
                },
            },
        ),
        claim("export", "ReadWriteMany"),
    ]
    for obj in objects:
        kubernetes_validate.validate(obj, NEWEST_SCHEMA, strict=True)


def test_on_ask_the_stack_makes_the_key_secret_its_volumes_name_first() -> None:
    config = stack("ask", {"accessKeyId": "LTAI-id", "accessKeySecret": "s3cret"}, secret=True)
    objects = oss_objects(config, cluster_facts(config))
    ref = {"name": "mnist-oss-credentials", "namespace": "team-a"}
    assert credentials_secret_ref(config) == ref
    assert objects[0] == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {**ref, "labels": STABLE},
        "type": "Opaque",
        "data": {
            "akId": base64.b64encode(b"LTAI-id").decode(),
            "akSecret": base64.b64encode(b"s3cret").decode(),
        },
    }
    # ECI mounts OSS itself and adds no allow_other: the non-root trainer needs it.
    options = "-o uid=10000 -o gid=10000 -o allow_other"
    (input_volume, export_volume) = [o for o in objects if o["kind"] == "PersistentVolume"]
    assert input_volume["spec"]["csi"] == {
        "driver": "ossplugin.csi.alibabacloud.com",
        "volumeHandle": "team-a-mnist-input",
        "volumeAttributes": attributes("/mnist/", options),
        "nodePublishSecretRef": ref,
        "readOnly": True,
    }
    assert export_volume["spec"]["csi"]["nodePublishSecretRef"] == ref
    assert "readOnly" not in export_volume["spec"]["csi"]
    assert [o["kind"] for o in objects] == [
        "Secret", "PersistentVolume", "PersistentVolumeClaim", "PersistentVolume",
        "PersistentVolumeClaim",
    ]  # fmt: skip
    for obj in objects:
        kubernetes_validate.validate(obj, NEWEST_SCHEMA, strict=True)


def test_a_secret_the_user_manages_is_named_not_made() -> None:
    config = stack("ask", {"credentials": "secret", "credentialsSecret": "kube-system/oss-key"})
    assert credentials_secret_ref(config) == {"name": "oss-key", "namespace": "kube-system"}
    objects = oss_objects(config, cluster_facts(config))
    assert "Secret" not in [o["kind"] for o in objects]


def test_only_the_replica_that_ends_the_run_mounts_the_export() -> None:
    config = stack("ack", {})
    assert oss_volumes(config, ends_run=False) == [
        {"name": "input", "persistentVolumeClaim": {"claimName": "mnist-input"}}
    ]
    assert oss_volumes(config, ends_run=True) == [
        {"name": "input", "persistentVolumeClaim": {"claimName": "mnist-input"}},
        {"name": "export", "persistentVolumeClaim": {"claimName": "mnist-export"}},
    ]
    assert oss_mounts(config, ends_run=False) == [
        {"name": "input", "mountPath": "/input", "readOnly": True}
    ]
    assert oss_mounts(config, ends_run=True) == [
        {"name": "input", "mountPath": "/input", "readOnly": True},
        {"name": "export", "mountPath": "/export"},
    ]
    assert oss_env(config, ends_run=False) == {
        "TFTRAIN_INPUT_DIR": "/input",
        "TFTRAIN_DATA_DIR": "/input",
    }
    ends = oss_env(config, ends_run=True)
    assert ends["TFTRAIN_EXPORT_DIR"] == "/export"
    assert ends["TFTRAIN_RUN_ID"] == "r1"


def test_without_a_bucket_nothing_is_mounted() -> None:
    config = stack("ack", {"bucket": "", "inputPrefix": ""})
    facts = cluster_facts(config)
    assert oss_objects(config, facts) == []
    assert oss_volumes(config, True) == oss_mounts(config, True) == []
    assert oss_env(config, True) == {}


def test_a_run_stack_makes_only_the_claims_of_its_issued_volumes() -> None:
    config = parse_config(read_stack_file(stack_file("run-ack")))
    namespace = config.job.namespace
    objects = oss_objects(config, cluster_facts(config))
    assert [o["kind"] for o in objects] == ["PersistentVolumeClaim"] * 2
    for made, role in zip(objects, ("input", "export"), strict=True):
        assert made["metadata"]["name"] == f"tftrain-{role}"
        assert made["spec"]["selector"]["matchLabels"] == {
            "app.kubernetes.io/name": "tftrain",
            "tftrain.io/namespace": namespace,
            "tftrain.io/volume": role,
        }


def test_a_run_stack_on_ask_names_its_key_secret_as_its_platforms_volumes_do() -> None:
    """Its platform issued the volumes naming `tftrain-oss-credentials` in the run's
    namespace (`run_access.py`): the run's Secret must have exactly that name."""
    from tests.test_platform_stacks import RUN_ASK

    raw = {**RUN_ASK, "data": {"inputPrefix": "mnist/", "accessKeyId": "LTAI-run",
                               "accessKeySecret": "s"}}  # fmt: skip
    config = parse_config(raw, ("data",))
    ref = {"name": "tftrain-oss-credentials", "namespace": config.job.namespace}
    assert credentials_secret_ref(config) == ref
    (secret,) = [o for o in oss_objects(config, cluster_facts(config)) if o["kind"] == "Secret"]
    assert secret["metadata"]["name"] == "tftrain-oss-credentials"
