"""Stopping a cluster run as a reviewed config change: `job.suspend: true` (batch/v1 Job
`spec.suspend`, KEP-2232) and `pulumi up`; `false` resumes it from its checkpoints.

Expected lines are worked out from the Job API, not from the summary code: `spec.suspend`
is outside the pod template, so pulumi-kubernetes patches the Jobs in place (an update of
each, ack-gpu: 1 chief + 2 workers + 2 ps = 5 Jobs), and the run id (a digest of what the
training computes) is unchanged: the same run, stopped and resumed.
"""

from __future__ import annotations

import copy
import re

import kubernetes_validate

from infra.config import load_stack, read_stack_entries, stack_file
from infra.local.cli import main as launch
from infra.local.plan import load_config
from infra.manifests import build_objects
from infra.platform.cluster_facts import cluster_facts
from infra.render.summary import summarize
from infra.status.cloud import Snapshot, replica_lines, run_phase
from tests.goldens import Case, _render, _set, summary_of
from tests.test_manifests_schema import schema_version

RUN = re.compile(r"run-[0-9a-f]{8}")


def _lines(summary: str) -> dict[str, str]:
    return dict(
        line.split(": ", 1) for line in summary.splitlines()[1:] if not line.startswith(" ")
    )


def test_suspending_is_reviewed_as_a_stop_that_keeps_the_run() -> None:
    summary = summary_of(Case("suspend", "ack-gpu", _set("job.suspend", True)))
    lines = _lines(RUN.sub("<run>", summary))
    assert lines["Run"] == (
        "<run> is suspended (job.suspend): its pods stop on SIGTERM, its Jobs and checkpoints "
        "stay; `job.suspend: false` resumes it from its checkpoints"
    )
    assert lines["Kubernetes objects"] == "update 5 (Job 5)"
    assert lines["Cloud resources"] == "no change"


def test_resuming_continues_the_same_run_from_its_checkpoints() -> None:
    suspended = copy.deepcopy(read_stack_entries(stack_file("ack-gpu")))
    _set("job.suspend", True)(suspended)
    resumed = copy.deepcopy(suspended)
    _set("job.suspend", False)(resumed)
    summary = summarize(
        _render("ack-gpu", suspended), _render("ack-gpu", resumed), "ack-gpu", "a", "b"
    )
    lines = _lines(RUN.sub("<run>", summary))
    assert lines["Run"] == "<run> resumes from its checkpoints (job.suspend false)"
    assert lines["Kubernetes objects"] == "update 5 (Job 5)"


def test_the_launcher_does_not_run_a_suspended_stack(capsys) -> None:
    assert launch(["dev", "--set", "job.suspend=true", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "tftrain run: dev is suspended (tftrain:job.suspend true): it runs nowhere until "
        "that is false; to run it here anyway: --set job.suspend=false"
    )


def test_the_cloud_status_says_suspended() -> None:
    config = load_stack("ack-gpu")
    suspended = {"type": "Suspended", "status": "True", "reason": "JobSuspended"}
    jobs = [
        {"kind": "Job", "metadata": {"name": name}, "status": {"conditions": [suspended]}}
        for name in ("mnist-chief-0", "mnist-worker-0", "mnist-worker-1", "mnist-ps-0",
                     "mnist-ps-1")
    ]  # fmt: skip
    lines = replica_lines(config, Snapshot(jobs=jobs, pods=[], events=[]))
    assert {line.phase for line in lines} == {"Suspended"}
    assert all(line.cause is None for line in lines)
    assert run_phase(lines, "mnist-chief-0") == (
        "suspended (job.suspend true; false resumes it from its checkpoints)"
    )


def test_a_suspended_job_validates_against_the_clusters_schema() -> None:
    config = load_config("ack-gpu", None, ["job.suspend=true"])
    jobs = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job"]
    assert len(jobs) == 5
    for job in jobs:
        kubernetes_validate.validate(job, schema_version(config), strict=True)
