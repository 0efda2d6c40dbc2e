"""`tftrain prices refresh` against a fake of Alibaba's price APIs on loopback (never the real
ones): what it asks, what it writes, and that a failure leaves the old table whole."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from infra.pricing import refresh as refresh_module
from infra.pricing.refresh import Endpoints, RefreshError, refresh, wanted
from infra.pricing.table import load_table

# The fake's prices, per hour for ECS types and per second for ECI pods (the APIs' units).
# DescribePrice answers with the total (a default system disk included) and, when it lists
# them, each part: gn6i lists its own line (8.5 of 8.55), g7 lists no parts (its total 1.2
# is all there is), hfc7 lists only the disk (so its total, 3.05, is the price).
ECS_TOTALS = {
    "ecs.gn6i-c4g1.xlarge": 8.55,
    "ecs.g7.xlarge": 1.2,
    "ecs.hfc7.xlarge": 3.05,
    "ecs.c7.large": 0.6,
}
ECS_PARTS = {
    "ecs.gn6i-c4g1.xlarge": [("instanceType", 8.5), ("systemDisk", 0.05)],
    "ecs.hfc7.xlarge": [("systemDisk", 0.05)],
}
# vCPU 0.000049 and GiB 0.00000613 per second: 2 vCPU 4 GiB = 0.00012252 (the API doc's
# example), 2 vCPU 8 GiB = 0.000098 + 0.00004904 = 0.00014704.
ECI_PRICES = {("2", "4"): "0.00012252", ("2", "8"): "0.00014704"}
KEY = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "test-id", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "test-secret"}
HEADER = (
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,"
    "Price,SpotPrice,Unit,Currency,Source,FetchedOn\n"
)
# A page row the APIs do not cover, an old ECS row (its accelerator name is kept: the API does
# not return it) and a zone's own row (kept: DescribePrice is asked per region).
OLD_TABLE = HEADER + (
    "nat.internet,,,,,cn-hangzhou,,0.034,,hour,USD,https://example.com/nat,2020-01-01\n"
    "ecs.gn6i-c4g1.xlarge,4,15,T4,1,cn-hangzhou,,7,,hour,CNY,https://example.com/old,2020-01-01\n"
    "ecs.g7.xlarge,4,16,,,cn-hangzhou,cn-hangzhou-i,1.1,0.3,hour,CNY,https://example.com/z,"
    "2020-01-01\n"
    "oss.standard-lrs,,,,,cn-hangzhou,,0.0000001,,gb-month,CNY,https://example.com/oss,"
    "2020-01-01\n"
    # A region's ECS row no stack names: priced again. A zone's row of a type no stack names:
    # kept (the fake has no price for it; asking would fail the refresh).
    "ecs.c7.large,2,4,,,cn-hangzhou,,0.5,,hour,CNY,https://example.com/c7,2020-01-01\n"
    "ecs.r7.large,2,16,,,cn-hangzhou,cn-hangzhou-i,0.7,,hour,CNY,https://example.com/r7,"
    "2020-01-01\n"
)
STACK = """\
config:
  alicloud:region: cn-hangzhou
  tftrain:cluster:
    kind: ack
    gpuPool:
      instanceTypes: [ecs.gn6i-c4g1.xlarge]
    cpuPool:
      instanceTypes: [ecs.g7.xlarge, ecs.hfc7.xlarge]
"""


class _Fake(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, str]]] = []
    fail: bool | str = False  # True: refuse every call; an action's name: refuse that one

    def do_POST(self) -> None:  # RPC-style calls: parameters in the query and the form
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        query = {**parse_qs(urlparse(self.path).query), **form}
        params = {key: values[0] for key, values in query.items()}
        # Signature v3 (ACS3-HMAC-SHA256) names the action and credential in headers.
        params.setdefault("Action", self.headers.get("x-acs-action", ""))
        params["Authorization"] = self.headers.get("Authorization", "")
        type(self).calls.append(params)
        if type(self).fail in (True, params["Action"]):
            self._send(403, {"Code": "Forbidden.RAM", "Message": "not allowed"})
        elif params["Action"] == "DescribePrice":
            name = params["InstanceType"]
            price: dict = {"TradePrice": ECS_TOTALS[name], "Currency": "CNY"}
            if name in ECS_PARTS:
                parts = [{"Resource": r, "TradePrice": p} for r, p in ECS_PARTS[name]]
                price["DetailInfos"] = {"DetailInfo": parts}
            self._send(200, {"PriceInfo": {"Price": price}})
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
    assert refresh(table, stacks, KEY, fake) == 6
    today = datetime.now(UTC).date().isoformat()
    ecs = '"ECS DescribePrice (RegionId cn-hangzhou, PriceUnit Hour)"'
    eci = "ECI DescribeContainerGroupPrice (RegionId cn-hangzhou; 2 vCPU with 4 and 8 GiB)"
    # Sorted by item, region and zone. The ECI prices solved from the two pods by hand:
    # GiB = (0.00014704 - 0.00012252) / 4 = 0.00000613, vCPU = (0.00012252 - 4 x 0.00000613)
    # / 2 = 0.000049. The shapes from the types' names: g7.xlarge 4 vCPUs and 16 GiB,
    # gn6i-c4g1.xlarge 4 vCPUs and 1 GPU (15 GiB and T4 kept from the old row); hfc7 is no
    # family the name rules know, so no shape.
    # Written with "\n" line ends, prices in plain digits (never 1E-7), as the file is read.
    assert table.read_bytes().decode() == HEADER + (
        f"eci.memory,,1,,,cn-hangzhou,,0.00000613,,gib-second,CNY,{eci},{today}\n"
        f"eci.vcpu,1,,,,cn-hangzhou,,0.00004900,,vcpu-second,CNY,{eci},{today}\n"
        f"ecs.c7.large,2,4,,,cn-hangzhou,,0.6,,hour,CNY,{ecs},{today}\n"
        f"ecs.g7.xlarge,4,16,,,cn-hangzhou,,1.2,,hour,CNY,{ecs},{today}\n"
        "ecs.g7.xlarge,4,16,,,cn-hangzhou,cn-hangzhou-i,1.1,0.3,hour,CNY,https://example.com/z,"
        "2020-01-01\n"
        f"ecs.gn6i-c4g1.xlarge,4,15,T4,1,cn-hangzhou,,8.5,,hour,CNY,{ecs},{today}\n"
        f"ecs.hfc7.xlarge,,,,,cn-hangzhou,,3.05,,hour,CNY,{ecs},{today}\n"
        "ecs.r7.large,2,16,,,cn-hangzhou,cn-hangzhou-i,0.7,,hour,CNY,https://example.com/r7,"
        "2020-01-01\n"
        "nat.internet,,,,,cn-hangzhou,,0.034,,hour,USD,https://example.com/nat,2020-01-01\n"
        "oss.standard-lrs,,,,,cn-hangzhou,,0.0000001,,gb-month,CNY,https://example.com/oss,"
        "2020-01-01\n"
    )
    rows = {row.item: row for row in load_table(table).rows}
    assert rows["eci.memory"].price == Decimal("0.00000613")
    assert rows["eci.vcpu"].price == Decimal("0.000049")
    actions = sorted((c["Action"], c.get("InstanceType", ""), c["RegionId"]) for c in _Fake.calls)
    assert actions == [
        ("DescribeContainerGroupPrice", "", "cn-hangzhou"),
        ("DescribeContainerGroupPrice", "", "cn-hangzhou"),
        ("DescribePrice", "ecs.c7.large", "cn-hangzhou"),
        ("DescribePrice", "ecs.g7.xlarge", "cn-hangzhou"),
        ("DescribePrice", "ecs.gn6i-c4g1.xlarge", "cn-hangzhou"),
        ("DescribePrice", "ecs.hfc7.xlarge", "cn-hangzhou"),
    ]
    for call in _Fake.calls:
        if call["Action"] == "DescribePrice":
            assert (call["PriceUnit"], call["ResourceType"]) == ("Hour", "instance"), call
    # Signed with the caller's own key, whichever signature version the SDK uses.
    assert all(
        call.get("AccessKeyId") == "test-id" or "Credential=test-id" in call["Authorization"]
        for call in _Fake.calls
    )


def test_an_eci_price_refused_is_named_and_the_old_table_kept(fake, project):
    table, stacks = project
    _Fake.fail = "DescribeContainerGroupPrice"
    with pytest.raises(RefreshError) as caught:
        refresh(table, stacks, KEY, fake)
    assert str(caught.value).startswith(
        "DescribeContainerGroupPrice 2 vCPU 4 GiB in cn-hangzhou failed: "
    )
    assert table.read_text() == OLD_TABLE


def test_the_types_wanted_are_every_stack_s_pools_and_eci_spec_by_region(tmp_path: Path) -> None:
    """Files sorted by name: one that does not read, one without a region, one without a
    cluster come first and are skipped; a type that is not a name is not one."""
    files = {
        "a-broken": "config: [\n",
        "b-no-region": "config:\n  tftrain:cluster: {kind: ack}\n",
        "c-no-cluster": "config:\n  alicloud:region: cn-beijing\n",
        "d-ask": "config:\n  alicloud:region: cn-shanghai\n  tftrain:cluster:\n"
        "    kind: ask\n    eciGpuSpec: ecs.gn6i-c4g1.xlarge\n"
        "    cpuPool: {instanceTypes: [123, '']}\n",
        "e-gpu": STACK,
    }
    for name, text in files.items():
        (tmp_path / f"Pulumi.{name}.yaml").write_text(text)
    assert wanted(tmp_path) == {
        "cn-shanghai": {"ecs.gn6i-c4g1.xlarge"},
        "cn-hangzhou": {"ecs.gn6i-c4g1.xlarge", "ecs.g7.xlarge", "ecs.hfc7.xlarge"},
    }


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


def test_the_command_says_how_many_rows_it_priced(project, monkeypatch, capsys):
    """`tftrain prices refresh --table T --stacks-dir S` hands both on and says the count."""
    table, stacks = project
    seen = []

    def counted(table_path: Path, stacks_dir: Path, env: dict) -> int:
        seen.append((table_path, stacks_dir, env.get("ALICLOUD_ACCESS_KEY")))
        return 3

    monkeypatch.setattr(refresh_module, "refresh", counted)
    monkeypatch.setenv("ALICLOUD_ACCESS_KEY", "id")
    argv = ["refresh", "--table", str(table), "--stacks-dir", str(stacks)]
    assert refresh_module.main(argv) == 0
    assert seen == [(table, stacks, "id")]
    assert capsys.readouterr().out == f"{table}: 3 rows priced from your account today\n"
    # Without --table and --stacks-dir: the committed table and the repository's stacks.
    assert refresh_module.main(["refresh"]) == 0
    repository = Path(refresh_module.__file__).resolve().parents[2]
    assert seen[1][:2] == (repository / "infra/pricing/prices.csv", repository / "stacks")


def test_the_command_without_credentials_fails_in_one_line_and_keeps_the_table(
    project, monkeypatch, capsys
):
    table, stacks = project
    for name in ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
                 "ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    argv = ["refresh", "--table", str(table), "--stacks-dir", str(stacks)]
    assert refresh_module.main(argv) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "error: no Alibaba Cloud credentials in the environment: set ALIBABA_CLOUD_ACCESS_KEY_ID "
        "/ ALIBABA_CLOUD_ACCESS_KEY_SECRET and ALICLOUD_ACCESS_KEY / ALICLOUD_SECRET_KEY; "
        f"{table} is unchanged\n"
    )
    assert table.read_text() == OLD_TABLE
    with pytest.raises(SystemExit):
        refresh_module.main([])  # a command is required


def test_credentials_are_the_first_whole_pair() -> None:
    """An ID without its secret is no pair: the provider's names are read next."""
    env = {
        "ALIBABA_CLOUD_ACCESS_KEY_ID": "half",
        "ALICLOUD_ACCESS_KEY": "id",
        "ALICLOUD_SECRET_KEY": "secret",
    }
    assert refresh_module.credentials(env) == ("id", "secret")
    assert refresh_module.credentials({**env, "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "s"}) == (
        "half",
        "s",
    )


def test_the_command_s_help_names_it_and_its_options(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "300")  # argparse wraps at the terminal's width
    with pytest.raises(SystemExit):
        refresh_module.main(["--help"])
    top = capsys.readouterr().out
    assert top.startswith("usage: tftrain prices [-h] {refresh} ...\n")
    assert "`tftrain prices refresh`: today's prices from the user's own account, into a new " \
        "table." in top  # fmt: skip
    assert "rewrite the price table from your account's prices" in top
    with pytest.raises(SystemExit):
        refresh_module.main(["refresh", "--help"])
    options = capsys.readouterr().out
    assert "[--table TABLE] [--stacks-dir STACKS_DIR]" in options
    assert f"default: {refresh_module.TABLE}\n" in options
    assert "whose instance types\n" in options


def test_the_new_table_is_written_beside_the_old_and_renamed_over_it(
    tmp_path: Path, monkeypatch
) -> None:
    """A rename within one directory is atomic (POSIX rename(2)); a temporary elsewhere (the
    system's temporary directory) could sit on another file system."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(elsewhere))
    table = tmp_path / "t" / "prices.csv"
    table.parent.mkdir()
    table.write_text("old\n")
    renames = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: renames.append((Path(a), Path(b))))
    with pytest.raises(OSError):
        monkeypatch.setattr(os, "fsync", _refused)
        refresh_module.write_atomically(table, "new\n")
    assert sorted(p.name for p in table.parent.iterdir()) == ["prices.csv"]  # no temporary
    monkeypatch.undo()
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((Path(a), Path(b))),
                                                      real_replace(a, b)))  # fmt: skip
    refresh_module.write_atomically(table, "new é\n")
    [(temporary, target)] = renames
    assert temporary.parent == table.parent and temporary.name.startswith(".prices.csv.")
    assert target == table
    assert table.read_bytes() == "new é\n".encode()


def _refused(descriptor: int) -> None:
    raise OSError("disk full")
