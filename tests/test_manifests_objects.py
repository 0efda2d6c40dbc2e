"""`infra.manifests.build_objects`: which objects a stack makes, in which order, worked out by
hand from the stack files and the creation order its contract states (namespace, registry
credentials, secret env, network policies before any pod, storage, image cache, the
supervisor's ConfigMap, every replica's Service before any replica's Job, TensorBoard).
"""

from __future__ import annotations

import json
from typing import Any

from infra.config import load_stack, parse_config, read_stack_file, stack_file
from infra.manifests import build_objects, object_key
from infra.platform.cluster_facts import cluster_facts

REPLICAS = {"mnist-chief-0", "mnist-worker-0", "mnist-worker-1", "mnist-ps-0"}


def phases(objects: list[dict[str, Any]]) -> list[tuple[str, set[str]]]:
    """(kind, names) of each run of consecutive objects of one kind."""
    runs: list[tuple[str, set[str]]] = []
    for obj in objects:
        name = obj["metadata"]["name"]
        if runs and runs[-1][0] == obj["kind"]:
            runs[-1][1].add(name)
        else:
            runs.append((obj["kind"], {name}))
    return runs


def objects_of(config: Any, secret: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return build_objects(config, cluster_facts(config), secret)


def test_an_ask_stack_with_an_image_cache() -> None:
    objects = objects_of(load_stack("ask-eci"))
    policies = {"mnist-default-deny", "mnist-training", "mnist-egress", "mnist-tensorboard"}
    assert phases(objects) == [
        ("Namespace", {"tftrain"}),
        ("NetworkPolicy", policies),
        ("PersistentVolume", {"tftrain-mnist-data"}),
        ("PersistentVolumeClaim", {"mnist-data"}),
        ("ImageCache", {"tftrain-mnist"}),
        ("ConfigMap", {"mnist-lifecycle"}),
        ("Service", REPLICAS),
        ("Job", REPLICAS),
        ("Deployment", {"mnist-tensorboard"}),
        ("Service", {"mnist-tensorboard"}),
    ]
    # Everything but the cluster-scoped ones in the job's namespace.
    for obj in objects:
        if obj["kind"] not in ("Namespace", "PersistentVolume", "ImageCache"):
            assert obj["metadata"]["namespace"] == "tftrain"
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    assert sorted(config_map["data"]) == ["supervise.sh"]  # no bucket: nothing to export


def test_credentials_and_secret_env_come_first_in_their_namespace() -> None:
    raw = read_stack_file(stack_file("ask-eci"))
    raw["imageRegistry"] = {
        "server": "registry-vpc.cn-hangzhou.aliyuncs.com",
        "username": "u",
        "password": "p",
    }
    raw["job"] = {**raw["job"], "env": {"TOKEN": "t0ken"}}
    raw["tensorboard"] = {**raw["tensorboard"], "enabled": False}
    raw["cluster"] = {**raw["cluster"], "imageCache": False}
    config = parse_config(raw, ("imageRegistry", "job"))
    kinds = phases(objects_of(config, ("job",)))
    assert kinds[:3] == [
        ("Namespace", {"tftrain"}),
        ("Secret", {"mnist-registry", "mnist-env"}),
        ("NetworkPolicy", {"mnist-default-deny", "mnist-training", "mnist-egress"}),
    ]
    names = [o["metadata"]["name"] for o in objects_of(config, ("job",))]
    assert names[1:3] == ["mnist-registry", "mnist-env"]
    assert "ImageCache" not in [k for k, _ in kinds]
    assert kinds[-1] == ("Job", REPLICAS)  # no TensorBoard
    # The value reaches the Jobs by reference only: nowhere in clear (the Secret holds it
    # base64-encoded, "dDBrZW4=").
    secret_objects = objects_of(config, ("job",))
    assert "t0ken" not in json.dumps(secret_objects)
    for job in (o for o in secret_objects if o["kind"] == "Job"):
        (container,) = job["spec"]["template"]["spec"]["containers"]
        (token,) = [var for var in container["env"] if var["name"] == "TOKEN"]
        assert token["valueFrom"]["secretKeyRef"]["name"] == "mnist-env"
    # Not marked secret: no env Secret.
    assert "mnist-env" not in {o["metadata"]["name"] for o in objects_of(config)}


def test_a_run_stack_makes_no_cluster_scoped_object() -> None:
    config = parse_config(read_stack_file(stack_file("run-ack")))
    objects = objects_of(config)
    assert phases(objects) == [
        (
            "NetworkPolicy",
            {"mnist-default-deny", "mnist-training", "mnist-egress", "mnist-tensorboard"},
        ),
        ("PersistentVolumeClaim", {"tftrain-data", "tftrain-input", "tftrain-export"}),
        ("ConfigMap", {"mnist-lifecycle"}),
        ("Service", REPLICAS),
        ("Job", REPLICAS),
        ("Deployment", {"mnist-tensorboard"}),
        ("Service", {"mnist-tensorboard"}),
    ]
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    assert sorted(config_map["data"]) == ["export.sh", "supervise.sh"]  # it exports


def test_a_sweep_gives_each_trial_its_own_replicas_and_training_policy() -> None:
    config = load_stack("dev-sweep")
    trial_ids = [run.job.run_id for run in config.runs]
    assert len(set(trial_ids)) == 2  # a grid over two learning rates
    workers = {f"mnist-{run_id}-worker-0" for run_id in trial_ids}
    training = {f"mnist-{run_id}-training" for run_id in trial_ids}
    assert phases(objects_of(config)) == [
        ("Namespace", {"tftrain-sweep"}),
        ("NetworkPolicy", {"mnist-default-deny", *training, "mnist-egress", "mnist-tensorboard"}),
        ("PersistentVolume", {"tftrain-sweep-mnist-data"}),
        ("PersistentVolumeClaim", {"mnist-data"}),
        ("ConfigMap", {"mnist-lifecycle"}),
        ("Service", workers),
        ("Job", workers),
        ("Deployment", {"mnist-tensorboard"}),
        ("Service", {"mnist-tensorboard"}),
    ]


def test_a_platform_stack_has_no_run_objects() -> None:
    assert (
        build_objects(load_stack("platform-ack"), cluster_facts(load_stack("platform-ack"))) == []
    )


def test_object_key_is_api_version_kind_namespace_and_name() -> None:
    namespaced = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}}
    cluster = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"}}
    assert object_key(namespaced) == ("v1", "Secret", "n", "s")
    assert object_key(cluster) == ("v1", "PersistentVolume", "", "pv")
    assert json.dumps(object_key(cluster))  # plain strings, usable as a stable sort key
