"""`infra.status.causes` called directly: the cases `tftrain status` meets less often than
test_status_cloud.py's tables (a pod that failed beside old events, an init container's pull,
a pull answered twice, a Job's other conditions). Objects are shaped as the Kubernetes API
returns them (core/v1 Pod and Event, batch/v1 Job conditions); expected causes written by hand."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import load_stack
from infra.status.causes import Cause, failed_condition, pod_cause
from tests.test_status_cloud import POD, _terminated, event, pod, unmounted, waiting

IMAGE_KEY = "tftrain:worker.image (or tftrain:image)"
CREDENTIALS_KEY = "tftrain:imageRegistry.username / tftrain:imageRegistry.password"
# containerd's answers through the kubelet's `Failed` event: first the registry did not
# answer, then (the next try) it refused the credentials.
TIMED_OUT = 'Failed to pull image "r/t:1": dial tcp 47.110.2.3:443: i/o timeout'
REFUSED = 'Failed to pull image "r/t:1": unexpected status: 401 Unauthorized'


def _cause(its_pod: dict[str, Any], events: list[dict[str, Any]]) -> Cause | None:
    return pod_cause(its_pod, events, load_stack("ack-gpu"), "worker")


def test_a_failed_pod_is_explained_by_its_oom_not_by_its_earlier_mount_trouble() -> None:
    # The NAS mount failed once, then mounted; the container ran and was OOM-killed. The
    # event stays for an hour, but it is not why the pod failed.
    failed = pod(POD, "mnist-worker-0", "Failed", True, _terminated("OOMKilled", 137))
    assert _cause(failed, [unmounted("data")]) == Cause(
        "OOMKilled: container tensorflow exceeded its memory limit (exit 137)",
        "tftrain:worker.memory",
    )


def test_a_pod_that_failed_by_itself_has_no_cause_from_old_events() -> None:
    # Its own exit 1: the logs say why; neither an old FailedMount nor FailedScheduling does.
    failed = pod(POD, "mnist-worker-0", "Failed", True, _terminated("Error", 1))
    old = [unmounted("data"), event("FailedScheduling", "0/3 nodes are available", "sched")]
    assert _cause(failed, old) is None


def test_a_pending_pods_mount_trouble_is_its_cause() -> None:
    # The same event, for a pod still waiting to start: that is the cause.
    creating = pod(POD, "mnist-worker-0", "Pending", True,
                   {"state": {"waiting": {"reason": "ContainerCreating"}}})  # fmt: skip
    cause = _cause(creating, [unmounted("data")])
    assert cause is not None and cause.key == "tftrain:storage"


def test_an_init_containers_pull_failure_is_the_pods_cause() -> None:
    # The app container waits in PodInitializing while its init container cannot pull: the
    # kubelet reports the init container in initContainerStatuses, not containerStatuses.
    message = 'rpc error: failed to resolve reference "r/setup:2": r/setup:2: not found'
    its_pod = pod(POD, "mnist-worker-0", "Pending", True, waiting("PodInitializing", ""))
    its_pod["status"]["initContainerStatuses"] = [
        {"name": "setup", "ready": False, "restartCount": 0, "image": "r/setup:2",
         "imageID": "", **waiting("ErrImagePull", message)}
    ]  # fmt: skip
    assert _cause(its_pod, []) == Cause(
        f"image pull failed: no such image or tag (ErrImagePull: {message})", IMAGE_KEY
    )


def test_a_back_off_without_any_message_says_only_its_reason() -> None:
    its_pod = pod(POD, "mnist-worker-0", "Pending", True,
                  {"state": {"waiting": {"reason": "ImagePullBackOff"}}})  # fmt: skip
    assert _cause(its_pod, []) == Cause("image pull failed (ImagePullBackOff)", IMAGE_KEY)


def test_only_the_latest_pull_answer_is_quoted() -> None:
    # Two tries, two answers: the latest (the credentials) is the one to act on; the waiting
    # message follows it.
    its_pod = pod(POD, "mnist-worker-0", "Pending", True,
                  waiting("ImagePullBackOff", 'Back-off pulling image "r/t:1"'))  # fmt: skip
    events = [event("Failed", TIMED_OUT, "kubelet"), event("Failed", REFUSED, "kubelet")]
    assert _cause(its_pod, events) == Cause(
        f"image pull refused: registry credentials (ImagePullBackOff: {REFUSED} Back-off "
        'pulling image "r/t:1")',
        CREDENTIALS_KEY,
    )


@pytest.mark.parametrize(
    ("conditions", "found"),
    [
        ([], None),
        ([{"type": "Suspended", "status": "True"}], None),  # job.suspend: not a failure
        ([{"type": "Complete", "status": "True"}], None),
        ([{"type": "Failed", "status": "False"}], None),
        ([{"type": "Complete", "status": "False"}, {"type": "Failed", "status": "True"}], 1),
    ],
)
def test_a_job_failed_only_by_a_true_failed_condition(
    conditions: list[dict[str, str]], found: int | None
) -> None:
    job = {"kind": "Job", "status": {"conditions": conditions}}
    assert failed_condition(job) == (None if found is None else conditions[found])
