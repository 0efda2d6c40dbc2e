"""Process set-up that must happen before TensorFlow starts: log noise, proxies, threads.

- gRPC honours `http_proxy`. A proxy set for pip or apt in an image would carry the
  cluster's own traffic (ps, workers, chief) and the first remote call hangs, so the
  cluster hosts are added to `no_proxy` whenever a proxy is set.
- When every task runs on this machine (the local launcher), TensorFlow would start one
  compute thread per core in every process; on 2 cores, 2 workers oversubscribe each other
  and ran about 10 % slower than with one thread each. So the cores are split among the
  processes that compute. In Kubernetes each pod has its own cores and nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from trainer.plan import Plan
from trainer.tf_config import ClusterConfig

PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "grpc_proxy", "all_proxy")
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def prepare(
    config: ClusterConfig | None, plan: Plan, environ: MutableMapping[str, str] = os.environ
) -> None:
    # TensorFlow's C++ INFO lines (server start-up, CPU features) bury the progress lines;
    # warnings and errors still show. A user's own setting wins.
    environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    if config is None:
        return
    if any(environ.get(name) for name in PROXY_VARS):
        for name in ("no_proxy", "NO_PROXY"):
            present = [host for host in environ.get(name, "").split(",") if host.strip()]
            environ[name] = ",".join(dict.fromkeys([*present, *LOCAL_HOSTS, *config.hosts()]))
    if config.all_local() and "TF_NUM_INTRAOP_THREADS" not in environ:
        computing = len(config.cluster.get("worker", ()))
        if plan.strategy == "multi_worker_mirrored":
            computing += len(config.cluster.get("chief", ()))
        cores = len(os.sched_getaffinity(0))
        environ["TF_NUM_INTRAOP_THREADS"] = str(max(1, cores // max(computing, 1)))
