"""The cost lines and the budget, against price rows worked by hand.

Every expected amount below is computed in its comment from the table's rows (the committed
infra/pricing/prices.csv, or a test table written here), never read from the code."""

from __future__ import annotations

import copy
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from infra.config import ConfigError, parse_config, read_stack_entries, stack_file
from infra.config.stack_file import read_stack
from infra.pricing.budget import budget_problems, budget_refusals
from infra.pricing.cost import stack_cost, totals
from infra.pricing.table import TABLE, load_table, parse_table
from infra.render.cost_lines import cost_lines, price_side
from tests.pulumi_mocks import run_program

HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
    "Price,SpotPrice,Unit,Currency,Source,FetchedOn\n"
)
# A table with the GPU and CPU types the stacks use, at round made-up prices, next to the
# committed ECI rows: amounts that are easy to work by hand.
TEST_ROWS = """\
ecs.gn6i-c4g1.xlarge,4,15,T4,1,cn-hangzhou,,8,2,hour,CNY,https://example.com/gn6i,2026-11-01
ecs.g7.xlarge,4,16,,,cn-hangzhou,,1.5,,hour,CNY,https://example.com/g7,2026-11-02
eci.vcpu,1,,,,cn-hangzhou,,0.000049,,vcpu-second,CNY,https://example.com/eci,2026-11-03
eci.memory,,1,,,cn-hangzhou,,0.00000613,,gib-second,CNY,https://example.com/eci,2026-11-03
"""
TODAY = date(2026, 11, 27)


def priced_table() -> Any:
    return parse_table(HEADER + TEST_ROWS, Path("test-prices.csv"))


def entries(stack: str) -> dict[str, Any]:
    return copy.deepcopy(read_stack_entries(stack_file(stack)))


def write(tmp_path: Path, name: str, config: dict[str, Any]) -> Any:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return read_stack(path)


def config_of(config: dict[str, Any]) -> Any:
    return parse_config(
        {k.removeprefix("tftrain:"): v for k, v in config.items() if k.startswith("tftrain:")}
    )


def test_the_committed_table_is_dated_and_sourced_row_by_row() -> None:
    table = load_table()
    assert table.rows
    for row in table.rows:
        assert row.source.startswith("https://"), row
        assert row.fetched_on <= date.today(), row
    # Alibaba's ECI billing page: 0.000049 CNY per vCPU-second, 0.00000613 CNY per GiB-second.
    vcpu = table.find("eci.vcpu", "cn-hangzhou")
    memory = table.find("eci.memory", "cn-hangzhou")
    assert (vcpu.price, vcpu.unit, vcpu.currency) == (Decimal("0.000049"), "vcpu-second", "CNY")
    assert (memory.price, memory.unit) == (Decimal("0.00000613"), "gib-second")


def test_a_table_older_than_90_days_is_warned_about() -> None:
    table = priced_table()  # its oldest row: 2026-11-01
    assert table.age_warning(date(2027, 1, 30)) is None  # 90 days
    assert "91 days old" in table.age_warning(date(2027, 1, 31))


def test_ask_eci_per_hour_with_the_committed_table() -> None:
    """TensorBoard's ECI pod (500m, 1Gi) is what ask-eci keeps running that the table prices:
    0.5 x 0.000049 x 3600 = 0.0882 plus 1 x 0.00000613 x 3600 = 0.022068: 0.110268 CNY/h;
    the NAT gateway's instance fee is 0.034 USD/h; the rest has no row."""
    config = parse_config(read_stack(stack_file("ask-eci")).config)
    cost = stack_cost(config, load_table(TABLE), "cn-hangzhou", Path("."))
    found = totals(cost.steady)
    assert found.amounts == {"CNY": Decimal("0.110268"), "USD": Decimal("0.034")}
    assert sorted(item.what for item in found.unpriced) == [
        "ASK API server load balancer",
        "NAS Performance file system, 5Gi used",
        "NAT gateway's EIP",
        "TensorBoard load balancer",
    ]


def test_a_gpu_stack_shows_cny_per_hour_before_and_after_with_the_table_date(
    tmp_path: Path,
) -> None:
    """ack-gpu's CPU pool of ecs.g7.xlarge at 1.5 CNY/h: 2 nodes 3.00 CNY/h, 3 nodes 4.50.
    One run (activeDeadlineSeconds 7200): 2 GPU workers, each a node the autoscaler adds
    (the pool scales from 0) at 8 CNY/h for 2 h: 2 x 8 x 2 = 32.00 CNY."""
    before = entries("ack-gpu")
    before["tftrain:job"]["activeDeadlineSeconds"] = 7200
    after = copy.deepcopy(before)
    after["tftrain:cluster"]["cpuPool"]["size"] = 3
    table = priced_table()
    lines = cost_lines(
        price_side(write(tmp_path, "a", before), table),
        price_side(write(tmp_path, "b", after), table),
        table,
        TODAY,
    )
    assert lines[0] == "Cost (Alibaba Cloud list prices, test-prices.csv of 2026-11-01):"
    assert lines[1].startswith(
        "  per hour, kept running: 3.00 CNY + unpriced → 4.50 CNY + unpriced"
    )
    assert lines[2] == (
        "  one run at most: 32.00 CNY, unchanged (replicas x price x 7200 s "
        "job.activeDeadlineSeconds)"
    )
    assert "  CPU pool: ecs.g7.xlarge x 3: 4.50 CNY/h" in lines
    assert "  per run, GPU nodes added: ecs.gn6i-c4g1.xlarge x 2: 16.00 CNY/h" in lines


def ask_sweep() -> dict[str, Any]:
    """ask-eci with a 1-hour deadline and a sweep of two learning rates."""
    config = entries("ask-eci")
    config["tftrain:job"]["activeDeadlineSeconds"] = 3600
    config["tftrain:sweep"] = {
        "parameters": {"hyperparams.learningRate": {"values": [0.001, 0.01]}}
    }
    return config


def test_a_sweep_shows_its_maximum_cost(tmp_path: Path) -> None:
    """Per trial, per hour: 2 GPU workers on ECI ecs.gn6i-c4g1.xlarge at 8 = 16; the chief
    (1 vCPU, 2Gi) 0.1764 + 2 x 0.022068 = 0.220536; the ps (1 vCPU, 1Gi) 0.1764 + 0.022068 =
    0.198468: 16.419004 CNY for its 1 h deadline. Two trials: 32.838008 CNY."""
    config = ask_sweep()
    table = priced_table()
    side = price_side(write(tmp_path, "s", config), table)
    assert side.cost.run_most(0).amounts == {"CNY": Decimal("16.419004")}
    assert side.cost.sweep_most().amounts == {"CNY": Decimal("32.838008")}
    lines = cost_lines(price_side(None, table), side, table, TODAY)
    assert (
        "  one run at most: none → 16.42 CNY (replicas x price x 3600 s job.activeDeadlineSeconds)"
        in lines
    )
    assert "  whole sweep at most (2 trials): none → 32.84 CNY" in lines


def test_a_budget_refuses_an_over_budget_change_by_key(tmp_path: Path) -> None:
    config = ask_sweep()
    config["tftrain:budget"] = {"maxCnyPerRun": 10, "maxCnyPerSweep": 40}
    table = priced_table()
    side = price_side(write(tmp_path, "s", config), table)
    assert budget_problems(side.config, side.cost) == [
        "tftrain:budget.maxCnyPerRun: 10 CNY, but its dearest run can cost 16.42 CNY"
    ]
    lines = cost_lines(price_side(None, table), side, table, TODAY)
    assert lines[-2:] == [
        "Budget: REFUSED, `pulumi up` would stop before creating anything:",
        "  tftrain:budget.maxCnyPerRun: 10 CNY, but its dearest run can cost 16.42 CNY",
    ]
    config["tftrain:budget"] = {"maxCnyPerRun": 16.5, "maxCnyPerSweep": 40}
    side = price_side(write(tmp_path, "t", config), table)
    assert budget_problems(side.config, side.cost) == []


def test_a_budget_cannot_pass_what_the_table_cannot_price(tmp_path: Path) -> None:
    config = ask_sweep()
    config["tftrain:budget"] = {"maxCnyPerHour": 100}
    side = price_side(write(tmp_path, "s", config), priced_table())
    [problem] = budget_problems(side.config, side.cost)
    assert problem.startswith(
        "tftrain:budget.maxCnyPerHour: 100 CNY, but the stack per hour cannot be priced: unpriced "
    )
    assert "NAT gateway (instance fee; CU fees by use) (no price of nat.internet" in problem


@pytest.mark.parametrize(
    ("budget", "job", "key"),
    [
        ({"maxCnyPerRun": 5}, {}, "tftrain:budget.maxCnyPerRun"),  # no deadline: no most
        ({"maxCnyPerSweep": 5}, {"activeDeadlineSeconds": 60}, "tftrain:budget.maxCnyPerSweep"),
        ({"maxCnyPerHour": 0}, {}, "tftrain:budget.maxCnyPerHour"),
        ({"maxCnyPerHour": True}, {}, "tftrain:budget.maxCnyPerHour"),
        ({"maxCnyPerMonth": 5}, {}, "tftrain:budget.maxCnyPerMonth"),
    ],
)
def test_a_bad_budget_is_refused_by_key(budget: dict, job: dict, key: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(
            {"image": "registry.example.com/tftrain/trainer:1", "job": job, "budget": budget}
        )
    assert any(problem.startswith(key) for problem in error.value.problems), error.value.problems


def test_a_platform_stack_takes_only_the_hourly_budget() -> None:
    raw = read_stack(stack_file("platform-ack")).config
    assert parse_config({**raw, "budget": {"maxCnyPerHour": 50}}).budget.max_cny_per_hour == 50
    with pytest.raises(ConfigError, match=r"tftrain:budget\.maxCnyPerRun"):
        parse_config({**raw, "budget": {"maxCnyPerRun": 50}})


def cpu_ask(run_budget: float) -> dict[str, Any]:
    """ask-eci without GPUs and a 1-hour deadline, priced by the committed table's ECI rows:
    chief (1 vCPU, 2Gi) 0.220536 + 2 workers (4 vCPU, 15Gi) 2 x (0.7056 + 0.33102) = 2.07324
    + ps (1 vCPU, 1Gi) 0.198468 = 2.492244 CNY for one run."""
    config = entries("ask-eci")
    del config["tftrain:cluster"]["eciGpuSpec"]
    config["tftrain:worker"]["gpuCount"] = 0
    config["tftrain:worker"]["image"] = config["tftrain:chief"]["image"]
    config["tftrain:job"]["activeDeadlineSeconds"] = 3600
    config["tftrain:budget"] = {"maxCnyPerRun": run_budget}
    return config


def test_the_program_refuses_an_over_budget_stack_before_registering_anything() -> None:
    run = run_program(cpu_ask(2.0), raise_errors=False)
    assert isinstance(run.error, pulumi.RunError)
    assert "tftrain:budget.maxCnyPerRun: 2 CNY, but its dearest run can cost 2.49 CNY" in str(
        run.error
    )
    assert run.resources == []


def test_the_program_says_when_a_budget_has_no_region_to_be_priced_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = cpu_ask(2.0)
    del config["alicloud:region"]
    monkeypatch.delenv("ALICLOUD_REGION", raising=False)
    run = run_program(config, raise_errors=False)
    assert isinstance(run.error, pulumi.RunError)
    # The refusal says why nothing could be priced: prices are per region, and it set none.
    assert "its stack file sets no alicloud:region, whose prices apply" in str(run.error)
    assert run.resources == []


def test_a_budget_is_priced_in_the_region_the_provider_falls_back_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No alicloud:region: the provider deploys into ALICLOUD_REGION (its SDK's config/vars.py
    # `region`), so the budget is priced there, not refused as unpriceable.
    config = cpu_ask(2.0)
    monkeypatch.setenv("ALICLOUD_REGION", config.pop("alicloud:region"))
    run = run_program(config, raise_errors=False)
    assert isinstance(run.error, pulumi.RunError)
    assert "tftrain:budget.maxCnyPerRun: 2 CNY, but its dearest run can cost 2.49 CNY" in str(
        run.error
    )


def test_the_program_registers_a_stack_within_its_budget() -> None:
    config = cpu_ask(2.5)
    assert budget_refusals(config_of(config), "cn-hangzhou") == []
    run = run_program(config)
    assert run.error is None
    assert run.resources


def test_a_grown_pool_the_table_cannot_price_is_still_a_change(tmp_path: Path) -> None:
    """The committed table has no ecs.g7.xlarge row: the hourly total reads the same on both
    sides, so the line names the unpriced items that changed instead of "unchanged"."""
    before = entries("ack-gpu")
    after = copy.deepcopy(before)
    after["tftrain:cluster"]["cpuPool"]["size"] = 3
    table = load_table()
    lines = cost_lines(
        price_side(write(tmp_path, "a", before), table),
        price_side(write(tmp_path, "b", after), table),
        table,
        TODAY,
    )
    hourly = next(line for line in lines if line.startswith("  per hour, kept running: "))
    assert hourly.endswith(
        "on both sides, but the unpriced items changed: -CPU pool: ecs.g7.xlarge x 2; "
        "+CPU pool: ecs.g7.xlarge x 3"
    )
    assert "unchanged" not in hourly


def test_the_cost_lines_name_the_table_date_and_warn_past_90_days(tmp_path: Path) -> None:
    side = price_side(write(tmp_path, "a", entries("ask-eci")), priced_table())
    fresh = cost_lines(side, side, priced_table(), date(2026, 12, 1))
    assert fresh[0] == "Cost (Alibaba Cloud list prices, test-prices.csv of 2026-11-01):"
    assert not fresh[1].startswith("  warning")
    stale = cost_lines(side, side, priced_table(), date(2027, 3, 1))  # 120 days after
    assert stale[1] == (
        "  warning: the price table is 120 days old (over 90): prices may have changed; "
        "`tftrain prices refresh` reads today's from your account"
    )
