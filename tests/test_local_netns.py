"""The replicas' private network (infra/local/netns.py), made in this process and looked at
from a child that joins it, as a replica does: only `lo`, up, and the user's own ids mapped
to themselves (user_namespaces(7): "<id inside> <id outside> <count>"; setgroups "deny").
The whole launcher's view of it: tests/test_local_isolation.py."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.local.netns import NetworkUnavailable, PrivateNetwork, _check

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

# What a replica would see: its interfaces, its id maps, and whether loopback carries a
# connection (a `lo` that is down refuses it with ENETUNREACH).
LOOK = """
import json, pathlib, socket
proc = pathlib.Path("/proc/self")
interfaces = [line.split(":")[0].strip() for line in
              (proc / "net" / "dev").read_text().splitlines()[2:]]
with socket.socket() as server:
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        socket.create_connection(server.getsockname(), timeout=5).close()
        loopback = "up"
    except OSError as error:
        loopback = error.strerror
print(json.dumps({
    "interfaces": interfaces,
    "loopback": loopback,
    "uid_map": (proc / "uid_map").read_text().split(),
    "gid_map": (proc / "gid_map").read_text().split(),
    "setgroups": (proc / "setgroups").read_text().strip(),
    "net": str(pathlib.Path("/proc/self/ns/net").readlink()),
}))
"""


@pytest.fixture
def network() -> Iterator[PrivateNetwork]:
    try:
        made = PrivateNetwork.create()
    except NetworkUnavailable as error:  # a kernel or policy without user namespaces
        pytest.skip(str(error))
    try:
        yield made
    finally:
        made.close()


def look_from_inside(network: PrivateNetwork) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-I", "-c", LOOK],
        preexec_fn=network.entering(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_replica_sees_only_loopback_up_and_its_own_ids(network: PrivateNetwork) -> None:
    seen = look_from_inside(network)
    uid, gid = str(os.geteuid()), str(os.getegid())
    assert seen["interfaces"] == ["lo"]
    assert seen["loopback"] == "up"
    assert seen["uid_map"] == [uid, uid, "1"]
    assert seen["gid_map"] == [gid, gid, "1"]
    assert seen["setgroups"] == "deny"
    assert seen["net"] != str(Path("/proc/self/ns/net").readlink())


def test_every_replica_of_a_run_shares_one_network(network: PrivateNetwork) -> None:
    assert look_from_inside(network)["net"] == look_from_inside(network)["net"]


def held_namespaces() -> list[str]:
    """The namespaces this process holds a descriptor of, as `<kind>:[<inode>]`."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:  # the listing's own descriptor, closed since
            continue
        if target.startswith(("user:[", "net:[")):
            held.append(target)
    return held


def test_close_releases_both_namespaces() -> None:
    before = held_namespaces()
    try:
        network = PrivateNetwork.create()
    except NetworkUnavailable as error:
        pytest.skip(str(error))
    new = [target for target in held_namespaces() if target not in before]
    assert sorted(target.split(":")[0] for target in new) == ["net", "user"]
    network.close()
    assert held_namespaces() == before


def test_a_replica_that_cannot_join_never_starts(tmp_path: Path) -> None:
    # Descriptors that are no namespaces: setns refuses, and the child must not run its
    # command in the machine's network (where it would serve on every interface).
    marker = tmp_path / "ran"
    with open(os.devnull) as user, open(os.devnull) as net:
        enter = PrivateNetwork(user.fileno(), net.fileno()).entering()
        done = subprocess.run(
            [sys.executable, "-c", f"open({str(marker)!r}, 'w')"], preexec_fn=enter, timeout=60
        )
    assert done.returncode == 126
    assert not marker.exists()


def test_elsewhere_than_linux_the_launcher_is_told_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(
        NetworkUnavailable, match=r"^network namespaces are Linux only, not darwin$"
    ):
        PrivateNetwork.create()


def test_a_failed_system_call_is_an_oserror_with_the_kernels_reason() -> None:
    _check(0, "unshare")
    ctypes.set_errno(errno.EPERM)
    with pytest.raises(OSError) as raised:
        _check(-1, "unshare")
    assert (raised.value.errno, raised.value.strerror) == (
        errno.EPERM,
        f"unshare: {os.strerror(errno.EPERM)}",
    )
