"""Local replica servers are reachable on loopback only: measured on a real local run.

A replica listens as a TensorFlow server does (`0.0.0.0:<port>`, `grpc_server_lib.cc`); the
test lists this machine's own listening sockets (`/proc/net/tcp{,6}` of the test's network
namespace) and connects to every replica port through each of this machine's non-loopback
addresses. Neither may find the replica, while the replica's own view shows its listener and
nothing but `lo`, so the port is served, only not here.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.local import cli
from infra.local.cli import main
from tests.cluster_helpers import (
    Launcher,
    alive,
    fake_stacks_dir,
    reaping,
    records,
    wait_until,
    write_stack,
)

TF_SERVER = Path(__file__).parent / "fixtures" / "tf_server_only.py"

_SIOCGIFADDR = 0x8915
_LISTEN = "0A"


def machine_addresses() -> list[tuple[int, str, int]]:
    """(family, address, scope id) of every non-loopback address of this machine."""
    found: list[tuple[int, str, int]] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _index, name in socket.if_nameindex():
            try:
                reply = fcntl.ioctl(sock, _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue  # no IPv4 address on it
            address = socket.inet_ntoa(reply[20:24])
            if not address.startswith("127."):
                found.append((socket.AF_INET, address, 0))
    inet6 = Path("/proc/net/if_inet6")
    for line in inet6.read_text().splitlines() if inet6.exists() else []:
        hexaddr, index, _prefix, _scope, _flags, _name = line.split()
        address = socket.inet_ntop(socket.AF_INET6, bytes.fromhex(hexaddr))
        if address != "::1":
            found.append((socket.AF_INET6, address, int(index, 16)))
    return found


def listening_ports(net_dir: Path) -> dict[int, set[str]]:
    """port → the local addresses (hex, as the kernel prints them) listening on it."""
    ports: dict[int, set[str]] = {}
    for table in ("tcp", "tcp6"):
        path = net_dir / table
        for line in path.read_text().splitlines()[1:] if path.exists() else []:
            fields = line.split()
            address, _, port = fields[1].rpartition(":")
            if fields[3] == _LISTEN:
                ports.setdefault(int(port, 16), set()).add(address)
    return ports


def refused(family: int, address: str, scope: int, port: int) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(3)
        target = (address, port) if family == socket.AF_INET else (address, port, 0, scope)
        try:
            sock.connect(target)
        except OSError as error:
            return error.errno in (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH)
        return False


def replica_ports(stacks_dir: Path) -> dict[str, tuple[int, int]]:
    """replica → (pid, the port its TF_CONFIG gives it)."""
    got = {}
    for name, record in records(stacks_dir).items():
        task = record["tf_config"]["task"]
        address = record["tf_config"]["cluster"][task["type"]][task["index"]]
        got[name] = (record["pid"], int(address.rpartition(":")[2]))
    return got


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[tuple[Launcher, dict[str, tuple[int, int]]]]:
    stacks_dir = fake_stacks_dir(tmp_path)
    with reaping(stacks_dir):
        launcher = Launcher(stacks_dir, "--set", "job.args=[--hang]", "--timeout", "120")
        try:
            assert wait_until(lambda: len(records(stacks_dir)) == 4), launcher.text()
            yield launcher, replica_ports(stacks_dir)
        finally:
            launcher.close()


@pytest.fixture
def tf_serving(tmp_path: Path) -> Iterator[tuple[Launcher, dict[str, tuple[int, int]]]]:
    """Every replica a real TensorFlow gRPC server (tests/fixtures/tf_server_only.py)."""
    stacks_dir = write_stack(
        tmp_path, {"job": {"command": ["python", str(TF_SERVER)], "runId": "test",
                           "backoffLimit": 0}, "worker": {"number": 1}},
    )  # fmt: skip
    with reaping(stacks_dir):
        launcher = Launcher(stacks_dir, "--timeout", "300")
        try:
            assert wait_until(lambda: len(records(stacks_dir)) == 3, timeout=240), launcher.text()
            yield launcher, replica_ports(stacks_dir)
        finally:
            launcher.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces: Linux")
def test_replica_ports_are_not_reachable_from_this_machines_addresses(
    serving: tuple[Launcher, dict[str, tuple[int, int]]],
) -> None:
    assert_loopback_only(*serving)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces: Linux")
def test_real_tensorflow_servers_are_not_reachable_from_this_machines_addresses(
    tf_serving: tuple[Launcher, dict[str, tuple[int, int]]],
) -> None:
    """The same measurement on TensorFlow's own server, which binds 0.0.0.0:<port>."""
    assert_loopback_only(*tf_serving)


def assert_loopback_only(launcher: Launcher, replicas: dict[str, tuple[int, int]]) -> None:
    addresses = machine_addresses()
    here = listening_ports(Path("/proc/self/net"))
    for name, (pid, port) in replicas.items():
        assert alive(pid), name
        # This machine has no listener on the port, on any address...
        assert port not in here, (name, port, here[port])
        # ...and none of its addresses answers on it...
        for family, address, scope in addresses:
            assert refused(family, address, scope, port), (name, address, port)
        # ...while the replica does listen on it, in a network with nothing but loopback.
        inside = listening_ports(Path(f"/proc/{pid}/net"))
        assert port in inside, (name, inside)
        interfaces = [line.split(":")[0].strip() for line in
                      Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]]  # fmt: skip
        assert interfaces == ["lo"], (name, interfaces)
    assert "network: the replicas share a private network namespace" in launcher.text()


def test_without_a_private_network_the_launcher_says_so_before_starting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse() -> cli.PrivateNetwork:
        raise cli.NetworkUnavailable("the kernel refused a network namespace (EPERM)")

    monkeypatch.setattr(cli.PrivateNetwork, "create", staticmethod(refuse))
    stacks_dir = fake_stacks_dir(tmp_path)
    with reaping(stacks_dir):
        status = main(["fake", "--stacks-dir", str(stacks_dir), "--output-dir",
                       str(stacks_dir / "out")])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    warning = out.index("WARNING: no private network for the replicas (the kernel refused")
    assert "listen on every interface of this machine" in out
    assert warning < out.index("started mnist-")


def test_tensorboard_stays_on_this_machines_loopback(tmp_path: Path) -> None:
    """The sidecar is for the user's browser: not in the replicas' network."""
    stacks_dir = fake_stacks_dir(tmp_path)
    with reaping(stacks_dir):
        launcher = Launcher(
            stacks_dir, "--set", "job.args=[--hang]", "--tensorboard", "--timeout", "120"
        )
        try:
            pid = int(launcher.wait_for_line(r"started tensorboard \(pid (\d+)\)").group(1))
            own = os.readlink("/proc/self/ns/net")
            assert os.readlink(f"/proc/{pid}/ns/net") == own
            assert wait_until(lambda: len(records(stacks_dir)) == 4), launcher.text()
            for name, (replica, _port) in replica_ports(stacks_dir).items():
                assert os.readlink(f"/proc/{replica}/ns/net") != own, name
        finally:
            launcher.close()
