"""What one priced item costs, row by row, against a table written here with round prices.

Every amount is worked in its comment from TABLE's rows (a unit's hours: hour 1, vcpu-second
and gib-second 1/3600, gib-month 720), never read from the code."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from infra.pricing.cost import Item, Pricer, StackCost, totals
from infra.pricing.table import parse_table

HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
    "Price,SpotPrice,Unit,Currency,Source,FetchedOn\n"
)
ROWS = """\
ecs.a,4,16,,,r1,,2,0.5,hour,CNY,https://example.com/a,2026-11-01
ecs.a,4,16,,,r1,r1-z,3,,hour,CNY,https://example.com/a-z,2026-11-01
ecs.b,8,32,,,r1,,5,1,hour,CNY,https://example.com/b,2026-11-01
ecs.u,4,16,,,r1,,1,,hour,USD,https://example.com/u,2026-11-01
eci.vcpu,1,,,,r1,,0.0001,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r1,,0.00001,,gib-second,CNY,https://example.com/eci,2026-11-01
eci.vcpu,1,,,,r2,,0.0001,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r2,,0.00001,,gib-second,USD,https://example.com/eci,2026-11-01
eci.vcpu,1,,,,r3,,0.0001,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r4,,0.00001,,gib-second,CNY,https://example.com/eci,2026-11-01
eci.vcpu,1,,,,r5,,,0.00005,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r5,,0.00001,,gib-second,CNY,https://example.com/eci,2026-11-01
nas.x,,,,,r1,,0.72,,gib-month,CNY,https://example.com/nas,2026-11-01
nas.x,,,,,r1,r1-z,1.44,,gib-month,CNY,https://example.com/nas,2026-11-01
eci.vcpu,1,,,,r1,r1-z,0.0002,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,r1,r1-z,0.00002,,gib-second,CNY,https://example.com/eci,2026-11-01
nas.spot-only,,,,,r1,,,0.72,gib-month,CNY,https://example.com/nas,2026-11-01
"""
TABLE = parse_table(HEADER + ROWS, Path("t.csv"))


def pricer(region: str = "r1", zone: str = "") -> Pricer:
    return Pricer(TABLE, region, zone)


def test_a_pool_is_priced_at_its_dearest_type_times_its_nodes() -> None:
    # ecs.a 2, ecs.b 5 CNY/h: a pool of either is bounded by 5; 3 nodes: 15.
    assert pricer().instances("pool", ("ecs.a", "ecs.b"), 3) == Item("pool", "CNY", Decimal(15))


def test_the_zone_s_own_row_wins_over_the_region_s() -> None:
    # ecs.a: 3 CNY/h in r1-z, 2 in the rest of r1; 2 nodes.
    assert pricer(zone="r1-z").instances("p", ("ecs.a",), 2).hourly == Decimal(6)
    assert pricer(zone="r1-y").instances("p", ("ecs.a",), 2).hourly == Decimal(4)
    assert pricer().instances("p", ("ecs.a",), 2).hourly == Decimal(4)


def test_spot_nodes_are_priced_at_the_spot_price() -> None:
    # Spot: ecs.a 0.5, ecs.b 1: bounded by 1; 2 nodes: 2.
    assert pricer().instances("s", ("ecs.a", "ecs.b"), 2, spot=True) == Item("s", "CNY", Decimal(2))


def test_types_without_a_price_are_named_and_nothing_is_estimated() -> None:
    assert pricer().instances("p", ("ecs.a", "ecs.c", "ecs.d"), 1) == Item(
        "p", why="no price of ecs.c, ecs.d in r1 in the table"
    )
    # The zone's row has no spot price, though the region's has: the zone's row is the one.
    assert pricer(zone="r1-z").instances("p", ("ecs.a",), 1, spot=True) == Item(
        "p", why="no spot price of ecs.a in r1 in the table"
    )


def test_types_priced_in_two_currencies_are_not_added_up() -> None:
    assert pricer().instances("p", ("ecs.a", "ecs.u"), 1) == Item(
        "p", why="ecs.a, ecs.u are priced in several currencies"
    )


def test_an_eci_pod_is_its_vcpus_and_gib_at_their_prices() -> None:
    """0.0001 CNY per vCPU-second is 0.36 an hour, 0.00001 per GiB-second 0.036: a pod of
    500m and 2Gi costs 0.18 + 0.072 = 0.252 CNY/h; 3 pods 0.756."""
    assert pricer().eci_pods("pods", "500m", "2Gi", 3, spot=False) == Item(
        "pods", "CNY", Decimal("0.756")
    )


@pytest.mark.parametrize(
    "region",
    [
        "r2",  # vCPU in CNY, memory in USD
        "r3",  # a vCPU price only
        "r4",  # a memory price only
        "r5",  # a vCPU row with a spot price but no price
        "r9",  # no ECI rows
    ],
)
def test_an_eci_pod_without_both_prices_in_one_currency_is_unpriced(region: str) -> None:
    assert pricer(region).eci_pods("pods", "1", "1Gi", 1, spot=False) == Item(
        "pods", why=f"no ECI vCPU and memory prices for {region} in the table"
    )


def test_the_zone_s_eci_and_storage_rows_win_too() -> None:
    """In r1-z each price is twice r1's: the pod of 500m and 2Gi x 3 costs 1.512 CNY/h; 10 GiB
    of nas.x 0.02."""
    assert pricer(zone="r1-z").eci_pods("pods", "500m", "2Gi", 3, spot=False).hourly == (
        Decimal("1.512")
    )
    assert pricer(zone="r1-z").stored("NAS", "nas.x", Decimal(10)).hourly == Decimal("0.02")


def test_eci_spot_pods_are_unpriced_as_a_market_price() -> None:
    assert pricer().eci_pods("pods", "1", "1Gi", 1, spot=True) == Item(
        "pods", why="ECI spot pods are billed at a market price"
    )


def test_stored_capacity_is_its_amount_at_the_hourly_price() -> None:
    # 0.72 CNY per GiB-month is 0.001 an hour (720 hours); 10 GiB: 0.01.
    assert pricer().stored("NAS", "nas.x", Decimal(10)) == Item("NAS", "CNY", Decimal("0.01"))
    assert pricer().stored("NAS", "nas.x", None, "size unknown") == Item("NAS", why="size unknown")
    for item in ("nas.y", "nas.spot-only"):  # no row, or a row without a price
        assert pricer().stored("NAS", item, Decimal(10)) == Item(
            "NAS", why=f"no {item} price for r1 in the table"
        )


def test_totals_add_up_by_currency_and_keep_the_unpriced() -> None:
    unpriced = Item("lb", why="no price")
    found = totals(
        (Item("a", "CNY", Decimal(2)), Item("b", "USD", Decimal(1)), Item("c", "CNY", Decimal(3)),
         unpriced),
        Decimal(2),
    )  # fmt: skip
    assert found.amounts == {"CNY": Decimal(10), "USD": Decimal(2)}
    assert found.unpriced == (unpriced,)


def test_a_run_s_most_is_its_hourly_cost_for_its_deadline() -> None:
    """Deadline 5400 s is 1.5 h. Trial 0: 4 CNY/h, 6 at most; trial 1: 2 CNY/h plus an
    unpriced item, 3 at most. The dearest run is the one that cannot be fully priced (its
    bound is unknown); the sweep: (4 + 2) x 1.5 = 9 plus the unpriced item."""
    lb = Item("lb", why="no price")
    runs = ((Item("w", "CNY", Decimal(4)),), (Item("w", "CNY", Decimal(2)), lb))
    cost = StackCost(steady=(), runs=runs, deadline=5400, is_sweep=True)
    assert cost.run_most(0).amounts == {"CNY": Decimal(6)}
    assert cost.run_most(1).amounts == {"CNY": Decimal(3)}
    assert cost.largest_run().unpriced == (lb,)
    assert cost.sweep_most().amounts == {"CNY": Decimal(9)}
    # Both priced, the dearer second: its 4 CNY for the 1 h deadline.
    cheap, dear = (Item("w", "CNY", Decimal(2)),), (Item("w", "CNY", Decimal(4)),)
    priced = StackCost(steady=(), runs=(cheap, dear), deadline=3600, is_sweep=True)
    assert priced.largest_run().amounts == {"CNY": Decimal(4)}
    assert StackCost(steady=(), runs=(), deadline=3600, is_sweep=False).largest_run().amounts == {}


# --- A stack's items, worked from its config ------------------------------------------------

STACK_ROWS = """\
ecs.g7.xlarge,4,16,,,cn-hangzhou,,1.2,,hour,CNY,https://example.com/g7,2026-11-01
ecs.g7.xlarge,4,16,,,cn-hangzhou,cn-hangzhou-i,1.5,,hour,CNY,https://example.com/g7,2026-11-01
ecs.gn6i-c4g1.xlarge,4,15,T4,1,cn-hangzhou,,8,2,hour,CNY,https://example.com/gn6i,2026-11-01
nat.internet,,,,,cn-hangzhou,,0.5,,hour,CNY,https://example.com/nat,2026-11-01
nas.performance,,,,,cn-hangzhou,,0.72,,gib-month,CNY,https://example.com/nas,2026-11-01
nas.capacity,,,,,cn-hangzhou,,0.36,,gib-month,CNY,https://example.com/nas,2026-11-01
oss.standard-lrs,,,,,cn-hangzhou,,0.72,,gb-month,CNY,https://example.com/oss,2026-11-01
eci.vcpu,1,,,,cn-hangzhou,,0.0001,,vcpu-second,CNY,https://example.com/eci,2026-11-01
eci.memory,,1,,,cn-hangzhou,,0.00001,,gib-second,CNY,https://example.com/eci,2026-11-01
"""
STACK_TABLE = parse_table(HEADER + STACK_ROWS, Path("t.csv"))
GPU = "ecs.gn6i-c4g1.xlarge"
MNIST = "trainer/data/mnist"  # must exist in the repository; its size is read under `project`
NO_PRICE = "no price in the table"
BY_USE = "billed by use (traffic, connections), which the config cannot foresee"


def ack(**sections: dict) -> dict:
    """An ACK stack: a CPU pool of 2 g7 nodes, a GPU pool of gn6i from 1 to 3 nodes, 3 GPU
    workers, NAS Performance 10Gi, a bucket it creates and fills from MNIST."""
    config = {
        "image": IMAGE,
        "cluster": {
            "kind": "ack",
            "gpuPool": {"instanceTypes": [GPU], "minSize": 1, "maxSize": 3},
            "cpuPool": {"instanceTypes": ["ecs.g7.xlarge"], "size": 2},
        },
        "network": {"zoneId": "cn-hangzhou-i"},
        "storage": {"kind": "nas", "size": "10Gi"},
        "data": {"createBucket": True, "localInputDir": MNIST, "inputPrefix": "mnist/"},
        "worker": {"number": 3, "gpuCount": 1, "cpu": "2", "memory": "8Gi"},
    }
    for name, values in sections.items():
        config[name] = {**config.get(name, {}), **values}
    return config


IMAGE = "registry.example.com/tftrain/trainer:1"


def items(found: tuple[Item, ...]) -> list[tuple[str, str, Decimal | None, str]]:
    return [(i.what, i.currency, i.hourly, i.why) for i in found]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose MNIST directory holds one 1 GiB (sparse) file: 1 GiB stored."""
    directory = tmp_path / MNIST
    directory.mkdir(parents=True)
    with (directory / "data.bin").open("wb") as out:
        out.truncate(1024**3)
    return tmp_path


def stack_items(raw: dict, project: Path) -> tuple[list, list]:
    from infra.config import parse_config
    from infra.pricing.cost import stack_cost

    cost = stack_cost(parse_config(raw), STACK_TABLE, "cn-hangzhou", project)
    return items(cost.steady), [items(run) for run in cost.runs]


def test_an_ack_stack_keeps_its_pools_nat_storage_and_board_running(project: Path) -> None:
    """CPU pool 2 x 1.5 = 3 (the stack's zone's price, not the region's 1.2); GPU pool's
    minimum 1 x 8; NAT 0.5; NAS 10 GiB x 0.72 / 720 = 0.01; the bucket 1 GiB x 0.001 = 0.001.
    A run: 3 GPU workers on a pool of 1 to 3 nodes adds 2 nodes, 16 CNY/h; the chief and ps
    run on the CPU pool, already counted."""
    steady, runs = stack_items(ack(), project)
    assert steady == [
        ("CPU pool: ecs.g7.xlarge x 2", "CNY", Decimal(3), ""),
        (f"GPU pool: {GPU} x 1", "CNY", Decimal(8), ""),
        ("NAT gateway (instance fee; CU fees by use)", "CNY", Decimal("0.5"), ""),
        ("NAT gateway's EIP", "", None, BY_USE),
        ("ACK API server load balancer", "", None, NO_PRICE),
        ("NAS Performance file system, 10Gi used", "CNY", Decimal("0.01"), ""),
        (f"OSS bucket, {MNIST} uploaded", "CNY", Decimal("0.001"), ""),
        ("TensorBoard load balancer", "", None, NO_PRICE),
    ]
    assert runs == [[(f"GPU nodes added: {GPU} x 2", "CNY", Decimal(16), "")]]


def test_what_an_ack_stack_leaves_out(project: Path) -> None:
    """An existing NAS file system, a bucket without an upload (its size is unknown), a
    ClusterIP TensorBoard, and a GPU pool that scales from 0: none of them is an hourly item,
    except the bucket, unpriced."""
    steady, _ = stack_items(
        ack(
            cluster={"gpuPool": {"instanceTypes": [GPU], "maxSize": 3}},
            storage={"fileSystemId": "0a1b2c3d4e"},
            data={"localInputDir": ""},
            tensorboard={"serviceType": "ClusterIP"},
        ),
        project,
    )
    assert steady == [
        ("CPU pool: ecs.g7.xlarge x 2", "CNY", Decimal(3), ""),
        ("NAT gateway (instance fee; CU fees by use)", "CNY", Decimal("0.5"), ""),
        ("NAT gateway's EIP", "", None, BY_USE),
        ("ACK API server load balancer", "", None, NO_PRICE),
        ("OSS bucket", "", None, "its stored size is not in the config"),
    ]


def test_a_gpu_pool_is_kept_only_for_gpu_replicas_or_a_platform(project: Path) -> None:
    """A CPU-only run keeps no GPU pool though its minimum is 1; a platform (no run) keeps
    its fixed size (2 x 8 = 16) and NAS Capacity 10 GiB x 0.36 / 720 = 0.005."""
    cpu_only, _ = stack_items(ack(worker={"gpuCount": 0}), project)
    assert not [what for what, *_ in cpu_only if what.startswith("GPU pool")]
    raw = ack(
        cluster={"role": "platform", "gpuPool": {"instanceTypes": [GPU], "size": 2}},
        storage={"nasStorageType": "Capacity"},
    )
    del raw["image"], raw["worker"]  # a platform has no run
    platform, runs = stack_items(raw, project)
    assert (f"GPU pool: {GPU} x 2", "CNY", Decimal(16), "") in platform
    assert ("NAS Capacity file system, 10Gi used", "CNY", Decimal("0.005"), "") in platform
    assert not [what for what, *_ in platform if what.startswith("TensorBoard")]
    assert runs == []


def test_spot_gpu_replicas_run_on_the_spot_pool_at_the_spot_price(project: Path) -> None:
    """3 on-demand GPU workers on a pool of 1 to 3 (2 added, 16) and a spot evaluator with a
    GPU on a spot pool of at most 1 node: 1 x 2 = 2 CNY/h."""
    _, runs = stack_items(
        ack(
            cluster={"spotGpuPool": {"maxSize": 1}},
            evaluator={"number": 1, "gpuCount": 1, "spot": True, "cpu": "2", "memory": "8Gi"},
        ),
        project,
    )
    assert runs == [
        [
            (f"GPU nodes added: {GPU} x 2", "CNY", Decimal(16), ""),
            (f"spot GPU nodes: {GPU} x 1", "CNY", Decimal(2), ""),
        ]
    ]


@pytest.mark.parametrize(
    ("pool", "added"),
    [
        ({"minSize": 0, "maxSize": 3}, 3),  # every replica a node the autoscaler adds
        ({"minSize": 3, "maxSize": 3}, 0),  # all always on: the run adds nothing
        ({"minSize": 1, "maxSize": 5}, 2),  # 3 replicas, 1 always on
        ({"size": 3}, 0),  # a fixed pool adds nothing
    ],
)
def test_the_nodes_a_run_adds_are_its_replicas_beyond_the_always_on(
    pool: dict, added: int, project: Path
) -> None:
    _, [run] = stack_items(ack(cluster={"gpuPool": {"instanceTypes": [GPU], **pool}}), project)
    expected = [(f"GPU nodes added: {GPU} x {added}", "CNY", 8 * Decimal(added), "")]
    assert run == (expected if added else [])


def test_an_existing_cluster_s_nodes_are_not_this_stack_s(project: Path) -> None:
    steady, runs = stack_items({"image": IMAGE}, project)
    assert steady == [
        ("the existing cluster's nodes", "", None, "not this stack's (it runs on a cluster "
         "it did not create)")
    ]  # fmt: skip
    # chief, 2 workers and a ps by default: three groups.
    why = "the existing cluster's nodes are not this stack's"
    assert runs == [[("3 replica groups on the existing cluster", "", None, why)]]


def test_an_ask_stack_pays_its_pods_by_ecs_spec_or_by_vcpu_and_gib(project: Path) -> None:
    """TensorBoard's pod (500m, 1Gi): 0.5 x 0.36 + 1 x 0.036 = 0.216 CNY/h. A run: 2 GPU
    workers on ECI gn6i at 8 = 16; the chief (1 vCPU, 2Gi) 0.36 + 0.072 = 0.432; the ps on
    spot ECI, a market price."""
    raw = {
        "image": IMAGE,
        "cluster": {"kind": "ask", "eciGpuSpec": GPU},
        "network": {"zoneId": "cn-hangzhou-i", "natGateway": False},
        "storage": {"kind": "nas", "size": "10Gi"},
        "worker": {"number": 2, "gpuCount": 1, "cpu": "4", "memory": "15Gi"},
        "ps": {"spot": True},
    }
    steady, runs = stack_items(raw, project)
    assert steady == [
        ("ASK API server load balancer", "", None, NO_PRICE),
        ("NAS Performance file system, 10Gi used", "CNY", Decimal("0.01"), ""),
        ("TensorBoard load balancer", "", None, NO_PRICE),
        ("TensorBoard ECI pod", "CNY", Decimal("0.216"), ""),
    ]
    assert runs == [
        [
            ("chief x 1 on ECI (1 vCPU, 2Gi)", "CNY", Decimal("0.432"), ""),
            (f"worker x 2 on ECI {GPU}", "CNY", Decimal(16), ""),
            ("ps x 1 on ECI (1 vCPU, 1Gi)", "", None, "ECI spot pods are billed at a market price"),
        ]
    ]


def test_a_run_stack_s_gpu_nodes_are_its_platform_s(project: Path) -> None:
    raw = {
        "image": IMAGE,
        "cluster": {"kind": "ack", "role": "run", "platformStack": "org/tftrain/platform-ack"},
        "worker": {"number": 2, "gpuCount": 1},
    }
    steady, runs = stack_items(raw, project)
    assert steady == [("TensorBoard load balancer", "", None, NO_PRICE)]
    why = "its pool's instance types are the platform stack's, priced in its review"
    assert runs == [[("worker x 2: GPU nodes of org/tftrain/platform-ack", "", None, why)]]


def test_a_pool_of_several_types_names_them_all(project: Path) -> None:
    """ecs.g7.xlarge (1.5 in the zone) or ecs.gn6i-c4g1.xlarge (8): bounded by 8; 2 nodes 16."""
    types = ["ecs.g7.xlarge", GPU]
    steady, _ = stack_items(ack(cluster={"cpuPool": {"instanceTypes": types, "size": 2}}), project)
    assert steady[0] == (f"CPU pool: ecs.g7.xlarge / {GPU} x 2", "CNY", Decimal(16), "")


def test_spot_gpu_pods_on_ask_are_priced_at_the_spot_price(project: Path) -> None:
    """gn6i's spot price is 2 CNY/h: 2 spot GPU workers on ECI, 4."""
    raw = {
        "image": IMAGE,
        "cluster": {"kind": "ask", "eciGpuSpec": GPU},
        "network": {"zoneId": "cn-hangzhou-i"},
        "worker": {"number": 2, "gpuCount": 1, "cpu": "4", "memory": "15Gi", "spot": True},
    }
    _, [run] = stack_items(raw, project)
    assert (f"worker x 2 on ECI {GPU}", "CNY", Decimal(4), "") in run


def test_a_gpu_pool_of_several_types_names_them_on_every_line(project: Path) -> None:
    types = [GPU, "ecs.gn6i-c8g1.2xlarge"]  # the second without a row: unpriced, still named
    steady, [run] = stack_items(
        ack(
            cluster={
                "gpuPool": {"instanceTypes": types, "minSize": 1, "maxSize": 3},
                "spotGpuPool": {"maxSize": 1},
            },
            evaluator={"number": 1, "gpuCount": 1, "spot": True, "cpu": "2", "memory": "8Gi"},
        ),
        project,
    )
    names = f"{GPU} / ecs.gn6i-c8g1.2xlarge"
    assert f"GPU pool: {names} x 1" in [what for what, *_ in steady]
    assert [what for what, *_ in run] == [
        f"GPU nodes added: {names} x 2",
        f"spot GPU nodes: {names} x 1",
    ]
