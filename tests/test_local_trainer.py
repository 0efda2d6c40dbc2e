"""The local launcher running the real trainer on the dev stack's topology (1 ps, 2 workers,
chief): the end-to-end check that the launcher, the topology and the trainer agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from infra.local.plan import REPO


def run_dev(
    output_dir: Path, timeout: float, *options: str, cpus: set[int] | None = None, **env: str
) -> tuple[int, str]:
    """The dev stack through the launcher; `env` reaches the replicas as `job.env` (a
    replica gets nothing else of the caller's environment); `cpus`: the launcher's affinity
    mask, which every replica inherits (`taskset -c`)."""
    # bench/mutation.py's child-process runs name the mutant the replicas are to run here.
    env = {**{k: v for k, v in os.environ.items() if k == "MUTANT_UNDER_TEST"}, **env}
    sets = [arg for name, value in env.items() for arg in ("--set", f"job.env.{name}={value}")]
    argv = [sys.executable, "-m", "infra.local", "dev", "--output-dir", str(output_dir),
            "--timeout", str(timeout), *options, *sets]  # fmt: skip
    try:
        done = subprocess.run(
            argv,
            cwd=REPO,
            env=os.environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout + 30,  # the launcher's own --timeout should always come first
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )
    except subprocess.TimeoutExpired as expired:
        raise AssertionError(f"the launcher outlived its --timeout:\n{expired.output}") from None
    return done.returncode, done.stdout


def assert_trained(status: int, out: str, output_dir: Path) -> None:
    assert status == 0, out
    for name in ("mnist-chief-0", "mnist-worker-0", "mnist-worker-1", "mnist-ps-0"):
        assert re.search(rf"^\[launcher\] +{name} +exit 0 ", out, re.MULTILINE), out
    assert list(output_dir.rglob("events.out.tfevents.*")), "no TensorBoard events"
    assert list(output_dir.rglob("*.index")), "no checkpoint"


def test_dev_topology_trains_on_small_data(tmp_path: Path) -> None:
    """The README's first command, on small data: besides every replica's exit 0, what the
    trainer's contract promises (docs/trainer.md): the chief's progress and final accuracy
    lines, the train and eval scalars, the final checkpoint, the SavedModel, and the chief's
    supervisor's record of the run's success.

    Pinned to one core, as `taskset -c 0 ./tftrain run dev` or a sweep trial whose
    `parallel` reaches the core count: TensorFlow sized the ps's and workers' inter-op
    pools from that mask, one thread, and they deadlocked on the first function with no
    Step line ever (issue 41). A hang now fails at the launcher's --timeout."""
    out_dir = tmp_path / "out"
    one_core = {min(os.sched_getaffinity(0))}
    status, out = run_dev(
        out_dir, 150, "--set", "hyperparams.maxSteps=20", cpus=one_core,
        TFTRAIN_TRAIN_EXAMPLES="2048",
    )  # fmt: skip
    assert_trained(status, out, out_dir)
    assert re.search(r"^\[mnist-chief-0\] +Test-Accuracy: \d\.\d{4}$", out, re.MULTILINE), out
    assert (out_dir / "checkpoints" / "ckpt-20.index").exists()
    assert (out_dir / "saved_model" / "saved_model.pb").exists()
    assert list((out_dir / "train").glob("events.out.tfevents.*"))
    assert list((out_dir / "eval").glob("events.out.tfevents.*"))
    (record,) = (out_dir / ".tftrain-run").glob("succeeded.*")
    assert record.read_text().split()[1] == "mnist-chief-0"


@pytest.mark.slow
def test_dev_on_full_mnist_reaches_99_percent(tmp_path: Path) -> None:
    status, out = run_dev(tmp_path / "out", 1800)
    assert_trained(status, out, tmp_path / "out")
    accuracy = float(re.findall(r"Test-Accuracy: ([0-9.]+)", out)[-1])
    assert accuracy >= 0.990, out


@pytest.mark.slow
@pytest.mark.parametrize("in_cluster", [False, True], ids=["tf2-shape", "kubeflow-shape"])
def test_an_evaluator_runs_with_either_tf_config_shape(tmp_path: Path, in_cluster: bool) -> None:
    """The evaluator outside the cluster (TF2) or listed in it (Kubeflow's training-operator):
    training never dials it either way, and it evaluates the final checkpoint and exits 0."""
    sets = ["evaluator.number=1", f"job.evaluatorInCluster={str(in_cluster).lower()}",
            "hyperparams.maxSteps=20", "hyperparams.checkpointSteps=10"]  # fmt: skip
    status, out = run_dev(
        tmp_path / "out",
        300,
        *(arg for value in sets for arg in ("--set", value)),
        TFTRAIN_TRAIN_EXAMPLES="2048",
    )
    assert_trained(status, out, tmp_path / "out")
    assert re.search(r"^\[launcher\] +mnist-evaluator-0 +exit 0 ", out, re.MULTILINE), out
    assert re.search(
        r"^\[mnist-evaluator-0\] +Checkpoint \S+ckpt-20: step 20, Test-Accuracy: \d\.\d{4}$",
        out,
        re.MULTILINE,
    ), out
