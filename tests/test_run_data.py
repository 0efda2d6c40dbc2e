"""Paths inside paths (infra/config/paths.py), and where `job.initCheckpoint` lands
(infra/replica_plan/run_data.py), against tables worked by hand from POSIX path semantics: a
directory contains what lies below one of its `/` separators, so `/data2` is beside `/data`, not
inside it."""

from __future__ import annotations

from typing import Any

import pytest

from infra.config import ConfigError, parse_config
from infra.config.paths import under
from infra.replica_plan.run_data import (
    export_env,
    init_checkpoint_env,
    input_env,
    resolve_init_checkpoint,
)

IMAGE = "registry.example.com/tftrain/trainer:1"
CPU_IMAGE = "registry.example.com/tftrain/trainer:1-cpu"

# (path, directory, path relative to directory or None when outside it)
UNDER = [
    ("/data", "/data", ""),
    ("/data/", "/data", ""),
    ("/data", "/data/", ""),
    ("/data/mnist", "/data", "mnist"),
    ("/data/mnist/run-1/checkpoints", "/data", "mnist/run-1/checkpoints"),
    ("/data/mnist", "/data/", "mnist"),
    ("/data//mnist/./x", "/data", "mnist/x"),
    ("/data2", "/data", None),
    ("/data2/ckpt-10", "/data", None),
    ("/datax/mnist", "/data/", None),
    ("/dat", "/data", None),
    ("/", "/data", None),
    ("/input/../data/x", "/data", "x"),
    ("/data/../etc", "/data", None),
    ("/a/b", "/", "a/b"),
    ("/", "/", ""),
    ("/dataX/y", "/dataX", "y"),
    ("/dataX/y", "/dataX/", "y"),
]


@pytest.mark.parametrize(("path", "directory", "relative"), UNDER)
def test_under_follows_the_separator(path: str, directory: str, relative: str | None) -> None:
    assert under(path, directory) == relative


def config(**job: Any) -> Any:
    return parse_config(
        {
            "image": IMAGE,
            "job": {"name": "mnist", "runId": "run-2", **job},
            "data": {"localInputDir": "/srv/mnist"},
        }
    )


# (job.initCheckpoint, what the replicas get) with the volume at /vol and the input at /in:
# storage.mountPath is /data and data.inputPath /input (the defaults).
RESOLVED = [
    ("", ""),
    ("run:run-1", "/vol/mnist/run-1/checkpoints"),
    ("/data", "/vol"),
    ("/data/mnist/run-1/checkpoints", "/vol/mnist/run-1/checkpoints"),
    ("/data/shared/ckpt-2000", "/vol/shared/ckpt-2000"),
    ("/input/pretrained/ckpt-5", "/in/pretrained/ckpt-5"),
    ("/input", "/in"),
]


@pytest.mark.parametrize(("wanted", "resolved"), RESOLVED)
def test_init_checkpoint_is_moved_to_where_the_replicas_see_it(wanted: str, resolved: str) -> None:
    assert resolve_init_checkpoint(config(initCheckpoint=wanted), "/vol", "/in") == resolved


def test_init_checkpoint_env_is_set_only_for_a_path() -> None:
    assert init_checkpoint_env("") == {}
    assert init_checkpoint_env("/vol/x") == {"TFTRAIN_INIT_CHECKPOINT": "/vol/x"}


@pytest.mark.parametrize("wanted", ["/data2/ckpt-10", "/datasets/ckpt-1", "/input2/ckpt-3"])
def test_a_checkpoint_beside_the_volume_or_input_is_refused(wanted: str) -> None:
    # /data2 is not on the volume mounted at /data: no replica could read it.
    with pytest.raises(ConfigError) as raised:
        config(initCheckpoint=wanted)
    assert f'tftrain:job.initCheckpoint = "{wanted}"' in str(raised.value)
    assert "an absolute path under storage.mountPath /data or data.inputPath /input" in str(
        raised.value
    )


# What trainer/settings.py and infra/lifecycle/export.sh read (docs/trainer.md, its env).
def test_the_input_is_the_data_dir_unless_job_data_dir_names_another() -> None:
    assert input_env(config(), "") == {}
    assert input_env(config(), "/input") == {
        "TFTRAIN_INPUT_DIR": "/input",
        "TFTRAIN_DATA_DIR": "/input",
    }
    assert input_env(config(dataDir="/input/mnist-idx"), "/input") == {
        "TFTRAIN_INPUT_DIR": "/input"
    }


def test_the_export_env_names_the_run_and_where_it_ran() -> None:
    two_images = parse_config(
        {
            "image": IMAGE,
            "job": {"name": "mnist", "runId": "run-2"},
            "ps": {"image": CPU_IMAGE},
        }
    )
    # In pods: every replica type that runs, with its image, space-separated.
    assert export_env(two_images, "/export") == {
        "TFTRAIN_EXPORT_DIR": "/export",
        "TFTRAIN_JOB_NAME": "mnist",
        "TFTRAIN_RUN_ID": "run-2",
        "TFTRAIN_IMAGES": f"chief={IMAGE} worker={IMAGE} ps={CPU_IMAGE}",
    }
    # Local processes run no image; they name the stack.
    assert export_env(two_images, "/home/me/export", stack="dev", images=False) == {
        "TFTRAIN_EXPORT_DIR": "/home/me/export",
        "TFTRAIN_JOB_NAME": "mnist",
        "TFTRAIN_RUN_ID": "run-2",
        "TFTRAIN_STACK": "dev",
    }
