"""A private API server that `pulumi up` cannot reach stops the run before anything is billed
(issue 18, item 2). Expectations come from the situation, worked by hand: a VPC the stack
creates contains no machine yet; an ECS instance learns its VPC from the metadata service
(hardened mode: PUT /latest/api/token with X-aliyun-ecs-metadata-token-ttl-seconds, then the
token in X-aliyun-ecs-metadata-token; Alibaba's "Obtain instance metadata" page)."""

from __future__ import annotations

import http.server
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest

from infra import cloud
from infra.cloud import api_server_reach
from infra.config import ConfigError, parse_config, read_stack_file, stack_file
from infra.config.model import NetworkConfig
from tests.pulumi_mocks import PlausibleCloud, run_program, stack_raw

# The real network functions, kept before tests/conftest.py replaces them for every test.
REAL_CONNECTS = api_server_reach.connects
REAL_THIS_MACHINE_VPC = api_server_reach.this_machine_vpc

FIRST_UP = PlausibleCloud(cluster_exists=False)
ROOT = Path(__file__).resolve().parent.parent

# (vpcId, vpnJoined, cluster exists, this machine's VPC) -> refused on this up
CASES = [
    ("", False, False, None, True),  # laptop, new VPC: the default first up
    ("", False, False, "vpc-other", True),  # an ECS instance elsewhere
    ("vpc-existing", False, False, None, True),  # existing VPC, laptop
    ("vpc-existing", False, False, "vpc-other", True),  # ECS in another VPC
    ("vpc-existing", False, False, "vpc-existing", False),  # ECS in the stack's VPC
    ("vpc-existing", True, False, None, False),  # the user's network joins that VPC
    ("", False, True, None, False),  # a later up: the probe of the endpoint decides
]


@pytest.mark.parametrize(("vpc_id", "vpn", "exists", "machine", "refused"), CASES)
def test_who_can_reach_a_new_private_api_server(
    vpc_id: str, vpn: bool, exists: bool, machine: str | None, refused: bool
) -> None:
    network = NetworkConfig(vpc_id=vpc_id, vpn_joined=vpn)
    problem = api_server_reach.first_up_problem(network, exists, machine)
    assert (problem is not None) == refused
    if refused:
        assert "tftrain:cluster.publicApiServer = false" in problem
        assert "Nothing was created" in problem


@pytest.mark.parametrize("stack", ["ack-gpu", "ack-cpu", "ask-eci"])
def test_a_first_private_up_from_a_laptop_creates_nothing(stack: str) -> None:
    run = run_program(stack, cloud=FIRST_UP, raise_errors=False)
    assert "cluster.publicApiServer = false" in str(run.error)
    assert "network.vpnJoined" in str(run.error)  # the ways out are named
    assert [r.type for r in run.resources if r.custom] == []


@pytest.mark.parametrize("stack", ["ack-gpu", "ask-eci"])
def test_a_public_api_server_needs_no_route_into_the_vpc(stack: str) -> None:
    public = stack_raw(stack, {"cluster": {"publicApiServer": True}})
    run = run_program(public, cloud=FIRST_UP)
    assert run.of_type("kubernetes:batch/v1:Job")


def test_an_ecs_instance_in_the_existing_vpc_may_create_the_cluster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api_server_reach, "this_machine_vpc", lambda: "vpc-existing")
    network = {"vpcId": "vpc-existing", "vpcCidr": "172.16.0.0/12", "vswitchCidr": "172.16.0.0/20"}
    inside = stack_raw(
        "ack-cpu",
        {"network": {**network, "podVswitchCidr": "172.20.0.0/16", "serviceCidr": "10.96.0.0/20"}},
    )
    run = run_program(inside, cloud=FIRST_UP)
    assert run.of_type("kubernetes:batch/v1:Job")


def test_vpn_joined_names_an_existing_vpc() -> None:
    raw = stack_raw("ack-cpu", {"network": {"vpnJoined": True}})
    with pytest.raises(ConfigError) as refused:
        parse_config(raw)
    assert any("tftrain:network.vpnJoined" in p for p in refused.value.problems)


# Run apart: the failed Output leaves the mock runtime's tasks behind, which upsets the
# interpreter that pytest keeps using (CPython 3.11 "AST constructor recursion depth mismatch").
UNREACHABLE_UP = """
from infra.cloud import api_server_reach
from tests.pulumi_mocks import run_program
probed = []
api_server_reach.connects = lambda endpoint, timeout=5.0: probed.append(endpoint)
run = run_program("ack-gpu", raise_errors=False)
print("probed:", probed)
print("error:", run.error)
print("kubernetes:", [r.type for r in run.resources if r.type.startswith("kubernetes:")])
"""


def test_an_unreachable_existing_cluster_stops_up_before_any_kubernetes_object() -> None:
    done = subprocess.run(
        [sys.executable, "-c", UNREACHABLE_UP],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # The intranet endpoint (tests/pulumi_mocks.py MOCK_INTRANET_API), not the internet one.
    assert "probed: ['https://192.168.0.7:6443']" in done.stdout, done.stderr
    # The message names the key and value that chose the private endpoint: the way out.
    assert (
        "error: tftrain:cluster.publicApiServer = false: this machine cannot reach the "
        "cluster's API server https://192.168.0.7:6443;"
    ) in done.stdout, done.stdout
    assert "kubernetes: []" in done.stdout


@pytest.mark.parametrize(
    ("public", "key"),
    [(False, "tftrain:cluster.publicApiServer = false"),
     (True, "tftrain:cluster.publicApiServer = true")],
    ids=["private", "public"],
)  # fmt: skip
def test_the_reach_check_names_the_key_that_chose_the_endpoint(
    monkeypatch: pytest.MonkeyPatch, public: bool, key: str
) -> None:
    """In process, beside the subprocess test above: the key the check's message starts with,
    written as the user writes it in the stack file (lower-case YAML booleans)."""
    keys: list[str] = []

    def recorded(kubeconfig: str, given: str) -> str:
        keys.append(given)
        return kubeconfig

    monkeypatch.setattr(cloud, "kubeconfig_reachable", recorded)
    run_program(stack_raw("ack-gpu", {"cluster": {"publicApiServer": public}}))
    assert keys == [key]


def test_preview_warns_where_up_would_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: False)
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: True)
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: warnings.append(message))
    assert api_server_reach.check_reachable("https://10.0.0.1:6443") == "https://10.0.0.1:6443"
    assert "would stop" in warnings[0]
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    with pytest.raises(pulumi.RunError):
        api_server_reach.check_reachable("https://10.0.0.1:6443")


def test_the_probe_opens_a_real_connection() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert REAL_CONNECTS(f"https://127.0.0.1:{port}", timeout=2)
    assert not REAL_CONNECTS(f"https://127.0.0.1:{port}", timeout=2)  # closed now
    assert not REAL_CONNECTS("https://", timeout=2)


class _Metadata(http.server.BaseHTTPRequestHandler):
    """The ECS metadata service as documented: a token first, the VPC id with the token."""

    token = "t0k3n"

    def do_PUT(self) -> None:
        # The token's lifetime: whole seconds, 1 to 21600 (ECS "Obtain a temporary
        # authorization token"); anything else is refused.
        ttl = self.headers.get("X-aliyun-ecs-metadata-token-ttl-seconds") or ""
        ok = self.path == "/latest/api/token" and ttl.isdigit() and 1 <= int(ttl) <= 21600
        self._answer(200 if ok else 400, self.token if ok else "")

    def do_GET(self) -> None:
        ok = self.headers.get("X-aliyun-ecs-metadata-token") == self.token
        found = self.path == "/latest/meta-data/vpc-id"
        self._answer(200 if ok and found else 401, "vpc-bp1abc" if ok and found else "")

    def _answer(self, status: int, body: str) -> None:
        self.send_response(status)
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def metadata_service(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(
        api_server_reach, "METADATA", f"http://127.0.0.1:{server.server_port}/latest"
    )
    yield "vpc-bp1abc"
    server.shutdown()


def test_an_ecs_instance_reads_its_vpc_in_hardened_mode(metadata_service: str) -> None:
    assert REAL_THIS_MACHINE_VPC() == metadata_service


def test_off_ecs_there_is_no_vpc(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
    monkeypatch.setattr(api_server_reach, "METADATA", f"http://127.0.0.1:{port}/latest")
    assert REAL_THIS_MACHINE_VPC() is None


def test_destroy_from_outside_the_vpc_is_decided_on_its_own_command_line() -> None:
    """pulumi-kubernetes (provider.go, Configure) takes deleteUnreachable from the provider's
    inputs when present and otherwise from PULUMI_K8S_DELETE_UNREACHABLE when `destroy` runs;
    so the stack's provider must not carry it."""
    for stack in ("ack-gpu", "ask-eci", "dev"):
        (provider,) = run_program(stack).of_type("pulumi:providers:kubernetes")
        assert "deleteUnreachable" not in provider.inputs


def test_up_refuses_to_store_delete_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULUMI_K8S_DELETE_UNREACHABLE", "true")
    run = run_program("ack-gpu", raise_errors=False)
    assert str(run.error) == (
        "PULUMI_K8S_DELETE_UNREACHABLE is set: on `pulumi up`/`preview` the Kubernetes provider "
        "would keep it in the stack's state, and a later refresh from a machine that cannot "
        "reach the cluster would forget its objects. Unset it here; use it only as "
        "`PULUMI_K8S_DELETE_UNREACHABLE=true pulumi destroy` (docs/deploy.md, Reaching the "
        "cluster)"
    )
    assert [r for r in run.resources if r.custom] == []


def test_a_platform_stack_without_run_namespaces_sends_nothing_so_nothing_needs_reaching(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Created from a laptop on its first up: its runs deploy later, from where they reach it."""
    probed: list[str] = []
    monkeypatch.setattr(
        api_server_reach, "connects", lambda endpoint, timeout=5.0: bool(probed.append(endpoint))
    )
    raw = read_stack_file(stack_file("platform-ack"))
    del raw["cluster"]["runNamespaces"]
    run = run_program({**raw, "alicloud:region": "cn-hangzhou"}, cloud=FIRST_UP)
    assert run.of_type("alicloud:cs/managedKubernetes:ManagedKubernetes")
    assert probed == []


def test_a_platform_that_issues_run_namespaces_is_checked_like_any_stack_with_objects() -> None:
    """It sends each namespace's objects: a first private up from a laptop creates nothing."""
    run = run_program("platform-ack", cloud=FIRST_UP, raise_errors=False)
    assert "cluster.publicApiServer = false" in str(run.error)
    assert [r.type for r in run.resources if r.custom] == []


CLOUD_STACKS = [
    path
    for path in sorted((Path(__file__).resolve().parent.parent / "stacks").glob("Pulumi.*.yaml"))
    if (read_stack_file(path).get("cluster") or {}).get("kind") in ("ack", "ask")
]


@pytest.mark.parametrize("path", CLOUD_STACKS, ids=lambda path: path.name)
def test_every_cloud_stack_says_what_its_first_up_from_a_laptop_needs(path: Path) -> None:
    """A newcomer copying a checked-in cloud stack learns, before the refusal above, the keys
    that let a first `up` from a laptop reach the private API server (issue 34)."""
    comments = " ".join(
        line.lstrip("# ").strip() for line in path.read_text().splitlines() if line.startswith("#")
    )
    assert "First `up` from a laptop" in comments
    assert "cluster.publicApiServer: true" in comments
    assert "network.vpcId" in comments


@pytest.mark.parametrize(
    ("cluster", "expected"),
    [
        ({}, None),  # unnamed: the name the stack gives the cluster it creates
        ({"name": "team-gpu"}, "team-gpu"),
    ],
)
def test_the_reach_check_asks_for_the_cluster_this_stack_names(
    cluster: dict[str, str], expected: str | None
) -> None:
    """A second `up` must find the cluster the first one made, under the name it made it with
    (ACK's DescribeClusters by name), or it would take a reachable cluster for a new one."""
    raw = stack_raw("ack-gpu", {"cluster": cluster})
    run = run_program(raw)
    (made,) = run.of_type("alicloud:cs/managedKubernetes:ManagedKubernetes")
    name = expected or made.inputs["name"]
    asked = [args for token, args in run.calls if token == api_server_reach.GET_CLUSTERS]
    assert asked == [{"nameRegex": f"^{re.escape(name)}$"}]
    assert made.inputs["name"] == name
