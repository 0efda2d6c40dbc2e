"""`infra.kube_resources`: every kind of object the stacks make, registered as the
pulumi-kubernetes resource the engine expects, in one fake runtime.

Expected values from outside the code: pulumi-kubernetes' type tokens
(`kubernetes:<group, "core" for the core group>/<version>:<Kind>`, its schema.json), the
object as the Kubernetes API spells it (what the provider sends), and the rule that a
Secret's data is a Pulumi secret.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.config import parse_config, read_stack_file, stack_file
from infra.kube_resources import kube_resource
from infra.manifests import build_objects
from infra.manifests.run_access import IssuedStorage, issued_objects
from infra.mock_deploy import RecordingMocks
from infra.platform.cluster_facts import cluster_facts
from tests.pulumi_mocks import FAKE_KUBECONFIG
from tests.test_cloud_components import deploy
from tests.test_image_registry import with_credentials

TOKENS = {
    ("v1", "Namespace"): "kubernetes:core/v1:Namespace",
    ("v1", "PersistentVolume"): "kubernetes:core/v1:PersistentVolume",
    ("v1", "PersistentVolumeClaim"): "kubernetes:core/v1:PersistentVolumeClaim",
    ("v1", "Service"): "kubernetes:core/v1:Service",
    ("v1", "ConfigMap"): "kubernetes:core/v1:ConfigMap",
    ("v1", "Secret"): "kubernetes:core/v1:Secret",
    ("v1", "ServiceAccount"): "kubernetes:core/v1:ServiceAccount",
    ("batch/v1", "Job"): "kubernetes:batch/v1:Job",
    ("apps/v1", "Deployment"): "kubernetes:apps/v1:Deployment",
    ("networking.k8s.io/v1", "NetworkPolicy"): "kubernetes:networking.k8s.io/v1:NetworkPolicy",
    ("rbac.authorization.k8s.io/v1", "Role"): "kubernetes:rbac.authorization.k8s.io/v1:Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): (
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
    ),
    # A custom resource: its group, version and kind, as the provider's CustomResource names it.
    ("eci.alibabacloud.com/v1", "ImageCache"): "kubernetes:eci.alibabacloud.com/v1:ImageCache",
}


def every_kind() -> list[dict[str, Any]]:
    """An ASK stack with a private registry, secret env, an image cache and TensorBoard, and
    what a platform issues two namespaces: every kind the stacks make."""
    raw = read_stack_file(stack_file("ask-eci"))
    raw["imageRegistry"] = json.loads(with_credentials("ask-eci")["imageRegistry"])
    raw["job"] = {**raw["job"], "env": {"TOKEN": "t0ken"}}
    config = parse_config(raw, ("imageRegistry", "job"))
    storage = IssuedStorage(
        cluster_kind="ack", nfs_server="nas.example", oss_bucket="team-data",
        oss_endpoint="oss.example", input_prefix="mnist/", export_prefix="exports/",
    )  # fmt: skip
    issued = [o for ns in ("team-a", "team-b") for o in issued_objects(ns, storage)]
    return [*build_objects(config, cluster_facts(config), {"job"}), *issued]


def register(objects: list[dict[str, Any]]) -> RecordingMocks:
    """Every object through `kube_resource`, with the options the program passes (its
    cluster's provider)."""
    mocks = RecordingMocks(answers=None, redact=False)

    def build() -> dict[str, pulumi.Output[Any]]:
        provider = k8s.Provider("k8s", kubeconfig=FAKE_KUBECONFIG)
        for obj in objects:
            kube_resource(obj, pulumi.ResourceOptions(provider=provider))
        return {}

    deploy(build, mocks=mocks)  # type: ignore[arg-type]
    return mocks


def test_every_kind_is_registered_as_its_resource_under_its_namespaced_name() -> None:
    objects = every_kind()
    assert {(o["apiVersion"], o["kind"]) for o in objects} == TOKENS.keys()
    registered = {(r.type, r.name): r for r in register(objects).resources}
    assert len(registered) == len(objects) + 1  # and the provider
    for obj in objects:
        meta = obj["metadata"]
        # Namespaced objects as `<namespace>/<name>`: each team's `tftrain-deployer` is a
        # resource of its own; cluster-scoped ones (Namespace, volumes, the cache) by name.
        name = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
        resource = registered[(TOKENS[(obj["apiVersion"], obj["kind"])], name)]
        # On the cluster the options name, custom resources too.
        assert "pulumi:providers:kubernetes::k8s::" in resource.provider, name
        # What the provider sends the API server: the object as the API spells it.
        assert resource.inputs == obj, name


def test_a_secrets_data_is_a_pulumi_secret_and_nothing_else_is() -> None:
    objects = every_kind()
    with_data = {f"{o['metadata']['namespace']}/{o['metadata']['name']}"
                 for o in objects if o["kind"] == "Secret" and "data" in o}  # fmt: skip
    assert len(with_data) == 2  # the pull Secret and the secret env
    for resource in register(objects).resources:
        expected = {"data"} if resource.name in with_data else set()
        assert set(resource.secret_paths) == expected, resource.name
