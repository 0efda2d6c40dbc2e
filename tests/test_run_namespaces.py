"""What a platform issues its run namespaces (issue 37): each run stack deploys with its own
namespace's credentials, which reach nothing outside it, onto volumes the platform made.

Expected values come from outside the code: the Kubernetes OpenAPI schemas, the RBAC and
PersistentVolume binding rules written out by hand below, and the RAM policy written out by
hand as the CSI OSS plugin's RRSA role must have it.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from typing import Any

import kubernetes_validate
import kubernetes_validate.utils
import pytest
import yaml
from packaging.version import Version

from infra.config import parse_config, read_stack_file, stack_file
from infra.manifests.run_access import IssuedStorage, issued_objects
from infra.mock_deploy import STACK_REFERENCE, Recorded, StackOutputs
from infra.platform.outputs import KUBECONFIG, RUN_KUBECONFIGS, RUN_OSS_ROLE_NAMES
from tests.pulumi_mocks import MOCK_ACCOUNT_ID, MOCK_SA_TOKEN, deployed_outputs, run_program
from tests.shared_values import shared
from tests.test_manifests_schema import schema_version
from tests.test_platform_stacks import PLATFORM_ASK, RUN_ASK

# Kubernetes' REST names of every kind a run stack may render: (apiVersion, kind) → (API
# group, resource), as `kubectl api-resources` lists them.
RESOURCES = {
    ("v1", "Secret"): ("", "secrets"),
    ("v1", "ConfigMap"): ("", "configmaps"),
    ("v1", "Service"): ("", "services"),
    ("v1", "PersistentVolumeClaim"): ("", "persistentvolumeclaims"),
    ("batch/v1", "Job"): ("batch", "jobs"),
    ("apps/v1", "Deployment"): ("apps", "deployments"),
    ("networking.k8s.io/v1", "NetworkPolicy"): ("networking.k8s.io", "networkpolicies"),
}
# What pulumi-kubernetes does to an object it manages: create, read, server-side apply
# (patch), replace (update), delete, and watch it while it awaits readiness.
MANAGED = {"create", "get", "list", "watch", "patch", "update", "delete"}
# What the provider's await logic, `tftrain status` and `tftrain logs` read, and
# `kubectl port-forward` (TensorBoard) opens.
READ = {"get", "list", "watch"}
OBSERVED = {
    ("", "pods"): READ,
    ("", "pods/log"): READ,
    ("", "events"): READ,
    ("apps", "replicasets"): READ,
    ("", "pods/portforward"): {"create"},
}
# What would let a run stack out of its namespace or grant itself more: never.
ESCALATING = {
    ("", "namespaces"),
    ("", "persistentvolumes"),
    ("", "serviceaccounts"),
    ("", "serviceaccounts/token"),
    ("", "pods/exec"),
    ("", "pods/attach"),
    ("", "nodes"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
    ("eci.alibabacloud.com", "imagecaches"),
}


# An ASK platform with a bucket of the account: no RRSA there, so the runs bring an AccessKey.
PLATFORM_ASK_DATA = {
    **PLATFORM_ASK,
    "data": {"bucket": "team-data-01", "inputPrefix": "mnist/", "exportPrefix": "exports/"},
}
PLATFORMS = {"platform-ask": PLATFORM_ASK, "platform-ask-data": PLATFORM_ASK_DATA}


def platform_raw(name: str) -> dict[str, Any]:
    return PLATFORMS.get(name) or read_stack_file(stack_file(name))


@shared
def platform_run(name: str) -> Recorded:
    """The platform deployed under the mocks, once per session (each test afresh under mutmut:
    tests/shared_values.py)."""
    return run_program(PLATFORMS.get(name, name))


@shared
def platform_outputs(name: str) -> StackOutputs:
    return deployed_outputs(PLATFORMS.get(name, name))


def granted(role: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    """(group, resource) → verbs, as RBAC reads a Role's rules (every group and resource)."""
    verbs: dict[tuple[str, str], set[str]] = {}
    for rule in role["rules"]:
        assert "resourceNames" not in rule and "nonResourceURLs" not in rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                verbs.setdefault((group, resource), set()).update(rule["verbs"])
    return verbs


def the_role(run: Recorded, namespace: str) -> dict[str, Any]:
    (role,) = [o for o in run.objects_of_kind("Role") if o["metadata"]["namespace"] == namespace]
    return role


# As the engine hands a section holding a secure value: decrypted JSON, the key marked secret.
ASK_OSS_SECRETS = {
    "data": json.dumps({"inputPrefix": "mnist/", "accessKeyId": "LTAI-run", "accessKeySecret": "s"})
}


def run_variants() -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(platform, run config, secrets): the checked-in run, ASK runs with a registry password,
    secret env, TensorBoard as ClusterIP, and OSS through the run's AccessKey."""
    ack = read_stack_file(stack_file("run-ack"))
    busy = copy.deepcopy(ack)
    busy["tensorboard"]["serviceType"] = "ClusterIP"
    registry = {"server": "registry-vpc.cn-hangzhou.aliyuncs.com", "username": "u", "password": "p"}
    secrets = {
        "imageRegistry": json.dumps(registry),
        "job": json.dumps({**busy.pop("job"), "env": {"TOKEN": "t0ken"}}),
    }
    return [
        ("platform-ack", ack, {}),
        ("platform-ack", busy, secrets),
        ("platform-ask", copy.deepcopy(RUN_ASK), {}),
        ("platform-ask-data", copy.deepcopy(RUN_ASK), ASK_OSS_SECRETS),
    ]


def deploy(platform: str, raw: dict[str, Any], secrets: dict[str, str]) -> Recorded:
    return run_program(raw, platform=platform_outputs(platform), secrets=secrets)


def config_of(raw: dict[str, Any], secrets: dict[str, str] | None = None) -> Any:
    """The parsed config of a stack dict (provider keys aside) with its secret sections."""
    merged = {key: value for key, value in raw.items() if not key.startswith("alicloud:")}
    merged.update({key: json.loads(value) for key, value in (secrets or {}).items()})
    return parse_config(merged, set(secrets or {}))


@pytest.mark.parametrize("case", range(4))
def test_every_kind_a_run_stack_renders_is_allowed_by_its_namespaces_role(case: int) -> None:
    platform, raw, secrets = run_variants()[case]
    run = deploy(platform, raw, secrets)
    assert run.error is None, run.error
    namespace = config_of(raw, secrets).job.namespace
    verbs = granted(the_role(platform_run(platform), namespace))
    rendered = {(obj["apiVersion"], obj["kind"]) for obj in run.kube_objects()}
    assert rendered <= RESOURCES.keys(), rendered - RESOURCES.keys()
    for api_kind in rendered:
        assert verbs.get(RESOURCES[api_kind], set()) >= MANAGED, api_kind
    for resource, needed in OBSERVED.items():
        assert needed <= verbs.get(resource, set()), resource


@pytest.mark.parametrize("platform", ["platform-ack", "platform-ask", "platform-ask-data"])
def test_the_issued_role_grants_nothing_cluster_wide_and_nothing_to_escalate(
    platform: str,
) -> None:
    run = platform_run(platform)
    config = config_of(platform_raw(platform))
    kinds = {obj["kind"] for obj in run.kube_objects()}
    assert not kinds & {"ClusterRole", "ClusterRoleBinding"}
    for namespace in config.cluster.run_namespaces:
        role = the_role(run, namespace)
        for rule in role["rules"]:
            assert "*" not in rule["apiGroups"] + rule["resources"] + rule["verbs"], rule
        assert not granted(role).keys() & ESCALATING
        (binding,) = [o for o in run.objects_of_kind("RoleBinding")
                      if o["metadata"]["namespace"] == namespace]  # fmt: skip
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": role["metadata"]["name"],
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "tftrain-deployer", "namespace": namespace}
        ]
        (account,) = [o for o in run.objects_of_kind("ServiceAccount")
                      if o["metadata"]["namespace"] == namespace]  # fmt: skip
        assert account["automountServiceAccountToken"] is False
        (token,) = [o for o in run.objects_of_kind("Secret")
                    if o["metadata"]["namespace"] == namespace]  # fmt: skip
        assert token["type"] == "kubernetes.io/service-account-token"
        assert token["metadata"]["annotations"] == {
            "kubernetes.io/service-account.name": "tftrain-deployer"
        }
        (ns,) = [o for o in run.objects_of_kind("Namespace") if o["metadata"]["name"] == namespace]
        assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


@pytest.mark.parametrize("platform", ["platform-ack", "platform-ask", "platform-ask-data"])
def test_every_issued_object_is_a_valid_kubernetes_object(platform: str) -> None:
    run = platform_run(platform)
    version = schema_version(config_of(platform_raw(platform)))
    objects = run.kube_objects()
    assert objects
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_issued_kubeconfigs_are_secrets_for_the_service_account_of_each_namespace() -> None:
    run = platform_run("platform-ack")
    assert {KUBECONFIG, RUN_KUBECONFIGS} <= run.secret_outputs
    admin = yaml.safe_load(run.outputs[KUBECONFIG])
    (namespace,) = run.outputs[RUN_KUBECONFIGS]
    issued = yaml.safe_load(run.outputs[RUN_KUBECONFIGS][namespace])
    # The admin's cluster (API server and CA), the token the token controller put in the
    # ServiceAccount's Secret, and the namespace as the default.
    assert [c["cluster"] for c in issued["clusters"]] == [c["cluster"] for c in admin["clusters"]]
    ((user,),) = [[u["user"] for u in issued["users"]]]
    assert user == {"token": f"{MOCK_SA_TOKEN}-{namespace}"}
    (context,) = issued["contexts"]
    assert context["context"]["namespace"] == namespace
    assert issued["current-context"] == context["name"]
    # Not the admin's client certificate.
    assert "client-key-data" not in run.outputs[RUN_KUBECONFIGS][namespace]


def test_a_run_deploys_with_its_namespaces_kubeconfig_as_a_secret() -> None:
    outputs = platform_outputs("platform-ack")
    run = run_program("run-ack")
    (provider,) = run.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == outputs.values[RUN_KUBECONFIGS]["lr-sweep-a"]
    assert "kubeconfig" in provider.secret_paths
    assert "kubeconfig" in run.secret_outputs
    assert run.outputs["kubeconfig"] == outputs.values[RUN_KUBECONFIGS]["lr-sweep-a"]


def test_a_namespace_the_platform_did_not_issue_fails_by_key_before_any_object() -> None:
    raw = read_stack_file(stack_file("run-ack"))
    raw["job"]["namespace"] = "team-b"
    run = run_program(raw, platform=platform_outputs("platform-ack"), raise_errors=False)
    assert str(run.error) == (
        "tftrain:job.namespace = 'team-b': platform stack organization/tftrain/platform-ack "
        "issues credentials only for the namespaces [lr-sweep-a]: add team-b to that stack's "
        "cluster.runNamespaces and `pulumi up` it, or use one of those"
    )
    assert [r.type for r in run.resources] == [STACK_REFERENCE]


def _binds(claim: dict[str, Any], volume: dict[str, Any]) -> bool:
    """Kubernetes' static binding rules for a pre-bound volume (PersistentVolumes: Reserving a
    PersistentVolume; Binding): the claimRef names the claim, the claim's selector matches
    the volume's labels, same class and mode, its access modes offered, size enough."""
    units = {"Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}

    def size(quantity: str) -> int:
        return int(quantity[:-2]) * units[quantity[-2:]]

    ref, spec, meta = volume["spec"]["claimRef"], claim["spec"], claim["metadata"]
    return (
        (ref["namespace"], ref["name"]) == (meta["namespace"], meta["name"])
        and spec["selector"]["matchLabels"].items() <= volume["metadata"]["labels"].items()
        and spec["storageClassName"] == volume["spec"]["storageClassName"] == ""
        and spec["volumeMode"] == volume["spec"]["volumeMode"]
        and set(spec["accessModes"]) <= set(volume["spec"]["accessModes"])
        and size(spec["resources"]["requests"]["storage"])
        <= size(volume["spec"]["capacity"]["storage"])
    )


@pytest.mark.parametrize("case", [0, 3])
def test_each_claim_of_a_run_binds_exactly_one_volume_its_platform_issued(case: int) -> None:
    platform, raw, secrets = run_variants()[case]
    run = deploy(platform, raw, secrets)
    volumes = platform_run(platform).objects_of_kind("PersistentVolume")
    claims = run.objects_of_kind("PersistentVolumeClaim")
    assert claims
    for claim in claims:
        (volume,) = [v for v in volumes if _binds(claim, v)]
        namespace = claim["metadata"]["namespace"]
        assert volume["metadata"]["labels"]["tftrain.io/namespace"] == namespace
    # The run's AccessKey Secret is the one the OSS volumes name (ASK: no RRSA).
    refs = [v["spec"]["csi"].get("nodePublishSecretRef") for v in volumes if "csi" in v["spec"]]
    secrets_made = {(o["metadata"]["namespace"], o["metadata"]["name"])
                    for o in run.objects_of_kind("Secret")}  # fmt: skip
    for ref in filter(None, refs):
        assert (ref["namespace"], ref["name"]) in secrets_made


def test_the_nas_volume_of_each_namespace_mounts_its_own_directory() -> None:
    storage = IssuedStorage(cluster_kind="ack", nfs_server="nas.example")
    for namespace in ("team-a", "team-b"):
        (volume,) = [
            o for o in issued_objects(namespace, storage) if o["kind"] == "PersistentVolume"
        ]
        attributes = volume["spec"]["csi"]["volumeAttributes"]
        assert attributes == {
            "server": "nas.example",
            "path": f"/tftrain/{namespace}",
            "mode": "0733",
        }
        assert volume["spec"]["claimRef"]["namespace"] == namespace


def test_each_namespaces_ram_role_writes_only_its_own_export_directory() -> None:
    run = platform_run("platform-ack")
    bucket = f"tftrain-platform-ack-{MOCK_ACCOUNT_ID}"
    arn = f"acs:oss:*:*:{bucket}"
    expected = {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["oss:ListObjects"],
                "Resource": [arn],
                "Condition": {"StringLike": {"oss:Prefix": ["mnist/*", "exports/lr-sweep-a/*"]}},
            },
            {
                "Effect": "Allow",
                "Action": ["oss:GetObject"],
                "Resource": [f"{arn}/mnist/*", f"{arn}/exports/lr-sweep-a/*"],
            },
            {
                "Effect": "Allow",
                "Action": [
                    "oss:PutObject",
                    "oss:DeleteObject",
                    "oss:AbortMultipartUpload",
                    "oss:ListParts",
                ],
                "Resource": [f"{arn}/exports/lr-sweep-a/*"],
            },
        ],
    }
    (policy,) = run.of_type("alicloud:ram/policy:Policy")
    assert json.loads(policy.inputs["policyDocument"]) == expected
    (role,) = run.of_type("alicloud:ram/role:Role")
    assert run.outputs[RUN_OSS_ROLE_NAMES] == {"lr-sweep-a": role.inputs["roleName"]}
    # The namespace's export volume assumes that role, on its own directory only.
    (export,) = [v for v in run.objects_of_kind("PersistentVolume")
                 if v["metadata"]["name"] == "tftrain-lr-sweep-a-export"]  # fmt: skip
    attributes = export["spec"]["csi"]["volumeAttributes"]
    assert attributes["roleName"] == role.inputs["roleName"]
    assert attributes["path"] == "/exports/lr-sweep-a/"
    assert attributes["bucket"] == bucket


def test_run_namespaces_is_a_platforms_key_each_listed_once() -> None:
    from infra.config import ConfigError

    platform = read_stack_file(stack_file("platform-ack"))
    platform["cluster"]["runNamespaces"] = ["a", "b", "a", "Bad_Name"]
    with pytest.raises(ConfigError) as error:
        parse_config(platform)
    assert (
        'tftrain:cluster.runNamespaces[3] = "Bad_Name": must be a list of namespaces, each a DNS'
        in str(error.value)
    )
    platform["cluster"]["runNamespaces"] = ["b", "a", "c", "b", "a"]
    with pytest.raises(ConfigError) as error:
        parse_config(platform)
    assert str(error.value).count("runNamespaces") == 1, error.value
    assert (
        'tftrain:cluster.runNamespaces = ["b", "a", "c", "b", "a"]: must be each namespace once '
        "(a, b repeated)"
    ) in str(error.value)
    run = read_stack_file(stack_file("run-ack"))
    run["cluster"]["runNamespaces"] = ["x"]
    with pytest.raises(ConfigError, match=r"tftrain:cluster\.runNamespaces: a cloud key"):
        parse_config(run)
    standalone = read_stack_file(stack_file("ack-cpu"))
    standalone["cluster"]["runNamespaces"] = ["x"]
    with pytest.raises(ConfigError, match=r"empty unless cluster\.role is platform"):
        parse_config(standalone)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("storage", "pvLabels", {"a": "b"}),
        ("data", "credentials", "secret"),
        ("data", "rrsaRoleName", "my-role"),
        ("data", "endpoint", "oss-cn-hangzhou-internal.aliyuncs.com"),
    ],
)
def test_a_run_stack_refuses_its_volumes_keys(section: str, key: str, value: Any) -> None:
    from infra.config import ConfigError

    raw = read_stack_file(stack_file("run-ack"))
    raw.setdefault(section, {})[key] = value
    with pytest.raises(ConfigError, match=rf"tftrain:{section}\.{key}: a volume's key"):
        parse_config(raw)


def test_the_token_is_decoded_from_the_secret_as_the_cluster_fills_it() -> None:
    from infra.run_namespaces import _token

    assert _token({"token": base64.b64encode(b"abc").decode()}, "ns") == "abc"
    with pytest.raises(Exception, match=r"tftrain:cluster\.runNamespaces: the token Secret of ns/"):
        _token({}, "ns")


def test_what_a_run_stack_reads_of_its_platform() -> None:
    from infra.platform.outputs import placeholder_outputs, required_outputs

    ack = config_of(read_stack_file(stack_file("run-ack")))
    assert required_outputs(ack) == (
        "clusterKind", "clusterId", "runKubeconfigs", "nasDomain", "ossBucket", "ossInputPrefix",
        "ossExportPrefix",
    )  # fmt: skip
    assert required_outputs(config_of(RUN_ASK)) == (
        "clusterKind", "clusterId", "runKubeconfigs", "nasDomain",
    )  # fmt: skip
    # Offline: marked placeholders, the namespace's kubeconfig among them, and what the run
    # states itself (its kind and prefixes; the bucket is the platform's, unnamed here).
    assert placeholder_outputs(ack) == {
        "clusterKind": "ack",
        "clusterId": "<platform output clusterId>",
        "runKubeconfigs": {"lr-sweep-a": "<platform output runKubeconfigs>"},
        "nasDomain": "<platform output nasDomain>",
        "ossBucket": "<platform output ossBucket>",
        "ossInputPrefix": "mnist/",
        "ossExportPrefix": "exports/",
    }


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({}, None),
        ({"bucket": "team-data-01", "inputPrefix": "mnist/", "exportPrefix": "exports/"}, None),
        (
            {"bucket": "other-bucket"},
            "data.bucket = 'other-bucket': the volumes platform stack "
            "organization/tftrain/platform-ack issues to namespace lr-sweep-a mount "
            "'team-data-01'; use that (or leave it unset)",
        ),
        (
            {"inputPrefix": "mnist/train/"},
            "data.inputPrefix = 'mnist/train/': the volumes platform stack "
            "organization/tftrain/platform-ack issues to namespace lr-sweep-a mount 'mnist/'; "
            "use that (or leave it unset)",
        ),
        (
            {"exportPrefix": "exports/lr-sweep-a/"},
            "data.exportPrefix = 'exports/lr-sweep-a/': the volumes platform stack "
            "organization/tftrain/platform-ack issues to namespace lr-sweep-a mount 'exports/'; "
            "use that (or leave it unset)",
        ),
    ],
)
def test_a_runs_data_must_be_what_its_issued_volumes_mount(
    data: dict[str, str], problem: str | None
) -> None:
    from infra.platform.outputs import platform_data_problem

    raw = read_stack_file(stack_file("run-ack"))
    raw["data"] = {"inputPrefix": "mnist/", **data}
    platform = {"ossBucket": "team-data-01", "ossInputPrefix": "mnist/",
                "ossExportPrefix": "exports/"}  # fmt: skip
    assert platform_data_problem(config_of(raw), platform) == problem


def test_a_platform_that_issued_no_namespace_says_none() -> None:
    from infra.platform.outputs import unissued_namespace

    run = config_of(read_stack_file(stack_file("run-ack")))
    assert unissued_namespace(run, {"lr-sweep-a": "k"}) is None
    assert unissued_namespace(run, {}) == (
        "job.namespace = 'lr-sweep-a': platform stack organization/tftrain/platform-ack issues "
        "credentials only for the namespaces [none]: add lr-sweep-a to that stack's "
        "cluster.runNamespaces and `pulumi up` it, or use one of those"
    )
    assert "[a, b]" in str(unissued_namespace(run, {"b": "k", "a": "k"}))


def test_without_rrsa_each_namespace_gets_the_policy_its_runs_access_key_needs() -> None:
    from tests.test_oss_access import by_hand

    run = platform_run("platform-ask-data")
    assert not run.of_type("alicloud:ram/role:Role")  # ASK: no RRSA, the runs bring a key
    assert "ossAccessPolicy" not in run.outputs  # no platform-wide grant to hand out
    policies = run.outputs["runOssAccessPolicies"]
    assert {ns: json.loads(p) for ns, p in policies.items()} == {
        "ask-trial": by_hand("team-data-01", "mnist/", "exports/ask-trial/")
    }
    # Its volumes name the Secret the run stack makes in that namespace.
    refs = {v["metadata"]["name"]: v["spec"]["csi"].get("nodePublishSecretRef")
            for v in run.objects_of_kind("PersistentVolume") if v["spec"]["csi"]["driver"]
            == "ossplugin.csi.alibabacloud.com"}  # fmt: skip
    assert refs == {
        "tftrain-ask-trial-input": {"name": "tftrain-oss-credentials", "namespace": "ask-trial"},
        "tftrain-ask-trial-export": {"name": "tftrain-oss-credentials", "namespace": "ask-trial"},
    }


def test_long_namespaces_keep_roles_of_their_own() -> None:
    """RAM names here are `<project>-<stack>-<component>` cut at 63 characters: two
    namespaces alike in their first 30 characters would share a role."""
    long_a, long_b = "a" * 40 + "-team-a", "a" * 40 + "-team-b"
    platform = read_stack_file(stack_file("platform-ack"))
    platform["cluster"]["runNamespaces"] = ["lr-sweep-a", long_a, long_b]
    run = run_program({**platform, "alicloud:region": "cn-hangzhou"})
    names = run.outputs[RUN_OSS_ROLE_NAMES]
    assert names["lr-sweep-a"] == "tftrain-test-oss-access-lr-sweep-a"
    # Cut off, a namespace would lose what tells it apart: the first 12 hex digits of its
    # SHA-256 stand in for it.
    for long in (long_a, long_b):
        digest = hashlib.sha256(long.encode()).hexdigest()[:12]
        assert names[long] == f"tftrain-test-oss-access-{digest}"
    assert len(set(names.values())) == 3
    assert all(len(name) <= 63 for name in names.values())
    policies = [p.inputs["policyName"] for p in run.of_type("alicloud:ram/policy:Policy")]
    assert len(set(policies)) == 3


def test_a_platform_names_no_role_of_its_own() -> None:
    from infra.config import ConfigError

    platform = read_stack_file(stack_file("platform-ack"))
    platform["data"]["rrsaRoleName"] = "shared-role"
    with pytest.raises(ConfigError, match=r"tftrain:data\.rrsaRoleName = .*empty on a platform"):
        parse_config(platform)


def test_the_namespace_kubeconfig_takes_the_cluster_of_the_admins_current_context() -> None:
    from infra.manifests.run_access import namespace_kubeconfig

    admin = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "other", "cluster": {"server": "https://10.0.0.1:6443"}},
            {
                "name": "ack",
                "cluster": {
                    "server": "https://192.168.0.7:6443",
                    "certificate-authority-data": "Q0E=",
                },
            },
        ],
        "users": [{"name": "admin", "user": {"client-key-data": "S0VZ"}}],
        "contexts": [{"name": "main", "context": {"cluster": "ack", "user": "admin"}}],
        "current-context": "main",
    }
    issued = yaml.safe_load(namespace_kubeconfig(yaml.safe_dump(admin), "team-a", "t0k"))
    assert issued == {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "tftrain-team-a", "cluster": admin["clusters"][1]["cluster"]}],
        "users": [{"name": "tftrain-team-a", "user": {"token": "t0k"}}],
        "contexts": [
            {
                "name": "tftrain-team-a",
                "context": {
                    "cluster": "tftrain-team-a",
                    "user": "tftrain-team-a",
                    "namespace": "team-a",
                },
            }
        ],
        "current-context": "tftrain-team-a",
    }
    # Without a current context, the one cluster it names.
    del admin["contexts"], admin["current-context"]
    admin["clusters"] = admin["clusters"][1:]
    issued = yaml.safe_load(namespace_kubeconfig(yaml.safe_dump(admin), "team-a", "t0k"))
    assert issued["clusters"][0]["cluster"]["server"] == "https://192.168.0.7:6443"


def test_the_platforms_issuing_as_components_in_one_process() -> None:
    """`infra.run_namespaces` on its own under the fake cloud (the whole program runs it
    too, above): each namespace's RAM role and its registered objects and kubeconfig."""
    import pulumi
    import pulumi_kubernetes as k8s

    from infra.manifests.run_access import IssuedStorage
    from infra.run_namespaces import issue_namespaces, namespace_roles
    from tests.pulumi_mocks import FAKE_KUBECONFIG
    from tests.test_cloud_components import deploy as deploy_components
    from tests.test_oss_access import ARN, ISSUER, TRUST, by_hand

    raw = read_stack_file(stack_file("platform-ack"))
    raw["cluster"]["runNamespaces"] = ["team-a", "team-b"]
    config = parse_config(raw)
    storage = IssuedStorage(cluster_kind="ack", nfs_server="nas.example", oss_bucket="team-data",
                            oss_endpoint="oss.example", input_prefix="mnist/",
                            export_prefix="exports/")  # fmt: skip

    def build() -> dict[str, pulumi.Output[Any]]:
        roles = namespace_roles(config, "team-data", ARN, ISSUER, [])
        objects = [o for ns in ("team-a", "team-b")
                   for o in issued_objects(ns, storage, roles[ns].role_name)]  # fmt: skip
        provider = k8s.Provider("k8s", kubeconfig=FAKE_KUBECONFIG)
        admin = (provider, pulumi.Output.from_input(FAKE_KUBECONFIG))
        exports = issue_namespaces(config, admin, objects, roles, [])
        return {key: pulumi.Output.from_input(value) for key, value in exports.items()}

    mocks, outputs = deploy_components(build)
    policies = {r.name: json.loads(r.inputs["policyDocument"])
                for r in mocks.resources if r.type == "alicloud:ram/policy:Policy"}  # fmt: skip
    assert policies == {
        f"oss-access-{ns}-policy": by_hand("team-data", "mnist/", f"exports/{ns}/")
        for ns in ("team-a", "team-b")
    }
    roles = [r for r in mocks.resources if r.type == "alicloud:ram/role:Role"]
    assert [json.loads(r.inputs["assumeRolePolicyDocument"]) for r in roles] == [TRUST, TRUST]
    assert outputs["runOssRoleNames"].value == {
        "team-a": "tftrain-test-oss-access-team-a",
        "team-b": "tftrain-test-oss-access-team-b",
    }
    kubeconfigs = outputs["runKubeconfigs"]
    assert kubeconfigs.secret
    for ns in ("team-a", "team-b"):
        issued = yaml.safe_load(kubeconfigs.value[ns])
        assert issued["users"][0]["user"] == {"token": f"{MOCK_SA_TOKEN}-{ns}"}
    kinds = sorted(r.type.rsplit(":", 1)[-1] for r in mocks.resources
                   if r.type.startswith("kubernetes:"))  # fmt: skip
    assert kinds == sorted(["Namespace", "ServiceAccount", "Role", "RoleBinding", "Secret",
                            *["PersistentVolume"] * 3] * 2)  # fmt: skip


@pytest.mark.parametrize(("kind", "ossfs_options"), [
    ("ack", "-o uid=10000 -o gid=10000"),
    # ECI's ossfs does not add allow_other as ACK's plugin does: without it the trainer's
    # non-root user could not read the mount.
    ("ask", "-o uid=10000 -o gid=10000 -o allow_other"),
])  # fmt: skip
def test_what_a_platform_issues_a_namespace_is_valid_as_written(
    kind: str, ossfs_options: str
) -> None:
    """The objects as `render` writes them (not as the provider registers them): each valid
    against the API, labelled as tftrain's, and volumes that keep the data when a claim goes."""
    endpoint = "oss-cn-hangzhou-internal.aliyuncs.com"
    storage = IssuedStorage(kind, "nas.example", "team-data-01", endpoint, "mnist/", "exports/")
    objects = issued_objects("team-a", storage)
    newest = max(kubernetes_validate.utils.all_versions(), key=Version)
    for obj in objects:
        kubernetes_validate.validate(obj, newest, strict=True)
        assert obj["metadata"]["labels"]["app.kubernetes.io/name"] == "tftrain", obj["kind"]
    volumes = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "PersistentVolume"}
    assert sorted(volumes) == [
        "tftrain-team-a-data", "tftrain-team-a-export", "tftrain-team-a-input",
    ]  # fmt: skip
    assert {spec["persistentVolumeReclaimPolicy"] for spec in volumes.values()} == {"Retain"}
    for name, path in (("input", "/mnist/"), ("export", "/exports/team-a/")):
        attributes = volumes[f"tftrain-team-a-{name}"]["csi"]["volumeAttributes"]
        assert attributes == {
            "bucket": "team-data-01",
            "url": endpoint,
            "path": path,
            "otherOpts": ossfs_options,
        }
    # Runs read their input and write only their exports.
    assert volumes["tftrain-team-a-input"]["csi"]["readOnly"] is True
    assert "readOnly" not in volumes["tftrain-team-a-export"]["csi"]


def test_the_issued_volumes_mount_the_platforms_nas_and_bucket() -> None:
    from infra.manifests.run_access import issued_storage
    from infra.platform.cluster_facts import cluster_facts

    config = config_of(PLATFORM_ASK_DATA)
    facts = cluster_facts(
        config, nas_domain="nas.example", oss_endpoint="ep.example", oss_bucket="team-data-01"
    )
    assert issued_storage(config, facts) == IssuedStorage(
        "ask", "nas.example", "team-data-01", "ep.example", "mnist/", "exports/"
    )


def test_a_platform_without_a_bucket_issues_no_oss_volume() -> None:
    from infra.manifests.run_access import issued_storage
    from infra.platform.cluster_facts import cluster_facts

    config = config_of(PLATFORM_ASK)
    storage = issued_storage(config, cluster_facts(config, nas_domain="nas.example"))
    assert storage.oss_bucket is None
    assert storage.nfs_server == "nas.example"


def test_each_namespaces_role_trusts_only_the_platforms_cluster_for_the_ossfs_plugin() -> None:
    """The role is assumed as any stack's own is (tests/test_oss_access.py): through the
    platform cluster's OIDC provider, by the CSI ossfs plugin's token from that cluster."""
    from tests.test_oss_access import assert_trusts_only_the_clusters_ossfs_plugin

    run = platform_run("platform-ack")
    assert_trusts_only_the_clusters_ossfs_plugin(run)
    # Made once the bucket it grants exists (the engine expands a component it depends on
    # to that component's resources).
    (bucket,) = run.of_type("alicloud:oss/bucket:Bucket")
    (access,) = run.of_type("tftrain:cloud:OssRrsaAccess")
    assert bucket.urn in access.dependencies
    # The roles hold the grants: no policy for a user to attach by hand.
    assert "runOssAccessPolicies" not in run.outputs


def test_a_platform_on_its_own_nfs_server_is_refused_before_anything_is_made() -> None:
    """Its run stacks mount only the volume it issues on its NAS: on a user's NFS server
    it would issue none, and every run stack would fail for want of `nasDomain`."""
    raw = read_stack_file(stack_file("platform-ack"))
    raw["storage"] = {"kind": "nfs", "nfsServer": "10.0.0.5"}
    run = run_program({**raw, "alicloud:region": "cn-hangzhou"}, raise_errors=False)
    assert 'tftrain:storage.kind = "nfs": must be nas in a platform stack' in str(run.error)
    assert [r for r in run.resources if r.custom and not r.type.startswith("pulumi:")] == []
