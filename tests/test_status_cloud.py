"""The cloud status: each pending or failed cause, from Job, Pod and Event objects shaped as
the Kubernetes API returns them (batch/v1 Job, v1 Pod, v1 Event, the fields of the API
reference), with the reason strings and message formats their components write (sources:
docs/cloud-evidence.md, "Watching a run"), names the cause and the stack config key that
changes it. The expected keys are the stack file's (README "Stack config reference").
"""

from __future__ import annotations

import json
import os
import stat
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from infra.config import StackConfig, load_stack
from infra.status import main
from infra.status.causes import Cause
from infra.status.cloud import Snapshot, replica_lines, run_phase
from tests.test_run_report import failed_run

NAMESPACE = "tftrain"
POD = "mnist-worker-0-7x2kq"


def job(name: str, config: StackConfig, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {"tftrain.io/job": "mnist", "tftrain.io/run-id": config.job.run_id},
        },
        "spec": {"backoffLimit": 3, "template": {"spec": {"restartPolicy": "Never"}}},
        "status": {"startTime": "2026-11-26T05:00:00Z", **status},
    }


def failed(reason: str, message: str) -> list[dict[str, str]]:
    """The Job controller adds FailureTarget, then Failed, with one reason and message."""
    common = {"status": "True", "reason": reason, "message": message}
    return [
        {"type": "FailureTarget", "lastProbeTime": "2026-11-26T05:10:00Z", **common},
        {"type": "Failed", "lastProbeTime": "2026-11-26T05:10:01Z", **common},
    ]


def pod(
    name: str,
    job_name: str,
    phase: str,
    scheduled: bool = True,
    container: dict[str, Any] | None = None,
    created: str = "2026-11-26T05:00:01Z",
) -> dict[str, Any]:
    conditions = [
        {"type": "PodScheduled", "status": "True" if scheduled else "False"}
        | ({} if scheduled else {"reason": "Unschedulable"})
    ]
    status: dict[str, Any] = {"phase": phase, "conditions": conditions}
    if container is not None:
        status["containerStatuses"] = [
            {
                "name": "tensorflow",
                "ready": False,
                "restartCount": 0,
                "image": "x",
                "imageID": "",
                **container,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "creationTimestamp": created,
            "labels": {"job-name": job_name, "batch.kubernetes.io/job-name": job_name},
        },
        "spec": {"containers": [{"name": "tensorflow", "image": "x"}]},
        "status": status,
    }


def event(reason: str, message: str, component: str, about: str = POD) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{about}.1877a8b1c2d3e4f5", "namespace": NAMESPACE},
        "involvedObject": {"kind": "Pod", "name": about, "namespace": NAMESPACE},
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "type": "Warning",
        "count": 1,
        "firstTimestamp": "2026-11-26T05:00:02Z",
        "lastTimestamp": "2026-11-26T05:00:02Z",
    }


def running(config: StackConfig, skip: str) -> tuple[list[dict], list[dict]]:
    """Every replica but `skip`: its Job with a running pod."""
    jobs, pods = [], []
    for replica in (
        "mnist-chief-0",
        "mnist-worker-0",
        "mnist-worker-1",
        "mnist-ps-0",
        "mnist-ps-1",
    ):
        if replica != skip:
            jobs.append(job(replica, config, active=1, ready=1))
            pods.append(pod(f"{replica}-abcde", replica, "Running"))
    return jobs, pods


def worker_0(config: StackConfig, its_job: dict, its_pods: list[dict], events: list[dict]):
    jobs, pods = running(config, "mnist-worker-0")
    lines = replica_lines(config, Snapshot([*jobs, its_job], [*pods, *its_pods], events))
    return next(line for line in lines if line.replica == "mnist-worker-0"), lines


IMAGE = "registry.cn-hangzhou.aliyuncs.com/team/trainer:1"
# containerd's answer when the registry does not answer (through the kubelet's ErrImagePull).
UNREACHABLE = (
    f'failed to pull and unpack image "{IMAGE}": failed to do request: Head '
    '"https://registry.cn-hangzhou.aliyuncs.com/v2/team/trainer/manifests/1": dial tcp '
    "47.110.2.3:443: i/o timeout"
)


def unmounted(volume: str) -> dict[str, Any]:
    """The kubelet's event once a pod's volume has not mounted in time."""
    return event(
        "FailedMount",
        f"Unable to attach or mount volumes: unmounted volumes=[{volume}], unattached "
        f"volumes=[{volume} tftrain-lifecycle]: timed out waiting for the condition",
        "kubelet",
    )


def waiting(reason: str, message: str) -> dict[str, Any]:
    return {"state": {"waiting": {"reason": reason, "message": message}}}


INSUFFICIENT_GPU = (
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
    "available: 3 No preemption victims found for incoming pod."
)
PULL_401 = (
    'Failed to pull image "registry.cn-hangzhou.aliyuncs.com/team/trainer:1": failed to pull and '
    "unpack image: failed to resolve reference: failed to authorize: failed to fetch anonymous "
    "token: unexpected status: 401 Unauthorized"
)
NFS_TIMEOUT = (
    'MountVolume.SetUp failed for volume "tftrain-mnist-data" : rpc error: code = Internal desc '
    "= mount failed: exit status 32 ... mount.nfs: Connection timed out"
)
UNBOUND = (
    "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 "
    "nodes are available: 3 Preemption is not helpful for scheduling."
)
GANG = (
    f"0/3 nodes are available: 3 pre-filter pod {POD} cannot find enough sibling pods, current "
    "pods number: 4, minMember of group: 5."
)
NO_STOCK = "Create ECI failed because the specified instance is out of stock. ecs.gn6i-c4g1.xlarge"
INSUFFICIENT_CPU = "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory."
TAINTED = "0/3 nodes are available: 3 node(s) had untolerated taint {gpu: true}."
OOM_BEFORE = {
    "state": {"waiting": {"reason": "ContainerCreating"}},
    "lastState": {"terminated": {"reason": "OOMKilled"}},  # no exit code said: 128 + SIGKILL
}


def without_message(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "message"}


def stamped(obj: dict[str, Any], last: str = "", event_time: str = "") -> dict[str, Any]:
    """An event with only these times (events.k8s.io writes eventTime, core/v1 lastTimestamp)."""
    out = {k: v for k, v in obj.items() if k not in ("firstTimestamp", "lastTimestamp")}
    return (
        out
        | ({"lastTimestamp": last} if last else {})
        | ({"eventTime": event_time} if event_time else {})
    )


PENDING = [
    pytest.param(
        "ack-gpu",
        False,
        None,
        [
            event("FailedScheduling", INSUFFICIENT_GPU, "default-scheduler"),
            event(
                "NotTriggerScaleUp",
                "pod didn't trigger scale-up: 1 max node group size reached",
                "cluster-autoscaler",
            ),
        ],
        f"GPUs the pool cannot give (FailedScheduling: {INSUFFICIENT_GPU}; NotTriggerScaleUp: "
        "pod didn't trigger scale-up: 1 max node group size reached)",
        "tftrain:cluster.gpuPool.maxSize (or tftrain:worker.gpuCount)",
        id="gpu-pool-at-max",
    ),
    pytest.param(
        "ack-gpu",
        True,
        waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"'),
        [event("Failed", PULL_401, "kubelet")],
        # The registry's answer (the kubelet's event), then the back-off's own words.
        f"image pull refused: registry credentials (ImagePullBackOff: {PULL_401} "
        f'Back-off pulling image "{IMAGE}")',
        "tftrain:imageRegistry.username / tftrain:imageRegistry.password",
        id="image-pull-credentials",
    ),
    pytest.param(
        "ack-gpu",
        True,
        waiting("ErrImagePull", UNREACHABLE),
        [],
        f"image pull failed: registry endpoint unreachable (ErrImagePull: {UNREACHABLE})",
        "tftrain:worker.image (or tftrain:image): a registry the cluster reaches (VPC "
        "endpoint), tftrain:imageRegistry.server",
        id="image-pull-endpoint",
    ),
    pytest.param(
        "ack-gpu",
        True,
        {"state": {"waiting": {"reason": "ContainerCreating"}}},
        [
            event("FailedMount", NFS_TIMEOUT, "kubelet"),
            unmounted("data"),
        ],
        f"NAS/NFS volume mount failed (FailedMount: {NFS_TIMEOUT})",  # the first event's
        "tftrain:storage",
        id="nas-mount",
    ),
    pytest.param(
        "ack-gpu",
        True,
        {"state": {"waiting": {"reason": "ContainerCreating"}}},
        [unmounted("input")],
        f"OSS volume mount failed (FailedMount: {unmounted('input')['message']})",
        "tftrain:data.bucket / tftrain:data.credentials",
        id="oss-mount",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [event("FailedScheduling", UNBOUND, "default-scheduler")],
        f"volume claim not bound (FailedScheduling: {UNBOUND})",
        "tftrain:storage.pvLabels",
        id="unbound-claim",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [event("FailedScheduling", GANG, "default-scheduler")],
        f"gang waiting: not every replica of the run can be placed yet (FailedScheduling: {GANG})",
        # No GPU named: the CPU pool's capacity, or gang scheduling off.
        "tftrain:cluster.cpuPool.maxSize (or tftrain:worker.cpu) or tftrain:job.gangScheduling",
        id="gang-waiting",
    ),
    pytest.param(
        "ask-eci",
        True,
        None,
        [event("NoStock", NO_STOCK, "EciService")],
        f"ECI spec sold out in the zone (NoStock: {NO_STOCK})",
        "tftrain:cluster.eciGpuSpec or tftrain:network.zoneId",
        id="eci-sold-out",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [event("FailedScheduling", INSUFFICIENT_CPU, "default-scheduler")],
        f"CPU or memory the pool cannot give (FailedScheduling: {INSUFFICIENT_CPU})",
        "tftrain:cluster.cpuPool.maxSize (or tftrain:worker.cpu)",
        id="cpu-pool",
    ),
    pytest.param(
        "ask-eci",
        False,
        None,
        [event("FailedScheduling", INSUFFICIENT_GPU, "default-scheduler")],
        f"GPUs the pool cannot give (FailedScheduling: {INSUFFICIENT_GPU})",
        "tftrain:cluster.eciGpuSpec",  # ECI: no pool, the GPU spec it asks for
        id="eci-gpu",
    ),
    pytest.param(
        "ask-eci",
        False,
        None,
        [event("FailedScheduling", INSUFFICIENT_CPU, "default-scheduler")],
        f"CPU or memory the pool cannot give (FailedScheduling: {INSUFFICIENT_CPU})",
        "tftrain:worker.cpu",
        id="eci-cpu",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [event("FailedScheduling", TAINTED, "default-scheduler")],
        f"not schedulable (FailedScheduling: {TAINTED})",
        "tftrain:worker",
        id="other-unschedulable",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [
            {k: v for k, v in event("FailedScheduling", "", "s").items() if k != "message"},
            {**event("FailedScheduling", TAINTED, "s"), "lastTimestamp": "2026-11-26T04:00:00Z"},
        ],
        "not schedulable (FailedScheduling: )",  # the newest event, said without words
        "tftrain:worker",
        id="newest-without-message",
    ),
    pytest.param(
        "ack-gpu",
        True,
        OOM_BEFORE,
        [],
        "OOMKilled: container tensorflow exceeded its memory limit (exit 137)",
        "tftrain:worker.memory",
        id="oom-before-this-start",
    ),
    pytest.param(
        "ack-gpu",
        True,
        waiting("ErrImagePull", f"{IMAGE}: manifest unknown"),
        [],
        f"image pull failed: no such image or tag (ErrImagePull: {IMAGE}: manifest unknown)",
        "tftrain:worker.image (or tftrain:image)",
        id="image-missing",
    ),
    pytest.param(
        "ack-gpu",
        True,
        waiting("ImagePullBackOff", ""),
        [],
        "image pull failed (ImagePullBackOff)",
        "tftrain:worker.image (or tftrain:image)",
        id="image-pull-unexplained",
    ),
    pytest.param(
        "ack-gpu",
        True,
        {"state": {"waiting": {"reason": "ContainerCreating"}}},
        [
            event(
                "FailedMount",
                'MountVolume.SetUp failed for volume "tftrain-mnist-export" : x',
                "kubelet",
            )
        ],
        "OSS volume mount failed (FailedMount: MountVolume.SetUp failed for volume "
        '"tftrain-mnist-export" : x)',
        "tftrain:data.bucket / tftrain:data.credentials",
        id="oss-export-mount",
    ),
    pytest.param(
        "ack-gpu",
        True,
        {"state": {"waiting": {"reason": "ContainerCreating"}}},
        [unmounted("home")],
        f"volume mount failed (FailedMount: {unmounted('home')['message']})",
        "tftrain:storage",
        id="other-mount",
    ),
    pytest.param(
        "ask-eci",
        True,
        None,
        [event("StockExhaust", "zone sold out", "EciService")],
        "ECI spec sold out in the zone (StockExhaust: zone sold out)",
        "tftrain:cluster.eciGpuSpec or tftrain:network.zoneId",
        id="eci-stock-exhausted",
    ),
    pytest.param(
        "ack-gpu",
        True,
        {"state": {"waiting": {"reason": "ContainerCreating"}}},
        [
            event("Scheduled", "Successfully assigned tftrain/x to node-1", "default-scheduler"),
            event(
                "FailedMount",
                'MountVolume.SetUp failed for volume "tftrain-mnist-input" : x',
                "kubelet",
            ),
        ],
        "OSS volume mount failed (FailedMount: MountVolume.SetUp failed for volume "
        '"tftrain-mnist-input" : x)',  # the input's PV, after an event that is no failure
        "tftrain:data.bucket / tftrain:data.credentials",
        id="oss-input-pv-after-other-events",
    ),
    pytest.param(
        "ack-gpu",
        True,
        {"state": {"waiting": {"reason": "ContainerCreating"}}},
        [without_message(event("FailedMount", "", "kubelet"))],
        "volume mount failed (FailedMount: )",  # an Event's message is optional
        "tftrain:storage",
        id="mount-without-message",
    ),
    pytest.param(
        "ask-eci",
        True,
        None,
        [without_message(event("NoStock", "", "EciService"))],
        "ECI spec sold out in the zone (NoStock: )",
        "tftrain:cluster.eciGpuSpec or tftrain:network.zoneId",
        id="stock-without-message",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [
            event("FailedScheduling", INSUFFICIENT_GPU, "default-scheduler"),
            without_message(event("NotTriggerScaleUp", "", "cluster-autoscaler")),
        ],
        f"GPUs the pool cannot give (FailedScheduling: {INSUFFICIENT_GPU}; NotTriggerScaleUp: )",
        "tftrain:cluster.gpuPool.maxSize (or tftrain:worker.gpuCount)",
        id="scale-up-without-message",
    ),
    pytest.param(
        "ack-gpu",
        True,
        waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"'),
        [without_message(event("Failed", "", "kubelet"))],
        f'image pull failed (ImagePullBackOff: Back-off pulling image "{IMAGE}")',
        "tftrain:worker.image (or tftrain:image)",
        id="pull-event-without-message",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [
            stamped(event("FailedScheduling", TAINTED, "s"), last="2026-11-26T04:00:00Z"),
            stamped(event("FailedScheduling", INSUFFICIENT_CPU, "s"), last="2026-11-26T05:00:00Z"),
        ],
        f"CPU or memory the pool cannot give (FailedScheduling: {INSUFFICIENT_CPU})",
        "tftrain:cluster.cpuPool.maxSize (or tftrain:worker.cpu)",
        id="newest-by-last-timestamp",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [
            stamped(event("FailedScheduling", TAINTED, "s"), event_time="2026-11-26T04:00:00Z"),
            stamped(
                event("FailedScheduling", INSUFFICIENT_CPU, "s"),
                event_time="2026-11-26T05:00:00.000000Z",
            ),
            stamped(event("FailedScheduling", UNBOUND, "s")),
        ],  # no time at all: the oldest
        f"CPU or memory the pool cannot give (FailedScheduling: {INSUFFICIENT_CPU})",
        "tftrain:cluster.cpuPool.maxSize (or tftrain:worker.cpu)",
        id="newest-by-event-time",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [
            event(
                "FailedScheduling",
                "0/3 nodes are available: PodGroup tftrain/mnist is not ready: 3 of 5 members",
                "s",
            )
        ],
        "gang waiting: not every replica of the run can be placed yet (FailedScheduling: 0/3 "
        "nodes are available: PodGroup tftrain/mnist is not ready: 3 of 5 members)",
        "tftrain:cluster.cpuPool.maxSize (or tftrain:worker.cpu) or tftrain:job.gangScheduling",
        id="gang-podgroup",
    ),
    pytest.param(
        "ack-gpu",
        False,
        None,
        [event("FailedScheduling", f"Gang scheduling: 3 Insufficient {'nvidia.com/gpu'}", "s")],
        "gang waiting: not every replica of the run can be placed yet (FailedScheduling: Gang "
        "scheduling: 3 Insufficient nvidia.com/gpu)",
        "tftrain:cluster.gpuPool.maxSize (or tftrain:worker.gpuCount) or "
        "tftrain:job.gangScheduling",
        id="gang-waiting-for-gpus",
    ),
]


@pytest.mark.parametrize(("stack", "scheduled", "container", "events", "what", "key"), PENDING)
def test_a_pending_replica_gets_its_cause_and_the_key_to_change(
    stack: str, scheduled: bool, container: dict | None, events: list, what: str, key: str
) -> None:
    config = load_stack(stack)
    its_job = job("mnist-worker-0", config, active=1)
    its_pod = pod(POD, "mnist-worker-0", "Pending", scheduled, container)
    line, lines = worker_0(config, its_job, [its_pod], events)
    assert line.phase == "Pending" and line.pod == POD
    assert line.cause == Cause(what, key), line
    assert run_phase(lines, "mnist-chief-0") == "pending"
    # Every other replica runs: nothing to explain there.
    assert [other.cause for other in lines if other is not line] == [None] * (len(lines) - 1)


def _terminated(reason: str, code: int) -> dict[str, Any]:
    return {
        "state": {
            "terminated": {
                "reason": reason,
                "exitCode": code,
                "startedAt": "2026-11-26T05:01:00Z",
                "finishedAt": "2026-11-26T05:05:00Z",
            }
        }
    }


FAILED = [
    pytest.param(
        failed("DeadlineExceeded", "Job was active longer than specified deadline"),
        _terminated("Error", 143),
        "deadline exceeded (DeadlineExceeded: Job was active longer than specified deadline)",
        "tftrain:job.activeDeadlineSeconds",
        id="deadline",
    ),
    pytest.param(
        failed("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        _terminated("Error", 1),
        "backoff exhausted (BackoffLimitExceeded: Job has reached the specified backoff limit): "
        "every attempt failed; see the replica's logs",
        "tftrain:job.backoffLimit",
        id="backoff",
    ),
    pytest.param(
        failed("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        _terminated("OOMKilled", 137),
        "backoff exhausted (BackoffLimitExceeded: Job has reached the specified backoff limit); "
        "OOMKilled: container tensorflow exceeded its memory limit (exit 137)",
        "tftrain:worker.memory",
        id="oom-killed",
    ),
    pytest.param(
        failed(
            "PodFailurePolicy",
            f"Container tensorflow for pod {NAMESPACE}/{POD} failed with exit code 2 matching "
            "FailJob rule at index 0",
        ),
        _terminated("Error", 2),
        "exit code 2 is final: the command refused its arguments or cannot run "
        f"(PodFailurePolicy: Container tensorflow for pod {NAMESPACE}/{POD} failed with exit "
        "code 2 matching FailJob rule at index 0)",
        "tftrain:job.command / tftrain:job.args (or tftrain:worker.args)",
        id="exit-2",
    ),
    pytest.param(
        failed("PodFailurePolicy", "Pod failed matching FailJob rule at index 1"),
        _terminated("Error", 126),
        "a final exit code: the command refused its arguments or cannot run (PodFailurePolicy: "
        "Pod failed matching FailJob rule at index 1)",
        "tftrain:job.command / tftrain:job.args (or tftrain:worker.args)",
        id="final-code-unsaid",
    ),
    pytest.param(
        [{"type": "Failed", "status": "True", "reason": "MaxFailedIndexesExceeded"}],
        _terminated("Error", 1),
        "MaxFailedIndexesExceeded",  # a reason not known here: as the controller said it
        "tftrain:job",
        id="other-reason",
    ),
    pytest.param(
        [{"type": "Failed", "status": "True", "reason": "PodFailurePolicy"}],  # no message
        _terminated("Error", 127),
        "a final exit code: the command refused its arguments or cannot run (PodFailurePolicy)",
        "tftrain:job.command / tftrain:job.args (or tftrain:worker.args)",
        id="policy-without-message",
    ),
]


@pytest.mark.parametrize(("conditions", "container", "what", "key"), FAILED)
def test_a_failed_replica_gets_its_cause_and_the_key_to_change(
    conditions: list, container: dict, what: str, key: str
) -> None:
    config = load_stack("ack-gpu")
    its_job = job("mnist-worker-0", config, failed=4, conditions=conditions)
    its_pod = pod(POD, "mnist-worker-0", "Failed", True, container)
    line, lines = worker_0(config, its_job, [its_pod], [])
    assert line.phase == "Failed" and line.restarts == 4
    assert line.cause == Cause(what, key), line
    assert run_phase(lines, "mnist-chief-0") == "failed"


def test_a_scheduled_pod_is_not_explained_by_its_scheduling_history() -> None:
    # It waited for a GPU node, then the autoscaler added one: the old event stays, but the
    # pod is scheduled now (PodScheduled True) and creating its container.
    config = load_stack("ack-gpu")
    creating = pod(POD, "mnist-worker-0", "Pending", True,
                   {"state": {"waiting": {"reason": "ContainerCreating"}}})  # fmt: skip
    events = [event("FailedScheduling", INSUFFICIENT_GPU, "default-scheduler")]
    line, _ = worker_0(config, job("mnist-worker-0", config, active=1), [creating], events)
    assert (line.phase, line.cause) == ("Pending", None)


def test_a_pull_after_a_finished_init_container_is_explained() -> None:
    config = load_stack("ack-gpu")
    its_pod = pod(POD, "mnist-worker-0", "Pending", True,
                  waiting("ImagePullBackOff", f"{IMAGE}: manifest unknown"))  # fmt: skip
    its_pod["status"]["initContainerStatuses"] = [
        {"name": "setup", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}
    ]
    line, _ = worker_0(config, job("mnist-worker-0", config, active=1), [its_pod], [])
    assert line.cause == Cause(
        f"image pull failed: no such image or tag (ImagePullBackOff: {IMAGE}: manifest unknown)",
        "tftrain:worker.image (or tftrain:image)",
    )


def test_an_oom_of_a_child_process_keeps_the_containers_own_exit_code() -> None:
    # cgroup v2: the kubelet says OOMKilled when any process of the container was killed
    # for memory; the container's main process may then exit 1 on its own.
    config = load_stack("ack-gpu")
    conditions = failed("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    its_job = job("mnist-worker-0", config, failed=1, conditions=conditions)
    its_pod = pod(POD, "mnist-worker-0", "Failed", True, _terminated("OOMKilled", 1))
    line, _ = worker_0(config, its_job, [its_pod], [])
    assert line.cause == Cause(
        "backoff exhausted (BackoffLimitExceeded: Job has reached the specified backoff limit); "
        "OOMKilled: container tensorflow exceeded its memory limit (exit 1)",
        "tftrain:worker.memory",
    )


def test_only_events_about_the_pod_itself_explain_it() -> None:
    # Events about another pod, and about a Job of the pod's name, say nothing of it.
    config = load_stack("ack-gpu")
    waiting_pod = pod(POD, "mnist-worker-0", "Pending", False)
    other = event("FailedScheduling", INSUFFICIENT_GPU, "default-scheduler", about="ps-0-x")
    about_job = {"kind": "Job", "name": POD, "namespace": NAMESPACE}
    job_event = {**event("FailedScheduling", INSUFFICIENT_GPU, "x"), "involvedObject": about_job}
    line, _ = worker_0(
        config, job("mnist-worker-0", config, active=1), [waiting_pod], [other, job_event]
    )
    assert (line.phase, line.cause) == ("Pending", None)


def test_the_newest_pod_of_a_replica_is_the_one_explained() -> None:
    config = load_stack("ack-gpu")
    old = pod(
        "mnist-worker-0-old",
        "mnist-worker-0",
        "Failed",
        True,
        _terminated("Error", 1),
        created="2026-11-26T05:00:01Z",
    )
    new = pod(POD, "mnist-worker-0", "Pending", False, None, created="2026-11-26T05:03:00Z")
    events = [event("FailedScheduling", INSUFFICIENT_GPU, "default-scheduler")]
    line, _ = worker_0(
        config, job("mnist-worker-0", config, active=1, failed=1), [old, new], events
    )
    assert line.pod == POD and line.restarts == 1
    assert line.cause is not None and "GPUs the pool cannot give" in line.cause.what


def test_the_run_succeeds_with_the_replica_that_ends_it() -> None:
    config = load_stack("ack-gpu")
    jobs, pods = running(config, "mnist-chief-0")
    complete = [{"type": "Complete", "status": "True"}]
    jobs.append(job("mnist-chief-0", config, succeeded=1, conditions=complete))
    lines = replica_lines(config, Snapshot(jobs, pods, []))
    assert run_phase(lines, "mnist-chief-0") == "succeeded"
    assert run_phase(replica_lines(config, Snapshot([], [], [])), "mnist-chief-0") == "not deployed"


def _fake_kubectl(directory: Path, answers: dict[str, dict], fail: str = "") -> Path:
    """A `kubectl` on PATH that answers `get jobs,pods` and `get events` with these API
    lists (or fails as kubectl does, on stderr with exit 1), and records its arguments."""
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    for name, answer in answers.items():
        (directory / f"{name}.json").write_text(json.dumps(answer))
    script = bin_dir / "kubectl"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {directory}/calls\n'
        + (f"echo '{fail}' >&2; exit 1\n" if fail else "")
        + 'case "$*" in\n'
        f'  *"get jobs,pods"*) cat {directory}/workloads.json ;;\n'
        f'  *"get events"*) cat {directory}/events.json ;;\n'
        f'  *" logs "*) cat {directory}/logs.txt ;;\n'
        f'  *" exec "*) cat {directory}/run.tar ;;\n'
        "esac\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def test_the_command_reads_the_cluster_with_the_given_kubeconfig(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_stack("ack-gpu")
    jobs, pods = running(config, "mnist-worker-0")
    jobs.append(job("mnist-worker-0", config, active=1))
    pods.append(pod(POD, "mnist-worker-0", "Pending", False))
    events = [event("FailedScheduling", INSUFFICIENT_GPU, "default-scheduler")]
    workloads = {"apiVersion": "v1", "kind": "List", "items": [*jobs, *pods]}
    event_list = {"apiVersion": "v1", "kind": "EventList", "items": events}
    bin_dir = _fake_kubectl(tmp_path, {"workloads": workloads, "events": event_list})
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    begun = time.monotonic()
    assert main(["ack-gpu", "--kubeconfig", str(kubeconfig)]) == 0
    assert time.monotonic() - begun < 10
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0]
        == f"stack ack-gpu in its cluster: job mnist, run {config.job.run_id}, namespace tftrain"
    )
    assert out[-1] == "run: pending"
    assert any(line.startswith("  mnist-worker-0  Pending") for line in out), out
    assert any("-> change tftrain:cluster.gpuPool.maxSize" in line for line in out), out
    calls = (tmp_path / "calls").read_text()
    assert f"--kubeconfig {kubeconfig}" in calls
    assert f"-l tftrain.io/job=mnist,tftrain.io/run-id={config.job.run_id}" in calls


def test_an_unreachable_cluster_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = "The connection to the server 10.0.0.1:6443 was refused"
    bin_dir = _fake_kubectl(tmp_path, {}, fail=refused)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert main(["ack-gpu", "--cluster", "--kubeconfig", str(tmp_path / "k")]) == 1
    err = capsys.readouterr().err
    assert err == f"tftrain status: kubectl: {refused}\n"


def test_a_failed_cloud_run_shows_its_last_lines_and_renders_its_report_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_stack("ack-gpu")
    exit_2 = failed(
        "PodFailurePolicy",
        f"Container tensorflow for pod {NAMESPACE}/{POD} failed with exit code 2 matching "
        "FailJob rule at index 0",
    )
    jobs, pods = running(config, "mnist-worker-0")
    jobs.append(job("mnist-worker-0", config, failed=1, conditions=exit_2))
    pods.append(pod(POD, "mnist-worker-0", "Failed", True, _terminated("Error", 2)))
    workloads = {"apiVersion": "v1", "kind": "List", "items": [*jobs, *pods]}
    bin_dir = _fake_kubectl(tmp_path, {"workloads": workloads, "events": {"items": []}})
    (tmp_path / "logs.txt").write_text("Traceback (most recent call last):\nValueError: bad\n")
    # What the TensorBoard pod's tar streams: the run's records, logs and events.
    run = failed_run(tmp_path / "volume")
    with tarfile.open(tmp_path / "run.tar", "w") as archive:
        archive.add(run, arcname=".")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    runs = tmp_path / "runs"
    kubeconfig = tmp_path / "kubeconfig"
    args = ["ack-gpu", "--kubeconfig", str(kubeconfig), "--runs-dir", str(runs), "--report"]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert "    | ValueError: bad" in out, out
    report = runs / "cluster" / "mnist" / config.job.run_id / "report" / "report.md"
    assert out[-1] == f"report: {report}"
    text = report.read_text()
    assert text.startswith(f"# Run {config.job.run_id} of stack ack-gpu (cluster): failed\n")
    assert "**Failed**: `mnist-worker-1` attempt 2 exit 2" in text
    calls = (tmp_path / "calls").read_text()
    assert f"logs {POD} -c tensorflow --tail=10" in calls
    assert (
        f"--kubeconfig {kubeconfig} --namespace tftrain --request-timeout=8s "
        "exec deployment/mnist-tensorboard -c tensorboard -- sh -c"
    ) in calls
    assert calls.rstrip().endswith(f"sh {config.output_dir}")


def test_a_replica_not_yet_deployed_or_without_a_pod_yet_reads_so() -> None:
    config = load_stack("ack-gpu")
    jobs, pods = running(config, "mnist-chief-0")  # the chief's Job is not there yet
    jobs = [j for j in jobs if j["metadata"]["name"] != "mnist-worker-1"]
    jobs.append(job("mnist-worker-1", config, active=1))  # its Job, no pod yet
    pods = [p for p in pods if p["metadata"]["labels"]["job-name"] != "mnist-worker-1"]
    bare = pod("mnist-ps-1-abcde", "mnist-ps-1", "Running")
    del bare["status"]["phase"]  # the API server has not set it yet
    pods = [p for p in pods if p["metadata"]["labels"]["job-name"] != "mnist-ps-1"] + [bare]
    lines = replica_lines(config, Snapshot(jobs, pods, []))
    assert [(ln.replica, ln.phase, ln.restarts, ln.pod, ln.cause) for ln in lines] == [
        ("mnist-chief-0", "not deployed", 0, "", None),
        ("mnist-worker-0", "Running", 0, "mnist-worker-0-abcde", None),
        ("mnist-worker-1", "Pending", 0, "", None),
        ("mnist-ps-0", "Running", 0, "mnist-ps-0-abcde", None),
        ("mnist-ps-1", "Pending", 0, "mnist-ps-1-abcde", None),
    ]


def test_a_running_pod_is_not_explained_and_a_resumed_job_is_not_suspended() -> None:
    config = load_stack("ack-gpu")
    resumed = [{"type": "Suspended", "status": "False", "reason": "JobResumed"}]
    stale = event("FailedMount", 'MountVolume.SetUp failed for volume "tftrain-mnist-data"', "k")
    line, lines = worker_0(
        config,
        job("mnist-worker-0", config, active=1, conditions=resumed),
        [pod(POD, "mnist-worker-0", "Running")],
        [stale],  # from before its volume mounted: history now
    )
    assert (line.phase, line.cause) == ("Running", None)
    assert run_phase(lines, "mnist-chief-0") == "running"


def test_the_cluster_status_in_full_for_a_failed_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_stack("ack-gpu")
    deadline = failed("DeadlineExceeded", "Job was active longer than specified deadline")
    jobs, pods = running(config, "mnist-worker-0")
    jobs = [j for j in jobs if j["metadata"]["name"] != "mnist-worker-1"]
    jobs.append(job("mnist-worker-1", config, active=1, failed=2))
    jobs.append(job("mnist-worker-0", config, failed=1, conditions=deadline))
    pods.append(pod(POD, "mnist-worker-0", "Failed", True, _terminated("Error", 143)))
    workloads = {"items": [*jobs, *pods]}
    bin_dir = _fake_kubectl(tmp_path, {"workloads": workloads, "events": {"items": []}})
    (tmp_path / "logs.txt").write_text("step 90\n\x1b[31mkilled\x1b[0m\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    kubeconfig = str(tmp_path / "kubeconfig")
    assert main(["ack-gpu", "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"stack ack-gpu in its cluster: job mnist, run {config.job.run_id}, namespace tftrain",
        "  mnist-chief-0   Running      0 failed pods",
        "  mnist-worker-0  Failed       1 failed pod",
        "    deadline exceeded (DeadlineExceeded: Job was active longer than specified "
        "deadline) -> change tftrain:job.activeDeadlineSeconds",
        "    | step 90",
        "    | \\x1b[31mkilled\\x1b[0m",  # a pod's log is shown inert
        "  mnist-worker-1  Running      2 failed pods",
        "  mnist-ps-0      Running      0 failed pods",
        "  mnist-ps-1      Running      0 failed pods",
        "run: failed",
        "its report: tftrain status ack-gpu --report",
    ]
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 3 and all(f"--kubeconfig {kubeconfig} " in c for c in calls), calls
    assert main(["ack-gpu", "--kubeconfig", kubeconfig, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["phase"] == "failed"
    assert answer["replicas"][1] == {
        "name": "mnist-worker-0", "phase": "Failed", "failed_pods": 1, "pod": POD,
        "cause": {
            "what": "deadline exceeded (DeadlineExceeded: Job was active longer than "
            "specified deadline)",
            "key": "tftrain:job.activeDeadlineSeconds",
        },
    }  # fmt: skip
    assert all(
        f"--kubeconfig {kubeconfig} " in c for c in (tmp_path / "calls").read_text().splitlines()
    )


def test_a_succeeded_cloud_run_points_at_its_report_and_a_pending_one_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_stack("ack-gpu")
    jobs, pods = running(config, "mnist-chief-0")
    complete = [{"type": "Complete", "status": "True"}]
    jobs.append(job("mnist-chief-0", config, succeeded=1, conditions=complete))
    bin_dir = _fake_kubectl(tmp_path, {"workloads": {"items": [*jobs, *pods]},
                                       "events": {"items": []}})  # fmt: skip
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert main(["ack-gpu", "--cluster"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["run: succeeded", "its report: tftrain status ack-gpu --report"]
    # kubectl's own default cluster: no --kubeconfig given to it.
    assert all("--kubeconfig" not in c for c in (tmp_path / "calls").read_text().splitlines())
