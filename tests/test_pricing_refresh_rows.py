"""`infra.pricing.refresh` without the network: which regions and endpoints it asks, which old
rows it prices again or keeps, the shape columns of a new row, the date it stamps, and the
command's own words. The SDK clients are stand-ins that answer as DescribePrice and
DescribeContainerGroupPrice do (test_prices_refresh.py drives the real SDK against a fake
server). Shapes and prices are written by hand from Alibaba's instance-family pages."""

from __future__ import annotations

import locale
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from infra.pricing import refresh as refresh_module
from infra.pricing.refresh import Endpoints, refresh, refresh_rows
from infra.pricing.table import PriceRow, load_table, parse_table

KEY = ("test-id", "test-secret")
HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
    "Price,SpotPrice,Unit,Currency,Source,FetchedOn\n"
)
# Per hour for ECS; per second for ECI pods (2 vCPU with 4 and 8 GiB: 0.000049 per vCPU,
# 0.00000613 per GiB, the API doc's example).
ECS_PRICES = {"ecs.gn7i-c8g1.2xlarge": 9.2, "ecs.ebmgn7ex.32xlarge": 180.0, "ecs.c7.large": 0.6}
ECI_PRICES = {(2, 4): 0.00012252, (2, 8): 0.00014704}


def _answer(price: float) -> SimpleNamespace:
    shaped = SimpleNamespace(trade_price=price, currency="CNY", detail_infos=None)
    return SimpleNamespace(body=SimpleNamespace(price_info=SimpleNamespace(price=shaped)))


class _Client:
    """What refresh_rows calls of an SDK client, with the endpoint it was made for."""

    def __init__(self, endpoint: str, asked: list[tuple[str, str, str]]) -> None:
        self.endpoint, self.asked = endpoint, asked

    def describe_price(self, request: Any) -> SimpleNamespace:
        self.asked.append((self.endpoint, request.region_id, request.instance_type))
        return _answer(ECS_PRICES[request.instance_type])

    def describe_container_group_price(self, request: Any) -> SimpleNamespace:
        self.asked.append((self.endpoint, request.region_id, "eci"))
        return _answer(ECI_PRICES[(request.cpu, request.memory)])


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, str]]:
    calls: list[tuple[str, str, str]] = []
    monkeypatch.setattr(
        refresh_module,
        "_client",
        lambda module, key, endpoint, protocol: _Client(endpoint, calls),
    )
    return calls


# A region no stack names but the table prices (cn-shanghai: its ECS row is priced again,
# its old ECI row replaced), a zone's own row (kept, its region not asked for it), and a GPU
# type whose name no rule reads (its shape kept from the old row: ebmgn7ex.32xlarge has 128
# vCPUs, 1024 GiB and 8 A800s).
OLD = HEADER + (
    "ecs.c7.large,2,4,,,cn-shanghai,,0.5,,hour,CNY,https://example.com/c7,2020-01-01\n"
    "eci.vcpu,1,,,,cn-shanghai,,0.00004,,vcpu-second,CNY,https://example.com/eci,2020-01-01\n"
    "ecs.g7.xlarge,4,16,,,cn-hangzhou,cn-hangzhou-i,1.1,,hour,CNY,https://example.com/z,"
    "2020-01-01\n"
    "ecs.ebmgn7ex.32xlarge,128,1024,A800,8,cn-beijing,,170,,hour,CNY,https://example.com/e,"
    "2020-01-01\n"
)


def _refreshed() -> list[PriceRow]:
    old = parse_table(OLD, Path("prices.csv")).rows
    return refresh_rows(old, {"cn-beijing": {"ecs.gn7i-c8g1.2xlarge"}}, KEY, Endpoints())


def _rows(asked: list) -> dict[tuple[str, str, str], PriceRow]:
    return {(row.item, row.region, row.zone): row for row in _refreshed()}


def test_each_region_is_asked_at_its_own_endpoints(asked: list) -> None:
    _rows(asked)
    assert sorted(asked) == [
        ("eci.cn-beijing.aliyuncs.com", "cn-beijing", "eci"),
        ("eci.cn-beijing.aliyuncs.com", "cn-beijing", "eci"),
        ("eci.cn-shanghai.aliyuncs.com", "cn-shanghai", "eci"),
        ("eci.cn-shanghai.aliyuncs.com", "cn-shanghai", "eci"),
        ("ecs.cn-beijing.aliyuncs.com", "cn-beijing", "ecs.ebmgn7ex.32xlarge"),
        ("ecs.cn-beijing.aliyuncs.com", "cn-beijing", "ecs.gn7i-c8g1.2xlarge"),
        ("ecs.cn-shanghai.aliyuncs.com", "cn-shanghai", "ecs.c7.large"),
    ]


def test_old_rows_are_priced_again_replaced_or_kept(asked: list) -> None:
    refreshed = _refreshed()
    rows = {(row.item, row.region, row.zone): row for row in refreshed}
    assert sorted((row.item, row.region, row.zone) for row in refreshed) == [
        ("eci.memory", "cn-beijing", ""),
        ("eci.memory", "cn-shanghai", ""),
        ("eci.vcpu", "cn-beijing", ""),
        ("eci.vcpu", "cn-shanghai", ""),  # the old one replaced, not kept beside it
        ("ecs.c7.large", "cn-shanghai", ""),
        ("ecs.ebmgn7ex.32xlarge", "cn-beijing", ""),
        ("ecs.g7.xlarge", "cn-hangzhou", "cn-hangzhou-i"),
        ("ecs.gn7i-c8g1.2xlarge", "cn-beijing", ""),
    ]
    assert rows["ecs.c7.large", "cn-shanghai", ""].price == Decimal("0.6")
    assert rows["eci.vcpu", "cn-shanghai", ""].price == Decimal("0.000049")
    assert rows["ecs.g7.xlarge", "cn-hangzhou", "cn-hangzhou-i"].price == Decimal("1.1")


def _shape(row: PriceRow) -> tuple[str, str, str, str]:
    return row.vcpus, row.memory_gib, row.accelerator, row.accelerator_count


def test_a_new_gpu_row_has_its_names_shape_and_an_old_row_keeps_its_own(asked: list) -> None:
    rows = _rows(asked)
    # gn7i-c8g1.2xlarge: 8 vCPUs, 30 GiB, 1 GPU (the A10's name is not in the type's name).
    assert _shape(rows["ecs.gn7i-c8g1.2xlarge", "cn-beijing", ""]) == ("8", "30", "", "1")
    assert _shape(rows["ecs.ebmgn7ex.32xlarge", "cn-beijing", ""]) == ("128", "1024", "A800", "8")
    assert rows["ecs.ebmgn7ex.32xlarge", "cn-beijing", ""].price == Decimal("180")


@pytest.fixture
def far_from_utc() -> Iterator[None]:
    """A local zone whose date is not UTC's now: 14 h east from noon UTC, else 12 h west."""
    saved = os.environ.get("TZ")
    # POSIX TZ strings count hours west of UTC: LOC-14 is UTC+14.
    os.environ["TZ"] = "LOC-14" if datetime.now(UTC).hour >= 12 else "LOC+12"
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


def test_rows_are_stamped_with_utcs_date_wherever_the_user_is(asked: list, far_from_utc) -> None:
    utc = datetime.now(UTC).date()
    assert datetime.now().date() != utc  # the zone is a day away
    fetched = _rows(asked)["ecs.c7.large", "cn-shanghai", ""].fetched_on
    assert fetched in (utc, datetime.now(UTC).date())  # a midnight in between: either


def test_a_first_refresh_writes_a_table_where_there_was_none(asked: list, tmp_path: Path) -> None:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.gpu.yaml").write_text(
        "config:\n  alicloud:region: cn-beijing\n  tftrain:cluster:\n    kind: ack\n"
        "    gpuPool: {instanceTypes: [ecs.gn7i-c8g1.2xlarge]}\n"
    )
    table = tmp_path / "prices.csv"
    env = {"ALICLOUD_ACCESS_KEY": "id", "ALICLOUD_SECRET_KEY": "secret"}
    assert refresh(table, stacks, env) == 3  # the GPU type, the vCPU and the GiB
    assert [row.item for row in load_table(table).rows] == [
        "eci.memory",
        "eci.vcpu",
        "ecs.gn7i-c8g1.2xlarge",
    ]


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The C locale, whose files are ASCII unless a program says otherwise (Python outside
    UTF-8 mode opens text files in the locale's encoding by default)."""
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)


def test_the_table_is_written_in_utf8_whatever_the_locale(tmp_path: Path, ascii_locale) -> None:
    # A source naming a page in Chinese: written as UTF-8, as the table is read.
    table = tmp_path / "prices.csv"
    refresh_module.write_atomically(table, "价格\n")
    assert table.read_bytes() == "价格\n".encode()


def test_the_command_names_what_is_missing_and_describes_itself(monkeypatch, capsys) -> None:
    with pytest.raises(SystemExit):
        refresh_module.main([])
    assert capsys.readouterr().err.endswith(
        "error: the following arguments are required: command\n"
    )
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit):
        refresh_module.main(["--help"])
    # The description is the docstring's first line alone; the command's line, whole.
    help_text = capsys.readouterr().out
    assert help_text.split("\n\n")[1] == (
        "`tftrain prices refresh`: today's prices from the user's own account, into a new table."
    )
    assert "\n    refresh   rewrite the price table from your account's prices\n" in help_text
