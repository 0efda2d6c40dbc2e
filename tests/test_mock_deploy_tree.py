"""What the mock deployment records of each resource, checked against what the engine itself
would give: the URN (pulumi/sdk/go/common/resource/urn.go `NewURN`), the parent, whether it is
a custom resource or a component, its provider reference (`<provider URN>::<provider id>`),
what it waits for, its `ignore_changes` and `import` options; reads by id; the ids and values
the fake cloud computes; and what the harness does with the program's own error."""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import Any

import pytest

from infra import mock_deploy
from infra.config import read_stack_file, stack_file
from infra.config.stack_file import engine_config
from infra.mock_deploy import SECRET, ProviderError, Recorded, Registration, StackOutputs
from tests.pulumi_mocks import PlausibleCloud, run_program
from tests.shared_values import SHARED_SCOPE
from tests.test_up_after_destroy import kept_file_system

ROOT = "urn:pulumi:ask-eci::tftrain::pulumi:pulumi:Stack::tftrain-ask-eci"
NETWORK = "urn:pulumi:ask-eci::tftrain::tftrain:cloud:Network::network"
VPC = "urn:pulumi:ask-eci::tftrain::tftrain:cloud:Network$alicloud:vpc/network:Network::network-vpc"
VSWITCH = (
    "urn:pulumi:ask-eci::tftrain::tftrain:cloud:Network$alicloud:vpc/switch:Switch::network-vswitch"
)
K8S_PROVIDER = "urn:pulumi:ask-eci::tftrain::pulumi:providers:kubernetes::k8s"
IMAGE = "registry.example.com/tftrain/trainer:1"


@pytest.fixture(scope=SHARED_SCOPE)
def ask_eci() -> Recorded:
    return run_program("ask-eci")


def _one(run: Recorded, name: str) -> Registration:
    (found,) = [r for r in run.resources if r.name == name]
    return found


def test_each_resource_has_the_engines_urn_and_its_parent(ask_eci: Recorded) -> None:
    network, vpc, vswitch = (
        _one(ask_eci, n) for n in ("network", "network-vpc", "network-vswitch")
    )
    assert (network.urn, network.parent) == (NETWORK, ROOT)
    assert (vpc.urn, vpc.parent) == (VPC, NETWORK)
    assert (vswitch.urn, vswitch.parent) == (VSWITCH, NETWORK)
    namespace = _one(ask_eci, "tftrain")
    assert namespace.urn == "urn:pulumi:ask-eci::tftrain::kubernetes:core/v1:Namespace::tftrain"


def test_components_are_not_custom_resources_and_cloud_resources_are(ask_eci: Recorded) -> None:
    assert _one(ask_eci, "network").custom is False
    assert _one(ask_eci, "network-vpc").custom is True


def test_objects_name_the_explicit_provider_and_cloud_resources_the_default_one(
    ask_eci: Recorded,
) -> None:
    # A provider reference is the provider's URN and id; the mock cloud's ids are <name>-id.
    assert _one(ask_eci, "tftrain").provider == f"{K8S_PROVIDER}::k8s-id"
    assert _one(ask_eci, "network-vpc").provider == ""


def test_what_a_resource_waits_for_and_its_options_are_recorded(ask_eci: Recorded) -> None:
    assert _one(ask_eci, "network-vswitch").dependencies == (VPC,)
    cluster = _one(ask_eci, "cluster-ask")
    assert cluster.ignore_changes == ("endpointPublicAccessEnabled",)
    assert (cluster.import_id, cluster.replace_on_changes) == ("", ())
    # A new image list is a new cache (docs/cloud-evidence.md, ECI ImageCache): any change
    # of its spec replaces it.
    (cache,) = [r for r in ask_eci.resources if r.type.endswith(":ImageCache")]
    assert cache.replace_on_changes == ("spec",)
    assert cache.ignore_changes == ()
    assert {r.replace_on_changes for r in ask_eci.resources if r is not cache} == {()}


def test_a_stack_reference_is_recorded_as_read_with_no_options() -> None:
    run = run_program("run-ack")
    (reference,) = run.of_type(mock_deploy.STACK_REFERENCE)
    assert reference.urn == "urn:pulumi:run-ack::tftrain::pulumi:pulumi:StackReference::platform"
    assert (reference.ignore_changes, reference.import_id, reference.dependencies) == ((), "", ())
    assert reference.replace_on_changes == ()


def test_a_stack_nobody_deployed_has_no_outputs_to_read() -> None:
    raw = read_stack_file(stack_file("run-ack"))
    raw["cluster"]["platformStack"] = "acme/tftrain/nobody"
    # No outputs of that stack are given: the engine would find none either.
    run = mock_deploy.run_program(
        engine_config(raw), stack="run-ack", answers=PlausibleCloud(), raise_errors=False
    )
    assert "acme/tftrain/nobody" in str(run.error)
    (reference,) = run.of_type(mock_deploy.STACK_REFERENCE)
    assert reference.inputs["name"] == "acme/tftrain/nobody"


def test_a_kubernetes_object_read_by_name_stays_with_the_objects() -> None:
    data = {
        "bucket": "team-data-01",
        "inputPrefix": "mnist/",
        "credentialsSecret": "oss/oss-credentials",
        "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com",
    }
    run = run_program({"image": IMAGE, "data": data})
    read = _one(run, "existing-secret-oss/oss-credentials")
    assert read.type == "kubernetes:core/v1:Secret"
    assert read.urn == (
        "urn:pulumi:test::tftrain::kubernetes:core/v1:Secret::existing-secret-oss/oss-credentials"
    )
    assert (read.ignore_changes, read.import_id, read.dependencies) == ((), "", ())
    assert not [token for token, _ in run.calls if token.endswith(".get")]


def test_the_fake_cloud_computes_from_the_resources_id(ask_eci: Recorded) -> None:
    # PlausibleCloud: a NAT gateway's SNAT table is stb-<its id>, and ids are <name>-id.
    snat_tables = {
        r.inputs["snatTableId"] for r in ask_eci.of_type("alicloud:vpc/snatEntry:SnatEntry")
    }
    assert snat_tables == {"stb-network-nat-id"}


def test_an_adopted_resource_carries_its_import_id() -> None:
    run = run_program(
        "ack-gpu", cloud=PlausibleCloud(kept_file_systems=(kept_file_system("0a1b2c3d4e"),))
    )
    (file_system,) = run.of_type("alicloud:nas/fileSystem:FileSystem")
    assert file_system.import_id == "0a1b2c3d4e"


def test_a_preview_redacts_every_secret_and_a_deployment_keeps_them() -> None:
    registry = {"server": "registry.example.com", "username": "u", "password": "pw-1"}
    config = engine_config({"image": IMAGE, "imageRegistry": registry})
    secrets = ["tftrain:imageRegistry"]
    redacted = mock_deploy.run_program(
        config, stack="test", secret_keys=secrets, redact_secrets=True
    )
    kept = mock_deploy.run_program(config, stack="test", secret_keys=secrets)

    def pull_secret_data(run: Recorded) -> Any:
        (secret,) = [
            o
            for o in run.objects_of_kind("Secret")
            if o["type"] == "kubernetes.io/dockerconfigjson"
        ]
        return secret["data"]

    assert pull_secret_data(redacted) == SECRET
    assert "pw-1" in base64.b64decode(pull_secret_data(kept)[".dockerconfigjson"]).decode()


def test_the_programs_error_is_raised_unless_asked_to_keep_it() -> None:
    config = engine_config({"image": IMAGE, "tensorboard": {"public": True}})
    with pytest.raises(Exception, match=r"tensorboard\.allowedSourceRanges"):
        mock_deploy.run_program(config, stack="test")


def test_other_errors_than_the_programs_refusal_are_still_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            mock_deploy._unless_the_programs_refusal(
                loop, {"message": "a callback broke", "exception": ValueError("x")}
            )
            mock_deploy._unless_the_programs_refusal(
                loop, {"message": "refused", "exception": ProviderError("no")}
            )
    finally:
        loop.close()
    assert [r.getMessage() for r in caplog.records] == ["a callback broke"]


def test_stack_outputs_are_handed_over_under_the_references_name() -> None:
    state = StackOutputs({"a": 1}).as_state("acme/tftrain/platform")
    assert state["name"] == "acme/tftrain/platform"
