"""A TensorFlow gRPC server started through TensorFlow's C API, without `import tensorflow`.

A ps or worker only serves: the chief sends it functions and tensors, and its C++ runtime
runs them. `import tensorflow` runs the package's `__init__`, which loads the whole Python
API and Keras: with the server, 2.1-2.3 CPU-seconds here. Starting a server needs far less:
the native library that `_pywrap_tf_session` links (every kernel is registered when it
loads), the `ServerDef` protobuf and TensorFlow's error classes: 0.45-0.5 CPU-seconds
(docs/benchmarks.md). In the local dev topology three servers and the chief start at once
on two cores, so the difference is CPU the chief's own import gets; in a cluster, every
(re)started server serves that much sooner.

Those modules are imported with a stand-in for the `tensorflow` package, so its `__init__`
does not run, and the stand-in is removed afterwards: a later `import tensorflow` in the
same process loads the real package and reuses the modules already loaded. TensorFlow's
own `errors_impl` is imported on purpose: it registers the classes a failed call raises.
The native code needs them (without them a failed start aborts the process), and accepts
them once per process, so they must be TensorFlow's own, which the later import reuses.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

PACKAGE = "tensorflow"


def start_server(cluster: Mapping[str, Sequence[str]], job: str, index: int) -> str:
    """Start this task's server in `cluster` (job name to addresses); return its target,
    e.g. "grpc://localhost:2222". A failure raises `tf.errors.OpError`, as
    `tf.distribute.Server` does (e.g. UnknownError when the port is taken)."""
    with _package_init_skipped(PACKAGE):
        from tensorflow.core.protobuf import tensorflow_server_pb2
        from tensorflow.python.client import _pywrap_tf_session as c_api
        from tensorflow.python.framework import errors_impl  # noqa: F401  (see above)
    server_def = tensorflow_server_pb2.ServerDef(job_name=job, task_index=index, protocol="grpc")
    for name, addresses in cluster.items():
        server_def.cluster.job.add(name=name, tasks=dict(enumerate(addresses)))
    server = c_api.TF_NewServer(server_def.SerializeToString())
    # Running until the process ends: the handle has no destructor that would stop it (the
    # Python API's Server stops it in its own __del__), and TensorFlow cannot shut one down.
    c_api.TF_ServerStart(server)
    return str(c_api.TF_ServerTarget(server))


@contextmanager
def _package_init_skipped(package: str) -> Iterator[None]:
    """Inside: importing `package.sub.module` does not run `package/__init__.py` (unless
    the package is imported already, in which case nothing changes)."""
    if package in sys.modules:
        yield
        return
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"No module named {package!r}", name=package)
    stand_in = types.ModuleType(package)
    stand_in.__path__ = list(spec.submodule_search_locations)
    sys.modules[package] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(package) is stand_in:
            del sys.modules[package]
