"""`--diff`'s git side (infra/render/diff.py) in a small repository made here, without
rendering: which revision and stack file it reads, where the default branch was left, what a
revision's stack uploads, the renderer lent to an old revision, and the text it prints.
(The renders on both sides, end to end: tests/test_render.py.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from infra.render import diff
from infra.render.diff import DiffError, StackDiff

STACK = (
    "config:\n  tftrain:image: r.example.com/t:1\n  tftrain:hyperparams:\n    learningRate: {}\n"
)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose project sits in `proj/` (as in a monorepo), one commit on main."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "repo"
    (root / "proj" / "stacks").mkdir(parents=True)
    (root / "proj" / "stacks" / "Pulumi.s.yaml").write_text(STACK.format(0.1))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    monkeypatch.setattr(diff, "PROJECT_ROOT", (root / "proj").resolve())
    return root


def test_the_stack_file_at_a_revision_is_that_revisions(repo: Path) -> None:
    stacks = repo / "proj" / "stacks"
    (stacks / "Pulumi.s.yaml").write_text(STACK.format(0.2))  # uncommitted
    (stacks / "Pulumi.new.yaml").write_text(STACK.format(0.3))
    old = diff.stack_file_at_revision("HEAD", "s", None)
    assert old is not None
    assert old.config["hyperparams"] == {"learningRate": 0.1}
    # A stack REV does not have, and a file REV cannot read: none, for REV's render to report.
    assert diff.stack_file_at_revision("HEAD", "new", None) is None
    (stacks / "Pulumi.bad.yaml").write_text("config: [\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    assert diff.stack_file_at_revision("HEAD", "bad", None) is None
    assert diff.stack_file_at_revision("HEAD~1", "new", None) is None
    assert diff.stack_file_at_revision("HEAD", "new", None) is not None
    # A stacks directory inside the project is read at REV by its place in the project.
    assert diff.stack_file_at_revision("main", "s", stacks) is not None


def test_a_stacks_directory_outside_the_project_has_no_old_version(
    repo: Path, tmp_path: Path
) -> None:
    with pytest.raises(DiffError, match=r"--stacks-dir .* is outside the project, so git has no"):
        diff.stack_file_at_revision("HEAD", "s", tmp_path)


def test_an_unknown_revision_and_no_repository_are_diff_errors(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(DiffError) as unknown:
        diff.stack_file_at_revision("nope", "s", None)
    assert str(unknown.value) == (
        f"unknown git revision 'nope': no commit of that name in {repo.resolve()}"
    )
    # A revision that names a tree, not a commit, is no revision of the project either.
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    with pytest.raises(DiffError, match="unknown git revision"):
        diff.stack_file_at_revision(tree, "s", None)
    # An option-like revision is a revision name, not an option to git.
    with pytest.raises(DiffError, match="unknown git revision '--all'"):
        diff.stack_file_at_revision("--all", "s", None)
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    monkeypatch.setattr(diff, "PROJECT_ROOT", elsewhere)
    with pytest.raises(DiffError) as bare:
        diff.stack_file_at_revision("HEAD", "s", None)
    assert str(bare.value) == (
        f"--diff needs a git repository, and the project at {elsewhere} is not in one"
    )


def test_the_default_base_is_where_the_branch_left_main(repo: Path) -> None:
    left = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "proj" / "x").write_text("x")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "proj" / "y").write_text("y")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main moves on")
    git(repo, "checkout", "-q", "feature")
    assert diff.default_base() == left[:12]
    # The remote's default branch comes first: here it holds the feature's commit too.
    git(repo, "update-ref", "refs/remotes/origin/trunk", "feature")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    assert diff.default_base() == git(repo, "rev-parse", "feature")[:12]


def test_master_serves_where_there_is_no_main_and_neither_is_an_error(repo: Path) -> None:
    git(repo, "branch", "-m", "main", "master")
    assert diff.default_base() == git(repo, "rev-parse", "HEAD")[:12]
    git(repo, "branch", "-m", "master", "trunk")
    with pytest.raises(DiffError, match=r"no default branch to review against .*--base REV"):
        diff.default_base()


@pytest.mark.parametrize(
    ("data", "uploaded"),
    [
        ({"localInputDir": "data/mnist"}, "data/mnist"),
        ({"localInputDir": "/srv/mnist"}, ""),
        ({"localInputDir": "../outside"}, ""),
        ({"localInputDir": "data/../../outside"}, ""),
        ({"localInputDir": "~/mnist"}, ""),
        ({"localInputDir": ""}, ""),
        ({"localInputDir": 3}, ""),
        ({}, ""),
        ("not-a-mapping", ""),
    ],
)
def test_what_a_revisions_stack_uploads(data: object, uploaded: str, tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(yaml.safe_dump({"config": {"tftrain:data": data}}))
    assert diff._uploaded_dir(path) == uploaded


def test_an_unreadable_stack_uploads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text("config: [\n")
    assert diff._uploaded_dir(path) == ""


def test_a_revision_without_the_stack_renders_as_empty_without_running_anything(
    repo: Path,
) -> None:
    assert diff.render_at_revision("HEAD", "gone", None, None) == (
        "",
        ["note: HEAD has no stack gone; it renders as empty"],
    )


def test_a_revision_older_than_the_renderer_is_lent_it(tmp_path: Path) -> None:
    old = tmp_path / "old"
    (old / "infra").mkdir(parents=True)
    assert diff._lend_renderer(old) is True
    lent = {p.relative_to(old).as_posix() for p in old.rglob("*") if p.is_file()}
    assert {"infra/mock_deploy.py", "infra/program_dir.py", "infra/render/diff.py"} <= lent
    assert not any("__pycache__" in name for name in lent)
    assert diff._lend_renderer(old) is False  # it has one now: nothing more is copied


def test_the_printed_text() -> None:
    same = StackDiff(stack="s", summary="Consequences: none", diff=[], notes=["n"])
    assert not same.changed
    assert same.text("v1") == (
        "Consequences: none\nNo changes: s renders the same at v1 and in the working tree.\n"
    )
    changed = StackDiff(stack="s", summary="Consequences: x", diff=["--- a", "+++ b"], notes=[])
    assert changed.changed
    assert changed.text("v1") == "Consequences: x\n--- a\n+++ b\n"


def _job_render(run: str, image: str = "t:1") -> str:
    return (
        "# Stack s, rendered offline\n---\n# Job t/w-0\napiVersion: batch/v1\nkind: Job\n"
        f"metadata:\n  labels:\n    tftrain.io/run-id: {run}\n  name: w-0\n  namespace: t\n"
        f"spec:\n  template:\n    spec:\n      containers:\n      - image: {image}\n"
    )


class _Renders:
    """The two renders compare_stack asks for, recorded: REV's (a subprocess in real use)
    and the working tree's."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, old: tuple[str, list[str]], new: str):
        self.calls: list[tuple] = []
        self.old, self.new = old, new
        monkeypatch.setattr(diff, "render_at_revision", self.at_revision)
        monkeypatch.setattr(diff, "render_stack", self.working_tree)

    def at_revision(self, *args: object) -> tuple[str, list[str]]:
        self.calls.append(("rev", *args))
        return self.old[0], list(self.old[1])

    def working_tree(self, *args: object) -> str:
        self.calls.append(("tree", *args))
        return self.new


def test_compare_stack_opens_with_the_review_then_the_folded_diff(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stacks = repo / "proj" / "stacks"
    (stacks / "Pulumi.s.yaml").write_text(STACK.format(0.2))
    renders = _Renders(monkeypatch, (_job_render("r1"), ["note: old"]), _job_render("r2", "t:2"))
    compared = diff.compare_stack("HEAD", "s", stacks, "kubernetes")
    assert renders.calls == [
        ("rev", "HEAD", "s", stacks, "kubernetes"),
        ("tree", "s", stacks, "kubernetes"),
    ]
    assert compared.stack == "s" and compared.notes == ["note: old"]
    assert compared.summary.startswith(
        "Config changes, HEAD → working-tree:\n  hyperparams.learningRate: 0.1 → 0.2\n\n"
        "Consequences for s, HEAD → working-tree:\nRun: r1 is stopped; r2 starts"
    )
    assert compared.diff[:4] == [
        "Run id r1 → r2, folded out of the diff below (labels, names, paths):",
        "  Job: 1 object, 1 line",
        "--- s@HEAD",
        "+++ s@working-tree",
    ]
    assert compared.diff[-2:] == ["-      - image: t:1", "+      - image: t:2"]
    text, notes = diff.diff_stack("HEAD", "s", stacks, "kubernetes")
    assert text == compared.summary + "\n" + "\n".join(compared.diff) + "\n"
    assert notes == ["note: old"]
    # diff_stack renders the same part, on both sides.
    assert renders.calls[2:] == renders.calls[:2]


def test_the_config_changes_come_from_the_stacks_folder_given(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two folders hold a stack s at HEAD: stacks/ (0.1, the fixture's) and other/ (0.3).
    other = repo / "proj" / "other"
    other.mkdir()
    (other / "Pulumi.s.yaml").write_text(STACK.format(0.3))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "other")
    (other / "Pulumi.s.yaml").write_text(STACK.format(0.4))
    _Renders(monkeypatch, (_job_render("r1"), []), _job_render("r1"))
    compared = diff.compare_stack("HEAD", "s", other, None)
    assert "  hyperparams.learningRate: 0.3 → 0.4" in compared.summary.splitlines()


def test_a_part_that_renders_nothing_still_shows_the_config_change(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --only names a part the stack has none of, on both sides: the stack file still changed.
    stacks = repo / "proj" / "stacks"
    (stacks / "Pulumi.s.yaml").write_text(STACK.format(0.2))
    _Renders(monkeypatch, ("", []), "")
    compared = diff.compare_stack("HEAD", "s", stacks, "tensorboard")
    assert "  hyperparams.learningRate: 0.1 → 0.2" in compared.summary.splitlines()


def test_a_stack_the_working_tree_deleted_renders_as_empty(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stacks = repo / "proj" / "stacks"
    (stacks / "Pulumi.s.yaml").unlink()
    renders = _Renders(monkeypatch, (_job_render("r1"), []), "never rendered")
    compared = diff.compare_stack("HEAD", "s", stacks, None)
    assert [call[0] for call in renders.calls] == ["rev"]
    assert compared.notes == ["note: the working tree has no stack s; it renders as empty"]
    assert compared.summary.startswith("Config changes, HEAD → working-tree:\n  ")
    removed = [line for line in compared.diff if line.startswith("-") and line != "--- s@HEAD"]
    assert removed == [f"-{line}" for line in _job_render("r1").splitlines()]
    assert not any(line.startswith("+") and line != "+++ s@working-tree" for line in compared.diff)


def test_the_same_render_on_both_sides_is_no_change(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stacks = repo / "proj" / "stacks"
    _Renders(monkeypatch, (_job_render("r1"), []), _job_render("r1"))
    text, notes = diff.diff_stack("main", "s", stacks, None)
    assert notes == []
    assert text.startswith(
        "Config changes, main → working-tree: none (the stack file's values are the same)\n"
    )
    assert text.endswith("\nNo changes: s renders the same at main and in the working tree.\n")


def test_a_stack_new_in_the_working_tree_has_no_old_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stacks = repo / "proj" / "stacks"
    (stacks / "Pulumi.n.yaml").write_text(STACK.format(0.5))
    _Renders(
        monkeypatch, ("", ["note: HEAD has no stack n; it renders as empty"]), _job_render("r9")
    )
    compared = diff.compare_stack("HEAD", "n", stacks, None)
    assert compared.notes == ["note: HEAD has no stack n; it renders as empty"]
    assert "  hyperparams.learningRate: (unset) → 0.5" in compared.summary.splitlines()
    assert compared.diff[:2] == ["--- n@HEAD", "+++ n@working-tree"]


def test_the_remotes_branch_comes_before_a_local_one_of_the_same_name(repo: Path) -> None:
    old = git(repo, "rev-parse", "HEAD")
    (repo / "proj" / "x").write_text("x")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pushed")
    pushed = git(repo, "rev-parse", "HEAD")
    # origin/main has the new commit, the local main does not (no origin/HEAD is set).
    git(repo, "update-ref", "refs/remotes/origin/main", pushed)
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "branch", "-f", "main", old)
    assert diff.default_base() == pushed[:12]
    # The same for master, where there is no main.
    git(repo, "update-ref", "-d", "refs/remotes/origin/main")
    git(repo, "branch", "-m", "main", "master")
    git(repo, "update-ref", "refs/remotes/origin/master", pushed)
    assert diff.default_base() == pushed[:12]


def test_without_a_default_branch_the_error_says_how_to_name_one(repo: Path) -> None:
    git(repo, "branch", "-m", "main", "trunk")
    with pytest.raises(DiffError) as error:
        diff.default_base()
    assert str(error.value) == (
        "no default branch to review against (origin/HEAD, main or master): pass --base REV"
    )


def test_without_git_the_error_says_so(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-dir"))
    with pytest.raises(DiffError) as error:
        diff.default_base()
    assert str(error.value) == "--diff needs git, which is not installed"


def test_a_failed_archive_names_the_commit_and_gits_message(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = diff._git

    def archive_fails(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
        if args[0] == "archive":
            return subprocess.CompletedProcess(args, 128, b"", b"fatal: disk full\n")
        return real(args, cwd)

    monkeypatch.setattr(diff, "_git", archive_fails)
    commit = git(repo, "rev-parse", "HEAD")
    with pytest.raises(DiffError) as error:
        diff.stack_file_at_revision("HEAD", "s", None)
    assert str(error.value) == f"git archive {commit} failed: fatal: disk full"


def test_a_revision_whose_stack_file_links_out_of_the_project_is_not_read(repo: Path) -> None:
    stacks = repo / "proj" / "stacks"
    (stacks / "Pulumi.s.yaml").unlink()
    (stacks / "Pulumi.s.yaml").symlink_to("/etc/hostname")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a link out")
    commit = git(repo, "rev-parse", "HEAD")
    with pytest.raises(DiffError) as error:
        diff.stack_file_at_revision("HEAD", "s", None)
    assert str(error.value) == (
        f"not reading {commit}'s files: 'proj/stacks/Pulumi.s.yaml' is a link to an absolute "
        "path, which could lead out of the project"
    )
