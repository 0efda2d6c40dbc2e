"""What infra.mock_deploy records of a whole program run, the way the review and the tests
read it: the lookups the program makes (with their secrets redacted or kept), the existing
resources it reads by id (a lookup, not something the stack owns), and, offline, lookups
left unknown as the real engine's preview would leave them."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from infra import mock_deploy
from infra.mock_deploy import SECRET, RecordingMocks
from tests.pulumi_mocks import PlausibleCloud, run_program, stack_config_map

ASK_CLUSTER = "alicloud:cs/serverlessKubernetes:ServerlessKubernetes"
MANAGED = "alicloud:cs/managedKubernetes:ManagedKubernetes"
CREDENTIAL = "alicloud:cs/getClusterCredential:getClusterCredential"
# The SDK's marker of a secret value on the wire (pulumi.runtime.rpc).
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


def _secret(value: Any) -> dict[str, Any]:
    return {"4dabf18193072939515e22adb298388d": SECRET_SIG, "value": value}


class Answers:
    def outputs(self, type_token: str, resource_id: str, inputs: dict) -> dict:
        return {}

    def call(self, token: str, args: dict) -> dict:
        return {"answered": token, "asked": args}


@pytest.mark.parametrize(("redact", "password"), [(True, SECRET), (False, "hunter2")])
def test_a_lookup_is_recorded_with_its_secrets_redacted_or_kept(
    redact: bool, password: str
) -> None:
    mocks = RecordingMocks(Answers(), redact)
    args = {"name": "db", "auth": {"password": _secret("hunter2")}}
    answer = mocks.call(pulumi.runtime.MockCallArgs("alicloud:x/y:z", args, ""))
    asked = {"name": "db", "auth": {"password": password}}
    assert mocks.calls == [("alicloud:x/y:z", asked)]
    assert answer == {"answered": "alicloud:x/y:z", "asked": asked}


def test_offline_a_lookup_is_recorded_and_answered_with_nothing() -> None:
    mocks = RecordingMocks(None, redact=True)
    assert mocks.call(pulumi.runtime.MockCallArgs("alicloud:x/y:z", {"id": "a"}, "")) == {}
    assert mocks.calls == [("alicloud:x/y:z", {"id": "a"})]


def test_a_cluster_read_by_id_is_a_lookup_not_a_resource_of_the_stack() -> None:
    recorded = run_program("ask-eci")
    (cluster,) = recorded.of_type(ASK_CLUSTER)
    assert recorded.of_type(MANAGED) == []
    assert (f"{MANAGED}.get", {"id": f"{cluster.name}-id"}) in recorded.calls


def test_an_offline_preview_asks_the_cloud_nothing_and_leaves_lookups_unknown() -> None:
    """Without answers (what `tftrain preview` does with no cloud), every lookup's result is
    unknown: the program must not treat an invented answer as the cloud's."""
    config, name = stack_config_map("ack-gpu")
    recorded = mock_deploy.run_program(config, stack=name, answers=None, redact_secrets=True)
    assert recorded.error is None
    assert CREDENTIAL in {token for token, _ in recorded.calls}
    # What comes from a lookup is unknown; an id is a placeholder naming its resource.
    assert recorded.outputs["kubeconfig"] is None
    assert recorded.outputs["kubernetesVersion"] is None
    assert recorded.outputs["clusterId"] == "<cluster-ack.id>"


def test_a_deployment_asks_the_fake_cloud_every_lookup() -> None:
    recorded = run_program("ack-gpu", cloud=PlausibleCloud())
    (credential,) = [args for token, args in recorded.calls if token == CREDENTIAL]
    assert credential["clusterId"] == recorded.outputs["clusterId"] == "cluster-ack-id"
    assert recorded.outputs["kubeconfig"].startswith("apiVersion: v1")
