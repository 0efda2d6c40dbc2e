"""Why a replica in the cluster is not running, named, with the config key that changes it.

Pure: from the objects the Kubernetes API returns (a Job, its Pods, the Events about them, as
JSON dicts) and the stack's config. The reason strings and message shapes are the ones the
components really write (sources in docs/cloud-evidence.md, "Watching a run"):
- Job controller: condition `Failed` with reason `BackoffLimitExceeded` ("Job has reached
  the specified backoff limit"), `DeadlineExceeded` ("Job was active longer than specified
  deadline"), `PodFailurePolicy` ("Container <c> for pod <ns>/<pod> failed with exit code
  <n> matching FailJob rule at index <i>");
- kubelet: container `waiting.reason` `ErrImagePull` / `ImagePullBackOff` (its message, and
  the `Failed` event's "Failed to pull image ...", carry the registry's answer);
  `terminated.reason` `OOMKilled`; event `FailedMount` ("MountVolume.SetUp failed for volume
  "<name>" ..." or "Unable to attach or mount volumes: unmounted volumes=[<names>] ...");
- kube-scheduler: event `FailedScheduling`, "0/<n> nodes are available: <k> Insufficient
  nvidia.com/gpu, ..." or "... pod has unbound immediate PersistentVolumeClaims ...";
  coscheduling (ACK's gang scheduling): "... cannot find enough sibling pods, current pods
  number: <k>, minMember of group: <m>";
- cluster-autoscaler: event `NotTriggerScaleUp`, "pod didn't trigger scale-up: <k> max node
  group size reached";
- ECI (ASK): events `NoStock` ("Create ECI failed because the specified instance is out of
  stock. ...") and `StockExhaust`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from infra.config import PROJECT, StackConfig
from infra.manifests.oss import EXPORT_VOLUME, INPUT_VOLUME
from infra.manifests.storage import DATA_VOLUME

Obj = Mapping[str, Any]
GPU_RESOURCE = "nvidia.com/gpu"
_PULL_WAITING = ("ErrImagePull", "ImagePullBackOff")
_AUTH = re.compile(r"(?i)unauthorized|authentication required|access denied|denied:|401|403")
_MISSING = re.compile(r"(?i)not found|manifest unknown|no such image|repository does not exist")
_UNREACHABLE = re.compile(r"(?i)i/o timeout|no such host|connection refused|dial tcp|deadline")
_EXIT = re.compile(r"failed with exit code (\d+)")


@dataclass(frozen=True)
class Cause:
    what: str  # the cause, named, with the API's own words
    key: str  # the stack config key (or keys) to change

    def line(self) -> str:
        return f"{self.what} -> change {self.key}"


def _key(*parts: str) -> str:
    return f"{PROJECT}:{'.'.join(parts)}"


def _conditions(obj: Obj) -> list[Obj]:
    return list((obj.get("status") or {}).get("conditions") or [])


def failed_condition(job: Obj) -> Obj | None:
    return next(
        (c for c in _conditions(job) if c.get("type") == "Failed" and c.get("status") == "True"),
        None,
    )


def job_cause(job: Obj, group: str, pods: Sequence[Obj]) -> Cause | None:
    """Why a Job failed, from its `Failed` condition (and its pods, for what the last one
    died of)."""
    condition = failed_condition(job)
    if condition is None:
        return None
    reason, message = condition.get("reason", ""), condition.get("message", "")
    said = f"{reason}: {message}" if message else reason
    if reason == "DeadlineExceeded":
        return Cause(f"deadline exceeded ({said})", _key("job", "activeDeadlineSeconds"))
    if reason == "PodFailurePolicy":
        code = _EXIT.search(message)
        why = f"exit code {code.group(1)} is final" if code else "a final exit code"
        return Cause(
            f"{why}: the command refused its arguments or cannot run ({said})",
            f"{_key('job', 'command')} / {_key('job', 'args')} (or {_key(group, 'args')})",
        )
    if reason == "BackoffLimitExceeded":
        died = next((c for pod in pods for c in [oom_cause(pod, group)] if c), None)
        if died is not None:
            return Cause(f"backoff exhausted ({said}); {died.what}", died.key)
        return Cause(
            f"backoff exhausted ({said}): every attempt failed; see the replica's logs",
            _key("job", "backoffLimit"),
        )
    return Cause(said, _key("job"))


def _container_statuses(pod: Obj) -> list[Obj]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]


def oom_cause(pod: Obj, group: str) -> Cause | None:
    for status in _container_statuses(pod):
        for state in (status.get("state") or {}, status.get("lastState") or {}):
            terminated = state.get("terminated") or {}
            if terminated.get("reason") == "OOMKilled":
                return Cause(
                    f"OOMKilled: container {status.get('name')} exceeded its memory limit "
                    f"(exit {terminated.get('exitCode', 137)})",
                    _key(group, "memory"),
                )
    return None


def _pull_cause(pod: Obj, events: Sequence[Obj], group: str) -> Cause | None:
    for status in _container_statuses(pod):
        waiting = (status.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") not in _PULL_WAITING:
            continue
        # The registry's answer: in the kubelet's `Failed` event ("Failed to pull image ..."),
        # or the waiting message (ErrImagePull has it; ImagePullBackOff says only "Back-off").
        pulls = [e.get("message", "") for e in events if e.get("reason") == "Failed"]
        detail = " ".join(t for t in [*pulls[-1:], waiting.get("message", "")] if t)
        said = f"{waiting['reason']}: {detail}" if detail else waiting["reason"]
        image = _key(group, "image") + f" (or {_key('image')})"
        if _AUTH.search(detail):
            fix = f"{_key('imageRegistry', 'username')} / {_key('imageRegistry', 'password')}"
            return Cause(f"image pull refused: registry credentials ({said})", fix)
        if _MISSING.search(detail):
            return Cause(f"image pull failed: no such image or tag ({said})", image)
        if _UNREACHABLE.search(detail):
            server = _key("imageRegistry", "server")
            where = f"{image}: a registry the cluster reaches (VPC endpoint), {server}"
            return Cause(f"image pull failed: registry endpoint unreachable ({said})", where)
        return Cause(f"image pull failed ({said})", image)
    return None


def _volume_names(message: str) -> list[str]:
    """The volumes a kubelet mount message names: `for volume "<pv or volume>"`, or the pod's
    volume names in `unmounted volumes=[a b]`."""
    quoted = re.findall(r'volume "([^"]+)"', message)
    listed = re.search(r"unmounted volumes=\[([^\]]*)\]", message)
    return quoted + (listed.group(1).split() if listed else [])


def _mount_cause(events: Sequence[Obj]) -> Cause | None:
    for event in events:
        if event.get("reason") != "FailedMount":
            continue
        said = f"FailedMount: {event.get('message', '')}"
        names = _volume_names(event.get("message", ""))
        # The pod's volume names, or their PVs' (`<namespace>-<job>-data`, `<job>-input`).
        if any(
            n in (INPUT_VOLUME, EXPORT_VOLUME) or n.endswith(("-input", "-export")) for n in names
        ):
            keys = f"{_key('data', 'bucket')} / {_key('data', 'credentials')}"
            return Cause(f"OSS volume mount failed ({said})", keys)
        if any(n == DATA_VOLUME or n.endswith("-data") for n in names):
            return Cause(f"NAS/NFS volume mount failed ({said})", _key("storage"))
        return Cause(f"volume mount failed ({said})", _key("storage"))
    return None


def _latest(events: Sequence[Obj], reason: str) -> Obj | None:
    matching = [e for e in events if e.get("reason") == reason]
    stamp = lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""  # noqa: E731
    return max(matching, key=stamp) if matching else None


def _capacity_key(config: StackConfig, group: str, gpu: bool) -> str:
    if config.cluster.kind == "ask":
        return _key("cluster", "eciGpuSpec") if gpu else _key(group, "cpu")
    pool = "gpuPool" if gpu else "cpuPool"
    return f"{_key('cluster', pool, 'maxSize')} (or {_key(group, 'gpuCount' if gpu else 'cpu')})"


def _stock_cause(events: Sequence[Obj]) -> Cause | None:
    """ECI's own events: the pod is placed on the virtual node, then no instance is created."""
    for reason in ("NoStock", "StockExhaust"):
        stock = _latest(events, reason)
        if stock is not None:
            return Cause(
                f"ECI spec sold out in the zone ({reason}: {stock.get('message', '')})",
                f"{_key('cluster', 'eciGpuSpec')} or {_key('network', 'zoneId')}",
            )
    return None


def _scheduling_cause(events: Sequence[Obj], config: StackConfig, group: str) -> Cause | None:
    failed = _latest(events, "FailedScheduling")
    if failed is None:
        return None
    message = failed.get("message", "")
    said = f"FailedScheduling: {message}"
    if "unbound immediate PersistentVolumeClaims" in message:
        return Cause(f"volume claim not bound ({said})", _key("storage", "pvLabels"))
    if "sibling pods" in message or "PodGroup" in message or "gang" in message.lower():
        capacity = _capacity_key(config, group, _asks_gpu(message))
        return Cause(
            f"gang waiting: not every replica of the run can be placed yet ({said})",
            f"{capacity} or {_key('job', 'gangScheduling')}",
        )
    if "Insufficient" in message:
        gpu = _asks_gpu(message)
        no_scale = _latest(events, "NotTriggerScaleUp")
        extra = f"; NotTriggerScaleUp: {no_scale.get('message', '')}" if no_scale else ""
        what = "GPUs the pool cannot give" if gpu else "CPU or memory the pool cannot give"
        return Cause(f"{what} ({said}{extra})", _capacity_key(config, group, gpu))
    return Cause(f"not schedulable ({said})", _key(group))


def _asks_gpu(message: str) -> bool:
    return GPU_RESOURCE in message


def pod_cause(pod: Obj, events: Sequence[Obj], config: StackConfig, group: str) -> Cause | None:
    """Why this pod is not running (None if nothing explains it)."""
    phase = (pod.get("status") or {}).get("phase", "")
    if phase == "Failed":
        return oom_cause(pod, group)
    return (
        _pull_cause(pod, events, group)
        or _stock_cause(events)
        or _mount_cause(events)
        or (_scheduling_cause(events, config, group) if not _scheduled(pod) else None)
        or oom_cause(pod, group)
    )


def _scheduled(pod: Obj) -> bool:
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "True" for c in _conditions(pod)
    )
