"""What `--diff REV` renders the old side with, in process: REV's files only (Pulumi.yaml,
infra/, the stacks and the directory a stack uploads), REV's own renderer run on them with
nothing else on its path. A tiny repository stands in for the project, its renderer a stub
that reports what it was given."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from infra.render import diff
from infra.render.diff import RevisionRenderError, render_at_revision

STUB = """\
import json, os, sys
if sys.argv[1] == "bad":
    print("boom", file=sys.stderr)
    sys.exit(3)
files = sorted(
    os.path.relpath(os.path.join(top, name))
    for top, _, names in os.walk(".") for name in names if "__pycache__" not in top
)
print(json.dumps({
    "argv": sys.argv[1:], "cwd": os.getcwd(), "path": os.environ.get("PYTHONPATH"),
    "safe": os.environ.get("PYTHONSAFEPATH"), "files": files,
}))
"""


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose project sits one level down, as a monorepo holds it."""
    repo = tmp_path / "repo"
    project = repo / "proj"
    files = {
        "Pulumi.yaml": "name: p\n",
        "infra/__init__.py": "",
        "infra/render/__init__.py": "",
        "infra/render/__main__.py": STUB,
        "infra/mock_deploy.py": "",
        "infra/program_dir.py": "",
        "stacks/Pulumi.s.yaml": "config:\n  tftrain:data:\n    localInputDir: data/in\n",
        "stacks/Pulumi.bad.yaml": "config: {}\n",
        "envs/Pulumi.e.yaml": "config: {}\n",
        "data/in/a.txt": "uploaded\n",
        "data/other.txt": "not part of any render\n",
        "notes.md": "not part of any render\n",
    }
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    (repo / "outside.txt").write_text("another project's file\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    monkeypatch.setattr(diff, "PROJECT_ROOT", project)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    return project


def test_the_old_side_is_revs_renderer_on_revs_files_alone(project: Path) -> None:
    # The working tree moves on: the render must not see it.
    (project / "stacks" / "Pulumi.s.yaml").write_text("config: {}\n")
    out, notes = render_at_revision("HEAD", "s", None, "kubernetes")
    seen = json.loads(out)
    assert notes == []
    assert seen["argv"] == ["s", "--stacks-dir", "stacks", "--only", "kubernetes"]
    cwd = Path(seen["cwd"])
    assert cwd.name == "proj" and not cwd.is_relative_to(project.parent)  # a copy, gone now
    assert not cwd.exists()
    assert seen["path"] == seen["cwd"] and seen["safe"] is None
    assert seen["files"] == [
        "Pulumi.yaml",
        "data/in/a.txt",
        "infra/__init__.py",
        "infra/mock_deploy.py",
        "infra/program_dir.py",
        "infra/render/__init__.py",
        "infra/render/__main__.py",
        "stacks/Pulumi.bad.yaml",
        "stacks/Pulumi.s.yaml",
    ]


def test_without_only_the_whole_render_is_asked_for(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONSAFEPATH")  # not set: nothing to take out
    out, _ = render_at_revision("HEAD", "s", project / "stacks", None)
    assert json.loads(out)["argv"] == ["s", "--stacks-dir", "stacks"]


def test_another_stacks_directory_is_revs_copy_of_it(project: Path) -> None:
    out, _ = render_at_revision("HEAD", "e", project / "envs", None)
    seen = json.loads(out)
    assert seen["argv"] == ["e", "--stacks-dir", "envs"]
    assert "envs/Pulumi.e.yaml" in seen["files"]


def test_a_stack_rev_does_not_have_renders_as_empty_and_says_so(project: Path) -> None:
    assert render_at_revision("HEAD", "new", None, None) == (
        "",
        ["note: HEAD has no stack new; it renders as empty"],
    )


def test_a_failing_old_render_is_an_error_with_its_own_words(project: Path) -> None:
    with pytest.raises(RevisionRenderError) as raised:
        render_at_revision("HEAD", "bad", None, None)
    assert str(raised.value) == "rendering bad at HEAD failed:\nboom"


def test_a_revision_before_the_renderer_is_rendered_with_the_working_trees(project: Path) -> None:
    repo = project.parent
    _git(repo, "rm", "-q", "-r", "proj/infra/render")
    _git(repo, "commit", "-q", "-m", "before the renderer")
    _git(repo, "checkout", "HEAD~1", "--", "proj/infra/render")  # the working tree has it
    out, notes = render_at_revision("HEAD", "s", None, None)
    assert notes == ["note: HEAD predates infra/render; rendered with the working tree's"]
    assert "infra/render/__main__.py" in json.loads(out)["files"]
