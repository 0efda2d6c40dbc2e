"""What a platform stack hands its run namespaces, under mocks: its admin kubeconfig as a
secret output, and volumes that point at the storage it created (the NAS mount target the
cloud reports, the bucket it made, the region's internal OSS endpoint); and what a run stack
checks of those outputs before it sends anything to the cluster."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from infra.mock_deploy import Recorded, StackOutputs
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


def test_a_platform_that_names_no_endpoint_issues_its_regions_internal_one() -> None:
    raw = stack_raw("platform-ack")
    del raw["data"]["endpoint"]
    platform = run_program({**raw, "alicloud:region": "cn-hangzhou"})
    assert platform.outputs["ossEndpoint"] == INTERNAL_ENDPOINT
    for volume in _volumes(platform, "ossplugin.csi.alibabacloud.com"):
        assert volume["volumeAttributes"]["url"] == INTERNAL_ENDPOINT


# --- What a run stack checks of its platform's outputs ------------------------------------------

RUN_STACK = "run-ack"
PLATFORM = "organization/tftrain/platform-ack"  # stacks/Pulumi.run-ack.yaml, cluster.platformStack


def _run_with(platform: dict[str, Any], data: dict[str, str] | None = None) -> Recorded:
    raw = stack_raw(RUN_STACK, {"data": data} if data else None)
    outputs = StackOutputs(platform, frozenset({"runKubeconfigs"}))
    return run_program(raw, platform=outputs, raise_errors=False)


def _platform_outputs() -> dict[str, Any]:
    return dict(run_program("platform-ack").outputs)


def test_a_platform_nobody_deployed_is_named_with_every_output_the_run_needs() -> None:
    run = _run_with({})
    # What a run on ACK with NAS reads (docs/teams.md): the kind, the cluster, its namespace's
    # kubeconfig, the NAS, and the platform's bucket and prefixes.
    assert str(run.error) == (
        f"tftrain:cluster.platformStack = '{PLATFORM}': that stack has no output clusterKind, "
        "clusterId, runKubeconfigs, nasDomain, ossBucket, ossInputPrefix, ossExportPrefix, "
        "which this run needs: is it a platform stack (cluster.role: platform) that has been "
        "deployed, with the storage this run uses?"
    )
    assert run.kube_objects() == []


def test_a_platform_of_another_cluster_kind_is_refused_naming_both() -> None:
    run = _run_with({**_platform_outputs(), "clusterKind": "ask"})
    assert str(run.error) == (
        f"tftrain:cluster.kind = 'ack': must be ask, the kind of platform stack {PLATFORM}'s "
        "cluster (placement, gang scheduling and the image cache depend on it)"
    )
    assert run.kube_objects() == []


def test_a_run_whose_data_is_not_what_its_volumes_mount_sends_nothing() -> None:
    run = _run_with(_platform_outputs(), data={"bucket": "other-bucket", "inputPrefix": "mnist/"})
    assert str(run.error).startswith("tftrain:data.bucket = 'other-bucket': the volumes platform")
    assert run.kube_objects() == []


def test_a_run_exports_its_platform_and_the_bucket_it_reads() -> None:
    platform = _platform_outputs()
    run = _run_with(platform)
    assert run.error is None
    assert run.outputs["platformStack"] == PLATFORM
    assert run.outputs["ossBucket"] == platform["ossBucket"]
