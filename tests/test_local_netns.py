"""The replicas' private network (infra/local/netns.py), made in this process and looked at
from a child that joins it, as a replica does: only `lo`, up, and the user's own ids mapped
to themselves (user_namespaces(7): "<id inside> <id outside> <count>"; setgroups "deny").
The whole launcher's view of it: tests/test_local_isolation.py."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.local import netns
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


def kernel_allows_namespaces() -> bool:
    """Whether this kernel lets this user make a user and a network namespace, asked of
    util-linux's unshare(1), not of the code under test."""
    if not sys.platform.startswith("linux"):
        return False
    if shutil.which("unshare") is None:
        return True  # nothing to ask: the tests then say what create() does
    done = subprocess.run(["unshare", "--user", "--net", "--map-current-user", "true"],
                          capture_output=True, timeout=60)  # fmt: skip
    return done.returncode == 0


NAMESPACES = pytest.mark.skipif(
    not kernel_allows_namespaces(), reason="this kernel refuses user namespaces"
)


@pytest.fixture
def network() -> Iterator[PrivateNetwork]:
    made = PrivateNetwork.create()
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


@NAMESPACES
def test_a_replica_sees_only_loopback_up_and_its_own_ids(network: PrivateNetwork) -> None:
    seen = look_from_inside(network)
    uid, gid = str(os.geteuid()), str(os.getegid())
    assert seen["interfaces"] == ["lo"]
    assert seen["loopback"] == "up"
    assert seen["uid_map"] == [uid, uid, "1"]
    assert seen["gid_map"] == [gid, gid, "1"]
    assert seen["setgroups"] == "deny"
    assert seen["net"] != str(Path("/proc/self/ns/net").readlink())


@NAMESPACES
def test_every_replica_of_a_run_shares_one_network(network: PrivateNetwork) -> None:
    assert look_from_inside(network)["net"] == look_from_inside(network)["net"]


def held_namespaces() -> dict[int, str]:
    """The namespaces this process holds a descriptor of: fd → `<kind>:[<inode>]`."""
    held = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:  # the listing's own descriptor, closed since
            continue
        if target.startswith(("user:[", "net:[")):
            held[int(fd)] = target
    return held


@NAMESPACES
def test_close_releases_both_namespaces() -> None:
    before = held_namespaces()
    network = PrivateNetwork.create()
    new = {fd: target for fd, target in held_namespaces().items() if fd not in before}
    assert sorted(target.split(":")[0] for target in new.values()) == ["net", "user"]
    # Held for the replicas' preexec only: no program the launcher execs inherits them.
    assert not any(os.get_inheritable(fd) for fd in new)
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


@NAMESPACES
def test_the_holder_ignores_the_users_python_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user's PYTHONPATH with a module named like the stdlib's must not run in the holder:
    # it starts isolated (-I).
    (tmp_path / "socket.py").write_text("raise SystemExit('shadowed')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    PrivateNetwork.create().close()


@pytest.mark.parametrize(
    ("holder", "said"),
    [
        ("print('unshare: Operation not permitted', flush=True)\nraise SystemExit(1)\n",
         "unshare: Operation not permitted"),
        ("import sys\nsys.stderr.write('Fatal Python error\\n')\nraise SystemExit(1)\n",
         "Fatal Python error"),
    ],
)  # fmt: skip
def test_a_refusal_is_reported_with_what_the_holder_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, holder: str, said: str
) -> None:
    # A holder that cannot make the namespaces says why on its output (its own message, or
    # Python's on stderr) and exits: the launcher is told that, and starts no replica in it.
    script = tmp_path / "holder.py"
    script.write_text(holder)
    monkeypatch.setattr(netns, "__file__", str(script))
    with pytest.raises(NetworkUnavailable) as raised:
        PrivateNetwork.create()
    assert str(raised.value) == f"the kernel refused a network namespace ({said})"


@NAMESPACES
def test_the_real_holder_refused_by_the_kernel_says_why_and_exits_1() -> None:
    # The real holder, where the kernel refuses it a user namespace: run inside a user
    # namespace whose own limit of nested ones is 0 (user_namespaces(7): the limits are per
    # user namespace), unshare(2) fails with ENOSPC. The launcher is told the call and the
    # kernel's reason, as the holder prints them; nothing is left running.
    create = (
        "from infra.local.netns import NetworkUnavailable, PrivateNetwork\n"
        "try:\n    PrivateNetwork.create()\n"
        "except NetworkUnavailable as error:\n    print(error)\n"
    )
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c",
         'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -c "$1"',
         sys.executable, create],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    if "max_user_namespaces" in done.stderr:
        pytest.skip(f"cannot lower the nested limit here: {done.stderr.strip()}")
    assert done.stdout == (
        "the kernel refused a network namespace (unshare: No space left on device)\n"
    ), done.stderr
    # Its exit status, as its own run shows it: 1.
    holder = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c",
         'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -I "$1"',
         sys.executable, netns.__file__],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (holder.returncode, holder.stdout) == (1, "unshare: No space left on device\n")


def test_a_holder_that_never_answers_is_reported_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Silent and alive (it would wait on its input forever): the launcher stops waiting
    # after the deadline, kills it, and says so.
    script = tmp_path / "holder.py"
    script.write_text("import sys\nsys.stdin.read()\n")
    monkeypatch.setattr(netns, "__file__", str(script))
    monkeypatch.setattr(netns, "HOLDER_ANSWER_SECONDS", 2.0)
    started = time.monotonic()
    with pytest.raises(NetworkUnavailable) as raised:
        PrivateNetwork.create()
    waited = time.monotonic() - started
    assert str(raised.value) == "the namespace holder gave no answer in 2 s"
    # The configured deadline, not a doubled one: 2 s of room for a loaded machine's
    # start and kill of the holder.
    assert 2.0 <= waited < 4.0


def test_a_failed_call_through_libc_reports_the_kernels_errno() -> None:
    # setns on a descriptor that is not open: EBADF (setns(2)), read back as the reason (not
    # a value left over from an earlier call).
    ctypes.set_errno(0)
    with pytest.raises(OSError) as raised:
        _check(netns._libc().setns(-1, netns.CLONE_NEWNET), "setns")
    assert (raised.value.errno, raised.value.strerror) == (
        errno.EBADF,
        f"setns: {os.strerror(errno.EBADF)}",
    )
