"""What a platform stack hands its run namespaces, under mocks: its admin kubeconfig as a
secret output, and volumes that point at the storage it created (the NAS mount target the
cloud reports, the bucket it made, the region's internal OSS endpoint)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from infra.mock_deploy import Recorded
from tests.pulumi_mocks import MOCK_INTRANET_API, run_program, stack_raw

BUCKET = "alicloud:oss/bucket:Bucket"
MOUNT_TARGET = "alicloud:nas/mountTarget:MountTarget"
# Alibaba Cloud's internal (VPC) OSS endpoint of cn-hangzhou: oss-<region>-internal.aliyuncs.com
INTERNAL_ENDPOINT = "oss-cn-hangzhou-internal.aliyuncs.com"


@pytest.fixture
def platform() -> Recorded:
    # A run per test, none shared: a mutation run reruns only the tests that ran the code.
    return run_program("platform-ack")


def _volumes(recorded: Recorded, driver: str) -> list[dict[str, Any]]:
    volumes = [
        pv["spec"]["csi"]
        for pv in recorded.objects_of_kind("PersistentVolume")
        if pv["spec"].get("csi", {}).get("driver") == driver
    ]
    assert volumes, driver
    return volumes


def test_the_admin_kubeconfig_is_a_secret_output_for_the_private_endpoint(
    platform: Recorded,
) -> None:
    assert "kubeconfig" in platform.secret_outputs
    document = yaml.safe_load(platform.outputs["kubeconfig"])
    assert document["kind"] == "Config"
    assert [c["cluster"]["server"] for c in document["clusters"]] == [MOCK_INTRANET_API]


def test_run_namespaces_mount_the_nas_mount_target_the_cloud_reports(platform: Recorded) -> None:
    (target,) = platform.of_type(MOUNT_TARGET)
    domain = platform.outputs["nasDomain"]
    assert domain.startswith(target.inputs["fileSystemId"])
    for volume in _volumes(platform, "nasplugin.csi.alibabacloud.com"):
        assert volume["volumeAttributes"]["server"] == domain


def test_run_namespaces_read_the_bucket_the_platform_made_over_the_internal_endpoint(
    platform: Recorded,
) -> None:
    (bucket,) = platform.of_type(BUCKET)
    assert platform.outputs["ossBucket"] == bucket.inputs["bucket"]
    assert platform.outputs["ossEndpoint"] == INTERNAL_ENDPOINT
    for volume in _volumes(platform, "ossplugin.csi.alibabacloud.com"):
        assert volume["volumeAttributes"]["bucket"] == bucket.inputs["bucket"]
        assert volume["volumeAttributes"]["url"] == INTERNAL_ENDPOINT


def test_a_platform_without_run_namespaces_makes_no_kubernetes_provider() -> None:
    """Nothing to put in the cluster: no provider, so nothing in the state needs the
    cluster's credentials to be refreshed or destroyed."""
    recorded = run_program(stack_raw("platform-ack", {"cluster": {"runNamespaces": []}}))
    assert recorded.error is None
    assert recorded.of_type("pulumi:providers:kubernetes") == []
    assert recorded.kube_objects() == []


def test_run_namespaces_volumes_wait_for_the_mount_target_and_the_uploaded_data(
    platform: Recorded,
) -> None:
    """A volume made before its storage would be mounted by a pod that finds no NAS mount
    target or an empty input prefix: `up` creates them after, `destroy` removes them first."""
    (target,) = platform.of_type(MOUNT_TARGET)
    uploads = {r.urn for r in platform.of_type("alicloud:oss/bucketObject:BucketObject")}
    assert uploads
    volumes = [r for r in platform.resources if r.type == "kubernetes:core/v1:PersistentVolume"]
    assert volumes
    for volume in volumes:
        assert {target.urn, *uploads} <= set(volume.dependencies), volume.name
