"""The ECI ImageCache object as Alibaba Cloud documents it, to validate what the builder makes
(kubernetes-validate knows no CRDs). Written from the documentation, not from the builder:

- "Kubernetes ImageCache API" (Elastic Container Instance user guide,
  https://www.alibabacloud.com/help/en/eci/user-guide/kubernetes-imagecache-api): apiVersion
  `eci.alibabacloud.com/v1`, kind `ImageCache`, ObjectMeta, and ImageCacheSpec: `images`
  (String[], required), `imagePullSecrets` (String[], each `namespace:secretName`),
  `imageCacheSize` (Int, GB, 20 to 32768), `retentionDays` (Int, 1 to 65536). `status` is
  the controller's (phase, progress, ...), never part of what a client creates.
- "Manage ImageCaches" (the same guide): the CRD `imagecaches.eci.alibabacloud.com` has
  `scope: Cluster`, so an object with a namespace is not this resource.
"""

from __future__ import annotations

from typing import Any

# ObjectMeta.name of a custom resource: a DNS subdomain (Kubernetes object names).
_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

IMAGE_CACHE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "eci.alibabacloud.com/v1"},
        "kind": {"const": "ImageCache"},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "not": {"required": ["namespace"]},  # scope: Cluster
            "properties": {"name": {"type": "string", "maxLength": 253, "pattern": _SUBDOMAIN}},
        },
        "spec": {
            "type": "object",
            "required": ["images"],
            "additionalProperties": False,
            "properties": {
                "images": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "string", "minLength": 1},
                },
                "imagePullSecrets": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[^:]+:[^:]+$"},
                },
                "imageCacheSize": {"type": "integer", "minimum": 20, "maximum": 32768},
                "retentionDays": {"type": "integer", "minimum": 1, "maximum": 65536},
            },
        },
    },
}
