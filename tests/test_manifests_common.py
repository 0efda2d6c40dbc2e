"""`infra.manifests.common`: the names, labels and small objects every builder shares, against
values written out by hand from the Kubernetes docs (Pod Security Admission's namespace
labels; a PersistentVolume's claimRef, "Reserving a PersistentVolume"; a Secret's `data` is
base64 of the bytes) and the recommended labels (`app.kubernetes.io/*`)."""

from __future__ import annotations

import kubernetes_validate
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import load_stack
from infra.manifests.common import (
    base64_text,
    claim_ref,
    metadata,
    namespace,
    pod_metadata,
    pss_namespace,
    run_labels,
    stable_labels,
)

NEWEST_SCHEMA = max(all_versions(), key=Version)


def test_a_namespace_enforces_warns_and_audits_restricted_at_the_latest_version() -> None:
    expected = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": "team-a",
            "labels": {
                "app.kubernetes.io/name": "tftrain",
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/enforce-version": "latest",
                "pod-security.kubernetes.io/warn": "restricted",
                "pod-security.kubernetes.io/audit": "restricted",
            },
        },
    }
    assert pss_namespace("team-a", {"app.kubernetes.io/name": "tftrain"}) == expected
    kubernetes_validate.validate(expected, NEWEST_SCHEMA, strict=True)


def test_a_stacks_namespace_and_labels() -> None:
    config = load_stack("ack-cpu")
    job = config.job
    stable = {"app.kubernetes.io/name": "tftrain", "app.kubernetes.io/instance": job.name}
    assert stable_labels(config) == stable
    assert run_labels(config) == {**stable, "tftrain.io/run-id": job.run_id}
    made = namespace(config)
    assert made["metadata"]["name"] == job.namespace  # type: ignore[index]
    labels = made["metadata"]["labels"]  # type: ignore[index]
    assert labels["app.kubernetes.io/instance"] == job.name
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_metadata_has_keys_only_with_content() -> None:
    labels = {"a": "1"}
    assert metadata("n", labels) == {"name": "n", "labels": {"a": "1"}}
    assert metadata("n", labels, "ns") == {"name": "n", "namespace": "ns", "labels": {"a": "1"}}
    assert metadata("n", labels, None, {}) == {"name": "n", "labels": {"a": "1"}}
    assert metadata("n", labels, "ns", {"k": "v"}) == {
        "name": "n",
        "namespace": "ns",
        "labels": {"a": "1"},
        "annotations": {"k": "v"},
    }
    assert pod_metadata(labels, {}) == {"labels": {"a": "1"}}
    assert pod_metadata(labels, {"k": "v"}) == {"labels": {"a": "1"}, "annotations": {"k": "v"}}


def test_metadata_copies_what_it_is_given() -> None:
    labels, annotations = {"a": "1"}, {"k": "v"}
    meta = metadata("n", labels, "ns", annotations)
    pod = pod_metadata(labels, annotations)
    labels["b"] = annotations["x"] = "2"
    assert meta["labels"] == pod["labels"] == {"a": "1"}
    assert meta["annotations"] == pod["annotations"] == {"k": "v"}


def test_secret_data_is_base64_of_the_utf8_bytes() -> None:
    assert base64_text("user:pass") == "dXNlcjpwYXNz"
    assert base64_text("é") == "w6k="  # U+00E9 is C3 A9 in UTF-8
    assert base64_text("") == ""


def test_a_claim_ref_names_one_claim_in_one_namespace() -> None:
    assert claim_ref("team-a", "tftrain-data") == {
        "kind": "PersistentVolumeClaim",
        "namespace": "team-a",
        "name": "tftrain-data",
    }
