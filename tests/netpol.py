"""A small evaluator of Kubernetes NetworkPolicy semantics (networking.k8s.io/v1), for tests.

It answers "would this connection be allowed?" from the policies and the pods' labels, as the
API reference defines it:
- a pod is isolated for ingress (egress) when some policy of its namespace selects it with
  that direction in `policyTypes` (default: Ingress, plus Egress when egress rules exist);
- a connection is allowed when the source's egress and the destination's ingress both allow
  it; non-isolated directions allow everything; policies are additive;
- a rule matches when one of its peers matches (none listed = every source/destination) and
  one of its ports matches (none listed = every port); a peer with podSelector and
  namespaceSelector requires both; podSelector alone means the policy's own namespace;
- label selectors: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist).

ipBlock is applied to every address, pods included (Calico's and Terway's reading), unless
`ip_blocks_match_pods` is false: Cilium never matches in-cluster endpoints with ipBlock, and the
Kubernetes reference leaves pod IPs in an ipBlock to the implementation. The node-local
exception (a node always reaches its own pods) is not modelled: nothing here connects from a
node.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Policy = Mapping[str, Any]


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str
    labels: Mapping[str, str]
    ip: str
    named_ports: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class External:
    """An address outside the cluster's pods: a client, a node, the metadata service."""

    ip: str


Endpoint = Pod | External


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """LabelSelector semantics; the empty selector selects everything."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values")
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError(f"unknown selector operator {operator}")
    return True


def policy_types(policy: Policy) -> set[str]:
    spec = policy["spec"]
    if "policyTypes" in spec:
        return set(spec["policyTypes"])
    return {"Ingress", "Egress"} if spec.get("egress") else {"Ingress"}


def _in_block(block: Mapping[str, Any], ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    network = ipaddress.ip_network(block["cidr"])
    if address.version != network.version or address not in network:
        return False
    return not any(address in ipaddress.ip_network(e) for e in block.get("except") or [])


def _peer_matches(
    peer: Mapping[str, Any],
    policy_namespace: str,
    other: Endpoint,
    namespaces: Mapping[str, Mapping[str, str]],
    ip_blocks_match_pods: bool,
) -> bool:
    if "ipBlock" in peer:
        if isinstance(other, Pod) and not ip_blocks_match_pods:
            return False
        return _in_block(peer["ipBlock"], other.ip)
    if not isinstance(other, Pod):
        return False  # pod and namespace selectors select pods only
    if "namespaceSelector" in peer:
        namespace_ok = selects(peer["namespaceSelector"], namespaces[other.namespace])
    else:
        namespace_ok = other.namespace == policy_namespace
    pod_ok = selects(peer["podSelector"], other.labels) if "podSelector" in peer else True
    return namespace_ok and pod_ok


def _port_matches(
    ports: Sequence[Mapping[str, Any]] | None, port: int, protocol: str, target: Endpoint
) -> bool:
    if not ports:
        return True
    for entry in ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        wanted = entry.get("port")
        if wanted is None:
            return True
        if isinstance(wanted, str):  # a named port of the destination pod
            wanted = target.named_ports.get(wanted) if isinstance(target, Pod) else None
            if wanted is None:
                continue
        if wanted <= port <= entry.get("endPort", wanted):
            return True
    return False


def _applicable(policies: Iterable[Policy], pod: Pod, direction: str) -> list[Policy]:
    return [
        p
        for p in policies
        if p["metadata"]["namespace"] == pod.namespace
        and selects(p["spec"]["podSelector"], pod.labels)
        and direction in policy_types(p)
    ]


def isolated(policies: Iterable[Policy], pod: Pod, direction: str) -> bool:
    return bool(_applicable(policies, pod, direction))


def _allowed(
    policies: Iterable[Policy],
    subject: Pod,
    other: Endpoint,
    direction: str,
    port: int,
    protocol: str,
    port_owner: Endpoint,
    namespaces: Mapping[str, Mapping[str, str]],
    ip_blocks_match_pods: bool,
) -> bool:
    applicable = _applicable(policies, subject, direction)
    if not applicable:
        return True
    rules_key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    for policy in applicable:
        for rule in policy["spec"].get(rules_key) or []:
            peers = rule.get(peers_key) or []
            peer_ok = not peers or any(
                _peer_matches(
                    peer, policy["metadata"]["namespace"], other, namespaces, ip_blocks_match_pods
                )
                for peer in peers
            )
            if peer_ok and _port_matches(rule.get("ports"), port, protocol, port_owner):
                return True
    return False


def connection_allowed(
    policies: Sequence[Policy],
    source: Endpoint,
    destination: Endpoint,
    port: int,
    namespaces: Mapping[str, Mapping[str, str]],
    protocol: str = "TCP",
    ip_blocks_match_pods: bool = True,
) -> bool:
    """Would `source` reach `destination:port`? `namespaces` maps name to its labels."""
    common = (port, protocol, destination, namespaces, ip_blocks_match_pods)
    egress_ok = not isinstance(source, Pod) or _allowed(
        policies, source, destination, "Egress", *common
    )
    ingress_ok = not isinstance(destination, Pod) or _allowed(
        policies, destination, source, "Ingress", *common
    )
    return egress_ok and ingress_ok


def namespace_labels(name: str, labels: Mapping[str, str] | None = None) -> dict[str, str]:
    """A namespace's labels as the API server keeps them (the name label is automatic)."""
    return {**(labels or {}), "kubernetes.io/metadata.name": name}


def pods_of(objects: Iterable[Mapping[str, Any]], first_ip: str) -> list[Pod]:
    """One pod per Job / Deployment template, with consecutive addresses from `first_ip`."""
    pods: list[Pod] = []
    address = ipaddress.ip_address(first_ip)
    for obj in objects:
        if obj["kind"] not in ("Job", "Deployment"):
            continue
        template = obj["spec"]["template"]
        named = {
            port["name"]: port["containerPort"]
            for container in template["spec"]["containers"]
            for port in container.get("ports", [])
            if "name" in port
        }
        pods.append(
            Pod(
                name=obj["metadata"]["name"],
                namespace=obj["metadata"]["namespace"],
                labels=dict(template["metadata"]["labels"]),
                ip=str(address + len(pods)),
                named_ports=named,
            )
        )
    return pods
