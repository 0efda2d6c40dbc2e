"""Run `infra.program.build()` under Pulumi mocks and record everything it registers.

`run_program("ack-gpu")` or `run_program({"worker": {"number": 64}, ...})` gives a `Recorded`:
every resource (type token, name, inputs with secrets unwrapped but remembered), every
provider function call, and every stack export with its secretness. Each run gets a fresh
monitor, config and root stack, so runs are independent (the benchmark calls it with 1..512
workers in one process). Per DESIGN.md: `set_all_config` (not `set_config`), project-prefixed
keys, objects as JSON text, numbers coming back as floats (normalised here to ints when whole).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from infra.config import PROJECT

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"
# How the Pulumi SDK marks a secret value on the wire (rpc._special_sig_key / secret sig).
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"

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
MOCK_LB_IP = "192.168.10.20"


def _normalise(value: Any, path: str, secret_paths: set[str]) -> Any:
    """Unwrap secrets (remembering where they were) and turn whole floats back into ints."""
    if isinstance(value, dict):
        if value.get(_SIG_KEY) == _SECRET_SIG:
            secret_paths.add(path)
            return _normalise(value.get("value"), path, secret_paths)
        return {
            k: _normalise(v, f"{path}.{k}" if path else k, secret_paths) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalise(v, f"{path}[{i}]", secret_paths) for i, v in enumerate(value)]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass(frozen=True)
class Registration:
    type: str
    name: str
    inputs: dict[str, Any]
    secret_paths: frozenset[str]
    provider: str


@dataclass
class Recorded:
    resources: list[Registration]
    calls: list[tuple[str, dict[str, Any]]]
    outputs: dict[str, Any] = field(default_factory=dict)
    secret_outputs: set[str] = field(default_factory=set)
    error: BaseException | None = None

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.resources if r.type == type_token]

    def kube_objects(self) -> list[dict[str, Any]]:
        """The Kubernetes objects as registered (Kubernetes resources, providers excluded)."""
        return [
            r.inputs
            for r in self.resources
            if r.type.startswith("kubernetes:") and "providers" not in r.type
        ]

    def objects_of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [obj for obj in self.kube_objects() if obj.get("kind") == kind]


class RecordingMocks(pulumi.runtime.Mocks):
    """Echoes inputs as outputs, plus the computed outputs the program reads."""

    def __init__(self) -> None:
        self.resources: list[Registration] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()  # the mock monitor calls in from executor threads

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        secret_paths: set[str] = set()
        inputs = _normalise(args.inputs, "", secret_paths)
        with self._lock:
            self.resources.append(
                Registration(
                    args.typ, args.name, inputs, frozenset(secret_paths), args.provider or ""
                )
            )
        resource_id = f"{args.name.replace('/', '-')}-id"
        # Echo the raw inputs: secret inputs stay secret outputs, as with real providers.
        return resource_id, {**args.inputs, **_computed_outputs(args.typ, resource_id, inputs)}

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        secret_paths: set[str] = set()
        arguments = _normalise(args.args, "", secret_paths)
        with self._lock:
            self.calls.append((args.token, arguments))
        return _call_result(args.token, arguments)


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
        }
    if (
        type_token == "kubernetes:core/v1:Service"
        and inputs.get("spec", {}).get("type") == "LoadBalancer"
    ):
        return {"status": {"loadBalancer": {"ingress": [{"ip": MOCK_LB_IP}]}}}
    return {}


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
    if token.endswith("/getZones:getZones"):
        zone = {"id": MOCK_ZONE, "zoneId": MOCK_ZONE, "localName": MOCK_ZONE}
        return {"id": "zones", "ids": [MOCK_ZONE], "zones": [zone]}
    return {}


def stack_config_map(stack: str | Mapping[str, Any]) -> tuple[dict[str, str], str]:
    """Pulumi's config map for a stack file name, or for a prefix-less `tftrain:` dict."""
    if isinstance(stack, str):
        document = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text()) or {}
        entries: Mapping[str, Any] = document.get("config") or {}
        name = stack
    else:
        entries = {key if ":" in key else f"{PROJECT}:{key}": value for key, value in stack.items()}
        name = "test"
    return {
        key: value if isinstance(value, str) else json.dumps(value)
        for key, value in entries.items()
    }, name


def run_program(
    stack: str | Mapping[str, Any],
    *,
    secrets: Mapping[str, str] | None = None,
    raise_errors: bool = True,
) -> Recorded:
    """Run the program for a stack under fresh mocks; with `raise_errors=False` keep its error."""
    from infra.program import build

    config, stack_name = stack_config_map(stack)
    secret_keys = []
    for key, value in (secrets or {}).items():
        full_key = key if ":" in key else f"{PROJECT}:{key}"
        config[full_key] = value
        secret_keys.append(full_key)

    mocks = RecordingMocks()
    settings.ROOT.set(None)  # a new root Stack per run, or exports pile up across runs
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack_name, preview=False)
    pulumi.runtime.set_all_config(config, secret_keys)
    settings.SETTINGS.rpc_manager.clear()
    settings.SETTINGS.outputs.clear()

    recorded = Recorded(resources=mocks.resources, calls=mocks.calls)

    async def program() -> None:
        build()
        root = settings.get_root_resource()
        for key, value in getattr(root, "outputs", {}).items():
            output = pulumi.Output.from_input(value)
            recorded.outputs[key] = await output.future()
            if await output.is_secret():
                recorded.secret_outputs.add(key)

    try:
        _sync_await(run_pulumi_func(program))
    except Exception as error:  # the program's own error, e.g. a rejected config
        recorded.error = error
        if raise_errors:
            raise
    return recorded


def all_stacks() -> list[str]:
    """Every stack file in stacks/, so a new stack is tested without editing a list."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))
