"""What `--diff` and the review comment open with (infra/render/review_summary.py): three
blocks in reading order, blank-line separated (the config change as typed, its consequences,
the cost), the secrets note when a secret changed, and a cost block that says why it is not
priced when the price table cannot be read."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from pathlib import Path

import pytest

from infra.config import stack_file
from infra.config.stack_file import StackFile, read_stack
from infra.pricing.table import PriceTable, PriceTableError, load_table
from infra.render import review_summary as module
from infra.render.review_summary import review_summary

STACK = """\
config:
  tftrain:job:
    env:
      TOKEN:
        secure: {token}
  tftrain:hyperparams:
    learningRate: {rate}
"""
SECRETS = (
    "Secrets: the lines above compare renders that show every secret as <secret>; what the "
    "engine does with each changed secret is on its config line"
)


def _file(tmp_path: Path, name: str, token: str = "v1:AAAA", rate: str = "0.003") -> StackFile:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(STACK.format(token=token, rate=rate))
    return read_stack(path)


@pytest.fixture
def unpriced(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise PriceTableError("prices.csv row 3: no price")

    monkeypatch.setattr(module, "load_table", broken)


@pytest.mark.usefixtures("unpriced")
def test_a_rotated_secret_adds_the_secrets_note_to_the_consequences(tmp_path: Path) -> None:
    files = (_file(tmp_path, "a"), _file(tmp_path, "b", token="v1:BBBB"))
    text = review_summary("", "", files, "s", ("HEAD", "working-tree"))
    changes, consequences, cost = text.split("\n\n")
    assert changes.splitlines() == [
        "Config changes, HEAD → working-tree:",
        # No Job in either render: the secret reaches none.
        "  job.env.TOKEN: changed (secret): the engine replaces the 0 Jobs that carry it in "
        "their pod template; the run id counts a secret by its name only, so the run resumes "
        "from its checkpoints",
    ]
    lines = consequences.splitlines()
    assert lines[0] == "Consequences for s, HEAD → working-tree:"
    assert lines[-1] == SECRETS
    assert SECRETS not in lines[:-1]
    assert cost == "Cost: not priced: prices.csv row 3: no price\n"


@pytest.mark.usefixtures("unpriced")
def test_without_a_secret_change_there_is_no_secrets_note(tmp_path: Path) -> None:
    files = (_file(tmp_path, "a"), _file(tmp_path, "b", rate="0.001"))
    text = review_summary("", "", files, "s", ("r1", "r2"))
    changes, consequences, cost = text.split("\n\n")
    assert changes.splitlines() == [
        "Config changes, r1 → r2:",
        "  hyperparams.learningRate: 0.003 → 0.001",
    ]
    assert consequences.startswith("Consequences for s, r1 → r2:\n")
    assert "Secrets:" not in text
    assert cost == "Cost: not priced: prices.csv row 3: no price\n"
    same = review_summary("", "", (files[0], files[0]), "s", ("r1", "r2"))
    assert same.startswith("Config changes, r1 → r2: none (the stack file's values are the same)")


def test_with_the_price_table_each_side_is_priced_old_then_new() -> None:
    # ack-gpu pays a NAT gateway by the hour (its row in prices.csv is in USD); dev, on an
    # existing cluster, creates nothing that bills.
    ack, dev = read_stack(stack_file("ack-gpu")), read_stack(stack_file("dev"))
    for files, paying in (((ack, dev), 0), ((dev, ack), 1), ((None, ack), 1)):
        cost = review_summary("", "", files, "s", ("r1", "r2")).split("\n\n")[2]
        first, *lines = cost.splitlines()
        assert first.startswith("Cost (Alibaba Cloud list prices, ")
        assert all(line.startswith("  ") for line in lines), cost
        hour = next(line for line in lines if line.startswith("  per hour, kept running: "))
        sides = hour.removeprefix("  per hour, kept running: ").split(" → ")
        assert ["USD" in side for side in sides] == [paying == 0, paying == 1], hour
    assert "per hour, kept running: none → " in review_summary("", "", (None, ack), "s", ("a", "b"))


class _LateInTheUtcDay(datetime):
    """12:00 UTC on 2026-12-01, when UTC+14 (Kiritimati) already reads 2026-12-02: `now()`
    without a zone answers as a machine set to that zone would."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
        moment = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
        if tz is None:
            return moment.astimezone(timezone(timedelta(hours=14))).replace(tzinfo=None)
        return moment.astimezone(tz)


def test_the_price_tables_age_is_counted_in_utc_days(monkeypatch: pytest.MonkeyPatch) -> None:
    # The table's rows are dated in UTC days (docs/review.md); 90 days before 2026-12-01 is
    # 2026-09-02: on the UTC date the table is 90 days old (not stale, STALE_DAYS = 90), on
    # UTC+14's date it would be 91 and warn.
    real = load_table()
    rows = tuple(replace(row, fetched_on=date(2026, 9, 2)) for row in real.rows)
    monkeypatch.setattr(module, "load_table", lambda: PriceTable(rows, real.path))
    monkeypatch.setattr(module, "datetime", _LateInTheUtcDay)
    ack = read_stack(stack_file("ack-gpu"))
    cost = review_summary("", "", (None, ack), "s", ("a", "b")).split("\n\n")[2]
    assert "days old" not in cost, cost
    assert cost.startswith("Cost (Alibaba Cloud list prices, prices.csv of 2026-09-02):"), cost
