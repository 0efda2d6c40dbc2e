"""The order the engine creates what a platform issues its run namespaces in (and deletes it
in reverse), read from each registered resource's dependencies under Pulumi mocks: the
whole platform program, as `pulumi up` runs it.

The expected orderings are worked out by hand from what each object needs to exist first:
- a namespaced object needs its Namespace (the API server refuses it otherwise), and only
  its own: another namespace's is no help;
- the ServiceAccount's token Secret needs the ServiceAccount: the token controller fills a
  `kubernetes.io/service-account-token` Secret only for an account that exists, and deletes
  one whose account is gone (Kubernetes docs, "Manually create a long-lived API token for a
  ServiceAccount"; pulumi-kubernetes #4396);
- the RoleBinding names its Role: bound before the Role exists, the deployer's first
  request can be refused;
- a volume is mounted by whatever node runs a run's pod: the NAS mount target and the
  access rule that admits the VPC, the bucket, and (ACK) the namespace's RAM role with its
  policy attached must be there before a claim can bind it, and outlive it on `destroy`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from infra.config import read_stack_file, stack_file
from infra.mock_deploy import Recorded, Registration
from infra.platform.outputs import RUN_OSS_ROLE_NAMES
from tests.pulumi_mocks import run_program
from tests.test_platform_stacks import PLATFORM_ASK

# Two namespaces either side of where a RAM name (`tftrain-test-oss-access-<namespace>`, 24
# characters before the namespace, at most 63) would cut a namespace off: 39 characters fit,
# 40 do not, and the role is named after a digest of the namespace instead.
TEAMS = ("team-a-" + "x" * 32, "team-b-" + "x" * 33)
DEPLOYER = "tftrain-deployer"


def role_component(team: str) -> str:
    """The namespace's `OssRrsaAccess`, worked out by hand for the two TEAMS."""
    if len(team) == 39:
        return f"oss-access-{team}"
    return f"oss-access-{hashlib.sha256(team.encode()).hexdigest()[:12]}"


def _platform(raw: dict[str, Any]) -> Recorded:
    run = run_program({**raw, "cluster": {**raw["cluster"], "runNamespaces": list(TEAMS)}})
    assert run.error is None, run.error
    return run


# Deployed once per test session (mutmut forks a session per mutant: no module cache).
_RUNS: dict[str, Recorded] = {}


@pytest.fixture(autouse=True, scope="session")
def _deploy_afresh_per_session() -> None:
    _RUNS.clear()


def platform(name: str) -> Recorded:
    if name not in _RUNS:
        raw = PLATFORM_ASK if name == "platform-ask" else read_stack_file(stack_file(name))
        _RUNS[name] = _platform(raw)
    return _RUNS[name]


def kind_of(registration: Registration) -> str:
    return registration.type.rsplit(":", 1)[-1]


def after(run: Recorded, kind: str, name: str) -> set[tuple[str, str]]:
    """(kind, name) of every registered resource the engine orders `kind` `name` after."""
    (resource,) = [r for r in run.resources if kind_of(r) == kind and r.name == name]
    by_urn = {r.urn: r for r in run.resources}
    return {(kind_of(by_urn[urn]), by_urn[urn].name) for urn in resource.dependencies}


@pytest.mark.parametrize("team", TEAMS)
def test_each_namespaced_object_is_created_after_its_own_namespace_only(team: str) -> None:
    run = platform("platform-ack")
    namespace = ("Namespace", team)
    assert after(run, "Namespace", team) == set()
    assert after(run, "ServiceAccount", f"{team}/{DEPLOYER}") == {namespace}
    assert after(run, "Role", f"{team}/{DEPLOYER}") == {namespace}
    assert after(run, "RoleBinding", f"{team}/{DEPLOYER}") == {
        namespace,
        ("Role", f"{team}/{DEPLOYER}"),
    }
    assert after(run, "Secret", f"{team}/{DEPLOYER}-token") == {
        namespace,
        ("ServiceAccount", f"{team}/{DEPLOYER}"),
    }


@pytest.mark.parametrize("team", TEAMS)
def test_each_issued_volume_comes_after_the_storage_it_mounts_and_its_namespaces_role(
    team: str,
) -> None:
    run = platform("platform-ack")
    component = role_component(team)
    role = {
        ("Role", f"{component}-role"),
        ("Policy", f"{component}-policy"),
        ("RolePolicyAttachment", f"{component}-attachment"),
    }
    other = role_component(next(t for t in TEAMS if t != team))
    storage = {
        ("MountTarget", "nas-mount-target"),
        ("AccessRule", "nas-access-rule"),
        ("Bucket", "data-bucket"),
        ("BucketPublicAccessBlock", "data-public-access-block"),
    }
    for volume in ("data", "input", "export"):
        deps = after(run, "PersistentVolume", f"tftrain-{team}-{volume}")
        assert storage | role <= deps, volume
        # Not the other namespace's role, and no namespace: a volume is cluster-scoped.
        assert not {name for _, name in deps} & {
            f"{other}-role",
            f"{other}-attachment",
            *TEAMS,
        }


def test_each_namespaces_role_is_made_once_the_bucket_is_there_and_named_for_it() -> None:
    """A bucket name is global: when another account holds it, `up` stops there, before any
    RAM role or policy of a namespace exists."""
    run = platform("platform-ack")
    for team in TEAMS:
        deps = after(run, "OssRrsaAccess", role_component(team))
        assert {
            ("Bucket", "data-bucket"),
            ("BucketPublicAccessBlock", "data-public-access-block"),
        } <= deps
    assert run.outputs[RUN_OSS_ROLE_NAMES] == {
        TEAMS[0]: f"tftrain-test-oss-access-{TEAMS[0]}",
        TEAMS[1]: f"tftrain-test-{role_component(TEAMS[1])}",
    }
    assert len(run.outputs[RUN_OSS_ROLE_NAMES][TEAMS[0]]) == 63


def test_without_rrsa_the_volumes_come_after_the_nas_and_no_role() -> None:
    """ASK: no RRSA, so no RAM role; the runs bring an AccessKey."""
    run = platform("platform-ask")
    for team in TEAMS:
        deps = after(run, "PersistentVolume", f"tftrain-{team}-data")
        assert {("MountTarget", "nas-mount-target"), ("AccessRule", "nas-access-rule")} <= deps
        assert not any(kind in ("Role", "RolePolicyAttachment") for kind, _ in deps)
