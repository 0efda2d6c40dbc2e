"""The price table (`infra/pricing/prices.csv`): what the review's cost lines are worked from.

One row per priced item, in the shape of SkyPilot's catalog (InstanceType, vCPUs, MemoryGiB,
AcceleratorName, AcceleratorCount, Region, AvailabilityZone, Price, SpotPrice) plus what a
price means and where it comes from: Unit (`hour` per instance, `vcpu-second`, `gib-second`,
`gib-month`, `gb-month`), Currency, Source (a URL, or the API call that returned it) and
FetchedOn (the day it was read). Items that are not ECS types have names of their own
(`eci.vcpu`, `nat.internet`, `oss.standard-lrs`). A price is used only as its source states it:
an item without a row is unpriced, never estimated. `tftrain prices refresh` rewrites the
table from the user's own account (`infra.pricing.refresh`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "prices.csv"
COLUMNS = (
    "InstanceType", "vCPUs", "MemoryGiB", "AcceleratorName", "AcceleratorCount", "Region",
    "AvailabilityZone", "Price", "SpotPrice", "Unit", "Currency", "Source", "FetchedOn",
)  # fmt: skip
# A unit's length in hours. A month is 30 days of 24 hours: the formula Alibaba's NAS and OSS
# billing pages give for turning a monthly price into the hourly one they bill.
HOURS = {
    "hour": Decimal(1),
    "vcpu-second": Decimal(1) / 3600,
    "gib-second": Decimal(1) / 3600,
    "gib-month": Decimal(30 * 24),
    "gb-month": Decimal(30 * 24),
}
STALE_DAYS = 90


class PriceTableError(ValueError):
    """The table cannot be read; the message names the file, row and column."""


@dataclass(frozen=True)
class PriceRow:
    item: str  # InstanceType
    region: str
    zone: str  # "" for every zone of the region
    price: Decimal | None
    spot_price: Decimal | None
    unit: str
    currency: str
    source: str
    fetched_on: date
    vcpus: str = ""
    memory_gib: str = ""
    accelerator: str = ""
    accelerator_count: str = ""

    def hourly(self, spot: bool = False) -> Decimal | None:
        """The price of one unit held for an hour (None: the table has no such price)."""
        price = self.spot_price if spot else self.price
        return None if price is None else price / HOURS[self.unit]


@dataclass(frozen=True)
class PriceTable:
    rows: tuple[PriceRow, ...]
    path: Path

    @property
    def date(self) -> date | None:
        """The table's date: its oldest row's, so no price is older than it says."""
        return min((row.fetched_on for row in self.rows), default=None)

    def find(self, item: str, region: str, zone: str = "") -> PriceRow | None:
        """The row for `item` in `region`: the zone's own row first, else the region's."""
        matches = [r for r in self.rows if r.item == item and r.region == region]
        for row in matches:
            if zone and row.zone == zone:
                return row
        return next((row for row in matches if not row.zone), None)

    def age_warning(self, today: date) -> str | None:
        """A line when the table is older than STALE_DAYS days (or empty), else None."""
        if self.date is None:
            return f"the price table {self.path.name} has no rows: every item is unpriced"
        age = (today - self.date).days
        if age <= STALE_DAYS:
            return None
        return (
            f"warning: the price table is {age} days old (over {STALE_DAYS}): prices may have "
            "changed; `tftrain prices refresh` reads today's from your account"
        )


def _decimal(text: str, where: str, column: str) -> Decimal | None:
    if not text.strip():
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise PriceTableError(f"{where}: {column} {text!r} is not a number") from None
    if not value.is_finite() or value < 0:
        raise PriceTableError(f"{where}: {column} {text!r} is not a price (0 or more)")
    return value


def _row(fields: dict[str, str], where: str) -> PriceRow:
    unit = fields["Unit"]
    if unit not in HOURS:
        raise PriceTableError(f"{where}: Unit {unit!r} is not one of {', '.join(HOURS)}")
    for column in ("InstanceType", "Region", "Currency", "Source"):
        if not fields[column].strip():
            raise PriceTableError(f"{where}: {column} is empty: every row names it")
    try:
        fetched = date.fromisoformat(fields["FetchedOn"])
    except ValueError:
        raise PriceTableError(
            f"{where}: FetchedOn {fields['FetchedOn']!r} is not YYYY-MM-DD"
        ) from None
    return PriceRow(
        item=fields["InstanceType"],
        region=fields["Region"],
        zone=fields["AvailabilityZone"],
        price=_decimal(fields["Price"], where, "Price"),
        spot_price=_decimal(fields["SpotPrice"], where, "SpotPrice"),
        unit=unit,
        currency=fields["Currency"],
        source=fields["Source"],
        fetched_on=fetched,
        vcpus=fields["vCPUs"],
        memory_gib=fields["MemoryGiB"],
        accelerator=fields["AcceleratorName"],
        accelerator_count=fields["AcceleratorCount"],
    )


def parse_table(text: str, path: Path) -> PriceTable:
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise PriceTableError(f"{path}: the header must be {','.join(COLUMNS)}")
    rows = tuple(_row(fields, f"{path}:{reader.line_num}") for fields in reader)
    return PriceTable(rows, path)


def load_table(path: Path = TABLE) -> PriceTable:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PriceTableError(f"{path}: cannot read the price table: {error.strerror}") from None
    return parse_table(text, path)


def table_text(rows: list[PriceRow]) -> str:
    """The CSV of `rows`, sorted by item, region and zone (a refresh diffs row by row)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in sorted(rows, key=lambda r: (r.item, r.region, r.zone)):
        writer.writerow(
            [
                row.item, row.vcpus, row.memory_gib, row.accelerator, row.accelerator_count,
                row.region, row.zone, _plain(row.price), _plain(row.spot_price), row.unit,
                row.currency, row.source, row.fetched_on.isoformat(),
            ]
        )  # fmt: skip
    return out.getvalue()


def _plain(value: Decimal | None) -> str:
    return "" if value is None else format(value, "f")
