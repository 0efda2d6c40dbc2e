"""The local launcher's opening lines (`tftrain run`), before anything starts: what runs,
where, how it restarts and ends. Every expected line is worked out by hand from
stacks/Pulumi.dev.yaml (1 chief, 2 workers, 1 ps; learning rate 0.003, batch 128, 4
epochs) and the overrides each test gives."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from infra.local import opening
from infra.local.plan import build_plan, load_config, replica_names
from infra.local.ports import PortReservation

REPLICAS = ("mnist-chief-0", "mnist-worker-0", "mnist-worker-1", "mnist-ps-0")


def _opening(
    tmp_path: Path, overrides: list[str], timeout: int | None, tensorboard: bool
) -> tuple[list[str], PortReservation, str]:
    config = load_config("dev", None, overrides)
    names = replica_names(config)
    assert tuple(names) == REPLICAS
    ports = PortReservation([*names, opening.TENSORBOARD])
    plan = build_plan(
        config,
        {name: ports.port(name) for name in names},
        tmp_path / "out",
        tmp_path / "scratch",
        base_env={},
        stack="dev",
    )
    said: list[str] = []
    args = argparse.Namespace(stack="dev", timeout=timeout, tensorboard=tensorboard)
    opening.say_plan(said.append, plan, args, ports, "network: a private one")
    ports.close()
    return said, ports, config.job.run_id


def test_a_launch_that_restarts_has_a_deadline_and_a_tensorboard_says_so(
    tmp_path: Path,
) -> None:
    said, ports, run_id = _opening(
        tmp_path,
        ["job.backoffLimit=2", "job.activeDeadlineSeconds=600", "job.dataDir=/nowhere/mnist"],
        timeout=None,
        tensorboard=True,
    )
    cluster = ", ".join(f"{name}=localhost:{ports.port(name)}" for name in REPLICAS)
    assert said == [
        f"stack dev: job mnist, run {run_id}",
        "replicas: 1 chief, 2 worker, 1 ps",
        "hyperparameters: learning rate 0.003, batch size 128, epochs 4, strategy parameter_server",
        "command chief/worker/ps: python -m trainer (each replica under "
        "infra/lifecycle/supervise.sh)",
        f"cluster: {cluster}",
        "network: a private one",
        f"output dir: {tmp_path / 'out'}",
        # POSIX: 126 not executable, 127 not found; 2 the trainer's usage error.
        "restarts: a failed replica starts again on its port, up to 2 times "
        "(job.backoffLimit 2); exit codes 2, 126, 127 end the job at once",
        "deadline: job.activeDeadlineSeconds 600",
        "warning: job.dataDir /nowhere/mnist does not exist on this machine",
        f"TensorBoard: http://127.0.0.1:{ports.port(opening.TENSORBOARD)}/",
    ]
    assert run_id.startswith("run-")


def test_a_launch_without_restarts_says_its_data_and_leaves_out_what_does_not_apply(
    tmp_path: Path,
) -> None:
    data = tmp_path / "mnist"
    data.mkdir()
    said, _, run_id = _opening(
        tmp_path,
        [
            "job.backoffLimit=0",
            "job.activeDeadlineSeconds=600",  # --timeout given: the launcher's own limit
            f"job.dataDir={data}",
            f"data.localInputDir={data}",
            f"data.localExportDir={tmp_path / 'exports'}",
            "job.initCheckpoint=run:run-0123abcd",
            "hyperparams.maxSteps=50",
        ],
        timeout=30,
        tensorboard=False,
    )
    assert said[0] == f"stack dev: job mnist, run {run_id}"
    assert said[2] == (
        "hyperparameters: learning rate 0.003, batch size 128, epochs 4, max steps 50, "
        "strategy parameter_server"
    )
    assert said[7:] == [
        f"input: {data}",
        f"export: {tmp_path / 'exports' / 'mnist' / run_id} once the run succeeds",
        "fine-tuning from run:run-0123abcd (job.initCheckpoint)",
        "restarts: none (job.backoffLimit 0): a failed replica ends the job",
    ]


@pytest.mark.parametrize(
    ("overrides", "timeout"), [([], None), (["job.activeDeadlineSeconds=600"], 5)]
)
def test_no_deadline_line_without_a_deadline_or_with_a_timeout(
    tmp_path: Path, overrides: list[str], timeout: int | None
) -> None:
    said, _, _ = _opening(tmp_path, overrides, timeout=timeout, tensorboard=False)
    assert not [line for line in said if line.startswith("deadline:")]
