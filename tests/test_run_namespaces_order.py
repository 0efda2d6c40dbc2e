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

import yaml

from infra.config import read_stack_file, stack_file
from infra.mock_deploy import Recorded, Registration
from infra.platform.outputs import RUN_KUBECONFIGS, RUN_OSS_ROLE_NAMES
from tests.pulumi_mocks import MOCK_SA_TOKEN, run_program
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


def platform(name: str) -> Recorded:
    """The platform deployed with TEAMS as its run namespaces. Each test deploys its own
    (no cache): mutmut counts a test as reaching the code only if it runs it itself."""
    raw = PLATFORM_ASK if name == "platform-ask" else read_stack_file(stack_file(name))
    run = run_program({**raw, "cluster": {**raw["cluster"], "runNamespaces": list(TEAMS)}})
    assert run.error is None, run.error
    return run


def kind_of(registration: Registration) -> str:
    return registration.type.rsplit(":", 1)[-1]


def after(run: Recorded, kind: str, name: str) -> set[tuple[str, str]]:
    """(kind, name) of every registered resource the engine orders `kind` `name` after."""
    (resource,) = [r for r in run.resources if kind_of(r) == kind and r.name == name]
    by_urn = {r.urn: r for r in run.resources}
    return {(kind_of(by_urn[urn]), by_urn[urn].name) for urn in resource.dependencies}


def namespaced_order(run: Recorded, team: str) -> None:
    # Registered with the platform's own provider (its admin kubeconfig), not an ambient one.
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    for resource in run.resources:
        if resource.type.startswith("kubernetes:") and resource.type != provider.type:
            assert resource.provider.startswith(f"{provider.urn}::"), resource.name
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


def volume_order(run: Recorded, team: str) -> None:
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


def test_on_ack_each_object_comes_after_what_it_needs_and_only_that() -> None:
    run = platform("platform-ack")
    for team in TEAMS:
        namespaced_order(run, team)
        volume_order(run, team)
    # A bucket name is global: when another account holds it, `up` stops there, before any
    # RAM role or policy of a namespace exists.
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
    kubeconfigs_name_their_own_tokens(run)


def kubeconfigs_name_their_own_tokens(run: Recorded) -> None:
    """Each namespace's kubeconfig, a secret output: the token the cluster put in that
    namespace's ServiceAccount Secret, that namespace as the default."""
    assert RUN_KUBECONFIGS in run.secret_outputs
    assert sorted(run.outputs[RUN_KUBECONFIGS]) == sorted(TEAMS)
    for team in TEAMS:
        issued = yaml.safe_load(run.outputs[RUN_KUBECONFIGS][team])
        assert issued["users"][0]["user"] == {"token": f"{MOCK_SA_TOKEN}-{team}"}
        assert issued["contexts"][0]["context"]["namespace"] == team


def test_without_rrsa_the_volumes_come_after_the_nas_and_no_role() -> None:
    """ASK: no RRSA, so no RAM role; the runs bring an AccessKey."""
    run = platform("platform-ask")
    for team in TEAMS:
        namespaced_order(run, team)
        deps = after(run, "PersistentVolume", f"tftrain-{team}-data")
        assert {("MountTarget", "nas-mount-target"), ("AccessRule", "nas-access-rule")} <= deps
        assert not any(kind in ("Role", "RolePolicyAttachment") for kind, _ in deps)
    assert RUN_OSS_ROLE_NAMES not in run.outputs
    kubeconfigs_name_their_own_tokens(run)


def test_a_token_the_cluster_did_not_fill_fails_naming_its_namespace() -> None:
    """A cluster whose token controller left the ServiceAccount's Secret empty: `up` fails
    naming that namespace's Secret, and says what to do."""
    import pulumi
    import pulumi_kubernetes as k8s
    import pytest

    from infra.config import parse_config
    from infra.manifests.run_access import IssuedStorage, issued_objects
    from infra.run_namespaces import issue_namespaces
    from tests.pulumi_mocks import FAKE_KUBECONFIG, CloudMocks
    from tests.test_cloud_components import deploy

    class NoTokens(CloudMocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
            resource_id, outputs = super().new_resource(args)
            if args.typ == "kubernetes:core/v1:Secret":
                outputs = {**outputs, "data": {}}
            return resource_id, outputs

    raw = read_stack_file(stack_file("platform-ack"))
    raw["cluster"]["runNamespaces"] = ["team-a"]
    config = parse_config(raw)
    storage = IssuedStorage(cluster_kind="ack")

    def build() -> dict[str, pulumi.Output]:
        provider = k8s.Provider("k8s", kubeconfig=FAKE_KUBECONFIG)
        admin = (provider, pulumi.Output.from_input(FAKE_KUBECONFIG))
        objects = issued_objects("team-a", storage)
        exports = issue_namespaces(config, admin, objects, {}, [])
        return {RUN_KUBECONFIGS: exports[RUN_KUBECONFIGS]}

    with pytest.raises(Exception, match=r"token Secret of team-a/tftrain-deployer has no token"):
        deploy(build, mocks=NoTokens())
