"""GPUs the stack creates get a driver new enough for the image's CUDA, and a replica given
GPUs it cannot use stops at once instead of training on the CPU.

Expected values from Alibaba's docs ("Create a GPU-accelerated ECI pod": gn6i defaults to
Tesla 470 / CUDA 11.4, 535 and 550 on request, major version only since 2025-03-17; ECI pod
annotations: `k8s.aliyun.com/eci-gpu-driver-version: tesla=<version>`; ACK "Specify a custom
GPU driver version for a node": node pool label `ack.aliyun.com/nvidia-driver-version`) and
NVIDIA's CUDA compatibility guide (CUDA 12.x needs a driver >= 525.60.13; CUDA 12.5 Update 1
itself, without minor version compatibility, >= 555.42.06: CUDA 12.5.1 release notes), and
TensorFlow's `.bazelrc` (HERMETIC_CUDA_VERSION="12.5.1").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from infra.config import load_stack
from infra.local.plan import REPO
from infra.manifests import build_objects
from infra.platform.cluster_facts import cluster_facts
from tests.pulumi_mocks import run_program
from trainer.gpu_check import driver_version, gpu_problem

CUDA_12_MINIMUM = (525, 60)
CUDA_12_5_1_MINIMUM = (555, 42)  # what an image requiring cuda>=12.5 needs
ECI_DRIVER = "k8s.aliyun.com/eci-gpu-driver-version"
ACK_DRIVER = "ack.aliyun.com/nvidia-driver-version"


def _major_minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2])


def test_ask_gpu_pods_ask_eci_for_a_cuda_12_driver() -> None:
    config = load_stack("ask-eci")
    for job in (o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job"):
        annotations = job["spec"]["template"]["metadata"].get("annotations", {})
        limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
        if "nvidia.com/gpu" in limits:
            family, _, version = annotations[ECI_DRIVER].partition("=")
            assert family == "tesla" and version in ("535", "550")  # ECI's CUDA 12 lines
        else:
            assert ECI_DRIVER not in annotations


def test_ack_gpu_pools_pin_a_cuda_12_driver() -> None:
    recorded = run_program("ack-gpu")
    pools = recorded.of_type("alicloud:cs/nodePool:NodePool")
    gpu_pools = [p for p in pools if "gpu" in p.name]
    assert gpu_pools
    for pool in pools:
        labels = {label["key"]: label["value"] for label in pool.inputs.get("labels") or []}
        if pool in gpu_pools:
            # At least the build's own CUDA: whatever NVIDIA_REQUIRE_CUDA the image sets.
            assert _major_minor(labels[ACK_DRIVER]) >= CUDA_12_5_1_MINIMUM
        else:
            assert ACK_DRIVER not in labels


def test_a_replica_given_gpus_it_cannot_use_stops_with_one_line() -> None:
    """This machine has no GPU: the bundled trainer told it has one exits 2 before training."""
    env = {**os.environ, "TFTRAIN_GPUS": "1", "TFTRAIN_MAX_STEPS": "1",
           "TFTRAIN_TRAIN_EXAMPLES": "256", "TF_CPP_MIN_LOG_LEVEL": "3"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "trainer", "--output-dir", "/tmp/tftrain-gpu-check-unused"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("tftrain: error:")]
    assert len(errors) == 1
    assert "TFTRAIN_GPUS is 1 but TensorFlow sees 0 usable GPU(s)" in errors[0]
    assert "Step:" not in done.stdout


def test_the_gpu_image_requires_only_what_minor_version_compatibility_gives() -> None:
    """ECI's newest line (550, CUDA 12.4) is below 12.5: the image states CUDA 12."""
    dockerfile = (REPO / "docker" / "Dockerfile.gpu").read_text()
    assert 'ENV NVIDIA_REQUIRE_CUDA="cuda>=12.0"' in dockerfile


def test_the_gpu_check_names_the_driver_cuda_pair(tmp_path: Path) -> None:
    # The kernel module's line as NVIDIA drivers write it.
    proc = tmp_path / "version"
    proc.write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.199.02  Thu May 11 11:46:56 UTC 2023\n"
        "GCC version:  gcc version 8.5.0\n"
    )
    assert driver_version(proc) == "470.199.02"
    assert driver_version(tmp_path / "absent") == ""
    line = gpu_problem(1, 0, "12.5.1", "470.199.02")
    assert line.startswith("--gpus / TFTRAIN_GPUS is 1 but TensorFlow sees 0 usable GPU(s): ")
    assert "built with CUDA 12.5.1 and the node's NVIDIA driver is 470.199.02" in line
    assert ">= 525.60.13" in line and "\n" not in line
    assert "no NVIDIA driver is visible" in gpu_problem(2, 1, "12.5.1", "")
