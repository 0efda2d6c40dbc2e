"""trainer.grpc_server: a ps or worker server started without TensorFlow's Python API.

Each case runs in a fresh Python process, as a replica does: the test process has usually
imported TensorFlow already, which is the other branch (nothing to skip). Expected values
come from TensorFlow's documented behaviour: a server's target is `grpc://` plus its own
address in the cluster; a port in use fails the start with `tf.errors.UnknownError`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from tests.test_trainer_server import free_port, serves_tensorflow

ROOT = Path(__file__).resolve().parents[1]

# What `import tensorflow` loads and a server must not: the package's API, Keras, the graph
# and eager Python layers.
PYTHON_API = ("keras", "tensorflow.python.framework.ops", "tensorflow.python.eager.context")

START = """
import json, sys
from trainer.grpc_server import start_server
cluster = json.loads(sys.argv[1])
try:
    target = start_server(cluster, sys.argv[2], int(sys.argv[3]))
except Exception as error:
    print(json.dumps({"error": type(error).__name__, "module": type(error).__module__}))
    sys.exit(0)
print(json.dumps({
    "target": target,
    "package_stand_in_left": "tensorflow" in sys.modules,
    "loaded": [name for name in json.loads(sys.argv[4]) if name in sys.modules],
}), flush=True)
sys.stdin.readline()  # serve until the test has called
import tensorflow as tf  # the real package, loaded after the server started
print(json.dumps({"later_import": int(tf.constant(2) + 1), "version": tf.__version__}))
"""


def start(cluster: dict[str, list[str]], job: str, index: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", START, json.dumps(cluster), job, str(index), json.dumps(PYTHON_API)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        # The test's own env passes on, mutation testing's switch among it.
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)},
    )


def test_a_server_serves_its_own_address_without_loading_the_python_api() -> None:
    ps, workers = free_port(), [free_port(), free_port()]
    cluster = {
        "ps": [f"localhost:{ps}"],
        "worker": [f"localhost:{port}" for port in workers],
    }
    process = start(cluster, "worker", 1)
    # A server process that hangs ends the test in two minutes: its lines then read empty.
    watchdog = threading.Timer(120, process.kill)
    watchdog.start()
    try:
        assert process.stdout is not None and process.stdin is not None
        started = json.loads(process.stdout.readline())
        assert started == {
            "target": f"grpc://localhost:{workers[1]}",
            "package_stand_in_left": False,
            "loaded": [],
        }
        assert serves_tensorflow(workers[1])
        process.stdin.write("\n")
        process.stdin.flush()
        later = json.loads(process.stdout.readline())
        assert later["later_import"] == 3  # the whole package still imports, and computes
        assert process.wait(timeout=120) == 0
    finally:
        watchdog.cancel()
        process.kill()
        process.wait()


def test_a_taken_port_raises_tensorflows_error_instead_of_aborting() -> None:
    with socket.socket() as taken:
        taken.bind(("localhost", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = start({"ps": [f"localhost:{port}"]}, "ps", 0)
        out, _ = process.communicate(timeout=120)
    # Without TensorFlow's error classes registered, the native code aborts (exit -6).
    assert process.returncode == 0
    assert json.loads(out) == {
        "error": "UnknownError",
        "module": "tensorflow.python.framework.errors_impl",
    }
