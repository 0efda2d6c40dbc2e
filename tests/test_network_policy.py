"""The rendered NetworkPolicies, evaluated against the rendered pods of every stack.

Not "a policy exists": tests/netpol.py evaluates the policies' selectors, namespaces and ports
the way a policy-enforcing CNI does, and every connection below is decided by it. Foreign pods
are rendered too (the same stack with another run id, or in another namespace), so their
labels are exactly what such a pod would carry.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from infra.config import StackConfig
from infra.manifests import build_objects
from infra.manifests.common import REPLICA_TYPE_LABEL, RUN_ID_LABEL
from infra.manifests.network_policy import METADATA_SERVICE
from infra.manifests.tensorboard import PORT as TENSORBOARD_PORT
from infra.platform.cluster_facts import cluster_facts
from infra.topology import TF_PORT
from tests.netpol import (
    External,
    Pod,
    connection_allowed,
    isolated,
    namespace_labels,
    pods_of,
    selects,
)
from tests.test_manifests_schema import CASES, config_for

OTHER_NAMESPACE = "someone-else"
COREDNS = Pod("coredns", "kube-system", {"k8s-app": "kube-dns"}, "10.64.200.10")
NODE_LOCAL_DNS = External("169.254.20.10")
METADATA = External(METADATA_SERVICE.split("/")[0])
INTERNET = External("47.96.0.10")
VPC_CLIENT = External("192.168.3.4")


@dataclasses.dataclass(frozen=True)
class World:
    config: StackConfig
    policies: list[dict[str, Any]]
    namespaces: dict[str, dict[str, str]]
    training: list[Pod]
    tensorboard: list[Pod]
    other_run: list[Pod]  # the same job's replicas of another run, same namespace
    other_namespace: list[Pod]  # the same stack deployed in another namespace

    def allowed(
        self,
        source: Any,
        destination: Any,
        port: int,
        protocol: str = "TCP",
        ip_blocks_match_pods: bool = True,
    ) -> bool:
        return connection_allowed(
            self.policies,
            source,
            destination,
            port,
            self.namespaces,
            protocol,
            ip_blocks_match_pods=ip_blocks_match_pods,
        )


def _variant(config: StackConfig, **job: str) -> StackConfig:
    """The stack with other job values, as a single run (a sweep's trials keep their own)."""
    single = dataclasses.replace(config, sweep=None, trials=(), trial_point={})
    return dataclasses.replace(single, job=dataclasses.replace(config.job, **job))


def _same_run(one: Pod, other: Pod) -> bool:
    """Two replicas of one run (a sweep's trials are runs apart)."""
    return one.labels[RUN_ID_LABEL] == other.labels[RUN_ID_LABEL]


def _render(config: StackConfig) -> list[dict[str, Any]]:
    return build_objects(config, cluster_facts(config))


def _replicas(pods: list[Pod]) -> list[Pod]:
    return [p for p in pods if REPLICA_TYPE_LABEL in p.labels]


def world(name: str) -> World:
    """Not cached: under mutmut a test that reused another's world would neither run the
    mutated builders nor be counted as reaching them."""
    config = config_for(name)
    objects = _render(config)
    elsewhere = _variant(config, namespace=OTHER_NAMESPACE)
    elsewhere_objects = _render(elsewhere)
    pods = pods_of(objects, "10.64.0.10")
    policies = [o for o in objects + elsewhere_objects if o["kind"] == "NetworkPolicy"]
    namespaces = {
        o["metadata"]["name"]: namespace_labels(o["metadata"]["name"], o["metadata"]["labels"])
        for o in objects + elsewhere_objects
        if o["kind"] == "Namespace"
    }
    namespaces["kube-system"] = namespace_labels("kube-system")
    return World(
        config=config,
        policies=policies,
        namespaces=namespaces,
        training=_replicas(pods),
        tensorboard=[p for p in pods if REPLICA_TYPE_LABEL not in p.labels],
        other_run=_replicas(pods_of(_render(_variant(config, run_id="another-run")), "10.64.1.10")),
        other_namespace=pods_of(elsewhere_objects, "10.64.2.10"),
    )


@pytest.mark.parametrize("name", CASES)
def test_every_pod_of_the_namespace_is_isolated_for_ingress(name: str) -> None:
    w = world(name)
    assert w.training
    stranger = Pod("stranger", w.config.job.namespace, {"app": "x"}, "10.64.3.3")
    for pod in [*w.training, *w.tensorboard, stranger]:
        assert isolated(w.policies, pod, "Ingress"), pod.name
    # A pod nobody admits: even a replica of the run cannot reach it.
    assert not w.allowed(w.training[0], stranger, TF_PORT)


@pytest.mark.parametrize("name", CASES)
def test_replicas_of_the_run_reach_each_other_on_the_tf_port_only(name: str) -> None:
    w = world(name)
    for source in w.training:
        for destination in w.training:
            pair = (source.name, destination.name)
            assert w.allowed(source, destination, TF_PORT) == _same_run(source, destination), pair
            assert not w.allowed(source, destination, TF_PORT, "UDP")
            assert not w.allowed(source, destination, 22)
            assert not w.allowed(source, destination, TENSORBOARD_PORT)


@pytest.mark.parametrize("name", CASES)
def test_no_pod_of_another_run_namespace_or_component_reaches_the_tf_port(name: str) -> None:
    w = world(name)
    assert w.other_run and w.other_namespace
    assert {p.labels[RUN_ID_LABEL] for p in w.other_run} == {"another-run"}
    outsiders = [
        *w.other_run,
        *w.other_namespace,  # identical labels, another namespace
        *w.tensorboard,
        COREDNS,
        VPC_CLIENT,
        INTERNET,
    ]
    for destination in w.training:
        for source in outsiders:
            assert not w.allowed(source, destination, TF_PORT), (source, destination.name)


@pytest.mark.parametrize("name", CASES)
def test_tensorboard_accepts_its_port_only_from_where_its_service_type_reaches(name: str) -> None:
    w = world(name)
    if not w.config.tensorboard.enabled:
        assert not w.tensorboard
        assert [p for p in w.policies if p["metadata"]["name"].endswith("-tensorboard")] == []
        return
    (board,) = w.tensorboard
    in_cluster = [*w.other_namespace, COREDNS, *w.training]
    for source in in_cluster:
        assert w.allowed(source, board, TENSORBOARD_PORT), source
        assert not w.allowed(source, board, TF_PORT)
        assert not w.allowed(source, board, 22)
    # A LoadBalancer's traffic arrives from client or node addresses, never as a pod.
    load_balanced = w.config.tensorboard.service_type == "LoadBalancer"
    for client in (VPC_CLIENT, INTERNET):
        assert w.allowed(client, board, TENSORBOARD_PORT) == load_balanced
        assert not w.allowed(client, board, TF_PORT)


@pytest.mark.parametrize("name", CASES)
def test_egress_keeps_dns_and_the_outside_world_but_not_the_metadata_service(name: str) -> None:
    w = world(name)
    for pod in [*w.training, *w.tensorboard]:
        assert isolated(w.policies, pod, "Egress")
        for protocol in ("UDP", "TCP"):
            # Also where an ipBlock never matches a pod (Cilium): the cluster DNS is a pod.
            for pods_in_blocks in (True, False):
                assert w.allowed(pod, COREDNS, 53, protocol, pods_in_blocks), pods_in_blocks
            assert w.allowed(pod, NODE_LOCAL_DNS, 53, protocol)
        assert w.allowed(pod, INTERNET, 443)  # OSS, registries, datasets
        assert w.allowed(pod, VPC_CLIENT, 2049)  # anything in the VPC (NFS from a pod too)
        assert not w.allowed(pod, METADATA, 80)
    for source in w.training:
        for peer in w.training:
            for pods_in_blocks in (True, False):
                assert w.allowed(source, peer, TF_PORT, "TCP", pods_in_blocks) == _same_run(
                    source, peer
                ), pods_in_blocks


@pytest.mark.parametrize("name", CASES)
def test_policies_select_with_the_pods_own_labels(name: str) -> None:
    """The training policy picks every replica of the run and nothing else of the stack."""
    w = world(name)
    for run in w.config.runs:  # a sweep: each trial's own policy
        (training,) = [
            p
            for p in w.policies
            if p["metadata"]["name"] == f"{run.run_name}-training"
            and p["metadata"]["namespace"] == w.config.job.namespace
        ]
        selector = training["spec"]["podSelector"]
        mine = [p for p in w.training if p.labels[RUN_ID_LABEL] == run.job.run_id]
        others = [p for p in w.training if p not in mine]
        assert mine and all(selects(selector, p.labels) for p in mine)
        outsiders = [*w.tensorboard, *w.other_run, *others]
        assert not any(selects(selector, p.labels) for p in outsiders)


# --- the evaluator itself, on cases whose answer the API reference spells out ------------


def _policy(namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": namespace}, "spec": spec}


NAMESPACES = {n: namespace_labels(n, {"team": n}) for n in ("a", "b")}
WEB = Pod("web", "a", {"app": "web"}, "10.0.0.1", {"http": 8080})
CLIENT_A = Pod("client", "a", {"role": "client"}, "10.0.0.2")
CLIENT_B = Pod("client", "b", {"role": "client"}, "10.0.1.2")


def test_evaluator_unselected_pods_accept_everything() -> None:
    assert connection_allowed([], CLIENT_B, WEB, 1, NAMESPACES)
    other = _policy("a", {"podSelector": {"matchLabels": {"app": "db"}}})
    assert connection_allowed([other], CLIENT_B, WEB, 1, NAMESPACES)


def test_evaluator_and_of_selectors_in_one_peer_or_across_peers() -> None:
    both = {"namespaceSelector": {"matchLabels": {"team": "b"}}, "podSelector": {}}
    and_rule = _policy("a", {"podSelector": {}, "ingress": [{"from": [both]}]})
    assert connection_allowed([and_rule], CLIENT_B, WEB, 80, NAMESPACES)
    assert not connection_allowed([and_rule], CLIENT_A, WEB, 80, NAMESPACES)
    pod_only = {"podSelector": {"matchLabels": {"role": "client"}}}
    same_namespace = _policy("a", {"podSelector": {}, "ingress": [{"from": [pod_only]}]})
    assert connection_allowed([same_namespace], CLIENT_A, WEB, 80, NAMESPACES)
    assert not connection_allowed([same_namespace], CLIENT_B, WEB, 80, NAMESPACES)


def test_evaluator_ports_protocols_named_ports_and_ranges() -> None:
    def rule(ports: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [_policy("a", {"podSelector": {}, "ingress": [{"ports": ports}]})]

    assert connection_allowed(rule([{"port": "http"}]), CLIENT_A, WEB, 8080, NAMESPACES)
    assert not connection_allowed(rule([{"port": "http"}]), CLIENT_A, WEB, 80, NAMESPACES)
    ranged = rule([{"port": 30000, "endPort": 30010, "protocol": "UDP"}])
    assert connection_allowed(ranged, CLIENT_A, WEB, 30005, NAMESPACES, "UDP")
    assert not connection_allowed(ranged, CLIENT_A, WEB, 30005, NAMESPACES, "TCP")
    assert not connection_allowed(ranged, CLIENT_A, WEB, 30011, NAMESPACES, "UDP")


def test_evaluator_ip_blocks_expressions_and_egress() -> None:
    block = {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.0.1.0/24"]}}
    policy = _policy(
        "a", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [block]}]}
    )
    assert connection_allowed([policy], CLIENT_A, WEB, 80, NAMESPACES)
    assert not connection_allowed([policy], CLIENT_A, CLIENT_B, 80, NAMESPACES)
    assert not connection_allowed([policy], CLIENT_A, External("8.8.8.8"), 53, NAMESPACES)
    assert connection_allowed([policy], External("8.8.8.8"), CLIENT_A, 80, NAMESPACES)
    expression = {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}
    assert selects(expression, CLIENT_A.labels) and not selects(expression, WEB.labels)
    assert selects({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, WEB.labels)
    # Without policyTypes, a policy with egress rules isolates both directions.
    implicit = _policy("a", {"podSelector": {}, "egress": [{}]})
    assert isolated([implicit], WEB, "Ingress") and isolated([implicit], WEB, "Egress")


def test_the_policies_are_named_after_the_job_and_each_trial() -> None:
    """`<job>-<purpose>`; a sweep's training policy per trial, `<job>-<run id>-training`."""
    from infra.config import load_stack
    from infra.manifests.network_policy import network_policies

    single = load_stack("ask-eci")
    assert [p["metadata"]["name"] for p in network_policies(single)] == [
        "mnist-default-deny",
        "mnist-training",
        "mnist-egress",
        "mnist-tensorboard",
    ]
    sweep = load_stack("dev-sweep")
    trials = [f"mnist-{run.job.run_id}-training" for run in sweep.runs]
    assert len(trials) == 2
    assert [p["metadata"]["name"] for p in network_policies(sweep)] == [
        "mnist-default-deny",
        *trials,
        "mnist-egress",
        "mnist-tensorboard",
    ]


@pytest.mark.parametrize("stack", ["ask-eci", "ack-gpu"])
def test_on_ask_every_policy_says_that_nothing_enforces_it(stack: str) -> None:
    """ECI pods are outside any CNI's NetworkPolicy enforcement (docs/security.md): anyone
    reading the objects in an ASK cluster is told so; on ACK (Terway enforces) nothing is said."""
    from infra.config import load_stack
    from infra.manifests.network_policy import network_policies

    notes = [p["metadata"].get("annotations") for p in network_policies(load_stack(stack))]
    assert len(notes) == 4
    if stack == "ask-eci":
        note = "ECI (cluster.kind ask) enforces no NetworkPolicy: see docs/security.md"
        assert notes == [{"tftrain.io/not-enforced": note}] * 4
    else:
        assert notes == [None] * 4
