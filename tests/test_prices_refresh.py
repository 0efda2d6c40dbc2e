"""`tftrain prices refresh` against a fake of Alibaba's price APIs on loopback (never the real
ones): what it asks, what it writes, and that a failure leaves the old table whole."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from infra.pricing.refresh import Endpoints, RefreshError, refresh
from infra.pricing.table import load_table

# The fake's prices, per hour for ECS types and per second for ECI pods (the APIs' units).
ECS_PRICES = {"ecs.gn6i-c4g1.xlarge": "8.5", "ecs.g7.xlarge": "1.2"}
SYSTEM_DISK = 0.05  # the default system disk in DescribePrice's total: not the type's price
# vCPU 0.000049 and GiB 0.00000613 per second: 2 vCPU 4 GiB = 0.00012252 (the API doc's
# example), 2 vCPU 8 GiB = 0.000098 + 0.00004904 = 0.00014704.
ECI_PRICES = {("2", "4"): "0.00012252", ("2", "8"): "0.00014704"}
KEY = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "test-id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "test-secret"}
OLD_TABLE = """\
InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,Price,SpotPrice,Unit,Currency,Source,FetchedOn
nat.internet,,,,,cn-hangzhou,,0.034,,hour,USD,https://example.com/nat,2020-01-01
"""
STACK = """\
config:
  alicloud:region: cn-hangzhou
  tftrain:cluster:
    kind: ack
    gpuPool:
      instanceTypes: [ecs.gn6i-c4g1.xlarge]
    cpuPool:
      instanceTypes: [ecs.g7.xlarge]
"""


class _Fake(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, str]]] = []
    fail = False

    def do_POST(self) -> None:  # RPC-style calls: parameters in the query and the form
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        query = {**parse_qs(urlparse(self.path).query), **form}
        params = {key: values[0] for key, values in query.items()}
        # Signature v3 (ACS3-HMAC-SHA256) names the action and credential in headers.
        params.setdefault("Action", self.headers.get("x-acs-action", ""))
        params["Authorization"] = self.headers.get("Authorization", "")
        type(self).calls.append(params)
        if type(self).fail:
            self._send(403, {"Code": "Forbidden.RAM", "Message": "not allowed"})
        elif params["Action"] == "DescribePrice":
            # As the API answers: the total with a default system disk, then each part.
            own = float(ECS_PRICES[params["InstanceType"]])
            parts = [
                {"Resource": "instanceType", "TradePrice": own},
                {"Resource": "systemDisk", "TradePrice": SYSTEM_DISK},
            ]
            price = {"TradePrice": own + SYSTEM_DISK, "Currency": "CNY"}
            details = {"DetailInfos": {"DetailInfo": parts}}
            self._send(200, {"PriceInfo": {"Price": {**price, **details}}})
        else:
            cpu, memory = (params["Cpu"].removesuffix(".0"), params["Memory"].removesuffix(".0"))
            price = ECI_PRICES[(cpu, memory)]
            self._send(
                200, {"PriceInfo": {"Price": {"TradePrice": float(price), "Currency": "CNY"}}}
            )

    do_GET = do_POST

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps({"RequestId": "fake", **body}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake() -> Iterator[Endpoints]:
    _Fake.calls, _Fake.fail = [], False
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    address = f"127.0.0.1:{server.server_address[1]}"
    yield Endpoints(ecs=address, eci=address, protocol="http")
    server.shutdown()
    server.server_close()


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.gpu.yaml").write_text(STACK)
    table = tmp_path / "prices.csv"
    table.write_text(OLD_TABLE)
    return table, stacks


def test_refresh_prices_the_stacks_types_and_eci_and_keeps_page_rows(fake, project, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    table, stacks = project
    assert refresh(table, stacks, KEY, fake) == 4
    rows = {row.item: row for row in load_table(table).rows}
    assert rows["ecs.gn6i-c4g1.xlarge"].price == Decimal("8.5")
    assert rows["ecs.gn6i-c4g1.xlarge"].unit == "hour"
    assert rows["ecs.g7.xlarge"].price == Decimal("1.2")
    # The shape from the type's name: gn6i-c4g1.xlarge is 4 vCPUs, 1 GPU; g7.xlarge 4 and 16.
    gpu, cpu = rows["ecs.gn6i-c4g1.xlarge"], rows["ecs.g7.xlarge"]
    assert (gpu.vcpus, gpu.accelerator_count) == ("4", "1")
    assert (cpu.vcpus, cpu.memory_gib, cpu.accelerator_count) == ("4", "16", "")
    # Solved from the two pods by hand: GiB = (0.00014704 - 0.00012252) / 4 = 0.00000613,
    # vCPU = (0.00012252 - 4 x 0.00000613) / 2 = 0.000049.
    assert rows["eci.memory"].price == Decimal("0.00000613")
    assert rows["eci.vcpu"].price == Decimal("0.000049")
    assert rows["nat.internet"].source == "https://example.com/nat"  # kept as it was
    assert str(rows["nat.internet"].fetched_on) == "2020-01-01"
    actions = sorted((c["Action"], c.get("InstanceType", ""), c["RegionId"]) for c in _Fake.calls)
    assert actions[:2] == [
        ("DescribeContainerGroupPrice", "", "cn-hangzhou"),
        ("DescribeContainerGroupPrice", "", "cn-hangzhou"),
    ]
    assert ("DescribePrice", "ecs.gn6i-c4g1.xlarge", "cn-hangzhou") in actions
    assert all(call.get("PriceUnit", "Hour") == "Hour" for call in _Fake.calls)
    # Signed with the caller's own key, whichever signature version the SDK uses.
    assert all(
        call.get("AccessKeyId") == "test-id" or "Credential=test-id" in call["Authorization"]
        for call in _Fake.calls
    )


def test_a_refused_call_leaves_the_old_table_whole(fake, project):
    table, stacks = project
    _Fake.fail = True
    with pytest.raises(RefreshError, match="DescribePrice"):
        refresh(table, stacks, KEY, fake)
    assert table.read_text() == OLD_TABLE
    assert [p.name for p in table.parent.iterdir() if p.name.startswith(".prices")] == []


def test_no_credentials_is_one_line_naming_the_variables(project):
    table, stacks = project
    with pytest.raises(RefreshError, match="ALIBABA_CLOUD_ACCESS_KEY_ID"):
        refresh(table, stacks, {}, Endpoints(ecs="127.0.0.1:9", eci="127.0.0.1:9", protocol="http"))
    assert table.read_text() == OLD_TABLE
