"""How much of one node a pod may request: the instance type, less what ACK keeps for itself.

A pod whose requests exceed what a node of its pool can allocate stays Pending for ever, and
an autoscaled pool adds nodes up to maxSize for it (each billed, none used). The estimate:

    allocatable = capacity - ACK's reserve - eviction threshold     (ACK "Node resource
                                                                      reservation policy")
    room for a pod = allocatable - the DaemonSets the stack turns on

capped, in a pool the autoscaler grows, at ACK's guidance that one pod request at most 70 %
of a node (ACK "Node auto scaling FAQ": the autoscaler's estimate of a new node can be higher
than what the node then allocates). Every number is written out in `docs/cloud-evidence.md`.
ECI (ASK) pods get the whole instance type they name: no reserve, no DaemonSets.
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.config.instance_types import InstanceShape

# Memory the kernel keeps before the kubelet sees any: ACK's own example node (4 vCPU, 8 GiB)
# reports a capacity of 7,925,980 KiB of its 8,388,608.
KERNEL_SHARE = 7_925_980 / 8_388_608
# ACK's memory reserve (kube + system) is min(11 MiB x max pods + 255 MiB, 25 % of capacity).
# Max pods is taken at 256 (karpenter-provider-alibabacloud's Flannel default, more than
# Terway gives the small types): the reserve is never underestimated.
MAX_PODS = 256
EVICTION_MIB = 100  # the kubelet's default hard eviction threshold, memory.available<100Mi
AUTOSCALER_SHARE = 0.7


@dataclass(frozen=True)
class DaemonSet:
    name: str
    millicores: int
    memory_mib: int


# Requests per node of the DaemonSets every ACK node of this stack runs (sources in
# docs/cloud-evidence.md). kube-proxy's are not published: an allowance.
TERWAY = DaemonSet("terway-eniip", 350, 200)  # terway 100m/100Mi + policy 250m/100Mi
FLANNEL = DaemonSet("kube-flannel-ds", 100, 50)
CSI_PLUGIN = DaemonSet("csi-plugin", 130, 176)  # plugin 100m/128Mi + 3 registrars 10m/16Mi
KUBE_PROXY = DaemonSet("kube-proxy-worker", 100, 200)
NODE_PROBLEM_DETECTOR = DaemonSet("node-problem-detector", 10, 80)


def daemon_sets(network_plugin: str) -> tuple[DaemonSet, ...]:
    network = TERWAY if network_plugin == "terway" else FLANNEL
    return (network, CSI_PLUGIN, KUBE_PROXY, NODE_PROBLEM_DETECTOR)


@dataclass(frozen=True)
class Room:
    """The most one pod may request on one node; memory None when the type's is unknown."""

    millicores: int
    memory_mib: int | None
    gpus: int


def reserved_millicores(vcpus: int) -> int:
    """ACK's CPU reserve: 6 % of the first core, 1 % of the second, 0.5 % of the third and
    fourth, 0.25 % of every core above four."""
    tiers = ((1, 60), (1, 10), (2, 5))  # (cores, millicores reserved per core)
    reserved, left = 0.0, vcpus
    for cores, per_core in tiers:
        reserved += min(left, cores) * per_core
        left = max(left - cores, 0)
    return int(reserved + left * 2.5)


def reserved_memory_mib(capacity_mib: float) -> float:
    return min(11 * MAX_PODS + 255, 0.25 * capacity_mib)


def ack_node_room(shape: InstanceShape, network_plugin: str, autoscaled: bool) -> Room:
    sets = daemon_sets(network_plugin)
    millicores = shape.vcpus * 1000 - reserved_millicores(shape.vcpus)
    millicores -= sum(d.millicores for d in sets)
    memory: int | None = None
    if shape.memory_gib is not None:
        capacity = shape.memory_gib * 1024 * KERNEL_SHARE
        allocatable = capacity - reserved_memory_mib(capacity) - EVICTION_MIB
        free = allocatable - sum(d.memory_mib for d in sets)
        cap = AUTOSCALER_SHARE * shape.memory_gib * 1024 if autoscaled else free
        memory = int(min(free, cap))
    if autoscaled:
        millicores = min(millicores, int(AUTOSCALER_SHARE * shape.vcpus * 1000))
    return Room(millicores, memory, shape.gpus)


def eci_room(shape: InstanceShape) -> Room:
    """An ECI pod of a named type has all of it."""
    memory = shape.memory_gib * 1024 if shape.memory_gib is not None else None
    return Room(shape.vcpus * 1000, memory, shape.gpus)
