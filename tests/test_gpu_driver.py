"""GPUs the stack creates get a driver new enough for the image's CUDA, and a replica given
GPUs it cannot use stops at once instead of training on the CPU.

Expected values from Alibaba's docs ("Create a GPU-accelerated ECI pod": gn6i defaults to
Tesla 470 / CUDA 11.4, 535 and 550 on request, major version only since 2025-03-17; ECI pod
annotations: `k8s.aliyun.com/eci-gpu-driver-version: tesla=<version>`; ACK "Specify a custom
GPU driver version for a node": node pool label `ack.aliyun.com/nvidia-driver-version`) and
NVIDIA's CUDA compatibility guide (CUDA 12.x needs a driver >= 525.60.13).
"""

from __future__ import annotations

import os
import subprocess
import sys

from infra.cluster_facts import cluster_facts
from infra.config import load_stack
from infra.local.plan import REPO
from infra.manifests import build_objects
from tests.pulumi_mocks import run_program

CUDA_12_MINIMUM = (525, 60)
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
            assert _major_minor(labels[ACK_DRIVER]) >= CUDA_12_MINIMUM
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
