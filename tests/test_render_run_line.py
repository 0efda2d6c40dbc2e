"""The review's run line, case by case: what becomes of the run for each pair of renders.

Worked out from what the cloud does, not from the code: a new run id is a new run in its own
directory; the same id with its Jobs recreated resumes from the checkpoints on the same NAS;
a new file system holds no checkpoint; a new cluster or NFS server stops the pods; batch/v1
`spec.suspend: true` stops the pods and keeps the Jobs (KEP-2232).
"""

from __future__ import annotations

from typing import Any

import pytest

from infra.render.parsed import Render
from infra.render.run_line import run_ids, run_line

RUN_ID = "tftrain.io/run-id"
ACK = "alicloud:cs/managedKubernetes:ManagedKubernetes"
ASK = "alicloud:cs/serverlessKubernetes:ServerlessKubernetes"
NAS = "alicloud:nas/fileSystem:FileSystem"
MOUNT = "alicloud:nas/mountTarget:MountTarget"


def _job(run: str | None, suspend: Any = None) -> dict[str, Any]:
    labels = {} if run is None else {RUN_ID: run}
    spec = {} if suspend is None else {"suspend": suspend}
    return {"kind": "Job", "metadata": {"name": "j", "labels": labels}, "spec": spec}


def _render(*jobs: dict[str, Any], platform: str = "") -> Render:
    objects = {f"Job t/j-{i}": job for i, job in enumerate(jobs)}
    # A Service with a run-id label is no training Job: its id is not the run's.
    objects["Service t/s"] = {"kind": "Service", "metadata": {"labels": {RUN_ID: "svc"}}}
    return Render(objects=objects, cloud={}, platform=platform)


def test_run_ids_are_the_training_jobs_distinct_ids_sorted() -> None:
    bare = _job(None)
    del bare["metadata"]["labels"]  # a Job with no labels at all has no run either
    render = _render(_job("r-b"), _job("r-a"), _job("r-b"), _job(None), _job(""), bare)
    assert run_ids(render) == ["r-a", "r-b"]
    assert run_ids(Render(objects={}, cloud={})) == []


A, B = _render(_job("r1"), _job("r1")), _render(_job("r2"))
NONE = _render()


@pytest.mark.parametrize(
    ("old", "new", "changed", "replaced", "line"),
    [
        (NONE, NONE, 0, set(), "no training Jobs on either side"),
        (NONE, B, 1, set(), "r2 starts (no run before)"),
        (A, NONE, 2, set(), "r1 is stopped; no run follows"),
        (A, B, 3, set(), "r1 is stopped; r2 starts, in a directory of its own"),
        (A, A, 0, set(), "r1 keeps running, untouched"),
        (A, A, 2, set(), "r1 resumes from its checkpoints (2 Jobs restart)"),
        (
            A,
            A,
            2,
            {NAS},
            "r1 is stopped; it starts over from step 0 on the new, empty file system",
        ),
        (
            A,
            A,
            0,
            {ACK},
            "r1 is stopped with its cluster; it resumes from its checkpoints in the new",
        ),
        (
            A,
            A,
            0,
            {ASK, "alicloud:vpc/switch:Switch"},
            "r1 is stopped with its cluster; it resumes from its checkpoints in the new",
        ),
        (
            A,
            A,
            0,
            {MOUNT},
            "r1 loses its volume's NFS server; restarted, it resumes from its checkpoints",
        ),
        # The file system outranks the cluster: a new cluster on a new NAS finds nothing.
        (
            A,
            A,
            0,
            {NAS, ACK, MOUNT},
            "r1 is stopped; it starts over from step 0 on the new, empty file system",
        ),
        (
            A,
            A,
            0,
            {ACK, MOUNT},
            "r1 is stopped with its cluster; it resumes from its checkpoints in the new",
        ),
        # Replacing something that holds no run leaves it alone.
        (A, A, 0, {"alicloud:vpc/switch:Switch"}, "r1 keeps running, untouched"),
        (
            _render(_job("r1"), platform="p1"),
            _render(_job("r1"), platform="p2"),
            0,
            set(),
            "r1 is stopped here; on the other platform it resumes only from checkpoints its "
            "NAS holds (none on a new one)",
        ),
        (
            _render(_job("r1"), _job("r2")),
            _render(_job("r3")),
            0,
            set(),
            "r1, r2 is stopped; r3 starts, in a directory of its own",
        ),
        (
            A,
            _render(_job("r3"), _job("r2")),
            0,
            set(),
            "r1 is stopped; r2, r3 starts, in a directory of its own",
        ),
    ],
)
def test_what_becomes_of_the_run(
    old: Render, new: Render, changed: int, replaced: set[str], line: str
) -> None:
    assert run_line(old, new, changed, replaced) == line


RESUMES = "r1 resumes from its checkpoints (1 Jobs restart)"
SUSPENDED = _render(_job("r1", True), _job("r1", True))
SUSPEND_NOTE = (
    "r1 is suspended (job.suspend): its pods stop on SIGTERM, its Jobs and checkpoints stay; "
    "`job.suspend: false` resumes it from its checkpoints"
)


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        (A, SUSPENDED, SUSPEND_NOTE),
        (SUSPENDED, SUSPENDED, "r1 stays suspended (job.suspend)"),
        (SUSPENDED, A, "r1 resumes from its checkpoints (job.suspend false)"),
        # A new run created suspended: it is suspended, and the old one stops.
        (
            B,
            SUSPENDED,
            SUSPEND_NOTE + " (and: r2 is stopped; r1 starts, in a directory of its own)",
        ),
        (NONE, SUSPENDED, SUSPEND_NOTE + " (and: r1 starts (no run before))"),
        (
            _render(_job("r2", True)),
            SUSPENDED,
            SUSPEND_NOTE + " (and: r2 is stopped; r1 starts, in a directory of its own)",
        ),
        # A sweep's trials, suspended together and kept.
        (
            _render(_job("r1", True), _job("r2", True)),
            _render(_job("r2", True), _job("r1", True)),
            "r1, r2 stays suspended (job.suspend)",
        ),
        # A suspended run replaced by a new one that is not: the ordinary line.
        (
            _render(_job("r2", True)),
            A,
            "r2 is stopped; r1 starts, in a directory of its own",
        ),
        # Suspended means every Job: one left running is not a suspended run.
        (A, _render(_job("r1", True), _job("r1", False)), RESUMES),
        (A, _render(_job("r1", True), _job("r1")), RESUMES),
        # Only the boolean true suspends (batch/v1's field is a bool).
        (A, _render(_job("r1", "true")), RESUMES),
    ],
    ids=[
        "suspended",
        "stays",
        "resumed",
        "new-run-suspended",
        "first-run-suspended",
        "suspended-to-new-suspended",
        "trials-stay-suspended",
        "suspended-to-new-running",
        "one-job-false",
        "one-job-unset",
        "string-true",
    ],
)
def test_a_suspended_run(old: Render, new: Render, line: str) -> None:
    assert run_line(old, new, 1, set()) == line
