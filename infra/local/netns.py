"""A private network for the replicas of one local run: loopback only, shared by them alone.

TensorFlow's gRPC server binds `0.0.0.0:<port>` whatever host TF_CONFIG names (the address
is hard-coded in `grpc_server_lib.cc`; no option narrows it), and it authenticates nobody.
On a developer's machine that would let anyone who reaches the machine run ops in a replica.
So the replicas do not share the machine's network at all: the launcher makes one network
namespace per run with nothing in it but `lo`, and every replica of the run joins it before
its command starts. Inside, `localhost:<port>` works as before; from the machine's own
addresses, and from every other network namespace, the ports do not exist.

An unprivileged user may create a network namespace only together with a user namespace it
owns (`unshare(CLONE_NEWUSER | CLONE_NEWNET)`). The user namespace maps the user's own uid
and gid to themselves, so files keep their owner and a replica gains no privilege outside.
A short-lived holder process creates both and brings `lo` up (it has the capabilities inside
its new namespaces until it execs nothing: it never does); the launcher keeps file
descriptors of the two namespaces, which keep them alive after the holder exits, and each
replica `setns`es into them between fork and exec (`enter`). The owner of a user namespace
has every capability in it, so joining needs no privilege either.

Where the kernel refuses (user namespaces disabled by sysctl, a seccomp or AppArmor policy,
not Linux), `PrivateNetwork.create` raises `NetworkUnavailable` with the kernel's reason,
and the launcher says so before anything starts; so it does for a holder that gives no
answer within HOLDER_ANSWER_SECONDS.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import select
import socket
import struct
import subprocess
import sys
from collections.abc import Callable

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
READY = "ready"
# The holder answers in well under a second (a stdlib-only Python and four system calls);
# this is for one that never does, so the launcher says so instead of waiting in silence.
HOLDER_ANSWER_SECONDS = 30.0


class NetworkUnavailable(Exception):
    """No private network namespace can be made here; the message says why."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def bring_loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def _hold() -> None:
    """The holder: new user and network namespaces, `lo` up, then wait for the launcher."""
    uid, gid = os.geteuid(), os.getegid()
    try:
        _check(_libc().unshare(CLONE_NEWUSER | CLONE_NEWNET), "unshare")
        with open("/proc/self/setgroups", "w") as setgroups:
            setgroups.write("deny")
        with open("/proc/self/uid_map", "w") as uid_map:
            uid_map.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as gid_map:
            gid_map.write(f"{gid} {gid} 1")
        bring_loopback_up()
    except OSError as error:
        print(error.strerror or error, flush=True)
        sys.exit(1)
    print(READY, flush=True)
    sys.stdin.read()  # until the launcher has the namespaces (or is gone)


class PrivateNetwork:
    """File descriptors of a user and a network namespace with only `lo` in it, up."""

    def __init__(self, user_fd: int, net_fd: int) -> None:
        self._user_fd = user_fd
        self._net_fd = net_fd

    @classmethod
    def create(cls) -> PrivateNetwork:
        if not sys.platform.startswith("linux"):
            raise NetworkUnavailable(f"network namespaces are Linux only, not {sys.platform}")
        holder = subprocess.Popen(
            # -I: neither the cwd nor PYTHONPATH nor the user's site on its path, from any
            # cwd. Site-packages stays (the holder imports the stdlib only), so that the
            # mutation run's copy of this file, which imports mutmut, can start it too.
            [sys.executable, "-I", __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert holder.stdin is not None and holder.stdout is not None
        try:
            answered, _, _ = select.select([holder.stdout], [], [], HOLDER_ANSWER_SECONDS)
            if not answered:
                holder.kill()
                raise NetworkUnavailable(
                    f"the namespace holder gave no answer in {HOLDER_ANSWER_SECONDS:g} s"
                )
            said = holder.stdout.readline().strip()
            if said != READY:
                raise NetworkUnavailable(f"the kernel refused a network namespace ({said})")
            user_fd = os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
            net_fd = os.open(f"/proc/{holder.pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            holder.stdin.close()
            holder.stdout.close()
            holder.wait()
        return cls(user_fd, net_fd)

    def entering(self) -> Callable[[], None]:
        """What a child calls between fork and exec to join the namespaces; it only makes
        two system calls (the child of a threaded parent must not take Python's locks)."""
        setns = _libc().setns
        user_fd, net_fd = self._user_fd, self._net_fd

        def enter() -> None:
            # Without the network the replica would serve on every interface: never start.
            if setns(user_fd, CLONE_NEWUSER) != 0 or setns(net_fd, CLONE_NEWNET) != 0:
                os._exit(126)

        return enter

    def close(self) -> None:
        for fd in (self._user_fd, self._net_fd):
            os.close(fd)


if __name__ == "__main__":
    _hold()
