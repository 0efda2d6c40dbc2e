"""`infra.manifests.lifecycle`: the supervisor's ConfigMap, its volume and mount, and the gang
labels, against values worked out by hand: a label value is at most 63 characters
(Kubernetes "Labels and Selectors"), ACK's coscheduling labels need every replica of a run
(`min-available`), a mode of 0444 (292) lets every user read and none write.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import kubernetes_validate
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import parse_config
from infra.manifests.lifecycle import (
    gang_labels,
    lifecycle_config_map,
    lifecycle_mount,
    lifecycle_volume,
    pod_group_name,
)
from infra.topology import build_topology

NEWEST_SCHEMA = max(all_versions(), key=Version)
SCRIPTS = Path(__file__).resolve().parent.parent / "infra" / "lifecycle"
IMAGE = {"image": "registry.example.com/tftrain/trainer:1"}


def config_of(**job: object) -> object:
    return parse_config({**IMAGE, "job": {"name": "mnist", **job}})


def test_the_pod_group_name_is_job_and_run_up_to_63_characters() -> None:
    # "mnist-" is 6 characters: a run id of 57 fits exactly, one of 58 does not.
    fits = "r" * 57
    assert pod_group_name(config_of(runId=fits)) == f"mnist-{fits}"
    assert len(f"mnist-{fits}") == 63
    long = "r" * 58
    digest = hashlib.sha256(long.encode()).hexdigest()[:10]
    assert pod_group_name(config_of(runId=long)) == f"mnist-{digest}"


def test_a_gang_on_ack_needs_every_replica_of_its_run() -> None:
    raw = {
        **IMAGE,
        "cluster": {"kind": "ack"},
        "network": {"zoneId": "cn-hangzhou-i"},
        "job": {"name": "mnist", "runId": "r1"},
        "chief": {"number": 1},
        "ps": {"number": 2},
        "worker": {"number": 3},
    }
    config = parse_config(raw)
    assert gang_labels(config, build_topology(config)) == {
        "pod-group.scheduling.sigs.k8s.io/name": "mnist-r1",
        "pod-group.scheduling.sigs.k8s.io/min-available": "6",
    }
    off = parse_config({**raw, "job": {**raw["job"], "gangScheduling": False}})
    assert gang_labels(off, build_topology(off)) == {}


def test_the_script_is_mounted_read_only_for_everyone() -> None:
    config = config_of(runId="r1")
    assert lifecycle_volume(config) == {
        "name": "tftrain-lifecycle",
        "configMap": {"name": "mnist-lifecycle", "defaultMode": 0o444},
    }
    assert 0o444 == 292
    assert lifecycle_mount() == {
        "name": "tftrain-lifecycle",
        "mountPath": "/etc/tftrain-lifecycle",
        "readOnly": True,
    }


def test_the_config_map_holds_the_export_script_only_when_the_run_exports() -> None:
    config = config_of(runId="r1")
    plain = lifecycle_config_map(config)
    exporting = lifecycle_config_map(config, exports=True)
    assert sorted(plain["data"]) == ["supervise.sh"]
    assert sorted(exporting["data"]) == ["export.sh", "supervise.sh"]
    for made in (plain, exporting):
        assert made["metadata"] == {
            "name": "mnist-lifecycle",
            "namespace": config.job.namespace,  # type: ignore[attr-defined]
            "labels": {"app.kubernetes.io/name": "tftrain", "app.kubernetes.io/instance": "mnist"},
        }
        # The checked-in scripts, byte for byte: the pods run what the repository holds.
        for name, script in made["data"].items():
            assert script == (SCRIPTS / name).read_text()
        kubernetes_validate.validate(made, NEWEST_SCHEMA, strict=True)
    assert exporting["data"]["supervise.sh"] == plain["data"]["supervise.sh"]
