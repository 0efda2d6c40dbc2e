"""What `pulumi stack output` shows a user, value by value, under the mock cloud: TensorBoard's
address as the load balancer reports it (or that it has none yet), the OSS endpoint derived
from the provider's region (or the error naming both ways to give one), and the VPC the
cluster runs in."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import read_stack_file, stack_file
from tests.pulumi_mocks import PlausibleCloud, run_program

IMAGE = "registry.example.com/tftrain/trainer:1"
SERVICE = "kubernetes:core/v1:Service"
# TensorBoard's default port (tensorboard --help: --port, default 6006).
TENSORBOARD_PORT = 6006
PENDING = "pending: the load balancer has no address yet"


def _board_url(status: Any) -> str:
    """The tensorboardUrl of a run whose LoadBalancer Service reports `status`."""
    cloud = PlausibleCloud(created_with={SERVICE: {"status": status}})
    return run_program({"image": IMAGE}, cloud=cloud).outputs["tensorboardUrl"]


# What a Service's status.loadBalancer.ingress holds (Kubernetes API: LoadBalancerIngress has
# `ip` for load balancers addressed by IP, `hostname` for those addressed by DNS name).
@pytest.mark.parametrize(
    ("status", "url"),
    [
        ({"loadBalancer": {"ingress": [{"ip": "10.20.30.40"}]}}, "http://10.20.30.40:6006"),
        (
            {"loadBalancer": {"ingress": [{"hostname": "tb.example.com"}]}},
            "http://tb.example.com:6006",
        ),
        # The first ingress is the one a user reaches; a second is not read.
        (
            {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}},
            "http://10.0.0.1:6006",
        ),
        # Both set: the address (what SLB reports for an IP-addressed balancer) comes first.
        (
            {"loadBalancer": {"ingress": [{"ip": "10.0.0.3", "hostname": "tb.example.com"}]}},
            "http://10.0.0.3:6006",
        ),
        ({"loadBalancer": {"ingress": []}}, PENDING),
        ({"loadBalancer": {}}, PENDING),
        ({}, PENDING),
        (None, PENDING),
    ],
    ids=[
        "ip",
        "hostname",
        "two-ingresses",
        "ip-and-hostname",
        "empty",
        "no-ingress",
        "no-balancer",
        "no-status",
    ],
)
def test_tensorboard_url_is_the_balancers_first_address_or_says_it_is_pending(
    status: Any, url: str
) -> None:
    assert _board_url(status) == url


def _platform(**data: Any) -> dict[str, Any]:
    raw = read_stack_file(stack_file("platform-ack"))
    raw["data"] = {
        key: value for key, value in {**raw["data"], **data}.items() if value is not None
    }
    return raw


def test_without_data_endpoint_the_oss_endpoint_is_the_regions_internal_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ALICLOUD_REGION", raising=False)
    run = run_program({**_platform(endpoint=None), "alicloud:region": "cn-beijing"})
    # Alibaba Cloud's internal (VPC) endpoint form: oss-<region>-internal.aliyuncs.com.
    assert run.outputs["ossEndpoint"] == "oss-cn-beijing-internal.aliyuncs.com"


def test_without_data_endpoint_or_a_region_nothing_is_created_and_both_fixes_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ALICLOUD_REGION", raising=False)
    run = run_program(_platform(endpoint=None), raise_errors=False)
    assert str(run.error) == (
        "tftrain:data.endpoint = '': no alicloud:region to derive the OSS endpoint from; set "
        "alicloud:region or data.endpoint (oss-<region>-internal.aliyuncs.com)"
    )
    assert [r for r in run.resources if r.custom and not r.type.startswith("pulumi:")] == []


def test_the_providers_region_variable_stands_in_for_alicloud_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pulumi-alicloud reads ALICLOUD_REGION when alicloud:region is unset (its provider
    # docs): the volumes then mount that region's internal endpoint.
    monkeypatch.setenv("ALICLOUD_REGION", "cn-beijing")
    run = run_program(_platform(endpoint=None))
    assert run.outputs["ossEndpoint"] == "oss-cn-beijing-internal.aliyuncs.com"


def test_a_bucket_in_another_region_than_the_providers_variable_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The mock account's buckets are in cn-hangzhou (tests/pulumi_mocks.py).
    monkeypatch.setenv("ALICLOUD_REGION", "cn-shanghai")
    raw = read_stack_file(stack_file("ack-gpu"))
    raw["data"] = {"bucket": "team-data-01", "inputPrefix": "mnist/"}
    run = run_program(raw, raise_errors=False)
    assert "it is in oss-cn-hangzhou, the stack in cn-shanghai" in str(run.error)
    assert run.resources == []


def test_the_nas_file_system_id_output_is_the_one_the_stack_created() -> None:
    # What `storage.fileSystemId` takes to re-attach it after a destroy (docs/deploy.md).
    run = run_program("ack-gpu")
    (file_system,) = run.of_type("alicloud:nas/fileSystem:FileSystem")
    assert run.outputs["nasFileSystemId"] == f"{file_system.name}-id"


def test_the_vpc_id_output_is_the_id_of_the_vpc_the_stack_created() -> None:
    run = run_program("ack-gpu")
    (vpc,) = run.of_type("alicloud:vpc/network:Network")
    # The mock cloud's id for a resource: its name with "-id" (tests/pulumi_mocks.py).
    assert run.outputs["vpcId"] == f"{vpc.name}-id"
