"""The report of a run in the cluster, rendered here: `python -m infra.status <stack> --report`.

In the cluster no process of this project sees the run end (the trainer's image needs
nothing beyond /bin/sh), and the run's directory is on NAS, which this machine cannot
mount. The one pod that mounts it after the run is TensorBoard's (read-only): through it,
`kubectl exec` streams as a tar what the report reads (the outcome records, the replicas'
logs, the event files, metrics.txt; not checkpoints, the model or the replicas' work and
homes) into `runs/<stack>/cluster/<job>/<run id>/`, where the report is written as for a
local run (`infra.records.report`). The container needs `sh`, `find` and `tar`, which the
TensorBoard images (TensorFlow's, tftrain's) have.
"""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from infra.config import StackConfig
from infra.manifests.tensorboard import COMPONENT, tensorboard_name
from infra.records.report import config_that_ran, write_report
from infra.records.run_state import read_run
from infra.status.cloud import ClusterError, kubectl_argv

MIRROR_DIR = "cluster"
# Run in the TensorBoard container: $1 is the run's output dir. Everything but the big,
# uninteresting parts, as one tar stream on stdout.
_PACK = (
    'cd "$1" && find . \\( -path ./checkpoints -o -path ./saved_model -o -path "./replicas/*/work"'
    ' -o -path "./replicas/*/home" -o -path ./report \\) -prune -o -type f -print'
    " | tar -cf - -T -"
)
TRANSFER_TIMEOUT = 120


def mirror_dir(runs_root: Path, config: StackConfig) -> Path:
    return runs_root / MIRROR_DIR / config.job.name / config.job.run_id


def fetch_run(config: StackConfig, kubeconfig: str | None, destination: Path) -> None:
    """The run's records, logs and event files, from the volume through TensorBoard's pod."""
    if not config.tensorboard.enabled:
        raise ClusterError(
            "the report of a cloud run is read through TensorBoard's pod, the one that mounts "
            "the run's volume: set tftrain:tensorboard.enabled true"
        )
    target = f"deployment/{tensorboard_name(config)}"
    argv = kubectl_argv(kubeconfig, config.job.namespace, "exec", target, "-c", COMPONENT)
    argv += ["--", "sh", "-c", _PACK, "sh", config.output_dir]
    destination.mkdir(parents=True, exist_ok=True)
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        try:
            with tarfile.open(fileobj=process.stdout, mode="r|") as archive:
                archive.extractall(destination, filter="data")  # no paths outside it
        except tarfile.TarError as error:
            # A failed exec streams nothing: kubectl's own reason says why, not the empty tar.
            process.kill()
            _, err = process.communicate()
            why = _last_line(err) or str(error)
            raise ClusterError(f"could not read the run from {target}: {why}") from None
        try:
            _, err = process.communicate(timeout=TRANSFER_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()  # else leaving `with` would wait for it, unbounded
            process.communicate()
            raise ClusterError(
                f"kubectl exec {target}: no end {TRANSFER_TIMEOUT} s after the run's last byte"
            ) from None
    if process.returncode != 0:
        raise ClusterError(f"kubectl exec {target}: {_last_line(err) or 'no answer'}")


def _last_line(stderr: bytes) -> str:
    return (stderr.decode(errors="replace").strip().splitlines() or [""])[-1]


def cloud_report(stack: str, config: StackConfig, kubeconfig: str | None, runs_root: Path) -> Path:
    """Fetch the run and render its report here; the report's path."""
    mirror = mirror_dir(runs_root, config)
    fetch_run(config, kubeconfig, mirror)
    state = read_run(mirror)
    if state is None:
        raise ClusterError(f"no replica of run {config.job.run_id} has started in the cluster")
    title = f"Run {config.job.run_id} of stack {stack} (cluster): {state.outcome}"
    return write_report(state, title, config_that_ran(config))
