"""Process set-up that must happen before TensorFlow starts: log noise, proxies, threads.

- gRPC honours `http_proxy`. A proxy set for pip or apt in an image would carry the
  cluster's own traffic (ps, workers, chief) and the first remote call hangs, so the
  cluster hosts are added to `no_proxy` whenever a proxy is set.
- Thread pools are set, never left to TensorFlow, which sizes both from the CPU affinity
  mask alone (`tensorflow/core/common_runtime/process_util.cc` reads
  `TF_NUM_INTEROP_THREADS` / `TF_NUM_INTRAOP_THREADS` first):
  - inter-op: at least 2. With one thread a ParameterServerStrategy worker or ps deadlocks
    on the first function it runs, and the whole run waits in silence (issue 41: one core
    in the mask, as under `taskset`, a sweep trial pinned to a core, or a Guaranteed pod
    given an exclusive core by the kubelet's static CPU manager).
  - intra-op: this process's share of the CPUs. The share is the affinity mask, capped by
    the cgroup's CPU quota (a pod's CPU limit, `docker --cpus`), which TensorFlow ignores:
    a 1-CPU pod on a 16-core node otherwise runs 16 compute threads on one CPU's quota.
    When every task runs on this machine (the local launcher) the share is split among
    the processes that compute: on 2 cores, 2 workers with 2 threads each oversubscribed
    each other and ran about 10 % slower than with one thread each. A ParameterServerStrategy
    chief is not one of them: it schedules while the workers train, and computes (the test
    evaluation, the export) once they are done, with the whole share; with one thread of
    two its evaluation took twice the single process's.
  A value the user (or the pod spec, `infra/replica_plan/plan.py`) set wins, except an inter-op
  count below 2, which is raised, said on stderr.
- Tensors are allocated by TensorFlow's BFC allocator, which keeps the memory it freed for
  the next step, instead of the default one, which hands each buffer to `malloc` and back
  (`TF_CPU_ALLOCATOR_USE_BFC`, read by `tensorflow/core/common_runtime/process_state.cc`;
  its cap, `TF_CPU_BFC_MEM_LIMIT_IN_MB`, defaults to 64 GB and grows on demand). A
  convolution's gradient takes 1-20 MB scratch buffers a step; `malloc` maps them fresh
  and unmaps them on free, so every step paid their page faults again: two
  MultiWorkerMirrored workers spent 30 of their 77 CPU-seconds in the kernel, and trained
  1.6x faster with BFC (peak memory +5 %; `bench/allocator.py`, docs/benchmarks.md). A
  user's setting wins.
- Keras imports `matplotlib.pyplot` with itself whenever matplotlib is installed (for plot
  helpers, `keras.src.visualization`), and does without it otherwise. The trainer plots
  nothing, so `python -m trainer` marks matplotlib absent before TensorFlow loads: 0.55 of
  3.2 CPU-seconds of `import tensorflow, keras`, in every replica, on every (re)start, where
  matplotlib is installed (the development venv the local launcher runs; docs/benchmarks.md).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import MutableMapping
from pathlib import Path

from trainer.plan import Plan, Role
from trainer.tf_config import ClusterConfig

PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "grpc_proxy", "all_proxy")
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
INTEROP = "TF_NUM_INTEROP_THREADS"
INTRAOP = "TF_NUM_INTRAOP_THREADS"
MIN_INTEROP_THREADS = 2
BFC_ALLOCATOR = "TF_CPU_ALLOCATOR_USE_BFC"
CGROUP = Path("/sys/fs/cgroup")


def prepare(
    config: ClusterConfig | None, plan: Plan, environ: MutableMapping[str, str] = os.environ
) -> None:
    # TensorFlow's C++ INFO lines (server start-up, CPU features) bury the progress lines;
    # warnings and errors still show. A user's own setting wins.
    environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    environ.setdefault(BFC_ALLOCATOR, "1")
    set_thread_pools(config, plan, environ)
    if config is None:
        return
    if any(environ.get(name) for name in PROXY_VARS):
        for name in ("no_proxy", "NO_PROXY"):
            present = [host for host in environ.get(name, "").split(",") if host.strip()]
            environ[name] = ",".join(dict.fromkeys([*present, *LOCAL_HOSTS, *config.hosts()]))


def skip_plotting_imports(modules: MutableMapping[str, object] = sys.modules) -> None:
    """Make `import matplotlib` fail at once in this process (a None entry in `sys.modules`
    stops an import: the import system's documented behaviour), unless already imported."""
    modules.setdefault("matplotlib", None)


def set_thread_pools(
    config: ClusterConfig | None, plan: Plan, environ: MutableMapping[str, str]
) -> None:
    share = cpu_share()
    # A ParameterServerStrategy chief computes only once the workers are done (the test
    # evaluation, the export): it keeps the whole share.
    if config is not None and config.all_local() and plan.role is not Role.COORDINATOR:
        computing = len(config.cluster.get("worker", ()))
        if plan.strategy == "multi_worker_mirrored":
            computing += len(config.cluster.get("chief", ()))
        share = max(1, share // max(computing, 1))
    environ.setdefault(INTRAOP, str(share))
    inter = _count(environ.get(INTEROP))
    if inter is None:
        environ[INTEROP] = str(max(MIN_INTEROP_THREADS, share))
    elif inter < MIN_INTEROP_THREADS:
        environ[INTEROP] = str(MIN_INTEROP_THREADS)
        sys.stderr.write(
            f"tftrain: {INTEROP}={inter} raised to "
            f"{MIN_INTEROP_THREADS}: with one inter-op thread a distributed TensorFlow "
            "server deadlocks on its first function\n"
        )


def cpu_share(cgroup: Path = CGROUP) -> int:
    """CPUs this process may use: its affinity mask, capped by its cgroup's CPU quota."""
    cpus = len(os.sched_getaffinity(0))
    quota = cgroup_cpus(cgroup)
    return max(1, min(cpus, math.ceil(quota))) if quota is not None else cpus


def cgroup_cpus(cgroup: Path = CGROUP) -> float | None:
    """The cgroup's CPU limit in CPUs (quota ÷ period), or None without one: cgroup v2's
    `cpu.max` ("max 100000" or "150000 100000"), else v1's cfs_quota_us / cfs_period_us."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (cgroup / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (cgroup / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    try:
        limit, length = int(quota), int(period)
    except ValueError:
        return None  # "max": no quota
    return limit / length if limit > 0 and length > 0 else None


def _count(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
