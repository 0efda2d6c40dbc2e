"""`infra.manifests.image_cache`: the ECI ImageCache of an ASK stack, written out by hand from
Alibaba Cloud's "Kubernetes ImageCache API" reference (`eci.alibabacloud.com/v1`, cluster
scoped, `spec.images`, `spec.imageCacheSize` in GiB, `spec.imagePullSecrets` as
`<namespace>:<name>`, the `k8s.aliyun.com/imc-enable-reuse` annotation), and checked against
that reference's schema (tests/image_cache_schema.py).
"""

from __future__ import annotations

import jsonschema

from infra.config import parse_config, read_stack_file, stack_file
from infra.manifests.image_cache import image_cache
from tests.image_cache_schema import IMAGE_CACHE_SCHEMA

CPU = "registry-vpc.cn-hangzhou.aliyuncs.com/tftrain/trainer:0.1.0-cpu"
GPU = "registry-vpc.cn-hangzhou.aliyuncs.com/tftrain/trainer:0.1.0-gpu"


def ask_eci(**changes: dict) -> dict:
    raw = read_stack_file(stack_file("ask-eci"))
    for section, values in changes.items():
        raw[section] = {**raw.get(section, {}), **values}
    return raw


def test_the_cache_holds_every_image_the_pods_run_once() -> None:
    config = parse_config(ask_eci(job={"runId": "r1"}, cluster={"imageCacheSize": 60}))
    made = image_cache(config)
    assert made == {
        "apiVersion": "eci.alibabacloud.com/v1",
        "kind": "ImageCache",
        "metadata": {
            "name": "tftrain-mnist",
            "labels": {
                "app.kubernetes.io/name": "tftrain",
                "app.kubernetes.io/instance": "mnist",
                "tftrain.io/run-id": "r1",
            },
            "annotations": {"k8s.aliyun.com/imc-enable-reuse": "true"},
        },
        "spec": {"images": [CPU, GPU], "imageCacheSize": 60},
    }
    jsonschema.validate(made, IMAGE_CACHE_SCHEMA)


def test_a_private_registrys_credentials_are_named_namespace_colon_name() -> None:
    raw = ask_eci(imageRegistry={"server": "registry-vpc.cn-hangzhou.aliyuncs.com",
                                 "username": "u", "password": "p"})  # fmt: skip
    made = image_cache(parse_config(raw, ("imageRegistry",)))
    assert made["spec"]["imagePullSecrets"] == ["tftrain:mnist-registry"]
    jsonschema.validate(made, IMAGE_CACHE_SCHEMA)


def test_a_sweeps_trials_share_one_cache_that_is_no_one_runs() -> None:
    raw = ask_eci()
    raw["sweep"] = {
        "method": "grid",
        "parameters": {"hyperparams.learningRate": {"values": [0.001, 0.01]}},
        "parallel": 1,
        "metric": {"name": "test_accuracy", "goal": "maximize"},
    }
    made = image_cache(parse_config(raw))
    assert made["metadata"]["labels"] == {
        "app.kubernetes.io/name": "tftrain",
        "app.kubernetes.io/instance": "mnist",
    }
