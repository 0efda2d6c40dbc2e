"""The API-server reach check's parts one at a time (infra/cloud/api_server_reach.py), with the
cluster lookup and the network stubbed: which lookup is asked, when the machine's VPC is asked,
which endpoint is probed and what a refusal names. The whole program's side is in
tests/test_api_server_reach.py."""

from __future__ import annotations

import http.server
import re
import socket
import threading
from typing import Any

import pulumi
import pytest
import yaml

from infra.cloud import api_server_reach
from infra.config.model import ClusterConfig, NetworkConfig

# The real probe, kept before tests/conftest.py replaces it for every test.
REAL_CONNECTS = api_server_reach.connects
REAL_THIS_MACHINE_VPC = api_server_reach.this_machine_vpc
NAME = "tftrain-dev-cluster"


class Cloud:
    """The cluster list (cs.get_clusters) and this machine's VPC, as the check asks them."""

    def __init__(self, clusters: list[dict[str, Any]] | None, machine_vpc: str | None) -> None:
        self.clusters = clusters
        self.machine_vpc = machine_vpc
        self.lookups: list[tuple[str, dict[str, Any], str]] = []
        self.vpc_asked = 0

    def listed(self, token: str, args: dict[str, Any], field: str) -> list[Any] | None:
        self.lookups.append((token, args, field))
        return self.clusters

    def this_machine_vpc(self) -> str | None:
        self.vpc_asked += 1
        return self.machine_vpc


def check(
    monkeypatch: pytest.MonkeyPatch,
    cloud: Cloud,
    network: NetworkConfig,
    public: bool = False,
) -> Cloud:
    monkeypatch.setattr(api_server_reach, "listed", cloud.listed)
    monkeypatch.setattr(api_server_reach, "this_machine_vpc", cloud.this_machine_vpc)
    cluster = ClusterConfig(public_api_server=public)
    api_server_reach.require_reachable_api_server(cluster, network, NAME)
    return cloud


def test_the_cluster_is_looked_up_by_its_exact_name(monkeypatch: pytest.MonkeyPatch) -> None:
    cloud = check(monkeypatch, Cloud([{"clusterName": NAME}], None), NetworkConfig())
    ((token, args, field),) = cloud.lookups
    # cs.get_clusters (provider SDK `cs/get_clusters.py`: `name_regex`, result `clusters`).
    assert (token, field) == ("alicloud:cs/getClusters:getClusters", "clusters")
    pattern = args["nameRegex"]
    assert re.fullmatch(pattern, NAME)
    assert not re.search(pattern, f"{NAME}-2") and not re.search(pattern, f"x{NAME}")
    assert cloud.vpc_asked == 0  # an existing cluster: its endpoint is probed later instead


def test_a_cluster_of_another_name_in_the_list_is_not_this_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cloud = Cloud([{"clusterName": f"{NAME}-old"}, {"name": NAME}], None)
    with pytest.raises(pulumi.RunError, match="the stack creates a new VPC"):
        check(monkeypatch, cloud, NetworkConfig())
    assert cloud.vpc_asked == 1


def test_a_public_api_server_asks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cloud = check(monkeypatch, Cloud([], None), NetworkConfig(), public=True)
    assert cloud.lookups == [] and cloud.vpc_asked == 0


def test_the_offline_render_checks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cloud = check(monkeypatch, Cloud(None, None), NetworkConfig())
    assert len(cloud.lookups) == 1 and cloud.vpc_asked == 0


def test_a_joined_network_needs_no_vpc_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    network = NetworkConfig(vpc_id="vpc-existing", vpn_joined=True)
    cloud = check(monkeypatch, Cloud([], None), network)
    assert cloud.vpc_asked == 0


def test_an_ecs_instance_in_the_stacks_vpc_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    cloud = check(monkeypatch, Cloud([], "vpc-existing"), NetworkConfig(vpc_id="vpc-existing"))
    assert cloud.vpc_asked == 1


def test_a_machine_in_another_vpc_is_refused_naming_the_vpc_and_the_ways_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(pulumi.RunError) as refused:
        check(monkeypatch, Cloud([], "vpc-other"), NetworkConfig(vpc_id="vpc-existing"))
    message = str(refused.value)
    assert message.startswith("tftrain:cluster.publicApiServer = false: ")
    assert "this machine is not in network.vpcId vpc-existing" in message
    assert "Nothing was created" in message
    assert api_server_reach.WAYS_OUT in message


KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [
        {"name": "first", "cluster": {"server": "https://192.168.0.7:6443"}},
        {"name": "second", "cluster": {"server": "https://203.0.113.9:6443"}},
    ],
}


def test_the_kubeconfigs_first_cluster_is_probed_and_the_kubeconfig_passed_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    probed: list[str] = []
    monkeypatch.setattr(
        api_server_reach, "connects", lambda endpoint, timeout=5.0: not probed.append(endpoint)
    )
    text = yaml.safe_dump(KUBECONFIG)
    assert api_server_reach.kubeconfig_reachable(text, "tftrain:platformStack") == text
    assert probed == ["https://192.168.0.7:6443"]


def test_an_unreachable_kubeconfig_stops_up_naming_the_key_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: False)
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    with pytest.raises(pulumi.RunError) as refused:
        api_server_reach.kubeconfig_reachable(yaml.safe_dump(KUBECONFIG), "tftrain:platformStack")
    message = str(refused.value)
    assert message.startswith(
        "tftrain:platformStack: this machine cannot reach the cluster's API server "
        "https://192.168.0.7:6443"
    )


def test_the_default_key_is_the_private_api_server_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: False)
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    with pytest.raises(pulumi.RunError, match=r"^tftrain:cluster\.publicApiServer = false: "):
        api_server_reach.check_reachable("https://10.0.0.1:6443")


def test_a_reachable_endpoint_warns_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: warned.append(message))
    assert api_server_reach.check_reachable("https://10.0.0.1:6443") == "https://10.0.0.1:6443"
    assert warned == []


@pytest.fixture
def listener() -> Any:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def test_an_endpoint_without_a_scheme_is_probed_as_https(listener: int) -> None:
    assert REAL_CONNECTS(f"127.0.0.1:{listener}", timeout=2)


def test_an_endpoint_without_a_port_is_probed_on_443(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[Any, float]] = []

    class Connection:
        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc: object) -> None:
            return None

    def create_connection(address: Any, timeout: float) -> Connection:
        opened.append((address, timeout))
        return Connection()

    monkeypatch.setattr(socket, "create_connection", create_connection)
    assert REAL_CONNECTS("https://cls-abc.example.com", timeout=3)
    assert REAL_CONNECTS("https://cls-abc.example.com:6443")
    assert opened == [(("cls-abc.example.com", 443), 3), (("cls-abc.example.com", 6443), 5.0)]


# --- the ECS metadata service misbehaving -----------------------------------------------------


class _Stalling(http.server.BaseHTTPRequestHandler):
    """A metadata address that accepts a connection and then sends nothing to `silent_on`
    (PUT, GET) or answers it without end (`endless-PUT`, `endless-GET`): what `pulumi up`
    must not wait on forever off ECS. Otherwise it answers a token, then a VPC id."""

    silent_on = "PUT"

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_GET(self) -> None:
        self._serve("GET")

    def _serve(self, method: str) -> None:
        if method == self.silent_on:
            self.server.release.wait()  # type: ignore[attr-defined]
            return
        self.send_response(200)
        self.end_headers()
        if self.silent_on == f"endless-{method}":
            try:
                while not self.server.release.is_set():  # type: ignore[attr-defined]
                    self.wfile.write(b"vpc-" + b"x" * 4096)
            except OSError:
                return
            return
        self.wfile.write(b"t0k3n" if method == "PUT" else b"vpc-bp1abc")

    def log_message(self, *args: Any) -> None:
        return


def _vpc_from(monkeypatch: pytest.MonkeyPatch, silent_on: str) -> tuple[str | None, bool]:
    """this_machine_vpc against a stalling service: its answer and whether it ended."""
    handler = type("Handler", (_Stalling,), {"silent_on": silent_on})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.release = threading.Event()  # type: ignore[attr-defined]
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(
        api_server_reach, "METADATA", f"http://127.0.0.1:{server.server_port}/latest"
    )
    answer: list[str | None] = []
    asking = threading.Thread(target=lambda: answer.append(REAL_THIS_MACHINE_VPC()), daemon=True)
    asking.start()
    # The check's own limit is 1 s per request; 20 s leaves room for a loaded machine.
    asking.join(timeout=20)
    ended = not asking.is_alive()
    server.release.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()
    return (answer[0] if answer else None), ended


@pytest.mark.parametrize("silent_on", ["PUT", "GET"])
def test_a_metadata_service_that_never_answers_means_no_vpc(
    monkeypatch: pytest.MonkeyPatch, silent_on: str
) -> None:
    vpc, ended = _vpc_from(monkeypatch, silent_on)
    assert ended and vpc is None


def test_an_answer_without_end_is_not_read_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    vpc, ended = _vpc_from(monkeypatch, "endless-GET")
    assert ended
    assert vpc is not None and vpc.startswith("vpc-") and len(vpc) < 4096


def test_a_token_without_end_is_not_read_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    _, ended = _vpc_from(monkeypatch, "endless-PUT")
    assert ended


def test_no_proxy_is_asked_for_the_metadata_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy set for the user's other traffic must not answer for (or swallow) the
    link-local metadata address: the request goes to it directly."""
    with socket.create_server(("127.0.0.1", 0)) as dead:
        proxy = f"http://127.0.0.1:{dead.getsockname()[1]}"
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, proxy)
    vpc, ended = _vpc_from(monkeypatch, "none")
    assert ended and vpc == "vpc-bp1abc"


# --- what the user reads -------------------------------------------------------------------


def test_a_new_vpc_is_named_as_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(pulumi.RunError) as refused:
        check(monkeypatch, Cloud([], None), NetworkConfig())
    assert str(refused.value) == (
        "tftrain:cluster.publicApiServer = false: the cluster's API server would only have a "
        "VPC address and the stack creates a new VPC, which no machine is in yet, so every "
        "Kubernetes object would fail after ~20 minutes of billed cloud resources. Nothing "
        f"was created. To go on: {api_server_reach.WAYS_OUT}"
    )


UNREACHABLE = (
    "tftrain:platformStack: this machine cannot reach the cluster's API server "
    "https://10.0.0.1:6443; run pulumi from where it is reachable (a private one: inside the "
    "stack's VPC or a network joined to it; docs/deploy.md, Reaching the cluster)"
)


def test_up_stops_saying_where_to_run_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: False)
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    with pytest.raises(pulumi.RunError) as refused:
        api_server_reach.check_reachable("https://10.0.0.1:6443", "tftrain:platformStack")
    assert str(refused.value) == UNREACHABLE


def test_preview_warns_with_the_same_words_and_what_up_would_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warned: list[str] = []
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: False)
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: True)
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: warned.append(message))
    endpoint = api_server_reach.check_reachable("https://10.0.0.1:6443", "tftrain:platformStack")
    assert endpoint == "https://10.0.0.1:6443"
    assert warned == [UNREACHABLE + "; `pulumi up` from here would stop at this point"]
