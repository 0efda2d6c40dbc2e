"""The ECI ImageCache of an ASK stack: every image the stack's pods run, pre-pulled once.

ImageCache is a cluster-scoped custom resource (`imagecaches.eci.alibabacloud.com`, version
v1) served by ack-virtual-node. Pods opt in with the automatic-match annotation (see
placement.py). The tests validate it against Alibaba Cloud's "Kubernetes ImageCache API"
reference (`tests/image_cache_schema.py`), since kubernetes-validate knows no CRDs.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig
from infra.manifests.common import metadata, run_labels, stable_labels
from infra.manifests.registry import image_cache_pull_secrets

API_VERSION = "eci.alibabacloud.com/v1"
KIND = "ImageCache"
# An ECI ImageCache is a snapshot of specific images: a new image list is a new cache, not
# an edit of the old one (it keeps its name, so pulumi-kubernetes deletes before it
# recreates). The program registers it with these replace-on-change paths.
REPLACE_ON_CHANGES = ("spec",)
# Reuse layers that other caches already hold: a new run's image usually differs from the
# previous one by a few layers only, so its cache builds in a fraction of the time.
REUSE_ANNOTATION = {"k8s.aliyun.com/imc-enable-reuse": "true"}


def image_cache_name(config: StackConfig) -> str:
    return f"{config.job.namespace}-{config.job.name}"


def _labels(config: StackConfig) -> dict[str, str]:
    """A run's labels; a sweep's trials share the cache, which is no one run's."""
    return stable_labels(config) if config.trials else run_labels(config)


def image_cache(config: StackConfig) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata(image_cache_name(config), _labels(config), None, REUSE_ANNOTATION),
        "spec": {
            "images": list(config.images),
            "imageCacheSize": config.cluster.image_cache_size,
            # It pulls the images itself: private ones need the pods' credentials.
            **image_cache_pull_secrets(config),
        },
    }
