"""Where a pod runs, per cluster kind: the only cluster-specific part of a pod template.

- ack: GPU replicas go to the GPU node pool (node label) and tolerate its taint; everything
  else stays off it because of that taint. GPU replicas of a `spot` group go to the spot
  GPU pool instead, by its label and taint (`tftrain.io/capacity=spot:NoSchedule`).
- ask: every pod is an ECI instance; GPU replicas name their ECS GPU instance type and the
  driver their CUDA needs (`infra.platform.gpu_driver`), pods of
  a `spot` group ask for a spot instance, and pods match the stack's ImageCache when it is
  on. A stack that makes its own ASK cluster puts its pods on its pod vSwitch and in its
  security groups (`infra/cloud/pod_isolation.py`). ECI reads these annotations from the pod
  template at creation time only.
- existing: plain pods; the cluster's own scheduling applies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from infra.config import StackConfig
from infra.platform.cluster_facts import (
    GPU_NODE_LABEL,
    GPU_TAINT_KEY,
    SPOT_NODE_LABEL,
    ClusterFacts,
)
from infra.platform.gpu_driver import ECI_GPU_DRIVER, ECI_GPU_DRIVER_ANNOTATION

# ECI pod annotations (Alibaba Cloud "Annotations for ECI-based pods").
ECI_USE_SPECS = "k8s.aliyun.com/eci-use-specs"
# Automatic ImageCache matching; ECI defaults it to "true", which also creates caches on
# its own, so it is set explicitly either way.
ECI_AUTO_IMAGE_CACHE = "k8s.aliyun.com/eci-auto-imc"
# The older name of the same switch, still read by older ack-virtual-node versions.
ECI_LEGACY_IMAGE_CACHE = "k8s.aliyun.com/eci-image-cache"
# A spot (preemptible) ECI instance bid at the market price; ECI keeps its default one-hour
# protection period (`eci-spot-duration`) and does not fall back to pay-as-you-go
# (help.aliyun.com/en/eci/user-guide/pod-annotations-1, "Instances").
ECI_SPOT_STRATEGY = "k8s.aliyun.com/eci-spot-strategy"
ECI_SPOT_AS_PRICE_GO = "SpotAsPriceGo"
# The pod's vSwitch and security groups (ECI's "Specify vSwitches" and "Assign a security
# group"): both in the cluster's VPC; ECI fixes them when it creates the instance.
ECI_VSWITCH = "k8s.aliyun.com/eci-vswitch"
ECI_SECURITY_GROUP = "k8s.aliyun.com/eci-security-group"


@dataclass(frozen=True)
class Placement:
    annotations: dict[str, str] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)  # nodeSelector / tolerations


def placement(
    config: StackConfig,
    facts: ClusterFacts,
    gpus: int,
    spot: bool = False,
    tensorboard: bool = False,
) -> Placement:
    """`tensorboard`: the TensorBoard pod, which an isolated ASK stack puts in its own
    security group (`infra/cloud/pod_isolation.py`)."""
    if facts.cluster_kind == "ack" and gpus and spot:
        key, value = SPOT_NODE_LABEL
        return Placement(
            spec={
                "nodeSelector": {key: value},
                "tolerations": [
                    {"key": key, "operator": "Equal", "value": value, "effect": "NoSchedule"}
                ],
            }
        )
    if facts.cluster_kind == "ack" and gpus:
        key, value = GPU_NODE_LABEL
        return Placement(
            spec={
                "nodeSelector": {key: value},
                # No effect given: tolerate whatever effect the pool's taint uses.
                "tolerations": [{"key": GPU_TAINT_KEY, "operator": "Exists"}],
            }
        )
    if facts.cluster_kind == "ask":
        cache = "true" if config.cluster.image_cache else "false"
        annotations = {ECI_AUTO_IMAGE_CACHE: cache}
        if config.cluster.image_cache:
            annotations[ECI_LEGACY_IMAGE_CACHE] = "true"
        if gpus:
            annotations[ECI_USE_SPECS] = config.cluster.eci_gpu_spec
            # The default driver (470) is too old for the image's CUDA 12.
            annotations[ECI_GPU_DRIVER_ANNOTATION] = ECI_GPU_DRIVER
        if spot:
            annotations[ECI_SPOT_STRATEGY] = ECI_SPOT_AS_PRICE_GO
        eci = facts.eci_network
        if eci is not None:
            annotations[ECI_VSWITCH] = eci.vswitch_id
            group = eci.tensorboard_group_id if tensorboard else eci.replicas_group_id
            annotations[ECI_SECURITY_GROUP] = group
        return Placement(annotations=dict(sorted(annotations.items())))
    return Placement()
