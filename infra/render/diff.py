"""`--diff REV`: a stack rendered at a git revision and in the working tree: first what the
change does (`infra.render.summary`), then the unified diff.

The REV side is REV's code *and* REV's stack file: `git archive` extracts REV's `infra/` and
stacks directory into a temporary directory, and a subprocess of this interpreter renders
there, so a change to a builder shows up as surely as a change to a stack. A stack that does
not exist on one side renders as empty (the whole stack added, or removed).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from infra.config import ConfigError, read_stack_file, stack_file
from infra.config.stack_file import StackFile, read_stack
from infra.render import render_stack
from infra.render.relabel import fold_run_id
from infra.render.review_summary import review_summary
from infra.render.unified import unified_diff

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The renderer's own files: lent to a revision that predates them (see `_lend_renderer`).
RENDERER_FILES = ("infra/render", "infra/mock_deploy.py", "infra/program_dir.py")
WORKING_TREE = "working-tree"


class DiffError(Exception):
    """The diff cannot be made as asked (not a repository, unknown revision)."""


class RevisionRenderError(Exception):
    """The renderer failed on REV's side; its own message is included."""


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError as error:
        raise DiffError("--diff needs git, which is not installed") from error


def _repository() -> tuple[Path, Path]:
    """The repository holding this project, and the project's path inside it."""
    found = _git(["rev-parse", "--show-toplevel"], PROJECT_ROOT)
    if found.returncode != 0:
        raise DiffError(
            f"--diff needs a git repository, and the project at {PROJECT_ROOT} is not in one"
        )
    root = Path(found.stdout.decode().strip()).resolve()
    return root, PROJECT_ROOT.relative_to(root)


def _commit(repo: Path, rev: str) -> str:
    found = _git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], repo
    )
    if found.returncode != 0:
        raise DiffError(f"unknown git revision {rev!r}: no commit of that name in {repo}")
    return found.stdout.decode().strip()


def default_base() -> str:
    """Where the current branch left the default branch: the merge-base of HEAD with
    origin's HEAD (the remote's default branch), else with a local main or master."""
    repo, _ = _repository()
    remote = _git(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], repo)
    candidates = [remote.stdout.decode().strip()] if remote.returncode == 0 else []
    for branch in [*candidates, "origin/main", "main", "origin/master", "master"]:
        found = _git(["merge-base", "HEAD", branch], repo)
        if found.returncode == 0 and branch:
            return found.stdout.decode().strip()[:12]
    raise DiffError(
        "no default branch to review against (origin/HEAD, main or master): pass --base REV"
    )


def _stacks_relative(stacks_dir: Path | None) -> Path:
    """The stacks directory relative to the project, so REV's copy of it can be found."""
    if stacks_dir is None:
        return Path("stacks")
    try:
        return stacks_dir.resolve().relative_to(PROJECT_ROOT)
    except ValueError as error:
        raise DiffError(
            f"--stacks-dir {stacks_dir} is outside the project, so git has no old version of it"
        ) from error


def _extract(repo: Path, commit: str, paths: list[str], into: Path) -> None:
    """REV's copy of `paths` (those that exist at REV) under `into`."""
    listed = _git(["ls-tree", "-z", "--name-only", commit, "--", *paths], repo)
    present = [name for name in listed.stdout.decode().split("\0") if name]
    if not present:
        return
    archive = _git(["archive", "--format=tar", commit, "--", *present], repo)
    if archive.returncode != 0:
        raise DiffError(f"git archive {commit} failed: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        try:
            # "data": no link or path that leads out of `into`, no device, no set-uid bit.
            tar.extractall(into, filter="data")
        except tarfile.FilterError as error:
            raise DiffError(
                f"not reading {commit}'s files: {error}, which could lead out of the project"
            ) from error


def _uploaded_dir(path: Path) -> str:
    """REV's `data.localInputDir` when it names a directory inside the project (what a stack
    that creates its bucket uploads): REV's render reads those files too."""
    try:
        data = read_stack_file(path).get("data")
    except ConfigError:
        return ""  # the render of REV says what is wrong with its file
    value = data.get("localInputDir") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value or Path(value).is_absolute():
        return ""
    return "" if ".." in Path(value).parts or value.startswith("~") else value


def _lend_renderer(project: Path) -> bool:
    """Give a revision older than the renderer (the base of the change that adds it) the
    working tree's renderer: its builders, config and stacks are still REV's own."""
    if (project / "infra" / "render").is_dir():
        return False
    for name in RENDERER_FILES:
        source, target = PROJECT_ROOT / name, project / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    return True


def stack_file_at_revision(rev: str, stack: str, stacks_dir: Path | None) -> StackFile | None:
    """REV's stack file, read by the one stack-file reader (None: REV has no such stack, or
    a file it cannot read, which REV's render reports)."""
    repo, project_rel = _repository()
    commit = _commit(repo, rev)
    path = (project_rel / _stacks_relative(stacks_dir) / f"Pulumi.{stack}.yaml").as_posix()
    with tempfile.TemporaryDirectory(prefix="tftrain-stack-") as tmp:
        _extract(repo, commit, [path], Path(tmp))
        try:
            return read_stack(Path(tmp) / path) if (Path(tmp) / path).is_file() else None
        except ConfigError:
            return None


def render_at_revision(
    rev: str, stack: str, stacks_dir: Path | None, only: str | None
) -> tuple[str, list[str]]:
    """`stack` rendered with REV's code and stack file ("" if REV has no such stack), and
    notes for the user."""
    repo, project_rel = _repository()
    commit = _commit(repo, rev)
    stacks_rel = _stacks_relative(stacks_dir)
    with tempfile.TemporaryDirectory(prefix="tftrain-render-") as tmp:
        tree = Path(tmp)
        # Pulumi.yaml too: its `main` is where REV's program (and its providers) run.
        parts = ("Pulumi.yaml", "infra", stacks_rel.as_posix())
        paths = [(project_rel / part).as_posix() for part in parts]
        _extract(repo, commit, paths, tree)
        project = tree / project_rel
        if not stack_file(stack, project / stacks_rel).is_file():
            return "", [f"note: {rev} has no stack {stack}; it renders as empty"]
        # The files a stack uploads into the bucket it creates are part of what it deploys.
        uploaded = _uploaded_dir(stack_file(stack, project / stacks_rel))
        if uploaded:
            _extract(repo, commit, [(project_rel / uploaded).as_posix()], tree)
        notes = []
        if _lend_renderer(project):
            notes.append(f"note: {rev} predates infra/render; rendered with the working tree's")
        command = [sys.executable, "-m", "infra.render", stack, "--stacks-dir", str(stacks_rel)]
        if only:
            command += ["--only", only]
        # REV's tree is all there is on the path: the caller's PYTHONPATH might hold the
        # working tree, whose `infra` would shadow REV's.
        env = {**os.environ, "PYTHONPATH": str(project)}
        env.pop("PYTHONSAFEPATH", None)
        done = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, encoding="utf-8"
        )
    if done.returncode != 0:
        raise RevisionRenderError(f"rendering {stack} at {rev} failed:\n{done.stderr.strip()}")
    return done.stdout, notes


@dataclass(frozen=True)
class StackDiff:
    stack: str
    summary: str  # the consequences, one fact per line
    diff: list[str]  # unified diff lines; empty when both sides render the same
    notes: list[str]  # for the user, not part of the output

    @property
    def changed(self) -> bool:
        return bool(self.diff)

    def text(self, rev: str) -> str:
        """What `--diff REV` prints: the summary, a blank line, the diff."""
        if not self.diff:
            return (
                f"{self.summary}\n"
                f"No changes: {self.stack} renders the same at {rev} and in the working tree.\n"
            )
        return f"{self.summary}\n" + "\n".join(self.diff) + "\n"


def compare_stack(rev: str, stack: str, stacks_dir: Path | None, only: str | None) -> StackDiff:
    """`stack` at REV against the working tree: summary, diff and notes."""
    old, notes = render_at_revision(rev, stack, stacks_dir, only)
    if old and not stack_file(stack, stacks_dir).is_file():
        new = ""  # the working tree deleted the stack
        notes.append(f"note: the working tree has no stack {stack}; it renders as empty")
    else:
        new = render_stack(stack, stacks_dir, only)  # ConfigError if it is nowhere, or bad
    old_name, new_name = f"{stack}@{rev}", f"{stack}@{WORKING_TREE}"
    old_file = stack_file_at_revision(rev, stack, stacks_dir)
    path = stack_file(stack, stacks_dir)
    # The file's values even when --only leaves nothing rendered: the config still changed.
    new_file = read_stack(path) if path.is_file() else None
    folded_old, folded = fold_run_id(old, new)
    return StackDiff(
        stack=stack,
        summary=review_summary(old, new, (old_file, new_file), stack, (rev, WORKING_TREE)),
        diff=folded + unified_diff(folded_old, new, old_name, new_name),
        notes=notes,
    )


def diff_stack(
    rev: str, stack: str, stacks_dir: Path | None, only: str | None
) -> tuple[str, list[str]]:
    """The summary and unified diff from REV to the working tree (or a line saying there is
    no diff), and notes for the user."""
    compared = compare_stack(rev, stack, stacks_dir, only)
    return compared.text(rev), compared.notes
