"""A Kubernetes object (a plain dict of `infra/manifests`) as its pulumi-kubernetes resource:
the one registration rule of the run's objects and of what a platform issues its run
namespaces."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

# Typed pulumi-kubernetes resources for each (apiVersion, kind) the manifests produce; anything
# else (the ECI ImageCache) is a CustomResource.
TYPED: dict[tuple[str, str], Callable[..., pulumi.CustomResource]] = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "PersistentVolume"): k8s.core.v1.PersistentVolume,
    ("v1", "PersistentVolumeClaim"): k8s.core.v1.PersistentVolumeClaim,
    ("v1", "Service"): k8s.core.v1.Service,
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("batch/v1", "Job"): k8s.batch.v1.Job,
    ("apps/v1", "Deployment"): k8s.apps.v1.Deployment,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("rbac.authorization.k8s.io/v1", "Role"): k8s.rbac.v1.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
}


_SNAKE = re.compile(r"(?<=[a-z])(?=[A-Z])")


def resource_name(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]


def kube_resource(obj: Mapping[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """`obj` registered as its typed resource. A Secret's data is a Pulumi secret in the state,
    the preview and any output, whatever the provider marks by itself."""
    kind = obj["kind"]
    # The typed constructors take top-level fields as Python keywords (`role_ref`); nested
    # values stay as the API spells them.
    body = {
        _SNAKE.sub("_", key).lower(): value
        for key, value in obj.items()
        if key not in ("apiVersion", "kind")
    }
    if kind == "Secret" and "data" in body:
        body["data"] = pulumi.Output.secret(body["data"])
    typed = TYPED.get((obj["apiVersion"], kind))
    if typed is not None:
        return typed(resource_name(obj), opts=opts, **body)
    return k8s.apiextensions.CustomResource(
        resource_name(obj), api_version=obj["apiVersion"], kind=kind, opts=opts, **body
    )
