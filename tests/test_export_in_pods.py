"""The export hook and fine-tuning as the cluster runs them, under Pulumi mocks, for every
checked-in stack with an OSS input and export (tests/test_oss_data.py's config).

From the export contract (docs/data.md "Bring your data", supervise.sh's header): the replica that
ends the run, and only it, runs export.sh from the lifecycle ConfigMap once the run has
succeeded, with what the script reads in its env; the ConfigMap's copy, run as the pod runs
it, exports a run. Fine-tuning: every replica gets the resolved path, and another start is
another run.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from infra.config import ConfigError, parse_config, read_stack_file, stack_file
from tests.pulumi_mocks import run_program
from tests.test_oss_data import (
    STACKS,
    deployed,
    in_region,
    raw_with_data,
    run_enders,
    training_pods,
)

HOOK = "/etc/tftrain-lifecycle/export.sh"


def _exports_a_run(script: str, tmp_path: Path) -> None:
    """The ConfigMap's export.sh, run as the pod runs it (`/bin/sh FILE`), exports a run: the
    trainer's file, the manifest naming the run, the marker listing both, no bookkeeping."""
    output = tmp_path / "volume" / "mnist" / "run-1"
    (output / ".tftrain-run").mkdir(parents=True)
    (output / ".tftrain-run" / "succeeded.run-1").write_text("x\n")
    (output / "model.txt").write_text("weights\n")
    hook = tmp_path / "export.sh"
    hook.write_text(script)
    env = {"PATH": os.environ["PATH"], "TFTRAIN_OUTPUT_DIR": str(output),
           "TFTRAIN_EXPORT_DIR": str(tmp_path / "bucket")}  # fmt: skip
    done = subprocess.run(["/bin/sh", str(hook)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    exported = tmp_path / "bucket" / "mnist" / "run-1"
    assert (exported / "model.txt").read_text() == "weights\n"
    assert not (exported / ".tftrain-run").exists()
    assert json.loads((exported / "tftrain-run.json").read_text())["runId"] == "run-1"
    marker = (exported / "_TFTRAIN_EXPORTED").read_text().splitlines()
    assert marker[0] == "run run-1" and "8 model.txt" in marker


def _env(pod: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}


@pytest.mark.parametrize("stack", STACKS)
def test_the_run_ender_alone_exports_on_success_with_what_export_sh_reads(
    stack: str, tmp_path: Path
) -> None:
    config, run = deployed(stack)
    (config_map,) = [
        m for m in run.objects_of_kind("ConfigMap") if m["metadata"]["name"].endswith("-lifecycle")
    ]
    _exports_a_run(config_map["data"]["export.sh"], tmp_path)
    for name, pod in training_pods(run).items():
        command = pod["containers"][0]["command"]
        ends = name in run_enders(config)
        at = command.index("--on-success") if "--on-success" in command else None
        assert (at is not None and command[at + 1] == HOOK) is ends
        env = _env(pod)
        if ends:
            assert env["TFTRAIN_RUN_ID"] == run_enders(config)[name]
            assert env["TFTRAIN_JOB_NAME"] == config.job.name
            images = dict(pair.split("=", 1) for pair in env["TFTRAIN_IMAGES"].split())
            assert images == {g.type: g.image for g in config.replica_groups if g.number}
        else:
            assert "TFTRAIN_RUN_ID" not in env and "--on-success" not in command


def test_without_an_export_target_nothing_runs_on_success() -> None:
    run = run_program(in_region({k: v for k, v in raw_with_data("dev").items() if k != "data"}))
    (config_map,) = run.objects_of_kind("ConfigMap")
    assert "export.sh" not in config_map["data"]
    assert all("--on-success" not in p["containers"][0]["command"]
               for p in training_pods(run).values())  # fmt: skip


@pytest.mark.parametrize(
    ("wanted", "resolved"),
    [
        ("run:run-0a1b2c3d", "/data/mnist/run-0a1b2c3d/checkpoints"),  # dev mounts at /data
        ("/data/mnist/lr-0-01/checkpoints/ckpt-2000", "/data/mnist/lr-0-01/checkpoints/ckpt-2000"),
        ("/input/pretrained/ckpt-100", "/input/pretrained/ckpt-100"),
    ],
)
def test_every_replica_gets_the_init_checkpoint_and_it_is_another_run(
    wanted: str, resolved: str
) -> None:
    raw = raw_with_data("dev")
    tuned = {**raw, "job": {**raw["job"], "initCheckpoint": wanted}}
    assert parse_config(tuned).job.run_id != parse_config(raw).job.run_id
    pods = training_pods(run_program(in_region(tuned)))
    assert {name: _env(pod)["TFTRAIN_INIT_CHECKPOINT"] for name, pod in pods.items()} == {
        name: resolved for name in pods
    }


def test_another_local_input_is_another_run_unless_the_bucket_decides() -> None:
    """docs/hyperparameters.md: the input is part of the run id; locally the input directory
    stands for it, in the cloud the bucket and prefix do."""
    raw = raw_with_data("dev")
    local = {k: v for k, v in raw.items() if k != "data"}

    def run_id(base: dict[str, Any], directory: str) -> str:
        data = (
            {**base.get("data", {}), "localInputDir": directory} if directory else base.get("data")
        )
        return parse_config({**base, **({"data": data} if data else {})}).job.run_id

    assert (
        len({run_id(local, ""), run_id(local, "/home/a/mnist"), run_id(local, "/home/b/mnist")})
        == 3
    )
    assert run_id(raw, "/home/a/mnist") == run_id(raw, "") == parse_config(raw).job.run_id


@pytest.mark.parametrize(
    ("wanted", "allowed"),
    [
        ("run:ft", "not this run's own id"),
        ("run:Not_A_Label", "the run id is a DNS label"),
        ("/input/ckpt-1", "storage.mountPath /data"),  # no input without data.bucket
        ("relative/ckpt-1", "storage.mountPath /data"),
    ],
)
def test_an_init_checkpoint_nothing_can_reach_is_refused_by_key(wanted: str, allowed: str) -> None:
    raw = read_stack_file(stack_file("dev"))
    raw["job"] = {**raw["job"], "runId": "ft", "initCheckpoint": wanted}
    with pytest.raises(ConfigError) as refused:
        parse_config(raw)
    (problem,) = refused.value.problems
    assert problem.startswith(f'tftrain:job.initCheckpoint = "{wanted}"') and allowed in problem
