"""Rules between keys: what Kubernetes, Alibaba Cloud or the trainer would refuse later.

Each rule names the key a user would change. They run once every key is valid on its own,
and all of them run, so a stack's problems are listed at once. One rule, one `rule(...)`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from infra.config.errors import problem
from infra.config.model import StackConfig
from infra.stack_file import PROJECT


def check_rules(stack: StackConfig) -> list[str]:
    problems: list[str] = []

    def rule(ok: Any, key: str, value: Any, allowed: str) -> None:
        if not ok:
            problems.append(problem(f"{PROJECT}:{key}", value, allowed))

    cluster, storage, board, hyper = (
        stack.cluster,
        stack.storage,
        stack.tensorboard,
        stack.hyperparams,
    )
    chief, worker, ps, network = stack.chief, stack.worker, stack.ps, stack.network
    # fmt: off
    for group in stack.replica_groups:
        rule(group.image or not group.number, f"{group.type}.image", group.image,
             f"a container image (or set {PROJECT}:image for all groups)")
    rule(ps.gpu_count == 0, "ps.gpuCount", ps.gpu_count,
         "0: parameter servers hold variables and do no GPU work")
    rule(board.image or not board.enabled, "tensorboard.image", board.image,
         f"a container image (or set {PROJECT}:image)")
    rule(not board.public or board.service_type == "LoadBalancer", "tensorboard.public",
         board.public, "false unless serviceType is LoadBalancer")
    # TensorBoard has no authentication: on the internet only behind an allow-list.
    rule(not board.public or board.allowed_source_ranges, "tensorboard.allowedSourceRanges",
         list(board.allowed_source_ranges),
         "a non-empty list of IPv4 CIDRs (who may reach TensorBoard) when public is true")
    rule(not board.allowed_source_ranges or board.service_type == "LoadBalancer",
         "tensorboard.allowedSourceRanges", list(board.allowed_source_ranges),
         "empty unless serviceType is LoadBalancer")

    # The topology and the strategy, as the trainer checks them when it starts.
    rule(worker.number or chief.number, "worker.number", worker.number,
         ">= 1 (or chief.number 1): someone has to train")
    rule(chief.number or not ps.number, "chief.number", chief.number,
         "1 when ps.number > 0: ParameterServerStrategy needs a chief")
    rule(worker.number or not ps.number, "worker.number", worker.number,
         ">= 1 when ps.number > 0: the chief dispatches to workers")
    rule(hyper.strategy != "parameter_server" or ps.number, "hyperparams.strategy",
         hyper.strategy, "auto or multi_worker_mirrored with 0 ps")
    rule(hyper.strategy != "multi_worker_mirrored" or not ps.number, "hyperparams.strategy",
         hyper.strategy, "auto or parameter_server when ps.number > 0")
    if stack.effective_strategy == "multi_worker_mirrored" and chief.number and worker.number:
        rule(max(chief.gpu_count, 1) == max(worker.gpu_count, 1), "chief.gpuCount",
             chief.gpu_count, "worker.gpuCount (or both <= 1): multi_worker_mirrored needs "
             "as many devices on every replica")
    replicas, strategy = stack.replicas_in_sync, stack.effective_strategy
    rule(hyper.batch_size % replicas == 0, "hyperparams.batchSize", hyper.batch_size,
         f"a multiple of {replicas}: {strategy} splits each batch over {replicas} replicas")

    # GPUs need nodes that have them; GPU nodes need work.
    pool = cluster.gpu_pool
    for group in (g for g in stack.replica_groups if g.gpu_count and g.number):
        # A spot group is served by the spot GPU pool (its own rule below).
        rule(cluster.kind != "ack" or group.spot or pool.size or pool.max_size,
             f"{group.type}.gpuCount",
             group.gpu_count, "0 while cluster.gpuPool has size 0 and maxSize 0 (no GPU nodes)")
        rule(cluster.kind != "ask" or cluster.eci_gpu_spec, f"{group.type}.gpuCount",
             group.gpu_count, "0 unless cluster.eciGpuSpec names an ECI GPU instance type")
    rule(cluster.kind != "ack" or not pool.size or stack.uses_gpu, "cluster.gpuPool.size",
         pool.size, "0 when no replica requests a GPU (an idle GPU pool is billed by the hour)")

    # Spot capacity: ECI spot pods on ask, the spot GPU pool on ack; an existing cluster's
    # nodes are not the stack's to choose.
    for group in (g for g in stack.replica_groups if g.spot and g.number):
        key = f"{group.type}.spot"
        rule(cluster.kind != "existing", key, True,
             "false on an existing cluster (its nodes are not the stack's)")
        rule(cluster.kind != "ack" or group.gpu_count, key, True,
             "false unless gpuCount > 0: on ack only the GPU pool has a spot twin")
        rule(cluster.kind != "ack" or not group.gpu_count or cluster.spot_gpu_pool_max_size, key,
             True, "false unless cluster.spotGpuPool.maxSize > 0 (the spot GPU pool)")
    rule(not cluster.spot_gpu_pool_max_size or cluster.kind == "ack",
         "cluster.spotGpuPool.maxSize", cluster.spot_gpu_pool_max_size,
         "0 unless cluster.kind is ack (ask has ECI spot pods: set <group>.spot)")

    # The cluster, its node pools and storage every node can reach.
    for name, pool in (("gpuPool", cluster.gpu_pool), ("cpuPool", cluster.cpu_pool)):
        rule(pool.max_size == 0 or pool.max_size >= max(pool.min_size, 1),
             f"cluster.{name}.maxSize", pool.max_size,
             "0 (fixed size) or >= minSize and >= 1 (autoscaling)")
        # Either a fixed size or a range: the provider would ignore one of them silently.
        rule(not (pool.size and pool.max_size), f"cluster.{name}.size", pool.size,
             "0 when maxSize > 0 (an autoscaling pool has no fixed size; unset maxSize or "
             "set it to 0 for a fixed pool)")
    rule(cluster.kind != "ack" or cluster.cpu_pool.size or cluster.cpu_pool.max_size,
         "cluster.cpuPool.size", cluster.cpu_pool.size,
         "> 0 (or maxSize > 0): ps and TensorBoard run on the CPU pool")
    rule(not cluster.image_cache or cluster.kind == "ask", "cluster.imageCache",
         cluster.image_cache, "false unless cluster.kind is ask (ImageCache is an ECI feature)")
    rule(storage.kind != "nas" or cluster.kind != "existing", "storage.kind", storage.kind,
         "nfs or hostPath when cluster.kind is existing (NAS needs the stack's VPC)")
    rule(storage.kind != "nfs" or storage.nfs_server, "storage.nfsServer", storage.nfs_server,
         "the NFS server's address when storage.kind is nfs")
    rule(storage.kind != "hostPath" or cluster.kind == "existing", "storage.kind", storage.kind,
         "nas or nfs on ack/ask: hostPath is node-local and pods move between nodes")

    # A looked-up zone can change between runs, and the vSwitch, the NAS file system (with
    # the data) and the cluster are replaced when it does: a cloud stack names its zone.
    rule(cluster.kind == "existing" or network.zone_id or network.vswitch_id, "network.zoneId",
         network.zone_id, "set when cluster.kind is ack or ask (e.g. cn-hangzhou-i), unless "
         "vswitchId is: the vSwitch, NAS file system and cluster are created in it")
    # The network: ACK refuses overlapping node, pod and service ranges, but only mid-deploy.
    rule(network.vpc_id or not network.vswitch_id, "network.vswitchId", network.vswitch_id,
         "empty unless vpcId is set too (an existing vSwitch lives in an existing VPC)")
    blocks = {key: ipaddress.IPv4Network(getattr(network, attribute)) for key, attribute in (
        ("vpcCidr", "vpc_cidr"), ("vswitchCidr", "vswitch_cidr"), ("podCidr", "pod_cidr"),
        ("serviceCidr", "service_cidr"))}
    # An existing vSwitch's real range is read from the cloud at deploy time instead.
    rule(network.vswitch_id or blocks["vswitchCidr"].subnet_of(blocks["vpcCidr"]),
         "network.vswitchCidr", network.vswitch_cidr, f"a block inside vpcCidr {network.vpc_cidr}")
    pairs = (("podCidr", "vpcCidr"), ("serviceCidr", "vpcCidr"), ("serviceCidr", "podCidr"))
    for key, other in pairs:
        rule(not blocks[key].overlaps(blocks[other]), f"network.{key}", str(blocks[key]),
             f"a block that does not overlap {other} {blocks[other]}")
    # Terway's pod vSwitch: inside the VPC's primary CIDR, apart from the nodes' vSwitch.
    if cluster.kind == "ack" and cluster.network_plugin == "terway":
        pods = ipaddress.IPv4Network(network.pod_vswitch_cidr)
        rule(pods.subnet_of(blocks["vpcCidr"]), "network.podVswitchCidr",
             network.pod_vswitch_cidr, f"a block inside vpcCidr {network.vpc_cidr}")
        rule(network.vswitch_id or not pods.overlaps(blocks["vswitchCidr"]),
             "network.podVswitchCidr", network.pod_vswitch_cidr,
             f"a block that does not overlap vswitchCidr {network.vswitch_cidr}")
    # fmt: on
    return problems
