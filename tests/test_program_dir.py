"""Where the engine runs the program (infra/program_dir.py), for each form of Pulumi.yaml's
`main`: pulumi/pulumi `pkg/engine/project.go` `getPwdMain` makes a directory `main` the
working directory, the folder of a file `main` likewise, and with no `main` the project's own
directory (docs/cloud-evidence.md, "Where the engine runs the program")."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.program_dir import PROJECT_DIR, as_provider_path, program_dir


def project(tmp_path: Path, pulumi_yaml: str) -> Path:
    (tmp_path / "infra").mkdir()
    (tmp_path / "infra" / "__main__.py").write_text("")
    (tmp_path / "Pulumi.yaml").write_text(pulumi_yaml, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("main", ["infra/", "infra", "./infra"])
def test_a_directory_main_is_the_working_directory(tmp_path: Path, main: str) -> None:
    root = project(tmp_path, f"name: tftrain\nruntime: python\nmain: {main}\n")
    assert program_dir(root) == (root / "infra").resolve()


def test_a_file_main_runs_in_its_folder(tmp_path: Path) -> None:
    root = project(tmp_path, "name: tftrain\nruntime: python\nmain: infra/__main__.py\n")
    assert program_dir(root) == (root / "infra").resolve()


@pytest.mark.parametrize("main_line", ["", "main:\n", "main: ''\n"])
def test_without_main_the_project_directory_is_the_working_directory(
    tmp_path: Path, main_line: str
) -> None:
    root = project(tmp_path, f"name: tftrain\nruntime: python\n{main_line}")
    assert program_dir(root) == root


def test_this_projects_program_runs_in_infra() -> None:
    assert program_dir() == PROJECT_DIR / "infra"
    assert (PROJECT_DIR / "Pulumi.yaml").is_file()


def test_a_project_file_reaches_the_provider_relative_to_infra() -> None:
    data = PROJECT_DIR / "trainer" / "data" / "mnist"
    assert as_provider_path(data) == "../trainer/data/mnist"
    assert as_provider_path(PROJECT_DIR / "infra" / "program.py") == "program.py"


def test_a_relative_path_is_read_from_the_callers_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(PROJECT_DIR)
    assert as_provider_path(Path("trainer/data")) == "../trainer/data"
    monkeypatch.chdir(PROJECT_DIR / "infra")
    assert as_provider_path(Path("cloud")) == "cloud"
