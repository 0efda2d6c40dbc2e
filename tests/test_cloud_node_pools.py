"""ACK's node pools and autoscaler under Pulumi mocks: what every pool asks ECS for, where a
fixed size ends and autoscaling starts, and what an account without the autoscaler's role is
told before anything is created.

Expected values come from the provider's reference for cs.NodePool and cs.AutoscalingConfig
and from ACK's documentation (AliyunCSManagedAutoScalerRole, the OS image types, ESSD)."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pytest

from infra.cloud import AckCluster, Network
from tests.pulumi_mocks import CloudMocks, PlausibleCloud
from tests.test_cloud_components import (
    ACK,
    AUTOSCALER,
    NODE_POOL,
    ack_with_gpu_workers,
    build_ack,
    deploy,
    stack,
)

# ACK's "Alibaba Cloud Linux 3" node image, the one ACK's GPU driver versions are built for.
ALIBABA_CLOUD_LINUX_3 = "AliyunLinux3"
ESSD = "cloud_essd"


def _pools(mocks: CloudMocks) -> dict[str, dict]:
    return {pool.name: pool.inputs for pool in mocks.of_type(NODE_POOL)}


def test_every_pool_runs_alibaba_cloud_linux_3_on_essd_under_its_own_name() -> None:
    config = stack("ack-gpu", cluster={"spotGpuPool": {"maxSize": 2}}, worker={"spot": True})
    mocks, _ = deploy(build_ack(config))

    pools = _pools(mocks)
    assert pools.keys() == {"tft-cpu-pool", "tft-gpu-pool", "tft-spot-gpu-pool"}
    for name, inputs in pools.items():
        assert inputs["imageType"] == ALIBABA_CLOUD_LINUX_3, name
        assert inputs["systemDiskCategory"] == ESSD, name
        # Without a name ACK makes one up; the console would not say which pool is which.
        assert inputs["nodePoolName"] == name


def test_the_spot_pool_takes_the_gpu_pools_disk_size() -> None:
    config = stack(
        "ack-gpu",
        cluster={"gpuPool": {"diskSize": 300}, "spotGpuPool": {"maxSize": 2}},
        worker={"spot": True},
    )
    mocks, _ = deploy(build_ack(config))

    pools = _pools(mocks)
    assert pools["tft-gpu-pool"]["systemDiskSize"] == 300
    assert pools["tft-spot-gpu-pool"]["systemDiskSize"] == 300


def test_a_fixed_gpu_pool_of_one_node() -> None:
    mocks, _ = deploy(build_ack(ack_with_gpu_workers({"size": 1})))

    gpu = _pools(mocks)["tft-gpu-pool"]
    assert gpu["desiredSize"] == "1"
    assert "scalingConfig" not in gpu


def test_a_max_size_of_one_autoscales_from_zero_to_one() -> None:
    """The smallest autoscaling pool: one GPU node while a job runs, none while idle."""
    mocks, _ = deploy(build_ack(ack_with_gpu_workers({"size": 0, "minSize": 0, "maxSize": 1})))

    gpu = _pools(mocks)["tft-gpu-pool"]
    assert "desiredSize" not in gpu
    assert gpu["scalingConfig"] == {"enable": True, "minSize": 0, "maxSize": 1, "type": "gpu"}
    assert len(mocks.of_type(AUTOSCALER)) == 1


def test_without_the_autoscaler_role_the_user_is_told_where_to_grant_it_and_nothing_scales() -> (
    None
):
    mocks = CloudMocks(PlausibleCloud(autoscaler_role=False, strict=True))
    with pytest.raises(Exception) as raised:
        deploy(build_ack(stack("ack-gpu")), mocks=mocks)

    message = str(raised.value)
    assert "tftrain:cluster.gpuPool.maxSize / cpuPool.maxSize" in message
    assert "RAM role AliyunCSManagedAutoScalerRole and the Auto Scaling service" in message
    assert "once per account in the ACK console (see docs/deploy.md, GPU autoscaling)" in message
    # The autoscaler's settings wait for the check: none is asked for.
    assert mocks.of_type(AUTOSCALER) == []


def test_on_demand_pools_carry_no_spot_setting() -> None:
    config = stack("ack-gpu", cluster={"spotGpuPool": {"maxSize": 2}}, worker={"spot": True})
    mocks, _ = deploy(build_ack(config))

    pools = _pools(mocks)
    for name in ("tft-cpu-pool", "tft-gpu-pool"):
        assert "spotStrategy" not in pools[name], name
        assert "spotInstanceRemedy" not in pools[name], name
    assert pools["tft-spot-gpu-pool"]["spotInstanceRemedy"] is True


def _created_public() -> PlausibleCloud:
    """An ACK cluster created with an internet-facing API server, whatever the stack says."""
    return PlausibleCloud(strict=True, created_with={ACK: {"slbInternetEnabled": True}})


def test_turning_an_ack_api_server_private_after_creation_stops_naming_the_key() -> None:
    """ACK reads slb_internet_enabled at creation only (the provider's reference): a stack
    changed to private must say so, not leave an internet endpoint it reports as gone."""
    message = (
        "tftrain:cluster.publicApiServer = false: the cluster was created with true and ACK "
        "applies it only at creation; set it back, or create a new stack with the value you "
        "want (see docs/deploy.md, Reaching the cluster)"
    )
    with pytest.raises(Exception, match=re.escape(message)):
        deploy(build_ack(stack("ack-gpu")), mocks=CloudMocks(_created_public()))


def test_terway_without_a_pod_vswitch_is_a_programming_error_said_plainly() -> None:
    config = stack("ack-gpu", cluster={"networkPlugin": "terway"})

    def build() -> dict[str, pulumi.Output[Any]]:
        AckCluster("tft", config.cluster, Network("tft", config.network), uses_gpu=False)
        return {}

    with pytest.raises(ValueError, match=r"^Terway needs a Network built with pod_vswitch=True$"):
        deploy(build)
