"""What `pulumi up` waits for on each Job: one of its pods has run (infra/manifests/workloads.py).

The annotation is evaluated the way pulumi-kubernetes (>= 4.24) evaluates `pulumi.com/waitFor`
(provider/pkg/jsonpath: strip `jsonpath=`, take the `{...}`, an RFC 9535 query from `$`; with
no `=value`, any selected node satisfies it), here by an independent RFC 9535 implementation
(jsonpath-rfc9535). The Job states are the batch/v1 JobStatus fields as the Job controller
sets them (Kubernetes Job API: startTime, active, ready, succeeded, failed, conditions).
"""

from __future__ import annotations

import re
from typing import Any

import jsonpath_rfc9535
import pytest

from infra.config import load_stack
from infra.local.plan import load_config
from infra.manifests import build_objects
from infra.manifests.workloads import JOB_WAIT_FOR, SUSPENDED_WAIT_FOR, TRIAL_WAIT_FOR
from infra.platform.cluster_facts import cluster_facts
from tests.pulumi_mocks import run_stacks

WAIT_FOR = "pulumi.com/waitFor"
TIMEOUT = "pulumi.com/timeoutSeconds"

# (state, .status or None, whether `up` may call the Job created)
STATES = [
    ("just created", None, False),
    ("started, pod in ImagePullBackOff", {"startTime": "t", "active": 1, "ready": 0}, False),
    ("started, counters not yet written", {"startTime": "t", "active": 1}, False),
    ("pod running", {"startTime": "t", "active": 1, "ready": 1}, True),
    (
        "a short run already over",
        {"startTime": "t", "ready": 0, "succeeded": 1,
         "conditions": [{"type": "Complete", "status": "True"}]},
        True,
    ),
    (
        "exit 2 at once (podFailurePolicy FailJob)",
        {"startTime": "t", "ready": 0, "failed": 1,
         "conditions": [{"type": "Failed", "status": "True"}]},
        True,
    ),
    ("ran once, its retry pending", {"startTime": "t", "active": 1, "ready": 0, "failed": 1}, True),
]  # fmt: skip


def job_in(status: dict[str, Any] | None) -> dict[str, Any]:
    """A Job of the dev stack as the API server would return it in `status`."""
    config = load_stack("dev")
    job = next(o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job")
    return job if status is None else {**job, "status": status}


def satisfied(annotation: str, obj: dict[str, Any]) -> bool:
    """pulumi-kubernetes' Parse and Matches for an annotation without `=value`."""
    assert annotation.startswith("jsonpath=")
    path = annotation.removeprefix("jsonpath=")
    assert path.startswith("{") and path.endswith("}")
    query = path[1:-1].strip()
    query = query if query.startswith("$") else "$" + query
    return bool(jsonpath_rfc9535.find(query, obj))


@pytest.mark.parametrize(
    ("status", "up"), [case[1:] for case in STATES], ids=[case[0] for case in STATES]
)
def test_a_job_counts_as_created_once_a_pod_has_run(status: dict | None, up: bool) -> None:
    assert satisfied(JOB_WAIT_FOR[WAIT_FOR], job_in(status)) is up


# A sweep's trial may wait its turn with its pods Pending (held by gang scheduling): `up` must
# not wait for it to run, only for its pods to exist.
TRIAL_UP = {
    "just created": False,
    "started, pod in ImagePullBackOff": True,
    "started, counters not yet written": True,
}


@pytest.mark.parametrize(
    ("status", "up"), [case[1:] for case in STATES], ids=[case[0] for case in STATES]
)
def test_a_trial_job_counts_as_created_once_its_pods_exist(status: dict | None, up: bool) -> None:
    name = next(case[0] for case in STATES if case[1] == status)
    assert satisfied(TRIAL_WAIT_FOR[WAIT_FOR], job_in(status)) is TRIAL_UP.get(name, up)
    held = {"startTime": "t", "active": 2, "ready": 0}  # both pods Pending, held as a gang
    assert satisfied(TRIAL_WAIT_FOR[WAIT_FOR], job_in(held))


@pytest.mark.parametrize("wait_for", [JOB_WAIT_FOR, TRIAL_WAIT_FOR], ids=["run", "trial"])
def test_the_annotation_parses_in_every_supported_provider(wait_for: dict[str, str]) -> None:
    annotation = wait_for[WAIT_FOR]
    # 4.24-4.32 split the annotation on every `=` that is not `==`, and took the path up to
    # the first `}`: neither may cut this one.
    assert annotation.count("=") == 1 and annotation.count("}") == 1
    # strconv.Atoi: whole seconds; longer than the built-in 10 minutes.
    assert int(JOB_WAIT_FOR[TIMEOUT]) > 600


@pytest.mark.parametrize("stack", run_stacks())
def test_every_job_carries_the_wait_and_none_skips_it(stack: str) -> None:
    config = load_stack(stack)
    jobs = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job"]
    assert jobs
    wanted = TRIAL_WAIT_FOR if config.trials else JOB_WAIT_FOR  # a sweep's Jobs are trials'
    for job in jobs:
        annotations = job["metadata"]["annotations"]
        assert {key: annotations[key] for key in wanted} == wanted
        assert "pulumi.com/skipAwait" not in annotations


# batch/v1 Job suspension (KEP-2232): the controller deletes the active pods, then sets the
# condition `Suspended` True; resumed, it sets it False (reason JobResumed).
SUSPENDED_STATES = [
    ("suspend asked, pods still stopping", {"startTime": "t", "active": 1, "ready": 1}, False),
    (
        "suspended",
        {"active": 0, "conditions": [
            {"type": "Suspended", "status": "True", "reason": "JobSuspended"}]},
        True,
    ),
    (
        "resumed",
        {"startTime": "t", "active": 1, "conditions": [
            {"type": "Suspended", "status": "False", "reason": "JobResumed"}]},
        False,
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("status", "up"), [c[1:] for c in SUSPENDED_STATES], ids=[c[0] for c in SUSPENDED_STATES]
)
def test_a_suspended_job_is_up_once_its_controller_says_suspended(status: dict, up: bool) -> None:
    annotation = SUSPENDED_WAIT_FOR[WAIT_FOR]
    assert satisfied(annotation, job_in(status)) is up
    # The 4.24-4.32 splitter: no lone `=` past the prefix, one `}`.
    assert len(re.findall(r"(?<!=)=(?!=)", annotation)) == 1 and annotation.count("}") == 1


def test_job_suspend_suspends_every_job_of_the_run_and_nothing_else() -> None:
    config = load_stack("dev")
    suspended = load_config("dev", None, ["job.suspend=true"])
    before = build_objects(config, cluster_facts(config))
    after = build_objects(suspended, cluster_facts(suspended))
    assert suspended.job.run_id == config.job.run_id  # the same run, stopped
    for old, new in zip(before, after, strict=True):
        if old["kind"] != "Job":
            assert old == new
            continue
        assert new["spec"]["suspend"] is True and "suspend" not in old["spec"]
        assert new["spec"]["template"] == old["spec"]["template"]  # patched, not replaced
        assert new["metadata"]["annotations"][WAIT_FOR] == SUSPENDED_WAIT_FOR[WAIT_FOR]
