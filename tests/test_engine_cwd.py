"""The program runs under the tests where the Pulumi engine runs it, so a path that only
resolves from somewhere else fails here, not after the VPC, NAT and EIP are billing.

The expected values come from pulumi/pulumi, not from the harness: `getPwdMain`
(pkg/engine/project.go) makes a directory `main` the working directory; the Python language
host passes it as `--pwd` and its exec script calls `os.chdir(args.pwd)`; every provider starts
with `cmd.Dir = pwd` (sdk/go/common/resource/plugin/plugin.go); the host hands config to the
program as JSON in PULUMI_CONFIG and PULUMI_CONFIG_SECRET_KEYS
(sdk/python/cmd/pulumi-language-python/main.go). Pulumi.yaml says `main: infra/`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

import infra.cloud.oss as oss_module
from infra.config import read_stack_entries, read_stack_file, stack_file
from infra.config.stack_file import engine_config
from infra.mock_deploy import ProviderError
from tests.pulumi_mocks import STACKS_DIR, PlausibleCloud, all_stacks, run_program

PROJECT = Path(__file__).resolve().parent.parent
OBJECT = "alicloud:oss/bucketObject:BucketObject"


def uploading_stacks() -> list[str]:
    """Every checked-in stack that creates its bucket and uploads a local directory into it."""
    found = []
    for stack in all_stacks():
        data = read_stack_file(stack_file(stack, STACKS_DIR)).get("data") or {}
        if data.get("createBucket") and data.get("localInputDir"):
            found.append(stack)
    return found


@dataclass
class ProviderWitness(PlausibleCloud):
    """The fake cloud, noting the working directory and environment each resource is created
    in: what a provider started by the engine would see."""

    seen: list[tuple[str, str, Mapping[str, str]]] = field(default_factory=list)

    def outputs(
        self, type_token: str, resource_id: str, inputs: Mapping[str, Any]
    ) -> dict[str, Any]:
        engine_env = {k: v for k, v in os.environ.items() if k.startswith("PULUMI_CONFIG")}
        self.seen.append((type_token, os.getcwd(), engine_env))
        return super().outputs(type_token, resource_id, inputs)


def test_pulumi_yaml_main_is_the_infra_folder() -> None:
    """The fact every other test here rests on, read from the project file itself."""
    project = yaml.safe_load((PROJECT / "Pulumi.yaml").read_text())
    assert project["main"] == "infra/"
    assert (PROJECT / "infra" / "__main__.py").is_file()


def test_the_program_and_its_providers_run_in_mains_folder_with_the_engines_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(PROJECT)  # where a developer usually stands: the root must not matter
    monkeypatch.delenv("PULUMI_CONFIG", raising=False)
    cloud = ProviderWitness()
    run_program("ack-gpu", cloud=cloud)

    expected_config = engine_config(read_stack_entries(stack_file("ack-gpu", STACKS_DIR)))
    assert cloud.seen
    for type_token, cwd, env in cloud.seen:
        assert Path(cwd) == PROJECT / "infra", type_token
        assert json.loads(env["PULUMI_CONFIG"]) == expected_config
        assert json.loads(env["PULUMI_CONFIG_SECRET_KEYS"]) == []
    # The caller's process is given back as it was.
    assert Path.cwd() == PROJECT
    assert "PULUMI_CONFIG" not in os.environ


def test_secret_keys_reach_the_program_as_the_language_host_hands_them() -> None:
    cloud = ProviderWitness()
    run_program("dev", secrets={"kubeconfig": "apiVersion: v1\nkind: Config\n"}, cloud=cloud)
    (_, _, env), *_ = cloud.seen
    assert json.loads(env["PULUMI_CONFIG_SECRET_KEYS"]) == ["tftrain:kubeconfig"]


@pytest.mark.parametrize("stack", uploading_stacks())
def test_every_upload_opens_from_mains_folder_and_names_no_checkout_path(stack: str) -> None:
    """The fake cloud opens each `source` as PutObjectFromFile does (from its working
    directory, tests/pulumi_mocks.py `_uploaded`); here, what the state records."""
    run = run_program(stack)
    objects = run.of_type(OBJECT)
    assert objects, f"{stack} uploads nothing"
    for registration in objects:
        source = registration.inputs["source"]
        assert not os.path.isabs(source), source  # no checkout location in the state
        assert source.startswith("../trainer/data/"), source  # infra/ → the project's trainer/
        assert (PROJECT / "infra" / source).is_file()


def test_a_path_that_only_resolves_from_the_project_root_fails_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The defect this harness exists to catch: `source` named from the project root (what
    the program did before) is not a file where the provider opens it."""
    monkeypatch.chdir(PROJECT)  # from here the root-relative path would resolve
    monkeypatch.setattr(
        oss_module, "as_provider_path", lambda path: path.relative_to(PROJECT).as_posix()
    )
    run = run_program("ack-gpu", raise_errors=False)
    assert isinstance(run.error, ProviderError)
    assert "PutObjectFromFile: open trainer/data/mnist/" in str(run.error)


def test_the_program_venv_resolves_from_the_project_root_not_from_main() -> None:
    """Pulumi.yaml's `virtualenv: .venv-program` is joined to the project's root directory
    (sdk/python/toolchain/pip.go `resolveVirtualEnvironmentPath(root, virtualenv)`, root =
    the RunRequest's RootDirectory, from v3.100 to v3.259 at least), not to `main`: the venv
    bootstrap makes at the root is the one the engine runs the program with."""
    options = yaml.safe_load((PROJECT / "Pulumi.yaml").read_text())["runtime"]["options"]
    assert options["virtualenv"] == ".venv-program"
    assert (PROJECT / ".venv-program").is_dir()
    assert not (PROJECT / "infra" / ".venv-program").exists()
