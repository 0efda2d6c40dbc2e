"""What a stack costs, worked from its validated config and the price table.

Two figures, as a reviewer weighs a change:
- per hour, what the stack keeps running whether or not a run trains: fixed node pools (and an
  autoscaled pool's minimum), the NAT gateway and its EIP, load balancers, the ECI pod of
  TensorBoard on ASK, the NAS file system and the bucket's stored data;
- at most, a run: what its replicas add while they run (GPU nodes the autoscaler adds for
  them on ACK, every pod's ECI instance on ASK) times `job.activeDeadlineSeconds`, after which
  Kubernetes stops the Job (it counts from the Job's creation, waiting included); a sweep is
  the sum over its trials.
An item the table has no price for is listed as unpriced with the reason, never estimated; a
total is then a lower bound, and a budget cannot be checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from infra.config import StackConfig
from infra.config.instance_types import cpu_cores, memory_mib
from infra.pricing.table import PriceTable

SECONDS_PER_HOUR = Decimal(3600)
# What Alibaba Cloud bills by use, which a config cannot foresee.
_BY_USE = "billed by use (traffic, connections), which the config cannot foresee"
# ECI's two rows: the price of a vCPU and of a GiB of memory, per second.
ECI_ROWS = ("eci.vcpu", "eci.memory")


@dataclass(frozen=True)
class Item:
    what: str
    currency: str = ""
    hourly: Decimal | None = None  # None: unpriced
    why: str = ""  # why unpriced

    @property
    def priced(self) -> bool:
        return self.hourly is not None


@dataclass(frozen=True)
class Totals:
    """Per currency, the sum of the priced items; the unpriced ones by name."""

    amounts: dict[str, Decimal] = field(default_factory=dict)
    unpriced: tuple[Item, ...] = ()


def totals(items: tuple[Item, ...], factor: Decimal = Decimal(1)) -> Totals:
    amounts: dict[str, Decimal] = {}
    for item in items:
        if item.hourly is not None:
            amounts[item.currency] = amounts.get(item.currency, Decimal(0)) + item.hourly * factor
    return Totals(amounts, tuple(item for item in items if not item.priced))


@dataclass(frozen=True)
class Pricer:
    table: PriceTable
    region: str
    zone: str = ""

    def _where(self, preposition: str) -> str:
        """Where a price was looked for: prices are per region, and a stack may set none."""
        if not self.region:
            return ": its stack file sets no alicloud:region, whose prices apply"
        return f" {preposition} {self.region} in the table"

    def instances(self, what: str, types: tuple[str, ...], count: int, spot: bool = False) -> Item:
        """`count` instances of one of `types` (a pool may get any: the dearest is the bound)."""
        rows = [self.table.find(name, self.region, self.zone) for name in types]
        hourly = [row.hourly(spot) if row else None for row in rows]
        missing = [name for name, price in zip(types, hourly, strict=True) if price is None]
        if missing:
            kind = "spot price" if spot else "price"
            why = f"no {kind} of {', '.join(missing)}{self._where('in')}"
            return Item(what, why=why)
        currencies = {row.currency for row in rows if row}
        if len(currencies) != 1:
            return Item(what, why=f"{', '.join(types)} are priced in several currencies")
        dearest = max(price for price in hourly if price is not None)
        return Item(what, currencies.pop(), dearest * count)

    def eci_pods(self, what: str, cpu: str, memory: str, count: int, spot: bool) -> Item:
        """ECI billed by vCPU and memory (the pod's requests, which equal its limits)."""
        if spot:
            return Item(what, why="ECI spot pods are billed at a market price")
        rows = [self.table.find(name, self.region, self.zone) for name in ECI_ROWS]
        by_core, by_gib = (row.hourly() if row else None for row in rows)
        currencies = {row.currency for row in rows if row}
        if by_core is None or by_gib is None or len(currencies) != 1:
            return Item(what, why=f"no ECI vCPU and memory prices{self._where('for')}")
        cores = Decimal(str(cpu_cores(cpu)))
        gibs = Decimal(str(memory_mib(memory))) / 1024
        return Item(what, currencies.pop(), (cores * by_core + gibs * by_gib) * count)

    def stored(self, what: str, item: str, amount: Decimal | None, why: str = "") -> Item:
        """Capacity billed per unit stored (`amount` GiB or GB), None: unknown amount."""
        row = self.table.find(item, self.region, self.zone)
        hourly = row.hourly() if row else None
        if row is None or hourly is None:
            return Item(what, why=f"no {item} price{self._where('for')}")
        if amount is None:
            return Item(what, why=why)
        return Item(what, row.currency, hourly * amount)


def _gib(quantity: str) -> Decimal:
    return Decimal(str(memory_mib(quantity))) / 1024


def _directory_bytes(path: Path) -> int | None:
    if not path.is_dir():
        return None
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _pools(config: StackConfig, pricer: Pricer) -> list[Item]:
    cluster = config.cluster
    items = []
    cpu = cluster.cpu_pool
    cpu_nodes = cpu.size or cpu.min_size
    if cpu_nodes:
        types = cpu.instance_types
        items.append(
            pricer.instances(f"CPU pool: {' / '.join(types)} x {cpu_nodes}", types, cpu_nodes)
        )
    gpu = cluster.gpu_pool
    gpu_nodes = gpu.size or gpu.min_size
    if gpu_nodes and (config.uses_gpu or not config.has_run):
        types = gpu.instance_types
        items.append(
            pricer.instances(f"GPU pool: {' / '.join(types)} x {gpu_nodes}", types, gpu_nodes)
        )
    return items


def _storage(config: StackConfig, pricer: Pricer, project: Path) -> list[Item]:
    items = []
    storage = config.storage
    if storage.kind == "nas" and not storage.file_system_id:
        kind = storage.nas_storage_type
        size = _gib(storage.size)
        items.append(
            pricer.stored(
                f"NAS {kind} file system, {storage.size} used", f"nas.{kind.lower()}", size
            )
        )
    if config.data.create_bucket:
        uploaded = config.data.local_input_dir
        found = _directory_bytes(project / uploaded) if uploaded else None
        size = None if found is None else Decimal(found) / 1024**3
        what = f"OSS bucket, {uploaded} uploaded" if uploaded else "OSS bucket"
        why = "its stored size is not in the config" if found is None else ""
        items.append(pricer.stored(what, "oss.standard-lrs", size, why))
    return items


def steady_items(config: StackConfig, pricer: Pricer, project: Path) -> tuple[Item, ...]:
    """What the stack keeps running, by the hour, whether or not a run trains."""
    kind = config.cluster.kind
    items: list[Item] = []
    if kind == "existing":
        why = "not this stack's (it runs on a cluster it did not create)"
        items.append(Item("the existing cluster's nodes", why=why))
    if config.makes_cloud:
        if kind == "ack":
            items += _pools(config, pricer)
        if config.network.nat_gateway:
            nat = pricer.instances(
                "NAT gateway (instance fee; CU fees by use)", ("nat.internet",), 1
            )
            items += [nat, Item("NAT gateway's EIP", why=_BY_USE)]
        items.append(Item(f"{kind.upper()} API server load balancer", why="no price in the table"))
        items += _storage(config, pricer, project)
    board = config.tensorboard
    if config.has_run and board.enabled and kind != "existing":
        if board.service_type == "LoadBalancer":
            items.append(Item("TensorBoard load balancer", why="no price in the table"))
        if kind == "ask":
            items.append(pricer.eci_pods("TensorBoard ECI pod", board.cpu, board.memory, 1, False))
    return tuple(items)


def run_items(config: StackConfig, pricer: Pricer) -> tuple[Item, ...]:
    """What one run adds, by the hour, while its replicas run."""
    kind = config.cluster.kind
    groups = [g for g in config.replica_groups if g.number]
    if kind == "ask":
        spec = config.cluster.eci_gpu_spec
        return tuple(
            pricer.instances(f"{g.type} x {g.number} on ECI {spec}", (spec,), g.number, g.spot)
            if g.gpu_count
            else pricer.eci_pods(
                f"{g.type} x {g.number} on ECI ({g.cpu} vCPU, {g.memory})",
                g.cpu,
                g.memory,
                g.number,
                g.spot,
            )
            for g in groups
        )
    if kind == "existing":
        why = "the existing cluster's nodes are not this stack's"
        return (Item(f"{len(groups)} replica groups on the existing cluster", why=why),)
    if kind != "ack":
        return ()
    gpu_groups = [g for g in groups if g.gpu_count]
    if config.cluster.role == "run":
        return tuple(
            Item(f"{g.type} x {g.number}: GPU nodes of {config.cluster.platform_stack}", why="its "
                 "pool's instance types are the platform stack's, priced in its review")
            for g in gpu_groups
        )  # fmt: skip
    return _ack_gpu_nodes(config, gpu_groups, pricer)


def _ack_gpu_nodes(config: StackConfig, groups: list, pricer: Pricer) -> tuple[Item, ...]:
    """One GPU node per GPU replica (a pod runs on one node), beyond the pool's always-on
    nodes and up to its maximum; spot replicas on the spot pool, at the spot price."""
    pool = config.cluster.gpu_pool
    types = pool.instance_types
    on_demand = sum(g.number for g in groups if not g.spot)
    always_on = pool.size or pool.min_size
    ceiling = pool.size or (pool.max_size or 0)
    added = max(0, min(on_demand, ceiling) - always_on)
    items = []
    if added:
        items.append(
            pricer.instances(f"GPU nodes added: {' / '.join(types)} x {added}", types, added)
        )
    spot = sum(g.number for g in groups if g.spot)
    spot_nodes = min(spot, config.cluster.spot_gpu_pool.max_size)
    if spot_nodes:
        what = f"spot GPU nodes: {' / '.join(types)} x {spot_nodes}"
        items.append(pricer.instances(what, types, spot_nodes, spot=True))
    return tuple(items)


@dataclass(frozen=True)
class StackCost:
    steady: tuple[Item, ...]
    runs: tuple[tuple[Item, ...], ...]  # per run: a sweep's trials, or the stack's one run
    deadline: int | None  # job.activeDeadlineSeconds: the most a run's Jobs live
    is_sweep: bool

    def run_most(self, index: int) -> Totals:
        """The most run `index` can cost (needs a deadline)."""
        hours = Decimal(self.deadline or 0) / SECONDS_PER_HOUR
        return totals(self.runs[index], hours)

    def largest_run(self) -> Totals:
        """The dearest run's bound (its trials may differ in replicas)."""
        bounds = [self.run_most(i) for i in range(len(self.runs))]
        return max(
            bounds, key=lambda t: (len(t.unpriced), sum(t.amounts.values())), default=Totals()
        )

    def sweep_most(self) -> Totals:
        return totals(
            tuple(item for run in self.runs for item in run),
            Decimal(self.deadline or 0) / SECONDS_PER_HOUR,
        )


def stack_cost(config: StackConfig, table: PriceTable, region: str, project: Path) -> StackCost:
    pricer = Pricer(table, region, config.network.zone_id)
    runs = tuple(run_items(run, pricer) for run in config.runs) if config.has_run else ()
    return StackCost(
        steady=steady_items(config, pricer, project),
        runs=runs,
        deadline=config.job.active_deadline_seconds,
        is_sweep=config.sweep is not None,
    )
