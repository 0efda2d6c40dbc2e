"""Every object of every stack against the real Kubernetes schemas, and the PSS rules.

Objects come from `build_objects` with the offline placeholder facts (what the render shows).
kubernetes-validate ships the OpenAPI schemas of each Kubernetes minor; we validate against
the cluster's own minor (config kubernetesVersion), falling back to the newest shipped.
The ECI ImageCache is a CRD that kubernetes-validate does not know: it is checked against
the field schema in infra/manifests/image_cache.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import StackConfig, load_stack, parse_config, read_stack_file, stack_file
from infra.manifests import build_objects, object_key
from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from infra.manifests.run_access import platform_objects
from infra.manifests.security import RUN_AS
from infra.platform.cluster_facts import NAS_DOMAIN_PLACEHOLDER, cluster_facts
from tests.image_cache_schema import IMAGE_CACHE_SCHEMA
from tests.pulumi_mocks import run_stacks
from tests.shared_values import shared

IMAGE = "registry.example.com/tftrain/trainer:1"
# Shapes no stack file has, so every branch of the builders meets the schemas.
VARIANTS: dict[str, dict[str, Any]] = {
    "nfs-multi-worker-evaluator": {
        "image": IMAGE,
        "storage": {"kind": "nfs", "nfsServer": "10.0.0.5", "nfsPath": "/exports/train"},
        "chief": {"number": 0},
        "ps": {"number": 0},
        "worker": {"number": 4},
        "evaluator": {"number": 1},
        "job": {
            "args": ["--verbose"],
            "dataDir": "/data/mnist-idx",
            "restartPolicy": "Never",
            "activeDeadlineSeconds": 7200,
        },
        "tensorboard": {
            "serviceType": "LoadBalancer",
            "public": True,
            "allowedSourceRanges": ["203.0.113.0/24"],
        },
    },
    "ack-public-tensorboard-behind-acl": {
        "image": IMAGE,
        "cluster": {"kind": "ack"},
        "network": {"zoneId": "cn-hangzhou-i"},
        "tensorboard": {"public": True, "allowedSourceRanges": ["198.51.100.7/32"]},
    },
    "ack-spot-gpu-workers": {
        "image": IMAGE,
        "cluster": {"kind": "ack", "gpuPool": {"maxSize": 2}, "spotGpuPool": {"maxSize": 4}},
        "network": {"zoneId": "cn-hangzhou-i"},
        "worker": {"gpuCount": 1, "spot": True},
    },
    "ask-spot-evaluator-in-cluster": {
        "image": IMAGE,
        "cluster": {"kind": "ask"},
        "network": {"zoneId": "cn-hangzhou-i"},
        # MultiWorkerMirrored (no ps): the bundled trainer's ParameterServerStrategy would
        # wait for the evaluator listed in the cluster (a config rule refuses that).
        "job": {"evaluatorInCluster": True},
        "ps": {"number": 0},
        "worker": {"number": 1, "spot": True},
        "evaluator": {"number": 1, "spot": True},
    },
    # An existing cluster on the oldest minor whose API marks a pod-failure rule's
    # onPodConditions required (1.26-1.29).
    "existing-1.26": {
        "image": IMAGE,
        "cluster": {"kind": "existing", "kubernetesVersion": "1.26.3"},
    },
    # Pull credentials as a stack file holds them (the password a Pulumi secret): the Secret,
    # every pod's imagePullSecrets and the ImageCache's.
    "ask-private-registry": {
        "image": "crpi-abc123-vpc.cn-hangzhou.personal.cr.aliyuncs.com/tftrain/trainer:1",
        "cluster": {"kind": "ask"},
        "network": {"zoneId": "cn-hangzhou-i"},
        "imageRegistry": {
            "server": "crpi-abc123-vpc.cn-hangzhou.personal.cr.aliyuncs.com",
            "username": "trainer",
            "password": {"secure": "v1:AAAAciphertext=="},
        },
    },
    "ask-without-cache-no-tensorboard": {
        "image": IMAGE,
        "cluster": {"kind": "ask", "imageCache": False, "kubernetesVersion": "1.99.0"},
        "network": {"zoneId": "cn-hangzhou-i"},
        "tensorboard": {"enabled": False},
    },
}


@shared
def config_for(name: str) -> StackConfig:
    return parse_config(VARIANTS[name]) if name in VARIANTS else load_stack(name)


def objects_for(name: str) -> list[dict[str, Any]]:
    config = config_for(name)
    return build_objects(config, cluster_facts(config))


def with_issued(name: str) -> list[dict[str, Any]]:
    """A stack's objects and, for a run stack, what its platform issued its namespace (its
    Namespace and volumes are the platform's), as the platform's render has them."""
    config = config_for(name)
    objects = objects_for(name)
    if config.cluster.role != "run":
        return objects
    platform = load_stack(config.cluster.platform_stack.rsplit("/", 1)[-1])
    issued = platform_objects(platform, cluster_facts(platform), {})
    namespace = config.job.namespace

    def of_namespace(obj: dict[str, Any]) -> bool:
        ref = obj.get("spec", {}).get("claimRef", {})
        meta = obj["metadata"]
        return namespace in (meta.get("namespace"), meta["name"], ref.get("namespace"))

    return [*objects, *filter(of_namespace, issued)]


def schema_version(config: StackConfig) -> str:
    """The shipped schema version of the cluster's minor, else (`latest`) the newest shipped."""
    minor = config.cluster.kubernetes_version.split(".")[:2]
    shipped = sorted(all_versions(), key=Version)
    same_minor = [v for v in shipped if v.split(".")[:2] == minor]
    return (same_minor or shipped)[-1]


def pod_templates(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (obj["metadata"]["name"], obj["spec"]["template"])
        for obj in objects
        if obj["kind"] in ("Job", "Deployment")
    ]


CASES = [*run_stacks(), *VARIANTS]


@pytest.mark.parametrize("name", CASES)
def test_every_object_validates_against_the_clusters_schema(name: str) -> None:
    config = config_for(name)
    version = schema_version(config)
    for obj in objects_for(name):
        if obj["kind"] == IMAGE_CACHE_KIND:
            jsonschema.validate(obj, IMAGE_CACHE_SCHEMA)
        else:
            kubernetes_validate.validate(obj, version, strict=True)


def test_schema_version_follows_the_cluster_minor_with_a_fallback() -> None:
    raw = read_stack_file(stack_file("ack-gpu"))
    raw["cluster"] = {**raw["cluster"], "kubernetesVersion": "1.31.1-aliyun.1"}
    pinned = parse_config(raw)
    assert schema_version(pinned) == "1.31.0"
    newest = sorted(all_versions(), key=Version)[-1]
    assert schema_version(config_for("ask-without-cache-no-tensorboard")) == newest
    assert schema_version(load_stack("ack-gpu")) == newest  # `latest`


@pytest.mark.parametrize("name", CASES)
def test_every_pod_meets_pod_security_restricted(name: str) -> None:
    for _, template in pod_templates(objects_for(name)):
        spec = template["spec"]
        assert spec["automountServiceAccountToken"] is False
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True
        assert pod["runAsUser"] == pod["runAsGroup"] == pod["fsGroup"] == RUN_AS
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
        assert not spec.get("hostNetwork") and not spec.get("hostPID")
        # Restricted allows only these volume types in the pod itself.
        allowed = {"persistentVolumeClaim", "emptyDir", "configMap", "secret", "projected"}
        for volume in spec["volumes"]:
            assert set(volume) - {"name"} <= allowed, volume
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["readOnlyRootFilesystem"] is True
            assert context["capabilities"] == {"drop": ["ALL"]}
            assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
            requests, limits = container["resources"]["requests"], container["resources"]["limits"]
            assert requests["cpu"] == limits["cpu"] and requests["memory"] == limits["memory"]


@pytest.mark.parametrize("dockerfile", ["Dockerfile.cpu", "Dockerfile.gpu"])
def test_the_images_run_as_the_pods_uid_and_gid(dockerfile: str) -> None:
    text = (Path(__file__).resolve().parent.parent / "docker" / dockerfile).read_text()
    assert RUN_AS >= 10000
    assert re.search(r"^USER (\d+):(\d+)$", text, re.M).groups() == (str(RUN_AS), str(RUN_AS))
    assert f"useradd --uid {RUN_AS} --gid {RUN_AS} " in text
    assert f"groupadd --gid {RUN_AS} " in text


@pytest.mark.parametrize("name", CASES)
def test_the_namespace_enforces_restricted(name: str) -> None:
    (namespace,) = [obj for obj in with_issued(name) if obj["kind"] == "Namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


@pytest.mark.parametrize("name", CASES)
def test_builders_are_deterministic_and_keys_unique(name: str) -> None:
    config = config_for(name)
    first = json.dumps(build_objects(config, cluster_facts(config)))
    assert first == json.dumps(build_objects(config, cluster_facts(config)))
    keys = [object_key(obj) for obj in objects_for(name)]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("name", CASES)
def test_labels_everywhere_and_run_id_only_on_run_scoped_objects(name: str) -> None:
    config = config_for(name)
    for obj in objects_for(name):
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "tftrain"
        assert labels["app.kubernetes.io/instance"] == config.job.name
        # Storage and TensorBoard outlive runs; a run id there would churn them every run.
        # A sweep's trials share its image cache: no one trial's id on it.
        cache_of_a_run = obj["kind"] == "ImageCache" and not config.trials
        run_scoped = obj["kind"] == "Job" or cache_of_a_run or "tftrain.io/replica-type" in labels
        if run_scoped:
            assert labels["tftrain.io/run-id"] in {run.job.run_id for run in config.runs}
        else:
            assert "tftrain.io/run-id" not in labels


def test_strict_validation_catches_a_misspelt_field() -> None:
    job = next(obj for obj in objects_for("dev") if obj["kind"] == "Job")
    broken = {**job, "spec": {**job["spec"], "backofLimit": 3}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, schema_version(config_for("dev")), strict=True)


def test_offline_nas_volume_shows_the_placeholder_domain() -> None:
    volume = next(o for o in objects_for("ack-gpu") if o["metadata"]["name"].endswith("-data"))
    assert volume["spec"]["csi"]["volumeAttributes"]["server"] == NAS_DOMAIN_PLACEHOLDER


def test_image_cache_schema_is_not_vacuous() -> None:
    (cache_object,) = [o for o in objects_for("ask-eci") if o["kind"] == IMAGE_CACHE_KIND]
    for broken_spec in (
        {"images": []},
        {"images": ["a"], "imageCacheSize": 10},
        {"images": ["a"], "imageCachSize": 40},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**cache_object, "spec": broken_spec}, IMAGE_CACHE_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        namespaced = {**cache_object["metadata"], "namespace": "tftrain"}
        jsonschema.validate({**cache_object, "metadata": namespaced}, IMAGE_CACHE_SCHEMA)


def test_the_builders_import_no_pulumi() -> None:
    # The offline render runs in CI with PyYAML only.
    code = (
        "import sys, infra.manifests, infra.platform.cluster_facts; "
        "sys.exit(any(m.split('.')[0] == 'pulumi' for m in sys.modules))"
    )
    root = Path(__file__).resolve().parent.parent
    assert subprocess.run([sys.executable, "-c", code], cwd=root, check=False).returncode == 0


@pytest.mark.parametrize("name", CASES)
def test_every_volume_is_reserved_for_its_own_claim(name: str) -> None:
    """A PersistentVolume without `claimRef` binds any claim that matches its size, access
    modes and labels, from any namespace (Kubernetes: Reserving a PersistentVolume)."""
    objects = with_issued(name)
    claims = {(o["metadata"]["namespace"], o["metadata"]["name"]): o
              for o in objects if o["kind"] == "PersistentVolumeClaim"}  # fmt: skip
    volumes = [o for o in objects if o["kind"] == "PersistentVolume"]
    assert volumes
    for volume in volumes:
        ref = volume["spec"]["claimRef"]
        claim = claims[(ref["namespace"], ref["name"])]
        assert ref["kind"] == "PersistentVolumeClaim"
        assert ref["namespace"] == config_for(name).job.namespace
        # The claim's selector picks this very volume (the binder checks both).
        assert (
            claim["spec"]["selector"]["matchLabels"].items() <= volume["metadata"]["labels"].items()
        )
