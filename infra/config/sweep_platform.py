"""Whether the cluster can hold a sweep's `parallel` trials, and hold the rest back.

What holds a waiting trial in the cluster is the platform, never a loop of ours: on ACK each
trial is one gang (ACK's coscheduling: none of its pods is bound until all of them fit) and
the GPU pool's `maxSize` is `parallel` trials' worth of nodes (one node per GPU replica, the
stack's rule for one run). The autoscaler adds no node past maxSize, so the scheduler binds at
most `parallel` gangs; the others' pods wait Pending (no node, so nothing billed) until a
trial ends and its nodes free up. Nothing else holds a trial back: on ASK every pod is its
own ECI instance, started and billed at once; an existing cluster's scheduler and nodes are
not the stack's. There, and for trials the GPU pool does not bound (CPU only, spot), every
trial runs at once or the sweep is refused. docs/cloud-evidence.md has the sources.

These are the cluster's rules: the local launcher runs `parallel` trials itself.
"""

from __future__ import annotations

from collections.abc import Iterator

from infra.config.instance_types import instance_shape
from infra.config.model import StackConfig
from infra.config.stack_file import PROJECT
from infra.config.sweep import at_once, on_demand_gpu_replicas

PARALLEL = f"{PROJECT}:sweep.parallel"


def platform_problems(config: StackConfig) -> list[str]:
    """Why the cluster cannot run this sweep as written (empty: it can, or no sweep)."""
    if config.sweep is None or not config.trials:
        return []
    return list(_problems(config))


def _problems(config: StackConfig) -> Iterator[str]:
    trials, parallel = len(config.trials), at_once(config)
    cluster = config.cluster
    per_trial = {on_demand_gpu_replicas(trial) for trial in config.trials}
    if cluster.kind == "ack" and cluster.role != "run" and max(per_trial):
        yield from _capacity_problems(config, max(per_trial), parallel)
    if parallel == trials:
        return  # every trial at once: nothing has to wait
    why = _nothing_holds_back(config, per_trial)
    if why is None:
        yield from _exact_cap_problems(config, max(per_trial), parallel)
    elif why.startswith(GANG):
        yield f"{GANG} = false: must be true when sweep.parallel < the trials: {why[len(GANG) :]}"
    else:
        yield (
            f"{PARALLEL} = {parallel}: must be {trials}, the number of trials (all at once), "
            f"or run the sweep with the local launcher, which honours any parallel: {why}"
        )


GANG = f"{PROJECT}:job.gangScheduling"


def _nothing_holds_back(config: StackConfig, per_trial: set[int]) -> str | None:
    """Why nothing in this cluster would hold a waiting trial back (None: the GPU pool does)."""
    cluster = config.cluster
    spot = any(g.spot and g.gpu_count and g.number for t in config.trials for g in t.replica_groups)
    reasons = (
        (cluster.kind == "existing", "an existing cluster's nodes are not the stack's to size"),
        (
            cluster.kind == "ask",
            "on ask every pod is its own ECI instance, started (and billed) at once: no pool "
            "holds a trial back",
        ),
        (cluster.role == "run", "a run stack cannot size its platform's GPU pool"),
        (
            not config.job.gang_scheduling,
            f"{GANG}without it a waiting trial's pods take GPU nodes one by one and hold them",
        ),
        (spot, "spot GPU replicas run on the spot pool, which does not bound the trials"),
        (not max(per_trial), "trials without GPU replicas are not bounded by the GPU pool"),
        (
            len(per_trial) > 1,
            "the trials need different numbers of GPU nodes "
            f"({', '.join(map(str, sorted(per_trial)))}): the pool cannot cap them at a count",
        ),
    )
    return next((why for applies, why in reasons if applies), None)


def _pool_nodes(config: StackConfig) -> int:
    pool = config.cluster.gpu_pool
    return pool.size or pool.max_size or 0


def _capacity_problems(config: StackConfig, per_trial: int, parallel: int) -> Iterator[str]:
    nodes = _pool_nodes(config)
    if nodes // per_trial < parallel:
        yield (
            f"{PARALLEL} = {parallel}: must be at most {nodes // per_trial}: cluster.gpuPool has "
            f"{nodes} nodes and a trial needs {per_trial} (one per GPU replica): raise "
            f"cluster.gpuPool.maxSize to {parallel * per_trial}, or leave it unset"
        )


def _exact_cap_problems(config: StackConfig, per_trial: int, parallel: int) -> Iterator[str]:
    """The pool must hold exactly `parallel` trials, one GPU replica per node."""
    nodes = _pool_nodes(config)
    if nodes // per_trial > parallel:
        yield (
            f"{PROJECT}:cluster.gpuPool.maxSize = {nodes}: must be {parallel * per_trial} (or "
            f"unset) so that at most sweep.parallel {parallel} trials run at once: {nodes} "
            f"nodes hold {nodes // per_trial} trials of {per_trial} GPU replicas"
        )
    gpus = {
        g.gpu_count for t in config.trials for g in t.replica_groups if g.gpu_count and g.number
    }
    shapes = [instance_shape(name) for name in config.cluster.gpu_pool.instance_types]
    packed = [shape.gpus for shape in shapes if shape is not None and shape.gpus > min(gpus)]
    if packed:
        yield (
            f"{PROJECT}:cluster.gpuPool.instanceTypes: must give each GPU replica a node of its "
            f"own when sweep.parallel < the trials: a node with {max(packed)} GPUs packs "
            f"replicas of {min(gpus)}, so more than {parallel} trials would run at once"
        )
