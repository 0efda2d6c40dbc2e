"""The price table's reader: a row it cannot use is refused naming the file, line and column;
the range a price may take (0 or more, finite) at its ends."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from infra.pricing.table import PriceTableError, load_table, parse_table

HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
    "Price,SpotPrice,Unit,Currency,Source,FetchedOn\n"
)
GOOD = "ecs.a,4,16,T4,1,r1,r1-z,2,0.5,hour,CNY,https://example.com/a,2026-11-01\n"


def row(**changes: str) -> str:
    fields = dict(zip(HEADER.strip().split(","), GOOD.strip().split(","), strict=True))
    return ",".join({**fields, **changes}.values()) + "\n"


def test_a_row_reads_every_column() -> None:
    [read] = parse_table(HEADER + GOOD, Path("t.csv")).rows
    assert (read.item, read.region, read.zone, read.unit, read.currency) == (
        "ecs.a", "r1", "r1-z", "hour", "CNY",
    )  # fmt: skip
    assert (read.price, read.spot_price) == (Decimal(2), Decimal("0.5"))
    assert (read.vcpus, read.memory_gib, read.accelerator, read.accelerator_count) == (
        "4", "16", "T4", "1",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"Price": "abc"}, "t.csv:3: Price 'abc' is not a number"),
        ({"SpotPrice": "x"}, "t.csv:3: SpotPrice 'x' is not a number"),
        ({"Price": "-0.01"}, "t.csv:3: Price '-0.01' is not a price (0 or more)"),
        ({"Price": "NaN"}, "t.csv:3: Price 'NaN' is not a price (0 or more)"),
        ({"SpotPrice": "Infinity"}, "t.csv:3: SpotPrice 'Infinity' is not a price (0 or more)"),
        ({"Unit": "day"}, "t.csv:3: Unit 'day' is not one of hour, vcpu-second, gib-second, "
         "gib-month, gb-month"),
        ({"InstanceType": ""}, "t.csv:3: InstanceType is empty: every row names it"),
        ({"Region": " "}, "t.csv:3: Region is empty: every row names it"),
        ({"Currency": ""}, "t.csv:3: Currency is empty: every row names it"),
        ({"Source": ""}, "t.csv:3: Source is empty: every row names it"),
        ({"FetchedOn": "27/11/2026"}, "t.csv:3: FetchedOn '27/11/2026' is not YYYY-MM-DD"),
    ],
)  # fmt: skip
def test_a_row_it_cannot_use_is_refused_by_line_and_column(changes: dict, message: str) -> None:
    with pytest.raises(PriceTableError) as caught:
        parse_table(HEADER + GOOD + row(**changes), Path("t.csv"))
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("price", "read"), [("0", Decimal(0)), ("", None), ("0.000001", Decimal("0.000001"))]
)
def test_a_price_is_0_or_more_and_may_be_absent(price: str, read: Decimal | None) -> None:
    [parsed] = parse_table(HEADER + row(Price=price), Path("t.csv")).rows
    assert parsed.price == read


def test_a_table_with_another_header_or_no_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PriceTableError) as caught:
        parse_table(HEADER.replace("Price,", "Cost,", 1) + GOOD, Path("t.csv"))
    assert str(caught.value) == f"t.csv: the header must be {HEADER.strip()}"
    missing = tmp_path / "none.csv"
    with pytest.raises(PriceTableError) as caught:
        load_table(missing)
    assert str(caught.value) == (
        f"{missing}: cannot read the price table: No such file or directory"
    )


def test_the_table_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    # A source naming Alibaba's Chinese price page. In the C locale, Python outside UTF-8 mode
    # reads text files as ASCII by default and would refuse it.
    import locale

    table = tmp_path / "prices.csv"
    row = GOOD.replace("https://example.com/a", "阿里云价格页")
    table.write_bytes((HEADER + row).encode())
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        [read] = load_table(table).rows
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert read.source == "阿里云价格页"
