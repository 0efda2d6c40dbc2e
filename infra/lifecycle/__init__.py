"""How a run ends, for any TFJob-style trainer: one supervisor script around every replica.

TFJob's success policy: the run succeeds when the chief (TFJob's `master` counts as chief)
or, without one, worker 0 exits 0. A ParameterServerStrategy ps or worker never learns
that: it sits in `server.join()` forever, and so would its Job. Rather than asking every
trainer to watch for the end, `supervise.sh` (POSIX sh, so any image with /bin/sh runs it
unchanged) wraps the stack's command in every replica:
- the replica that ends the run publishes the run's success on the shared volume when its
  command exits 0; every other replica then stops its command and exits 0;
- a final failure (exit 2/126/127, or any failure on a replica's last attempt) is published
  too, and every replica stops and exits 2, so every Job fails within seconds.
Outcomes are records per run key (below) and deploy generation, so another run's outcome is
ignored, and a replica (re)started after its run has ended exits at once. The supervisor
passes SIGTERM on to the command and exits with the command's status, so preemption and
failures reach the Job's podFailurePolicy unchanged.

Kubernetes delivers the script in a ConfigMap volume (`infra/manifests/lifecycle.py`); the
local launcher runs the same file from this directory, so both behave alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.config import StackConfig, settings_fingerprint
from infra.topology import Replica, Topology

SCRIPT_NAME = "supervise.sh"
SCRIPT = Path(__file__).with_name(SCRIPT_NAME)
# Run by the replica that ends the run once it has succeeded (`--on-success`), when the stack
# has an export target: copies the run's output there (see the script's header).
EXPORT_SCRIPT_NAME = "export.sh"
EXPORT_SCRIPT = Path(__file__).with_name(EXPORT_SCRIPT_NAME)
# In the run's output dir, next to what the trainer writes there: the run's outcome records.
OUTCOMES_DIR = ".tftrain-run"
# The evaluator may be scoring the final checkpoint when the run ends (our trainer's
# evaluator finishes that one on SIGTERM); ps and workers have nothing left to do.
EVALUATOR_STOP_GRACE = 30
STOP_GRACE = 2
# How long Kubernetes waits between SIGTERM and SIGKILL for a training pod. It must cover
# the longest grace inside: the evaluator's (above) and the bundled ps's wait for the
# chief's preemption checkpoint (trainer/preemption.py PS_GRACE_SECONDS, 25 s), plus the
# supervisor's own SIGTERM → SIGKILL step. A test keeps them in this order.
TERMINATION_GRACE_SECONDS = EVALUATOR_STOP_GRACE + STOP_GRACE + 13
# A usage error (argparse's convention, the trainer's "bad flag/env/TF_CONFIG/data"), or a
# command the shell cannot run (126: not executable, 127: not found): retrying cannot help,
# so the Job fails at once and the local launcher does not restart the replica.
FINAL_EXIT_CODES = (2, 126, 127)


def ends_run(replica: Replica, topology: Topology) -> bool:
    """TFJob's rule: the chief (or `master`), or worker 0 when there is neither."""
    types = {r.type for r in topology.replicas}
    if types & {"chief", "master"}:
        return replica.type in ("chief", "master")
    return replica.type == "worker" and replica.index == 0


def run_key(config: StackConfig) -> str:
    """The run id, plus a fingerprint of the settings when `job.runId` is pinned.

    A derived run id already is that fingerprint. A pinned one is reused on purpose to
    continue a finished run with new settings (more epochs, a lower learning rate): that is
    a new run for the supervisor, which must not take the earlier run's outcome for its own.
    """
    fingerprint = settings_fingerprint(config)
    if config.job.run_id == fingerprint:
        return fingerprint
    return f"{config.job.run_id}.{fingerprint.removeprefix('run-')}"


def deploy_generation(job_templates: Sequence[Any]) -> str:
    """A digest of what a deploy runs: the pod templates of every Job of the run.

    A run's failure counts only within its generation: a deploy that changes any Job (more
    memory after an OOM, a fixed image) is a new try of the run, while the same Jobs coming
    back (a refresh that forgot finished Jobs, a re-create) find the run already failed.
    """
    text = json.dumps(list(job_templates), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Supervision:
    """What the supervisor of one replica is told: its part, where outcomes go, its retries."""

    ends_run: bool
    outcomes: str
    run_key: str
    replica: str
    backoff_limit: int
    stop_grace: int
    on_success: str = ""

    def wrap(
        self,
        script: str,
        command: Sequence[str],
        generation: str,
        workdir: str = "",
        logs: str = "",
    ) -> list[str]:
        """`command` run under the supervisor at path `script`, in deploy `generation`, in
        `workdir` (created by the supervisor) if given, each attempt's output kept in `logs`
        if given."""
        return [
            "/bin/sh",
            script,
            "--ends-run" if self.ends_run else "--follows-run",
            "--outcomes",
            self.outcomes,
            "--run",
            self.run_key,
            "--generation",
            generation,
            "--replica",
            self.replica,
            "--backoff-limit",
            str(self.backoff_limit),
            *(() if self.ends_run else ("--stop-grace", str(self.stop_grace))),
            *(("--on-success", self.on_success) if self.on_success else ()),
            *(("--logs", logs) if logs else ()),
            *(("--workdir", workdir) if workdir else ()),
            "--",
            *command,
        ]


def supervision(
    config: StackConfig,
    topology: Topology,
    replica: Replica,
    output_dir: str,
    export_script: str = "",
) -> Supervision:
    """`export_script`: where the replica sees export.sh, when the stack exports its runs."""
    grace = EVALUATOR_STOP_GRACE if replica.type == "evaluator" else STOP_GRACE
    ends = ends_run(replica, topology)
    return Supervision(
        ends_run=ends,
        outcomes=f"{output_dir.rstrip('/')}/{OUTCOMES_DIR}",
        run_key=run_key(config),
        replica=replica.name,
        backoff_limit=config.job.backoff_limit,
        stop_grace=grace,
        on_success=export_script if ends else "",
    )
