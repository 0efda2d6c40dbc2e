"""A ParameterServerStrategy ps or worker in this process (trainer.server): a real TensorFlow
server on a free local port, the SIGTERM wait and the exits stood in for (the whole
multi-process runs are @slow: test_fault_tolerance.py). What it prints, what it waits for,
and when a ps counts the run as complete."""

from __future__ import annotations

import gzip
import json
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from trainer import server
from trainer.preemption import Notice
from trainer.settings import Settings, parse_settings
from trainer.tf_config import parse_tf_config


class Exited(Exception):
    """exit_at_once, stood in for: the process would end here."""


@pytest.fixture(autouse=True)
def _sigterm_handler_restored() -> Iterator[None]:
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])


def labels_file(data_dir: Path, count: int) -> None:
    """An IDX labels file of `count` labels (only its header is read)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    header = bytes((0, 0, 8, 1)) + count.to_bytes(4, "big")
    (data_dir / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(header + bytes(count)))


def publish(output: Path, *steps: int) -> None:
    (output / "checkpoints").mkdir(parents=True, exist_ok=True)
    for step in steps:
        (output / "checkpoints" / f"ckpt-{step}.sha256").write_text("")


def settings(tmp_path: Path, *extra: str) -> Settings:
    return parse_settings(
        [f"--data-dir={tmp_path / 'data'}", f"--output-dir={tmp_path / 'out'}",
         "--batch-size=10", "--epochs=3", *extra],
        {},
    )  # fmt: skip


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    """An HTTP/2 frame (RFC 9113, 4.1): length (24 bits), type, flags, stream id."""
    return (
        len(payload).to_bytes(3, "big") + bytes((kind, flags)) + stream.to_bytes(4, "big") + payload
    )


def header(name: bytes, value: bytes) -> bytes:
    """An HPACK literal header field without indexing, new name (RFC 7541, 6.2.2)."""
    return bytes((0, len(name))) + name + bytes((len(value),)) + value


GET_STATUS = b"".join(
    header(name, value)
    for name, value in (
        (b":method", b"POST"),
        (b":scheme", b"http"),
        # TensorFlow's worker service (tensorflow/core/protobuf/worker_service.proto).
        (b":path", b"/tensorflow.WorkerService/GetStatus"),
        (b":authority", b"localhost"),
        (b"content-type", b"application/grpc"),
        (b"te", b"trailers"),
    )
)


def serves_tensorflow(port: int, seconds: float = 30.0) -> bool:
    """Whether TensorFlow's worker service answers a GetStatus call on `port`, spoken by hand
    (a gRPC client library in the test process does not survive mutmut's fork server): the
    client preface, SETTINGS, the call's HEADERS and one empty gRPC message (a 0 flag, a 0
    length) on stream 1; the answer is a HEADERS frame on stream 1. A server that was built
    but not started accepts the connection and sends its SETTINGS, and never answers."""
    deadline = time.monotonic() + seconds
    with socket.create_connection(("localhost", port), timeout=seconds) as connection:
        connection.sendall(
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            + frame(0x4, 0, 0, b"")  # SETTINGS
            + frame(0x1, 0x4, 1, GET_STATUS)  # HEADERS, END_HEADERS
            + frame(0x0, 0x1, 1, bytes(5))  # DATA, END_STREAM
        )
        received = b""
        while time.monotonic() < deadline:
            while len(received) >= 9 and len(received) >= 9 + int.from_bytes(received[:3], "big"):
                kind, flags = received[3], received[4]
                stream = int.from_bytes(received[5:9], "big") & 0x7FFFFFFF
                if kind == 0x1 and stream == 1:
                    return True
                if kind == 0x4 and not flags & 0x1:
                    connection.sendall(frame(0x4, 0x1, 0, b""))  # acknowledge its SETTINGS
                received = received[9 + int.from_bytes(received[:3], "big") :]
            try:
                chunk = connection.recv(4096)
            except TimeoutError:
                return False
            if not chunk:
                return False
            received += chunk
    return False


@pytest.mark.parametrize(("kind", "index"), [("ps", 0), ("worker", 1)])
def test_a_server_serves_until_sigterm_then_a_ps_waits_for_the_save(
    kind: str,
    index: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    addresses = {"ps": [free_port()], "worker": [free_port(), free_port()]}
    config = parse_tf_config(
        json.dumps(
            {
                "cluster": {
                    k: [f"localhost:{port}" for port in ports] for k, ports in addresses.items()
                },
                "task": {"type": kind, "index": index},
            }
        )
    )
    assert config is not None
    port, name = addresses[kind][index], f"{kind}:{index}"
    run = settings(tmp_path)
    labels_file(tmp_path / "data", 25)  # 3 steps an epoch at batch 10: final step 9
    publish(tmp_path / "out", 9)
    calls: list[tuple[object, ...]] = []

    def wait_for_sigterm(notice: Notice) -> None:
        # The handler is the notice's own, installed before the server started.
        assert signal.getsignal(signal.SIGTERM) == notice._on_sigterm
        calls.append(("waited",))

    def serve_until_saved(output_dir: Path, name: str, complete: object) -> None:
        calls.append(("until saved", output_dir, name, complete()))  # type: ignore[operator]

    def exit_at_once(name: str, complete: object) -> None:
        calls.append(("exit", name, complete()))  # type: ignore[operator]
        raise Exited

    monkeypatch.setattr(server, "wait_for_sigterm", wait_for_sigterm)
    monkeypatch.setattr(server, "serve_until_saved", serve_until_saved)
    monkeypatch.setattr(server, "exit_at_once", exit_at_once)
    with pytest.raises(Exited):
        server.serve(config, run)
    assert (
        capsys.readouterr().out == f"{name} serving at grpc://localhost:{port} until the run ends\n"
    )
    ps_wait = [("until saved", tmp_path / "out", name, True)] if kind == "ps" else []
    # Both read the final checkpoint (published above) from this run's output dir.
    assert calls == [("waited",), *ps_wait, ("exit", name, True)]
    # The server serves on its own address from the cluster.
    assert serves_tensorflow(port)


@pytest.mark.parametrize(
    ("extra", "labels", "saved", "complete"),
    [
        ((), 25, (9,), True),  # 3 epochs of ceil(25 / 10) = 3 steps
        ((), 25, (8, 6), False),
        ((), 25, (), False),
        ((), 25, (12,), True),  # beyond the final step (an earlier, longer plan): done too
        ((), 21, (9,), True),  # ceil(21 / 10) = 3 as well
        ((), 20, (9,), True),  # 2 steps an epoch: 6
        ((), 20, (5,), False),
        (("--max-steps=4",), 25, (4,), True),
        (("--max-steps=4",), 25, (3,), False),
        (("--train-examples=10",), 25, (3,), True),  # 1 step an epoch
        (("--train-examples=10",), 25, (2,), False),
    ],
)
def test_a_ps_counts_the_run_complete_once_the_final_checkpoint_is_published(
    tmp_path: Path, extra: tuple[str, ...], labels: int, saved: tuple[int, ...], complete: bool
) -> None:
    labels_file(tmp_path / "data", labels)
    publish(tmp_path / "out", *saved)
    assert server.training_complete(settings(tmp_path, *extra)) is complete


def test_a_ps_that_cannot_read_the_data_does_not_know_the_run_is_complete(
    tmp_path: Path,
) -> None:
    publish(tmp_path / "out", 9, 1000)
    assert server.training_complete(settings(tmp_path)) is False  # no labels file
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train-labels-idx1-ubyte.gz").write_bytes(b"not gzip")
    assert server.training_complete(settings(tmp_path)) is False
