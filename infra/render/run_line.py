"""What becomes of the run: stopped, started, resumed from its checkpoints, suspended, or
untouched, read off the training Jobs' run ids and what is replaced under them."""

from __future__ import annotations

from infra.manifests.common import RUN_ID_LABEL
from infra.render.actions import CLUSTER_TYPES, FILE_SYSTEM_TYPE, MOUNT_TARGET_TYPE
from infra.render.parsed import Render, training_jobs


def run_ids(render: Render) -> list[str]:
    """The run ids of a render's training Jobs (also for infra.render.relabel)."""
    ids = {
        job["metadata"].get("labels", {}).get(RUN_ID_LABEL, "")
        for job in training_jobs(render).values()
    }
    return sorted(ids - {""})


def _suspended(render: Render) -> bool:
    """Every training Job is suspended (`job.suspend`, batch/v1 `spec.suspend`)."""
    jobs = training_jobs(render).values()
    return bool(jobs) and all(job["spec"].get("suspend") is True for job in jobs)


def run_line(old: Render, new: Render, changed_jobs: int, replaced_types: set[str]) -> str:
    before, after = ", ".join(run_ids(old)), ", ".join(run_ids(new))
    if not before and not after:
        return "no training Jobs on either side"
    line = _unsuspended_run_line(old, new, changed_jobs, replaced_types)
    if _suspended(new) and not (_suspended(old) and before == after):
        return (
            f"{after} is suspended (job.suspend): its pods stop on SIGTERM, its Jobs and "
            "checkpoints stay; `job.suspend: false` resumes it from its checkpoints"
            + ("" if before == after else f" (and: {line})")
        )
    if _suspended(new):
        return f"{after} stays suspended (job.suspend)"
    if _suspended(old) and before == after:
        return f"{after} resumes from its checkpoints (job.suspend false)"
    return line


def _unsuspended_run_line(
    old: Render, new: Render, changed_jobs: int, replaced_types: set[str]
) -> str:
    before, after = ", ".join(run_ids(old)), ", ".join(run_ids(new))
    if not before:
        return f"{after} starts (no run before)"
    if not after:
        return f"{before} is stopped; no run follows"
    if before != after:
        return f"{before} is stopped; {after} starts, in a directory of its own"
    if old.platform != new.platform:
        return (
            f"{after} is stopped here; on the other platform it resumes only from checkpoints "
            "its NAS holds (none on a new one)"
        )
    if FILE_SYSTEM_TYPE in replaced_types:
        return f"{after} is stopped; it starts over from step 0 on the new, empty file system"
    if replaced_types & CLUSTER_TYPES:
        return f"{after} is stopped with its cluster; it resumes from its checkpoints in the new"
    if MOUNT_TARGET_TYPE in replaced_types:
        return f"{after} loses its volume's NFS server; restarted, it resumes from its checkpoints"
    if changed_jobs:
        return f"{after} resumes from its checkpoints ({changed_jobs} Jobs restart)"
    return f"{after} keeps running, untouched"
