"""A cloud stack's run, read from the cluster: each replica's Job, Pods and Events.

Read with `kubectl get -o json` (the objects exactly as the API returns them) and the stack's
kubeconfig: `--kubeconfig`, else the stack output `kubeconfig` (`pulumi stack output
--show-secrets`, written to a private temp file for kubectl and removed), else kubectl's own
default (KUBECONFIG, ~/.kube/config). No cloud credentials: only the Kubernetes API.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.config import StackConfig
from infra.manifests.common import JOB_LABEL, RUN_ID_LABEL
from infra.manifests.workloads import CONTAINER_NAME as CONTAINER
from infra.status.causes import Cause, Obj, failed_condition, job_cause, pod_cause
from infra.topology import build_topology

REQUEST_TIMEOUT = "8s"  # per kubectl call; both run at once, so the answer comes within ~10 s
KUBECONFIG_OUTPUT = "kubeconfig"
# Where kubectl goes with no kubeconfig at all (client-go's default server).
_NO_CLUSTER = "localhost:8080"
# The Job controller labels every pod it creates with its Job's name.
JOB_NAME_LABEL = "job-name"


class ClusterError(Exception):
    """The cluster could not be read: one line for the user."""


@dataclass(frozen=True)
class Snapshot:
    jobs: list[Obj]
    pods: list[Obj]
    events: list[Obj]


@dataclass(frozen=True)
class ReplicaLine:
    replica: str
    phase: str
    restarts: int
    pod: str
    cause: Cause | None


@contextlib.contextmanager
def kubeconfig_file(stack: str, given: Path | None) -> Iterator[str | None]:
    """The kubeconfig path to use (None: kubectl's default); a stack output is written to a
    0600 temp file only for as long as the status runs."""
    if given is not None:
        yield str(given)
        return
    pulumi = shutil.which("pulumi")
    text = ""
    if pulumi:
        result = subprocess.run(
            [pulumi, "stack", "output", KUBECONFIG_OUTPUT, "--show-secrets", "--stack", stack],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        text = result.stdout.strip() if result.returncode == 0 else ""
    if not text:
        yield None
        return
    handle, path = tempfile.mkstemp(prefix="tftrain-kubeconfig-")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        yield path
    finally:
        Path(path).unlink(missing_ok=True)


def kubectl_argv(kubeconfig: str | None, namespace: str, *args: str) -> list[str]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise ClusterError("kubectl is not installed: the cloud status reads the cluster with it")
    argv = [kubectl, *(["--kubeconfig", kubeconfig] if kubeconfig else [])]
    return [*argv, "--namespace", namespace, f"--request-timeout={REQUEST_TIMEOUT}", *args]


def _kubectl(kubeconfig: str | None, namespace: str, *args: str) -> subprocess.Popen[str]:
    argv = kubectl_argv(kubeconfig, namespace, *args)
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def last_lines(kubeconfig: str | None, namespace: str, pod: str, lines: int) -> list[str]:
    """The last lines a pod's container printed (`kubectl logs --tail`), or [] if gone."""
    process = _kubectl(kubeconfig, namespace, "logs", pod, "-c", CONTAINER, f"--tail={lines}")
    out, _ = process.communicate(timeout=30)
    return out.splitlines() if process.returncode == 0 else []


def _items(process: subprocess.Popen[str]) -> list[Obj]:
    out, err = process.communicate(timeout=30)
    if process.returncode != 0:
        first = (err.strip().splitlines() or ["no answer"])[-1]
        if _NO_CLUSTER in first:
            raise ClusterError(
                "kubectl has no cluster to ask (its default config is empty: it tried "
                f"{_NO_CLUSTER}): pass --kubeconfig FILE, or deploy the stack first"
            )
        raise ClusterError(f"kubectl: {first}")
    try:
        return list(json.loads(out).get("items") or [])
    except (json.JSONDecodeError, AttributeError) as error:
        raise ClusterError(f"kubectl returned no JSON list: {error}") from None


def fetch(config: StackConfig, kubeconfig: str | None) -> Snapshot:
    """The run's Jobs and Pods (by the run's labels) and the namespace's Events, read at once."""
    selector = f"{JOB_LABEL}={config.job.name},{RUN_ID_LABEL}={config.job.run_id}"
    namespace = config.job.namespace
    workloads = _kubectl(kubeconfig, namespace, "get", "jobs,pods", "-l", selector, "-o", "json")
    events = _kubectl(kubeconfig, namespace, "get", "events", "-o", "json")
    items = _items(workloads)
    return Snapshot(
        jobs=[i for i in items if i.get("kind") == "Job"],
        pods=[i for i in items if i.get("kind") == "Pod"],
        events=_items(events),
    )


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _about(events: Sequence[Obj], kind: str, names: set[str]) -> list[Obj]:
    return [
        e
        for e in events
        if (e.get("involvedObject") or {}).get("kind") == kind
        and (e.get("involvedObject") or {}).get("name") in names
    ]


def _newest(pods: Sequence[Obj]) -> Obj | None:
    stamp = lambda p: (p.get("metadata") or {}).get("creationTimestamp", "")  # noqa: E731
    return max(pods, key=stamp) if pods else None


def _job_phase(job: Obj, pod: Obj | None) -> str:
    if any(c.get("type") == "Complete" and c.get("status") == "True" for c in _conds(job)):
        return "Succeeded"
    if failed_condition(job) is not None:
        return "Failed"
    if any(c.get("type") == "Suspended" and c.get("status") == "True" for c in _conds(job)):
        return "Suspended"  # job.suspend: its pods stopped, the Job kept
    return ((pod or {}).get("status") or {}).get("phase", "Pending") if pod else "Pending"


def _conds(obj: Obj) -> list[Obj]:
    return list((obj.get("status") or {}).get("conditions") or [])


def replica_lines(config: StackConfig, snapshot: Snapshot) -> list[ReplicaLine]:
    jobs = {_name(job): job for job in snapshot.jobs}
    lines = []
    for replica in build_topology(config).replicas:
        job = jobs.get(replica.name)
        if job is None:
            lines.append(ReplicaLine(replica.name, "not deployed", 0, "", None))
            continue
        pods = [
            p
            for p in snapshot.pods
            if ((p.get("metadata") or {}).get("labels") or {}).get(JOB_NAME_LABEL) == replica.name
        ]
        pod = _newest(pods)
        phase = _job_phase(job, pod)
        restarts = int((job.get("status") or {}).get("failed") or 0)
        cause = None
        if phase == "Failed":
            cause = job_cause(job, replica.type, pods)
        elif pod is not None and phase != "Running":
            events = _about(snapshot.events, "Pod", {_name(pod)})
            cause = pod_cause(pod, events, config, replica.type)
        lines.append(ReplicaLine(replica.name, phase, restarts, _name(pod) if pod else "", cause))
    return lines


def run_phase(lines: Sequence[ReplicaLine], ends_run: str) -> str:
    """TFJob's rule: the run succeeded when the replica that ends it did; failed when any
    replica's Job failed."""
    by_name: Mapping[str, Any] = {line.replica: line for line in lines}
    if by_name.get(ends_run) and by_name[ends_run].phase == "Succeeded":
        return "succeeded"
    if any(line.phase == "Failed" for line in lines):
        return "failed"
    if all(line.phase == "not deployed" for line in lines):
        return "not deployed"
    if all(line.phase in ("Suspended", "Succeeded") for line in lines):
        return "suspended (job.suspend true; false resumes it from its checkpoints)"
    return "running" if all(line.phase in ("Running", "Succeeded") for line in lines) else "pending"
