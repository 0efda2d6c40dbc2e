"""Spot capacity in the rendered pods: ECI spot annotations on ASK, the spot GPU pool's
node selector and toleration on ACK, nothing for groups that did not ask for it."""

from __future__ import annotations

from typing import Any

from infra.config import parse_config
from infra.manifests import build_objects
from infra.platform.cluster_facts import cluster_facts

IMAGE = "registry.example.com/tftrain/trainer:1"
# The pools' labels and taints as docs/cloud-evidence.md states them: the spot GPU pool is
# labelled and tainted tftrain.io/capacity=spot:NoSchedule, the on-demand GPU pool labelled
# tftrain.io/accelerator=nvidia-gpu and tainted nvidia.com/gpu=present:NoSchedule.
SPOT_SELECTOR = {"tftrain.io/capacity": "spot"}
SPOT_TOLERATION = {
    "key": "tftrain.io/capacity",
    "operator": "Equal",
    "value": "spot",
    "effect": "NoSchedule",
}
GPU_SELECTOR = {"tftrain.io/accelerator": "nvidia-gpu"}
# Exists, no effect: whatever effect the pool's taint has, the pod tolerates it.
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists"}


def pod_templates(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each Job's pod template, by replica type."""
    config = parse_config(raw)
    jobs = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Job"]
    return {job["metadata"]["name"].split("-")[1]: job["spec"]["template"] for job in jobs}


def test_ack_spot_gpu_workers_select_and_tolerate_only_the_spot_pool() -> None:
    templates = pod_templates(
        {
            "image": IMAGE,
            "cluster": {"kind": "ack", "gpuPool": {"maxSize": 2}, "spotGpuPool": {"maxSize": 4}},
            "network": {"zoneId": "cn-hangzhou-i"},
            "chief": {"gpuCount": 1},
            "worker": {"gpuCount": 1, "spot": True},
        }
    )
    worker, chief, ps = (
        templates["worker"]["spec"],
        templates["chief"]["spec"],
        templates["ps"]["spec"],
    )
    assert worker["nodeSelector"] == SPOT_SELECTOR
    assert worker["tolerations"] == [SPOT_TOLERATION]
    # The on-demand GPU chief stays on the GPU pool; the ps on the CPU pool.
    assert chief["nodeSelector"] == GPU_SELECTOR
    assert chief["tolerations"] == [GPU_TOLERATION]
    assert "nodeSelector" not in ps and "tolerations" not in ps


def test_ask_spot_groups_ask_eci_for_spot_instances() -> None:
    templates = pod_templates(
        {
            "image": IMAGE,
            "cluster": {"kind": "ask"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "worker": {"spot": True},
            "ps": {"spot": True},
        }
    )
    strategy = "k8s.aliyun.com/eci-spot-strategy"
    for kind, spot in {"worker": True, "ps": True, "chief": False}.items():
        annotations = templates[kind]["metadata"]["annotations"]
        assert annotations.get(strategy) == ("SpotAsPriceGo" if spot else None), kind


def test_tensorboard_is_never_placed_on_spot() -> None:
    # Reclaimed with its pod, TensorBoard would vanish mid-run while training went on.
    config = parse_config(
        {
            "image": IMAGE,
            "cluster": {"kind": "ask"},
            "network": {"zoneId": "cn-hangzhou-i"},
            "worker": {"spot": True},
            "tensorboard": {"enabled": True},
        }
    )
    [board] = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Deployment"]
    annotations = board["spec"]["template"]["metadata"]["annotations"]
    assert "k8s.aliyun.com/eci-spot-strategy" not in annotations
