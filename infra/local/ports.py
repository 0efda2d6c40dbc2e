"""Free localhost ports, held until the replica that uses them is about to start.

Binding port 0 lets the kernel pick a port nobody uses; keeping each socket open until just
before its replica is spawned stops other replicas (and anything else on the machine) from
being handed the same port meanwhile. The socket never listens, so closing it leaves no
TIME_WAIT behind and the replica can bind the port at once. It cannot be handed over while
open: TensorFlow's gRPC server binds 0.0.0.0:<port> without SO_REUSEPORT (measured), so a
small window between close and the replica's bind remains, per replica rather than for the
whole cluster.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from types import TracebackType

HOST = "127.0.0.1"


class PortReservation:
    def __init__(self, names: Iterable[str]) -> None:
        self._sockets: dict[str, socket.socket] = {}
        self._ports: dict[str, int] = {}
        try:
            for name in names:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                self._sockets[name] = sock
                sock.bind((HOST, 0))
                self._ports[name] = sock.getsockname()[1]
        except BaseException:
            self.close()
            raise

    @property
    def ports(self) -> dict[str, int]:
        return dict(self._ports)

    def port(self, name: str) -> int:
        return self._ports[name]

    def release(self, name: str) -> None:
        """Free `name`'s port for its process; releasing twice (a restart) is a no-op."""
        sock = self._sockets.pop(name, None)
        if sock is not None:
            sock.close()

    def close(self) -> None:
        for name in list(self._sockets):
            self.release(name)

    def __enter__(self) -> PortReservation:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
