"""What one replica's trainer gets, derived once for the two places it runs: a pod and here.

The Kubernetes Jobs (`infra.manifests.workloads`) and the local launcher (`infra.local.plan`)
both build their replicas from `replica_plans`, so each one's command, args, environment, working
directory, home and scratch space follow one set of rules. What must differ is the
`Place`'s to say, and nothing else: the replicas' addresses (Services there, localhost ports
here), the run's output dir (the volume there, a directory here), where the lifecycle
scripts and the data are, and the scratch dir (the pod's /tmp there, a directory per
replica here). POD_NAME and POD_NAMESPACE come from the downward API in a pod; here they
are the replica's name and the job's namespace.

Every replica works in its own writable directory on the run's volume, so relative writes
(`./out`) and `$HOME` writes (`~/.cache`) work with a read-only root filesystem, survive a
restart of the replica, and leave the image (or the project checkout) untouched:
  <output dir>/replicas/<replica>/work   the working directory
  <output dir>/replicas/<replica>/home   HOME
  <output dir>/replicas/<replica>/logs   each attempt's output, kept by the supervisor
The supervisor creates them and moves there just before it starts the command; a command
argument naming a file of the directory the replica started in (the image's WORKDIR, the
launcher's directory here) is made absolute first, and that directory leads PYTHONPATH, so
`python train.py` and `python -m pkg` find what they found before (`supervise.sh`).
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from infra.config.instance_types import cpu_cores
from infra.config.model import ReplicaGroup, StackConfig
from infra.lifecycle import ends_run, supervision
from infra.replica_plan.trainer_env import replica_env
from infra.topology import Replica, Topology

REPLICAS_DIR = "replicas"
LOGS_DIR = "logs"
# Beside the job's runs (<volume>/<job>/), shared by them: matplotlib's config and caches.
CACHE_DIR = ".cache/matplotlib"
# The downward API fields a pod's env carries, and what stands for them here.
DOWNWARD_FIELDS = (("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace"))
INTEROP_THREADS = "TF_NUM_INTEROP_THREADS"
INTRAOP_THREADS = "TF_NUM_INTRAOP_THREADS"
MIN_INTEROP_THREADS = 2


@dataclass(frozen=True)
class Place:
    """What differs by nature between a pod and this machine, and only that."""

    topology: Topology  # the replicas at this place's addresses
    output_dir: str  # the run's output dir, as the replicas see it
    supervisor: str  # path of supervise.sh
    export_script: str  # path of export.sh, or "" without an export target
    scratch: Callable[[Replica], str]  # TMPDIR
    data_env: Callable[[bool], Mapping[str, str]]  # input / checkpoint / (if ends run) export


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str = ""
    field_path: str = ""  # set: the pod reads it from the downward API
    # Set: the pod reads this container's resource from the downward API (cores, rounded
    # up); here the variable is left unset (see `thread_env`).
    resource: str = ""


@dataclass(frozen=True)
class ReplicaPlan:
    replica: Replica
    group: ReplicaGroup
    command: tuple[str, ...]  # the supervisor, then the group's command
    args: tuple[str, ...]  # the group's args, after the command (Kubernetes' order)
    env: tuple[EnvVar, ...]
    workdir: str
    home: str
    ends_run: bool  # its exit 0 ends the run (TFJob's success policy)

    @property
    def argv(self) -> tuple[str, ...]:
        return (*self.command, *self.args)


def group_of(config: StackConfig, replica: Replica) -> ReplicaGroup:
    return next(group for group in config.replica_groups if group.type == replica.type)


def workspace(output_dir: str, replica: Replica) -> str:
    """The replica's own directory of the run: its working directory and home live there."""
    return f"{output_dir.rstrip('/')}/{REPLICAS_DIR}/{replica.name}"


def replica_plan(
    config: StackConfig, place: Place, replica: Replica, generation: str
) -> ReplicaPlan:
    group = group_of(config, replica)
    topology = place.topology
    ends = ends_run(replica, topology)
    own = workspace(place.output_dir, replica)
    workdir, home, logs = f"{own}/work", f"{own}/home", f"{own}/{LOGS_DIR}"
    supervisor = supervision(config, topology, replica, place.output_dir, place.export_script)
    contract = {
        **replica_env(config, topology, replica, place.output_dir),
        # What the replica was given, so the bundled trainer can refuse to train on the CPU.
        "TFTRAIN_GPUS": str(group.gpu_count),
        **place.data_env(ends),
    }
    own = config.env_of(group)
    env = (
        *(EnvVar(name, value) for name, value in contract.items()),
        *(var for var in thread_env(group) if var.name not in own),
        *(EnvVar(name, field_path=path) for name, path in DOWNWARD_FIELDS),
        EnvVar("HOME", home),
        EnvVar("TMPDIR", place.scratch(replica)),
        # Lines reach `kubectl logs` (and the launcher) as they are printed, not lost in a
        # buffer when the replica is stopped.
        EnvVar("PYTHONUNBUFFERED", "1"),
        # HOME is new every run: matplotlib's font cache (seconds to build) goes where the
        # job's next runs find it, beside them on the volume.
        EnvVar("MPLCONFIGDIR", f"{posixpath.dirname(place.output_dir.rstrip('/'))}/{CACHE_DIR}"),
        *(EnvVar(name, value) for name, value in own.items()),
    )
    command = supervisor.wrap(place.supervisor, config.command_of(group), generation, workdir, logs)
    args = config.args_of(group)
    return ReplicaPlan(replica, group, tuple(command), args, env, workdir, home, ends)


def replica_plans(config: StackConfig, place: Place, generation: str) -> tuple[ReplicaPlan, ...]:
    """Every replica's plan at `place`, in topology order: the one entry both renderers call
    (pods: `infra.manifests.workloads.replica_jobs`; processes: `infra.local.plan.build_plan`)."""
    return tuple(replica_plan(config, place, r, generation) for r in place.topology.replicas)


def thread_env(group: ReplicaGroup) -> tuple[EnvVar, ...]:
    """TensorFlow's thread pools for any trainer, bundled or not (TensorFlow reads both
    variables: `tensorflow/core/common_runtime/process_util.cc`).

    Left to itself, TensorFlow sizes both pools from the CPU affinity mask: a Guaranteed
    pod with an integer CPU (the ps's `cpu: "1"`) gets one exclusive core under the
    kubelet's static CPU manager policy, hence one inter-op thread, and a ps or worker
    server with one inter-op thread deadlocks on the first function it runs (issue 41).
    So inter-op is at least 2; intra-op is the container's CPU limit in whole cores (not
    the node's cores, which TensorFlow would see without a cpuset). Here, where replicas
    share this machine's cores, the bundled trainer divides them itself
    (`trainer/environment.py`). A variable the group's env sets wins."""
    cores = math.ceil(cpu_cores(group.cpu))
    return (
        EnvVar(INTEROP_THREADS, str(max(MIN_INTEROP_THREADS, cores))),
        EnvVar(INTRAOP_THREADS, resource="limits.cpu"),
    )


def local_env(plan: ReplicaPlan, namespace: str) -> dict[str, str]:
    """The plan's env with the downward API's fields as a process here sees them, and `$(VAR)`
    references expanded as the kubelet expands them in a pod. A container resource has no
    counterpart here (no limit): its variable is not set."""
    here = {"metadata.name": plan.replica.name, "metadata.namespace": namespace}
    env: dict[str, str] = {}
    for var in plan.env:
        if var.resource:
            continue
        env[var.name] = here[var.field_path] if var.field_path else expand(var.value, env)
    return env


def expand(text: str, env: Mapping[str, str]) -> str:
    """The kubelet's `$(VAR)` expansion (k8s.io/kubernetes third_party/forked/golang/expansion):
    `$(NAME)` of a defined NAME is its value, an undefined one stays as written; `$$` is one
    `$`; an unclosed `$(` and any other `$` are kept as they are."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        following = text[i + 1]
        if following == "$":
            out.append("$")
            i += 2
        elif following == "(":
            end = text.find(")", i + 2)
            if end == -1:  # an unclosed `$(` is kept; what follows is read on
                out.append("$(")
                i += 2
                continue
            name = text[i + 2 : end]
            out.append(env[name] if name in env else text[i : end + 1])
            i = end + 1
        else:
            out.append(char)
            i += 1
    return "".join(out)
