"""Run `infra.program.build()` under Pulumi mocks and record everything it registers.

`run_program("ack-gpu")` or `run_program({"worker": {"number": 64}, ...})` gives a `Recorded`:
every resource (type token, name, inputs with secrets unwrapped but remembered), every
provider function call, and every stack export with its secretness. Each run gets a fresh
monitor, config and root stack, so runs are independent (the benchmark calls it with 1..512
workers in one process). The harness itself is `infra.mock_deploy`, shared with the offline
render; this module adds the tests' one fake cloud (`PlausibleCloud`), which answers with
plausible computed values, for whole programs and, through `CloudMocks`, for components
built one at a time (tests/test_cloud_components.py).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi

from infra import mock_deploy
from infra.config import PROJECT, read_stack_entries, read_stack_file, stack_file
from infra.config.stack_file import engine_config
from infra.mock_deploy import ProviderError, Recorded, Registration, StackOutputs

__all__ = [
    "EXISTING_VPC_CIDR",
    "EXISTING_VSWITCHES",
    "EXISTING_VSWITCH_ZONE",
    "FAKE_KUBECONFIG",
    "MOCK_ACCOUNT_ID",
    "MOCK_DEFAULT_K8S_VERSION",
    "MOCK_INTERNET_API",
    "MOCK_INTRANET_API",
    "MOCK_NAS_ZONES",
    "MOCK_OFFERED_K8S_VERSIONS",
    "MOCK_TYPE_ZONES",
    "CloudMocks",
    "PlausibleCloud",
    "Recorded",
    "Registered",
    "Registration",
    "all_stacks",
    "deployed_outputs",
    "kubernetes_versions_result",
    "platform_stacks",
    "run_program",
    "run_stacks",
    "stack_config_map",
]

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"

FAKE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: mock
  cluster: {server: "https://47.96.0.30:6443", certificate-authority-data: TU9DSy1DQS1mYWtl}
users:
- name: mock
  user: {client-key-data: TU9DSy1LRVktZG8tbm90LWxlYWs=}
contexts:
- name: mock
  context: {cluster: mock, user: mock}
current-context: mock
"""
MOCK_ZONE = "cn-hangzhou-i"
MOCK_SA_TOKEN = "mock-service-account-token"  # + "-<namespace>": a token the cluster issued
MOCK_INTRANET_API = "https://192.168.0.7:6443"
MOCK_INTERNET_API = "https://47.96.0.30:6443"
# Existing networks the lookups know (network.vpcId / vswitchId); any other id is not found.
EXISTING_VPC_CIDR = "172.16.0.0/12"
EXISTING_VSWITCH_ZONE = "cn-hangzhou-j"
EXISTING_VSWITCHES = {"vsw-existing": "172.16.8.0/21", "vsw-secondary": "100.64.0.0/20"}
# The version ACK picks when a cluster is created without one.
MOCK_DEFAULT_K8S_VERSION = "1.34.1-aliyun.1"
# The versions ACK offers new clusters (cs.get_kubernetes_version), newest first.
MOCK_OFFERED_K8S_VERSIONS = ("1.35.1-aliyun.1", MOCK_DEFAULT_K8S_VERSION, "1.33.3-aliyun.1")
# The RAM roles ACK asks an account to grant; the first is the cluster autoscaler's.
MOCK_ROLES = ("AliyunCSManagedAutoScalerRole", "AliyunCSDefaultRole")
MOCK_LB_IP = "192.168.10.20"
# The account `pulumi up` runs as (alicloud.get_caller_identity).
MOCK_ACCOUNT_ID = "1234567890123456"
MOCK_OIDC_PROVIDER_ARN = "acs:ram::1234567890123456:oidc-provider"
MOCK_RRSA_ISSUER = "https://oidc-ack-cn-hangzhou.oss-cn-hangzhou-internal.aliyuncs.com"


def _computed_outputs(
    type_token: str, resource_id: str, inputs: Mapping[str, Any]
) -> dict[str, Any]:
    """Plausible values for outputs a provider computes (by type token suffix)."""
    if type_token == "alicloud:oss/bucketObject:BucketObject":
        return _uploaded(inputs)
    if type_token.startswith("alicloud:nas/mountTarget:"):
        file_system = inputs.get("fileSystemId", "fs")
        return {"mountTargetDomain": f"{file_system}-mock.cn-hangzhou.nas.aliyuncs.com"}
    if type_token.startswith("alicloud:vpc/natGateway:"):
        return {"snatTableIds": f"stb-{resource_id}"}
    if type_token.startswith("alicloud:ecs/eipAddress:"):
        return {"ipAddress": "47.96.0.10"}
    if type_token.startswith("alicloud:nas/fileSystem:"):
        return {"fileSystemId": resource_id}
    if type_token.startswith("alicloud:cs/"):
        return {
            "clusterId": resource_id,
            "kubeConfig": FAKE_KUBECONFIG,
            "vpcId": inputs.get("vpcId"),
            "connections": [{"apiServerIntranet": MOCK_INTRANET_API}],
            "version": inputs.get("version") or MOCK_DEFAULT_K8S_VERSION,
            # The group ASK makes for the cluster when none is given (security_group_id).
            "securityGroupId": inputs.get("securityGroupId") or f"sg-{resource_id}",
            "rrsaMetadata": {
                "enabled": bool(inputs.get("enableRrsa")),
                "ramOidcProviderArn": f"{MOCK_OIDC_PROVIDER_ARN}/ack-rrsa-{resource_id}",
                "rrsaOidcIssuerUrl": f"{MOCK_RRSA_ISSUER}/{resource_id}",
            },
        }
    if (
        type_token == "kubernetes:core/v1:Secret"
        and inputs.get("type") == "kubernetes.io/service-account-token"
    ):
        # The token controller fills the data of a ServiceAccount's token Secret.
        namespace = inputs["metadata"]["namespace"]
        return {
            "data": {"token": base64.b64encode(f"{MOCK_SA_TOKEN}-{namespace}".encode()).decode()}
        }
    if (
        type_token == "kubernetes:core/v1:Service"
        and inputs.get("spec", {}).get("type") == "LoadBalancer"
    ):
        return {"status": {"loadBalancer": {"ingress": [{"ip": MOCK_LB_IP}]}}}
    return {}


# The account's OSS buckets as oss.get_buckets lists them: name → (acl, location).
MOCK_BUCKETS = {
    "tftrain-mnist-data": ("private", "oss-cn-hangzhou"),
    "team-data-01": ("private", "oss-cn-hangzhou"),
    "team-public": ("public-read", "oss-cn-hangzhou"),
    "team-beijing": ("private", "oss-cn-beijing"),
}


def _buckets_result(args: Mapping[str, Any], kept: Sequence[str] = ()) -> dict[str, Any]:
    """The listing, with `kept`: buckets an earlier destroy of a stack left in the account."""
    pattern = re.compile(args.get("nameRegex", ""))
    account = {**MOCK_BUCKETS, **dict.fromkeys(kept, ("private", "oss-cn-hangzhou"))}
    names = [name for name in account if pattern.search(name)]
    buckets = [
        {"name": name, "acl": account[name][0], "location": account[name][1]} for name in names
    ]
    return {"id": "buckets", "names": names, "buckets": buckets}


def _file_systems_result(
    args: Mapping[str, Any], kept: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """nas.get_file_systems: the account's file systems whose description matches."""
    pattern = re.compile(args.get("descriptionRegex", ""))
    kind = args.get("fileSystemType")
    systems = [
        dict(entry)
        for entry in kept
        if pattern.search(str(entry.get("description", "")))
        and (not kind or entry.get("fileSystemType", kind) == kind)
    ]
    return {
        "id": "file-systems",
        "ids": [entry["id"] for entry in systems],
        "descriptions": [entry.get("description", "") for entry in systems],
        "systems": systems,
    }


def _uploaded(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """What the provider does with a BucketObject's `source`: PutObjectFromFile opens it as
    given, from the provider's working directory (terraform-provider-alicloud
    resource_alicloud_oss_bucket_object.go: `homedir.Expand(source)`, then
    `bucket.PutObjectFromFile(key, path)`), and OSS refuses bytes whose MD5 is not
    `content_md5` (InvalidDigest)."""
    source = Path(os.path.expanduser(str(inputs["source"])))
    if not source.is_file():
        raise ProviderError(
            f"PutObjectFromFile: open {inputs['source']}: no such file (from {Path.cwd()})"
        )
    digest = base64.b64encode(hashlib.md5(source.read_bytes()).digest()).decode()
    if inputs.get("contentMd5") not in (None, digest):
        raise ProviderError(f"InvalidDigest: {inputs['source']} is not contentMd5")
    return {"etag": hashlib.md5(source.read_bytes()).hexdigest().upper()}


def _zones_result() -> dict[str, Any]:
    zone = {
        "id": MOCK_ZONE,
        "zoneId": MOCK_ZONE,
        "localName": MOCK_ZONE,
        "availableDiskCategories": [],
        "availableInstanceTypes": [],
        "availableResourceCreations": ["VSwitch"],
        "multiZoneIds": [],
        "slbSlaveZoneIds": [],
    }
    return {"id": "zones", "ids": [MOCK_ZONE], "zones": [zone]}


def _networks_result(args: Mapping[str, Any]) -> dict[str, Any]:
    (vpc_id,) = args["ids"]
    if vpc_id == "vpc-missing":
        return {"id": "vpcs", "ids": [], "vpcs": [], "names": []}
    found = {
        "id": vpc_id,
        "vpcId": vpc_id,
        "cidrBlock": EXISTING_VPC_CIDR,
        "secondaryCidrBlocks": ["100.64.0.0/16"],
        "userCidrs": [],
        "vswitchIds": list(EXISTING_VSWITCHES),
        "creationTime": "2025-01-01T00:00:00Z",
        "description": "",
        "dhcpOptionsSetId": "",
        "dhcpOptionsSetStatus": "",
        "ipv6CidrBlock": "",
        "isDefault": False,
        "regionId": "cn-hangzhou",
        "resourceGroupId": "rg-1",
        "routeTableId": "vtb-1",
        "routerId": "vrt-1",
        "status": "Available",
        "tags": {},
        "vpcName": "existing",
        "vrouterId": "vrt-1",
    }
    return {"id": "vpcs", "ids": [vpc_id], "vpcs": [found], "names": ["existing"]}


def _switches_result(args: Mapping[str, Any]) -> dict[str, Any]:
    (vswitch_id,) = args["ids"]
    if vswitch_id not in EXISTING_VSWITCHES:
        return {"id": "switches", "ids": [], "vswitches": []}
    vswitch = {
        "id": vswitch_id,
        "vswitchId": vswitch_id,
        "vpcId": "vpc-existing",
        "zoneId": EXISTING_VSWITCH_ZONE,
        "cidrBlock": EXISTING_VSWITCHES[vswitch_id],
        "name": "existing",
        "vswitchName": "existing",
        "availableIpAddressCount": 2000.0,
        "creationTime": "2025-01-01T00:00:00Z",
        "description": "",
        "enableIpv6": False,
        "ipv6CidrBlock": "",
        "isDefault": False,
        "resourceGroupId": "rg-1",
        "routeTableId": "vtb-1",
        "status": "Available",
        "tags": {},
    }
    return {"id": "switches", "ids": [vswitch_id], "vswitches": [vswitch]}


def _clusters_result(args: Mapping[str, Any], exists: bool) -> dict[str, Any]:
    """The cluster list filtered by an anchored name regex: the named cluster, or nothing."""
    name = str(args["nameRegex"]).removeprefix("^").removesuffix("$").replace("\\", "")
    found = [{"clusterId": "c-existing", "clusterName": name, "state": "running"}]
    return {
        "id": "clusters",
        "ids": ["c-existing"] if exists else [],
        "names": [name] if exists else [],
        "clusters": found if exists else [],
    }


# The zones of the region that sell each instance type (ecs.get_instance_types, sold-out zones
# left out, as DescribeAvailableResource reports them); a type not listed is sold nowhere.
MOCK_TYPE_ZONES: dict[str, tuple[str, ...]] = {
    "ecs.gn6i-c4g1.xlarge": ("cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k"),
    "ecs.gn6i-c8g1.2xlarge": ("cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j"),
    "ecs.gn6i-c24g1.12xlarge": ("cn-hangzhou-i", "cn-hangzhou-j"),
    "ecs.gn6i-c24g1.24xlarge": ("cn-hangzhou-i", "cn-hangzhou-j"),
    "ecs.gn6v-c8g1.2xlarge": ("cn-hangzhou-i", "cn-hangzhou-k"),
    "ecs.gn6v-c8g1.16xlarge": ("cn-hangzhou-i", "cn-hangzhou-k"),
    "ecs.gn7i-c8g1.2xlarge": ("cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j"),
    "ecs.gn7i-c32g1.8xlarge": ("cn-hangzhou-i", "cn-hangzhou-j"),
    "ecs.g7.xlarge": ("cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k"),
    "ecs.g7.2xlarge": ("cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k"),
    "ecs.c7.xlarge": ("cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k"),
}
# NAS (standard) storage types offered per zone (nas.get_zones): Capacity is the rarer one.
MOCK_NAS_ZONES: dict[str, tuple[str, ...]] = {
    "cn-hangzhou-h": ("Performance",),
    "cn-hangzhou-i": ("Performance", "Capacity"),
    "cn-hangzhou-j": ("Performance", "Capacity"),
    "cn-hangzhou-k": ("Performance", "Capacity"),
}


def _instance_types_result(
    args: Mapping[str, Any], type_zones: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """What ecs.get_instance_types(instance_type=...) answers: the type with its zones, or
    nothing when no zone sells it."""
    name = args.get("instanceType", "")
    zones = list(type_zones.get(name, ()))
    if not zones:
        return {"id": "instance-types", "ids": [], "instanceTypes": []}
    entry = {
        "id": name,
        "availabilityZones": zones,
        "burstableInstances": [],
        "cpuCoreCount": 4,
        "eniAmount": 3,
        "eniIpv6AddressQuantity": 0,
        "eniPrivateIpAddressQuantity": 10,
        "eniQuantity": 3,
        "family": name.rsplit(".", 1)[0],
        "gpus": [],
        "localStorages": [],
        "maximumQueueNumberPerEni": 4,
        "memorySize": 16.0,
        "nvmeSupport": "unsupported",
        "price": "",
        "primaryEniQueueNumber": 4,
        "secondaryEniQueueNumber": 4,
        "totalEniQueueQuantity": 12,
    }
    return {"id": "instance-types", "ids": [name], "instanceTypes": [entry]}


def _nas_zones_result(nas_zones: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    zones = [
        {
            "zoneId": zone,
            "instanceTypes": [{"storageType": kind, "protocolType": "NFS"} for kind in kinds],
        }
        for zone, kinds in nas_zones.items()
    ]
    return {"id": "nas-zones", "zones": zones}


def kubernetes_versions_result(args: Mapping[str, Any], offered: Sequence[str]) -> dict[str, Any]:
    """What the version data source answers: one metadata entry per offered version."""
    runtime = {"name": "containerd", "version": "1.6.28"}
    return {
        "id": "versions",
        "clusterType": args.get("clusterType"),
        "profile": args.get("profile"),
        "metadatas": [{"version": version, "runtimes": [runtime]} for version in offered],
    }


@dataclass
class PlausibleCloud:
    """The tests' one fake cloud (`CloudAnswers`): what Alibaba Cloud would compute for a
    resource, and what its lookups answer. The account's state is what a test may vary."""

    autoscaler_role: bool = True  # whether the account has granted ACK's autoscaler role
    offered_versions: tuple[str, ...] = MOCK_OFFERED_K8S_VERSIONS  # what ACK creates clusters on
    type_zones: Mapping[str, Sequence[str]] = field(default_factory=lambda: MOCK_TYPE_ZONES)
    nas_zones: Mapping[str, Sequence[str]] = field(default_factory=lambda: MOCK_NAS_ZONES)
    # A lookup it has no answer for fails the test (a component's own lookups are all known);
    # a whole program's planted ones (deprecation checks) answer empty.
    strict: bool = False
    # Whether the stack's cluster exists already (a later `up`) or is new (the first one);
    # the private API server check asks.
    cluster_exists: bool = True
    # What an earlier `destroy` kept in the account (retainOnDestroy): bucket names, and NAS
    # file systems as nas.get_file_systems lists them (id, description, storageType, ...).
    kept_buckets: tuple[str, ...] = ()
    kept_file_systems: tuple[Mapping[str, Any], ...] = ()
    # What the resources of a type report whatever the stack now asks: settings the cloud
    # applied when it created them (type token -> output values).
    created_with: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def outputs(
        self, type_token: str, resource_id: str, inputs: Mapping[str, Any]
    ) -> dict[str, Any]:
        computed = _computed_outputs(type_token, resource_id, inputs)
        return {**computed, **self.created_with.get(type_token, {})}

    def call(self, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
        if token == "alicloud:cs/getClusterCredential:getClusterCredential":
            return {
                "id": args.get("clusterId", "mock-cluster"),
                "clusterId": args.get("clusterId", "mock-cluster"),
                "clusterName": "mock",
                "kubeConfig": FAKE_KUBECONFIG,
                "certificateAuthority": {"clientCert": "", "clientKey": "", "clusterCert": ""},
                "expiration": "2099-01-01T00:00:00Z",
            }
        if token == "alicloud:oss/getBuckets:getBuckets":
            return _buckets_result(args, self.kept_buckets)
        if token == "alicloud:nas/getFileSystems:getFileSystems":
            return _file_systems_result(args, self.kept_file_systems)
        if token == "alicloud:index/getCallerIdentity:getCallerIdentity":
            return {
                "id": MOCK_ACCOUNT_ID,
                "accountId": MOCK_ACCOUNT_ID,
                "arn": f"acs:ram::{MOCK_ACCOUNT_ID}:user/deployer",
                "identityType": "RAMUser",
            }
        if token == "alicloud:ram/getRoles:getRoles":
            names = [r for r in MOCK_ROLES if self.autoscaler_role or r != MOCK_ROLES[0]]
            return {"id": "roles", "ids": names, "names": names, "roles": []}
        if token == "alicloud:cs/getKubernetesVersion:getKubernetesVersion":
            return kubernetes_versions_result(args, self.offered_versions)
        if token == "alicloud:cs/getClusters:getClusters":
            return _clusters_result(args, self.cluster_exists)
        if token == "alicloud:ecs/getInstanceTypes:getInstanceTypes":
            return _instance_types_result(args, self.type_zones)
        if token == "alicloud:nas/getZones:getZones":
            return _nas_zones_result(self.nas_zones)
        if token.endswith("/getZones:getZones"):
            return _zones_result()
        if token == "alicloud:vpc/getNetworks:getNetworks":
            return _networks_result(args)
        if token == "alicloud:vpc/getSwitches:getSwitches":
            return _switches_result(args)
        if self.strict:
            raise AssertionError(f"the fake cloud has no answer for {token}")
        return {}


@dataclass
class Registered:
    type: str
    name: str
    id: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    # The id of an existing resource it names: read (`Resource.get`) or imported (`import_`).
    existing_id: str = ""


@dataclass
class CloudMocks(pulumi.runtime.Mocks):
    """The fake cloud as `pulumi.runtime.Mocks`, for tests that build one component at a time:
    records every resource (inputs as the engine sees them) and call."""

    cloud: PlausibleCloud = field(default_factory=lambda: PlausibleCloud(strict=True))
    resources: list[Registered] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        resource_id = f"{args.name}-id"
        outputs = {**args.inputs, **self.cloud.outputs(args.typ, resource_id, args.inputs)}
        self.resources.append(
            Registered(
                args.typ, args.name, resource_id, args.inputs, outputs, args.resource_id or ""
            )
        )
        return resource_id, outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        self.calls.append((args.token, dict(args.args)))
        return self.cloud.call(args.token, args.args)

    def of_type(self, typ: str) -> list[Registered]:
        return [resource for resource in self.resources if resource.type == typ]

    def one(self, typ: str) -> Registered:
        (resource,) = self.of_type(typ)
        return resource

    def calls_to(self, token: str) -> list[dict[str, Any]]:
        return [call_args for call_token, call_args in self.calls if call_token == token]


def stack_config_map(stack: str | Mapping[str, Any]) -> tuple[dict[str, str], str]:
    """Pulumi's config map for a stack file name, or for a prefix-less `tftrain:` dict."""
    if isinstance(stack, str):
        return engine_config(read_stack_entries(stack_file(stack, STACKS_DIR))), stack
    return engine_config(stack), "test"


def platform_stack_of(stack: str | Mapping[str, Any]) -> str:
    """The platform stack a run stack references ("" for any other stack)."""
    raw = read_stack_file(stack_file(stack, STACKS_DIR)) if isinstance(stack, str) else stack
    cluster = raw.get("cluster") or {}
    return cluster.get("platformStack", "") if cluster.get("role") == "run" else ""


def deployed_outputs(platform: str | Mapping[str, Any]) -> StackOutputs:
    """A platform stack's outputs after a mock deployment, as a StackReference reads them."""
    run = run_program(platform)
    return StackOutputs(run.outputs, frozenset(run.secret_outputs))


def run_program(
    stack: str | Mapping[str, Any],
    *,
    secrets: Mapping[str, str] | None = None,
    raise_errors: bool = True,
    cloud: PlausibleCloud | None = None,
    platform: StackOutputs | None = None,
) -> Recorded:
    """Run the program for a stack under fresh mocks (`cloud`: the account's state, default
    `PlausibleCloud()`); with `raise_errors=False` keep its error.

    A run stack reads `platform`, by default the outputs of the checked-in platform stack its
    `cluster.platformStack` names (`<org>/<project>/<stack>`: stacks/Pulumi.<stack>.yaml),
    deployed under the same mocks first."""
    reference = platform_stack_of(stack)
    if reference and platform is None:
        checked_in = reference.rsplit("/", 1)[-1]
        # Another name is a stack nobody deployed: it has no outputs.
        known = stack_file(checked_in, STACKS_DIR).is_file()
        platform = deployed_outputs(checked_in) if known else StackOutputs({})
    config, stack_name = stack_config_map(stack)
    secret_keys = []
    for key, value in (secrets or {}).items():
        full_key = key if ":" in key else f"{PROJECT}:{key}"
        config[full_key] = value
        secret_keys.append(full_key)
    return mock_deploy.run_program(
        config,
        stack=stack_name,
        secret_keys=secret_keys,
        answers=cloud or PlausibleCloud(),
        raise_errors=raise_errors,
        stack_references={reference: platform} if platform is not None else None,
    )


def stack_raw(name: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A checked-in stack's `tftrain:` config as a dict, with `overrides` merged in."""
    return merged(read_stack_file(stack_file(name, STACKS_DIR)), overrides or {})


def merged(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `overrides` applied; nested mappings are merged key by key."""
    result = copy.deepcopy(dict(base))
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def all_stacks() -> list[str]:
    """Every stack file in stacks/, so a new stack is tested without editing a list."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def role_of(stack: str) -> str:
    cluster = read_stack_file(stack_file(stack, STACKS_DIR)).get("cluster") or {}
    return str(cluster.get("role", "standalone"))


def run_stacks() -> list[str]:
    """Every stack file with a run (all but platform stacks): those with Kubernetes objects."""
    return [stack for stack in all_stacks() if role_of(stack) != "platform"]


def platform_stacks() -> list[str]:
    return [stack for stack in all_stacks() if role_of(stack) == "platform"]
