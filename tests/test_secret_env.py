"""Env values that are Pulumi secrets (`pulumi config set --secret --path tftrain:job.env.X`):
in the stack file they are `{secure: <ciphertext>}`; offline they read as a placeholder; the
engine hands the program the whole section decrypted and marks it secret (Pulumi's config
docs: a secure value inside a structured key makes the key secret). The values live in a
Kubernetes Secret of the stack, itself a Pulumi secret, and reach the containers through
`valueFrom.secretKeyRef`: no Job carries one; the local launcher takes them from the shell.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import all_versions
from packaging.version import Version

from infra.config import load_stack_file, parse_config
from infra.config.types import SECRET_PLACEHOLDER
from infra.lifecycle import run_key
from infra.local.plan import resolve_secret_env
from infra.manifests.secret_env import env_secret
from tests.pulumi_mocks import run_program

IMAGE = "registry.example.com/tftrain/trainer:1"
TOKEN = "s3cr3t-token-value"
NEWEST_SCHEMA = max(all_versions(), key=Version)


def test_offline_a_secure_value_is_a_placeholder_and_the_run_id_ignores_values(
    tmp_path: Path,
) -> None:
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(
        f"config:\n  tftrain:image: {IMAGE}\n  tftrain:job:\n    env:\n"
        "      TOKEN:\n        secure: v1:AAAAbase64ciphertext\n      PLAIN: x\n"
    )
    offline = load_stack_file(stack)
    assert offline.job.env == {"TOKEN": SECRET_PLACEHOLDER, "PLAIN": "x"}
    # What the program sees: decrypted, with the whole `job` key marked secret by the engine
    # (`pulumi config set --secret --path`): the same run id, so render and deploy agree.
    raw = {"image": IMAGE, "job": {"env": {"TOKEN": TOKEN, "PLAIN": "x"}}}
    deployed = parse_config(raw, secret_keys=["job"])
    assert offline.job.run_id == deployed.job.run_id
    # The secret's value never reaches the id: another token, the same id.
    other = parse_config({**raw, "job": {"env": {"TOKEN": "another", "PLAIN": "x"}}}, ["job"])
    assert other.job.run_id == deployed.job.run_id
    assert run_key(deployed) == run_key(offline) == deployed.job.run_id


def test_a_plain_env_value_is_part_of_the_run_id() -> None:
    # How users tune their own trainers: another value is another run.
    one = parse_config({"image": IMAGE, "job": {"env": {"MY_LR": "0.1"}}})
    two = parse_config({"image": IMAGE, "job": {"env": {"MY_LR": "0.01"}}})
    grouped = parse_config({"image": IMAGE, "worker": {"number": 2, "env": {"MY_LR": "0.01"}}})
    assert one.job.run_id != two.job.run_id
    assert (
        grouped.job.run_id
        != parse_config(
            {"image": IMAGE, "worker": {"number": 2, "env": {"MY_LR": "0.1"}}}
        ).job.run_id
    )


def _env_entries(job: Any) -> dict[str, dict[str, Any]]:
    (container,) = job.inputs["spec"]["template"]["spec"]["containers"]
    return {entry["name"]: entry for entry in container["env"]}


def test_a_secret_env_value_reaches_pods_only_through_a_kubernetes_secret() -> None:
    config = {"image": IMAGE, "cluster": {"kind": "existing"}, "worker": {"env": {"W": "w"}}}
    secrets = {"job": json.dumps({"env": {"TOKEN": TOKEN, "OTHER": "other-secret"}})}
    recorded = run_program(config, secrets=secrets)
    (secret,) = [s for s in recorded.of_type("kubernetes:core/v1:Secret")
                 if s.inputs["metadata"]["name"] == "mnist-env"]  # fmt: skip
    assert "data" in secret.secret_paths  # a Pulumi secret in the state and the preview
    assert secret.inputs["type"] == "Opaque"
    data = secret.inputs["data"]
    jobs = recorded.of_type("kubernetes:batch/v1:Job")
    assert jobs
    for job in jobs:
        # Not a literal anywhere in a Job: `get jobs` / `describe pod` show no secret.
        assert TOKEN not in json.dumps(job.inputs, default=str), job.name
        assert "other-secret" not in json.dumps(job.inputs, default=str), job.name
        env = _env_entries(job)
        for name, value in (("TOKEN", TOKEN), ("OTHER", "other-secret")):
            ref = env[name]["valueFrom"]["secretKeyRef"]
            assert "value" not in env[name]
            assert ref["name"] == "mnist-env"
            assert base64.b64decode(data[ref["key"]]).decode() == value
        # A section the engine did not mark stays a plain value.
        if job.inputs["metadata"]["name"].startswith("mnist-worker"):
            assert env["W"] == {"name": "W", "value": "w"}
    for resource in recorded.resources:
        if resource is not secret:
            assert TOKEN not in json.dumps(resource.inputs, default=str), resource.name
    assert TOKEN not in json.dumps(recorded.outputs, default=str)


def test_a_groups_own_secret_value_is_its_own_key() -> None:
    config = {"image": IMAGE, "cluster": {"kind": "existing"}}
    secrets = {
        "job": json.dumps({"env": {"TOKEN": TOKEN}}),
        "worker": json.dumps({"number": 2, "env": {"TOKEN": "worker-token"}}),
    }
    recorded = run_program(config, secrets=secrets)
    (secret,) = [s for s in recorded.of_type("kubernetes:core/v1:Secret")
                 if s.inputs["metadata"]["name"] == "mnist-env"]  # fmt: skip
    for job in recorded.of_type("kubernetes:batch/v1:Job"):
        ref = _env_entries(job)["TOKEN"]["valueFrom"]["secretKeyRef"]
        expected = "worker-token" if "-worker-" in job.inputs["metadata"]["name"] else TOKEN
        assert base64.b64decode(secret.inputs["data"][ref["key"]]).decode() == expected


def test_the_offline_render_has_no_secret_literal_in_any_job(tmp_path: Path) -> None:
    from infra.manifests import build_objects
    from infra.platform.cluster_facts import cluster_facts
    from infra.program import _dependencies

    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(
        f"config:\n  tftrain:image: {IMAGE}\n  tftrain:job:\n    env:\n"
        "      TOKEN:\n        secure: v1:AAAAbase64ciphertext\n      PLAIN: x\n"
    )
    config = load_stack_file(stack)
    objects = build_objects(config, cluster_facts(config))
    (secret,) = [o for o in objects if o["kind"] == "Secret"]
    for job in (o for o in objects if o["kind"] == "Job"):
        (container,) = job["spec"]["template"]["spec"]["containers"]
        env = {entry["name"]: entry for entry in container["env"]}
        assert env["PLAIN"] == {"name": "PLAIN", "value": "x"}
        ref = env["TOKEN"]["valueFrom"]["secretKeyRef"]
        assert ref["name"] == secret["metadata"]["name"]
        assert ref["key"] in secret["data"]
        assert SECRET_PLACEHOLDER not in json.dumps(job)
    # The program registers every Job after the Secret its pods read.
    registered: dict[tuple[str, str, str], Any] = {}
    by_kind: dict[str, list[Any]] = {}
    secret_key = ("Secret", secret["metadata"]["namespace"], secret["metadata"]["name"])
    for obj in objects:
        if obj["kind"] == "Job":
            assert secret_key in _dependencies(obj, registered, by_kind)
        key = (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        registered[key] = key  # the key stands in for the resource
        by_kind.setdefault(obj["kind"], []).append(key)


def test_locally_a_secret_comes_from_the_shell_or_is_refused_by_key() -> None:
    config = parse_config({"image": IMAGE, "worker": {"env": {"TOKEN": {"secure": "v1:x"}}}})
    resolved = resolve_secret_env(config, {"TOKEN": TOKEN})
    assert resolved.worker.env == {"TOKEN": TOKEN}
    with pytest.raises(ValueError, match=r"tftrain:worker\.env\.TOKEN: a Pulumi secret"):
        resolve_secret_env(config, {})


def test_locally_every_missing_secret_is_named_and_the_rest_kept_as_written() -> None:
    config = parse_config(
        {
            "image": IMAGE,
            "job": {"env": {"PLAIN": "p", "API_KEY": {"secure": "v1:a"}}},
            "worker": {"env": {"TOKEN": {"secure": "v1:x"}}},
            "ps": {"env": {"PS_ONLY": "q"}},
        }
    )
    shell = {"API_KEY": "k", "TOKEN": TOKEN, "UNRELATED": "u"}
    resolved = resolve_secret_env(config, shell)
    assert resolved.job.env == {"PLAIN": "p", "API_KEY": "k"}
    assert resolved.worker.env == {"TOKEN": TOKEN}
    assert resolved.ps.env == {"PS_ONLY": "q"}
    with pytest.raises(ValueError) as refused:
        resolve_secret_env(config, {"UNRELATED": "u"})
    # Every missing one, job's first, and how to set the first.
    assert str(refused.value) == (
        "tftrain:job.env.API_KEY, tftrain:worker.env.TOKEN: a Pulumi secret, which the "
        "launcher cannot decrypt; set it in this shell to run locally (export API_KEY=...)"
    )


def test_a_dry_run_never_prints_a_secret_resolved_from_the_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from infra.local.cli import main

    (tmp_path / "Pulumi.s.yaml").write_text(
        f"config:\n  tftrain:image: {IMAGE}\n  tftrain:job:\n    env:\n"
        "      TOKEN:\n        secure: v1:AAAAbase64ciphertext\n      PLAIN: visible\n"
        "    args: [--plain, $(PLAIN)]\n"
    )
    monkeypatch.setenv("TOKEN", TOKEN)
    status = main(["s", "--stacks-dir", str(tmp_path), "--dry-run",
                   "--output-dir", str(tmp_path / "out")])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    assert "--plain visible" in out
    assert TOKEN not in out
    assert f"TOKEN={SECRET_PLACEHOLDER}" in out
    assert "PLAIN=visible" in out


def test_locally_a_secret_named_on_a_command_line_is_refused_by_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a pod the kubelet expands `$(TOKEN)` inside the container; here the expanded
    command line of a process is readable by every user (`ps`, /proc/<pid>/cmdline)."""
    from infra.local.cli import main

    (tmp_path / "Pulumi.s.yaml").write_text(
        f"config:\n  tftrain:image: {IMAGE}\n  tftrain:job:\n    env:\n"
        "      TOKEN:\n        secure: v1:AAAAbase64ciphertext\n"
        "    args: [--token, $(TOKEN)]\n"
    )
    monkeypatch.setenv("TOKEN", TOKEN)
    status = main(["s", "--stacks-dir", str(tmp_path), "--output-dir", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert status == 2
    assert "tftrain:job.args: $(TOKEN) is a Pulumi secret" in captured.err
    assert "visible to every user in ps" in captured.err
    assert TOKEN not in captured.out + captured.err
    assert not (tmp_path / "out").exists()  # nothing started, nothing made


def test_the_env_secret_is_an_opaque_secret_the_api_server_accepts() -> None:
    # What `render` writes out and `kubectl apply` sends: one key per TFJob replica type
    # (Kubeflow's chief, master, worker, ps, evaluator) and name, the value base64-encoded.
    config = parse_config({"image": IMAGE, "job": {"env": {"TOKEN": TOKEN}}})
    secret = env_secret(config, ["job"])
    encoded = base64.b64encode(TOKEN.encode()).decode()
    assert secret == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "mnist-env",
            "namespace": "tftrain",
            "labels": {"app.kubernetes.io/name": "tftrain", "app.kubernetes.io/instance": "mnist"},
        },
        "type": "Opaque",
        "data": {
            f"{kind}.TOKEN": encoded for kind in ("chief", "master", "worker", "ps", "evaluator")
        },
    }
    kubernetes_validate.validate(secret, NEWEST_SCHEMA, strict=True)
