"""Run `infra.program.build()` under Pulumi mocks and record everything it registers.

`run_program("ack-gpu")` or `run_program({"worker": {"number": 64}, ...})` gives a `Recorded`:
every resource (type token, name, inputs with secrets unwrapped but remembered), every
provider function call, and every stack export with its secretness. Each run gets a fresh
monitor, config and root stack, so runs are independent (the benchmark calls it with 1..512
workers in one process). The harness itself is `infra.mock_deploy`, shared with the offline
render; this module adds the tests' fake cloud, which answers with plausible computed values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from infra import mock_deploy
from infra.config import PROJECT, read_stack_entries, stack_file
from infra.mock_deploy import Recorded, Registration
from infra.stack_file import engine_config

__all__ = [
    "FAKE_KUBECONFIG",
    "MOCK_OFFERED_K8S_VERSIONS",
    "PlausibleCloud",
    "Recorded",
    "Registration",
    "all_stacks",
    "kubernetes_versions_result",
    "run_program",
    "stack_config_map",
]

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"

FAKE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: mock
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: TU9DSy1DQS1mYWtl}
users:
- name: mock
  user: {client-key-data: TU9DSy1LRVktZG8tbm90LWxlYWs=}
contexts:
- name: mock
  context: {cluster: mock, user: mock}
current-context: mock
"""
MOCK_ZONE = "cn-hangzhou-i"
MOCK_INTRANET_API = "https://192.168.0.7:6443"
# The version ACK picks when a cluster is created without one.
MOCK_DEFAULT_K8S_VERSION = "1.34.1-aliyun.1"
# The versions ACK offers new clusters (cs.get_kubernetes_version), newest first.
MOCK_OFFERED_K8S_VERSIONS = ("1.35.1-aliyun.1", MOCK_DEFAULT_K8S_VERSION, "1.33.3-aliyun.1")
MOCK_ROLES = ("AliyunCSManagedAutoScalerRole", "AliyunCSDefaultRole")
MOCK_LB_IP = "192.168.10.20"
MOCK_OIDC_PROVIDER_ARN = "acs:ram::1234567890123456:oidc-provider"
MOCK_RRSA_ISSUER = "https://oidc-ack-cn-hangzhou.oss-cn-hangzhou-internal.aliyuncs.com"


def _computed_outputs(
    type_token: str, resource_id: str, inputs: Mapping[str, Any]
) -> dict[str, Any]:
    """Plausible values for outputs a provider computes (by type token suffix)."""
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
            "rrsaMetadata": {
                "enabled": bool(inputs.get("enableRrsa")),
                "ramOidcProviderArn": f"{MOCK_OIDC_PROVIDER_ARN}/ack-rrsa-{resource_id}",
                "rrsaOidcIssuerUrl": f"{MOCK_RRSA_ISSUER}/{resource_id}",
            },
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


def _buckets_result(args: Mapping[str, Any]) -> dict[str, Any]:
    pattern = re.compile(args.get("nameRegex", ""))
    names = [name for name in MOCK_BUCKETS if pattern.search(name)]
    buckets = [
        {"name": name, "acl": MOCK_BUCKETS[name][0], "location": MOCK_BUCKETS[name][1]}
        for name in names
    ]
    return {"id": "buckets", "names": names, "buckets": buckets}


def _call_result(token: str, args: Mapping[str, Any]) -> dict[str, Any]:
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
        return _buckets_result(args)
    if token == "alicloud:ram/getRoles:getRoles":
        return {"id": "roles", "ids": list(MOCK_ROLES), "names": list(MOCK_ROLES), "roles": []}
    if token == "alicloud:cs/getKubernetesVersion:getKubernetesVersion":
        return kubernetes_versions_result(args, MOCK_OFFERED_K8S_VERSIONS)
    if token.endswith("getServerlessKubernetesClusters:getServerlessKubernetesClusters"):
        connection = {
            "apiServerIntranet": MOCK_INTRANET_API,
            "apiServerInternet": "",
            "masterPublicIp": "",
        }
        return {
            "id": "clusters",
            "ids": args.get("ids", []),
            "names": [],
            "clusters": [{"id": (args.get("ids") or ["ask"])[0], "connections": [connection]}],
        }
    if token.endswith("/getZones:getZones"):
        zone = {"id": MOCK_ZONE, "zoneId": MOCK_ZONE, "localName": MOCK_ZONE}
        return {"id": "zones", "ids": [MOCK_ZONE], "zones": [zone]}
    return {}


def kubernetes_versions_result(args: Mapping[str, Any], offered: Sequence[str]) -> dict[str, Any]:
    """What the version data source answers: one metadata entry per offered version."""
    runtime = {"name": "containerd", "version": "1.6.28"}
    return {
        "id": "versions",
        "clusterType": args.get("clusterType"),
        "profile": args.get("profile"),
        "metadatas": [{"version": version, "runtimes": [runtime]} for version in offered],
    }


class PlausibleCloud:
    """The tests' fake cloud: `CloudAnswers` with the values above."""

    def outputs(
        self, type_token: str, resource_id: str, inputs: Mapping[str, Any]
    ) -> dict[str, Any]:
        return _computed_outputs(type_token, resource_id, inputs)

    def call(self, token: str, args: Mapping[str, Any]) -> dict[str, Any]:
        return _call_result(token, args)


def stack_config_map(stack: str | Mapping[str, Any]) -> tuple[dict[str, str], str]:
    """Pulumi's config map for a stack file name, or for a prefix-less `tftrain:` dict."""
    if isinstance(stack, str):
        return engine_config(read_stack_entries(stack_file(stack, STACKS_DIR))), stack
    return engine_config(stack), "test"


def run_program(
    stack: str | Mapping[str, Any],
    *,
    secrets: Mapping[str, str] | None = None,
    raise_errors: bool = True,
) -> Recorded:
    """Run the program for a stack under fresh mocks; with `raise_errors=False` keep its error."""
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
        answers=PlausibleCloud(),
        raise_errors=raise_errors,
    )


def all_stacks() -> list[str]:
    """Every stack file in stacks/, so a new stack is tested without editing a list."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))
