"""Registry credentials (`tftrain:imageRegistry`): a kubernetes.io/dockerconfigjson Secret that
every pod and the ECI ImageCache name, a password that is only ever a Pulumi secret.

Expected values come from outside the builders: the Secret's format from the Kubernetes docs
("Pull an Image from a Private Registry": `.dockerconfigjson` is base64 of
`{"auths": {<server>: {"username", "password", "auth"}}}`, `auth` base64 of `user:password`),
the ImageCache field from Alibaba's ImageCache API reference (`tests/image_cache_schema.py`),
every other object from the Kubernetes OpenAPI schemas (kubernetes-validate).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import (
    ConfigError,
    load_stack,
    parse_config,
    read_stack_entries,
    read_stack_file,
    stack_file,
)
from infra.config.image_ref import registry_of
from infra.config.stack_file import engine_config
from infra.config.types import SECRET_PLACEHOLDER
from infra.local.plan import load_config
from infra.manifests import build_objects
from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from infra.platform.cluster_facts import cluster_facts
from infra.program import _dependencies
from infra.render import render_stack
from tests.image_cache_schema import IMAGE_CACHE_SCHEMA
from tests.pulumi_mocks import STACKS_DIR, run_program, run_stacks

SERVER = "crpi-abc123-vpc.cn-hangzhou.personal.cr.aliyuncs.com"
IMAGE = f"{SERVER}/tftrain/trainer:1"
PASSWORD = "s3cr3t-registry-password"
USERNAME = "trainer@1234567890123456.onaliyun.com"
CIPHERTEXT = "v1:AAAAregistryCiphertext=="
CREDENTIALS = {"server": SERVER, "username": USERNAME, "password": PASSWORD}
POD_OWNERS = ("Job", "Deployment")
NEWEST_SCHEMA = sorted(all_versions(), key=Version)[-1]


def pod_specs(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (obj["metadata"]["name"], obj["spec"]["template"]["spec"])
        for obj in objects
        if obj["kind"] in POD_OWNERS
    ]


def problems_of(raw: dict[str, Any], secret_keys: tuple[str, ...] = ()) -> list[str]:
    try:
        parse_config(raw, secret_keys)
    except ConfigError as error:
        return error.problems
    return []


# --- the config rule -------------------------------------------------------------------------

OTHER = "registry.cn-hangzhou.aliyuncs.com/tftrain/trainer:1"
RULE_TABLE = [
    # (case, imageRegistry, images by key, keys the problems name)
    ("none", {}, {"image": IMAGE}, []),
    ("all three, the stack's registry", CREDENTIALS, {"image": IMAGE}, []),
    ("only a server", {"server": SERVER}, {"image": IMAGE}, ["username", "password"]),
    ("no password", {**CREDENTIALS, "password": ""}, {"image": IMAGE}, ["password"]),
    ("only a user", {"username": USERNAME}, {"image": IMAGE}, ["server", "password"]),
    # The public endpoint of the same instance is another host: credentials never offered.
    (
        "public host for VPC images",
        {**CREDENTIALS, "server": "crpi-abc123.cn-hangzhou.personal.cr.aliyuncs.com"},
        {"image": IMAGE},
        ["server"],
    ),
    # A public image of another registry beside the private one: pulled without credentials.
    (
        "TensorBoard from elsewhere",
        CREDENTIALS,
        {"image": IMAGE, "tensorboard": {"image": "tensorflow/tensorflow:2.21.0"}},
        [],
    ),
    # The private registry serves only one group: that is enough.
    (
        "one group private",
        CREDENTIALS,
        {"image": OTHER, "worker": {"image": IMAGE}},
        [],
    ),
    # Docker Hub by Docker's own config key, for an image that names no registry.
    (
        "Docker Hub",
        {**CREDENTIALS, "server": "index.docker.io"},
        {
            "image": "example/tftrain-trainer:1",
            "job": {"command": ["python", "/app/t.py"]},
            "tensorboard": {"enabled": False},
        },
        [],
    ),
    # Credentials of a group that runs no replicas are for nothing.
    (
        "only an empty group private",
        CREDENTIALS,
        {"image": OTHER, "evaluator": {"image": IMAGE}},
        ["server"],
    ),
]


@pytest.mark.parametrize(
    ("registry", "images", "keys"),
    [case[1:] for case in RULE_TABLE],
    ids=[case[0] for case in RULE_TABLE],
)
def test_credentials_are_whole_and_for_a_registry_the_stack_pulls(
    registry: dict[str, str], images: dict[str, Any], keys: list[str]
) -> None:
    problems = problems_of({**images, "imageRegistry": registry}, ("imageRegistry",))
    named = [p.split(" = ")[0].removeprefix("tftrain:imageRegistry.") for p in problems]
    assert named == keys, problems
    assert not any(PASSWORD in p for p in problems)


@pytest.mark.parametrize(
    "server",
    ["https://" + SERVER, SERVER + "/tftrain", "CRPI.example.com", "host with space"],
)
def test_the_server_is_a_bare_host(server: str) -> None:
    raw = {"image": IMAGE, "imageRegistry": {**CREDENTIALS, "server": server}}
    (problem,) = problems_of(raw, ("imageRegistry",))
    assert problem.startswith("tftrain:imageRegistry.server = ") and "no https://" in problem


def test_a_plaintext_password_is_refused_by_key_and_never_shown() -> None:
    # Offline (stack file) and in the program alike when the engine did not mark it secret.
    (problem,) = problems_of({"image": IMAGE, "imageRegistry": CREDENTIALS})
    assert problem.startswith("tftrain:imageRegistry.password = (not shown): must be ")
    assert "pulumi config set --secret --path tftrain:imageRegistry.password" in problem
    assert PASSWORD not in problem


def test_a_secure_password_reads_as_the_placeholder_offline() -> None:
    raw = {"image": IMAGE, "imageRegistry": {**CREDENTIALS, "password": {"secure": CIPHERTEXT}}}
    config = parse_config(raw)
    assert config.image_registry.password == SECRET_PLACEHOLDER
    # The run id ignores the credentials: adding them is not another run.
    assert config.job.run_id == parse_config({"image": IMAGE}).job.run_id


def test_the_program_refuses_a_plaintext_password_before_any_resource() -> None:
    run = run_program({"image": IMAGE, "imageRegistry": CREDENTIALS}, raise_errors=False)
    assert "tftrain:imageRegistry.password = (not shown)" in str(run.error)
    assert PASSWORD not in str(run.error)
    assert run.resources == [] or all(r.type.startswith("pulumi:") for r in run.resources)


# --- the Secret ------------------------------------------------------------------------------


def test_docker_config_json_is_the_format_the_kubelet_reads() -> None:
    config = parse_config(
        {"image": IMAGE, "imageRegistry": {"server": SERVER, "username": "user",
                                           "password": "pass"}},
        ("imageRegistry",),
    )  # fmt: skip
    (secret,) = [o for o in build_objects(config, cluster_facts(config)) if o["kind"] == "Secret"]
    assert secret["type"] == "kubernetes.io/dockerconfigjson"
    assert set(secret["data"]) == {".dockerconfigjson"}
    decoded = json.loads(base64.b64decode(secret["data"][".dockerconfigjson"], validate=True))
    # base64("user:pass") is HTTP basic auth's well-known example value.
    assert decoded == {"auths": {SERVER: {"username": "user", "password": "pass",
                                          "auth": "dXNlcjpwYXNz"}}}  # fmt: skip
    assert secret["metadata"]["namespace"] == config.job.namespace


def with_credentials(stack: str) -> dict[str, str]:
    """The `imageRegistry` of `stack` for the registry of its first image, as the engine hands
    a section holding a secure value to the program (decrypted JSON, the key marked secret)."""
    server = registry_of(load_stack(stack).images[0])
    return {"imageRegistry": json.dumps({**CREDENTIALS, "server": server})}


@pytest.mark.parametrize("stack", run_stacks())
def test_every_pod_of_every_stack_names_the_pull_secret(stack: str) -> None:
    run = run_program(stack, secrets=with_credentials(stack))
    (secret,) = run.objects_of_kind("Secret")
    name = secret["metadata"]["name"]
    specs = pod_specs(run.kube_objects())
    assert specs
    for owner, spec in specs:
        assert spec["imagePullSecrets"] == [{"name": name}], owner
    for cache_object in run.objects_of_kind(IMAGE_CACHE_KIND):
        namespace = secret["metadata"]["namespace"]
        assert cache_object["spec"]["imagePullSecrets"] == [f"{namespace}:{name}"]
        jsonschema.validate(cache_object, IMAGE_CACHE_SCHEMA)
    # The credential is a Pulumi secret and reaches nothing else, nor any output.
    (registration,) = run.of_type("kubernetes:core/v1:Secret")
    assert "data" in registration.secret_paths
    for resource in run.resources:
        if resource.type != "kubernetes:core/v1:Secret":
            assert PASSWORD not in json.dumps(resource.inputs, default=str), resource.name
    assert PASSWORD not in json.dumps(run.outputs, default=str)
    decoded = base64.b64decode(secret["data"][".dockerconfigjson"]).decode()
    assert PASSWORD in decoded  # the pods' credential is the real one


@pytest.mark.parametrize("stack", run_stacks())
def test_without_credentials_no_secret_and_no_pull_secrets(stack: str) -> None:
    run = run_program(stack)
    assert not run.objects_of_kind("Secret")
    for owner, spec in pod_specs(run.kube_objects()):
        assert "imagePullSecrets" not in spec, owner
    for cache_object in run.objects_of_kind(IMAGE_CACHE_KIND):
        assert "imagePullSecrets" not in cache_object["spec"]


@pytest.mark.parametrize("stack", run_stacks())
def test_objects_with_credentials_validate_and_wait_for_the_secret(stack: str) -> None:
    raw = read_stack_file(stack_file(stack))
    raw["imageRegistry"] = json.loads(with_credentials(stack)["imageRegistry"])
    config = parse_config(raw, ("imageRegistry",))
    objects = build_objects(config, cluster_facts(config))
    for obj in objects:
        if obj["kind"] == IMAGE_CACHE_KIND:
            jsonschema.validate(obj, IMAGE_CACHE_SCHEMA)
        else:
            kubernetes_validate.validate(obj, NEWEST_SCHEMA, strict=True)
    # What each object is registered after, as the program computes it from the object.
    registered: dict[tuple[str, str, str], Any] = {}
    by_kind: dict[str, list[Any]] = {}
    secret_key = next(
        ("Secret", o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objects
        if o["kind"] == "Secret"
    )
    for obj in objects:
        deps = _dependencies(obj, registered, by_kind)
        if obj["kind"] in (*POD_OWNERS, IMAGE_CACHE_KIND):
            assert secret_key in deps, obj["metadata"]["name"]
        meta = obj["metadata"]
        key = (obj["kind"], meta.get("namespace", ""), meta["name"])
        registered[key] = key  # the key stands in for the resource
        by_kind.setdefault(obj["kind"], []).append(key)


# --- offline: the render and the local launcher ----------------------------------------------


@pytest.fixture
def stacks_with_secure_password(tmp_path: Path) -> Path:
    """Every stack file with `imageRegistry` as `pulumi config set --secret --path` writes it."""
    for stack in run_stacks():
        text = stack_file(stack, STACKS_DIR).read_text()
        server = registry_of(load_stack(stack).images[0])
        text += (
            f"  tftrain:imageRegistry:\n    server: {server}\n    username: {USERNAME}\n"
            f"    password:\n      secure: {CIPHERTEXT}\n"
        )
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(text)
    return tmp_path


@pytest.mark.parametrize("stack", run_stacks())
def test_the_render_shows_the_secret_s_shape_and_no_credential(
    stack: str, stacks_with_secure_password: Path
) -> None:
    text = render_stack(stack, stacks_with_secure_password)
    assert CIPHERTEXT not in text and PASSWORD not in text
    assert "kind: Secret" in text and "imagePullSecrets" in text
    # Offline the password is the placeholder, inside the base64 too.
    entries = read_stack_entries(stacks_with_secure_password / f"Pulumi.{stack}.yaml")
    assert "tftrain:imageRegistry" in engine_config(entries)


def test_the_local_launcher_accepts_a_stack_with_credentials(
    stacks_with_secure_password: Path,
) -> None:
    config = load_config("dev", stacks_with_secure_password)
    assert config.image_registry.password == SECRET_PLACEHOLDER
    assert config.job.run_id == load_stack("dev").job.run_id
