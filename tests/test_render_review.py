"""The pull request's review comment (infra/render/review.py) around the per-stack diffs it is
given: its parts in order, what each stack's preview section says, the cuts that keep it under
GitHub's 65,536-character limit for a comment, and the `tftrain review` verbs' output."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

from infra.config import ConfigError, stack_file
from infra.render import review
from infra.render.diff import DiffError, StackDiff

GITHUB_LIMIT = 65_536
CUT = "... cut here to fit the comment; run the command in the job log for all"
EXISTING = (
    "`pulumi preview`: not run, cluster.kind is existing: CI holds no kubeconfig for that "
    "cluster, so `pulumi preview` cannot reach it; review the render above."
)
NO_PREVIEW = (
    "`pulumi preview`: no preview ran: the repository has no Pulumi and Alibaba Cloud "
    "credentials as secrets, or this pull request comes from a fork, which gets none."
)


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    """my-dev (dev's existing cluster: never previewed) and my-gpu (ack-gpu: previewable),
    under names the project's stacks/ does not have."""
    directory = tmp_path / "stacks"
    directory.mkdir()
    for name, mine in (("dev", "my-dev"), ("ack-gpu", "my-gpu")):
        shutil.copy(stack_file(name), directory / f"Pulumi.{mine}.yaml")
    return directory


class _Compare:
    """compare_stack as the comment sees it: a StackDiff (or an error) per stack."""

    def __init__(self, answers: dict[str, StackDiff | Exception]) -> None:
        self.answers, self.calls = answers, []

    def __call__(self, rev: str, stack: str, stacks_dir: Path | None, only: str | None):
        self.calls.append((rev, stack, stacks_dir, only))
        answer = self.answers[stack]
        if isinstance(answer, Exception):
            raise answer
        return answer


def _diff(stack: str, summary: str = "Consequences: x", diff: list[str] | None = None):
    return StackDiff(stack=stack, summary=summary, diff=diff or [], notes=[])


def test_the_comment_in_order(
    stacks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (stacks / "Pulumi.bad.yaml").write_text("config: {}\n")
    shutil.copy(stack_file("ack-cpu"), stacks / "Pulumi.my-cpu.yaml")
    refused = ConfigError(["tftrain:image: required"])
    compare = _Compare(
        {
            "my-gpu": _diff("my-gpu", "Consequences for my-gpu", ["--- a", "+++ b", "-x", "+y"]),
            "bad": refused,
            "my-dev": _diff("my-dev"),
            "my-cpu": _diff("my-cpu"),
        }
    )
    monkeypatch.setattr(review, "compare_stack", compare)
    previews = tmp_path / "previews"
    previews.mkdir()
    (previews / "my-gpu.txt").write_text("  ~ vpc update\n")
    text = review.comment("main", stacks, previews)
    names = ("bad", "my-cpu", "my-dev", "my-gpu")
    assert compare.calls == [("main", s, stacks, None) for s in names]
    assert (
        text
        == "\n\n".join(
            [
                "<!-- tftrain-stack-review -->",
                "## Stack review against `main`",
                "Rendered offline by `tftrain render <stack> --diff main`: the config change, its "
                "consequences and cost first, then the objects' diff.",
                f"### bad: the render failed\n\n```\n{refused}\n```",
                "### my-gpu",
                "```\nConsequences for my-gpu\n```",
                "<details><summary>Diff</summary>\n\n"
                "```diff\n--- a\n+++ b\n-x\n+y\n```\n</details>",
                "<details><summary><code>pulumi preview --diff</code></summary>\n\n"
                "```diff\n  ~ vpc update\n```\n</details>",
                "Unchanged: my-cpu, my-dev (render identical to `main`).",
            ]
        )
        + "\n"
    )


def test_each_changed_stack_says_why_it_has_no_preview(
    stacks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (stacks / "Pulumi.bad.yaml").write_text("config: {}\n")
    compare = _Compare({s: _diff(s, diff=["-a", "+b"]) for s in ("my-gpu", "bad", "my-dev")})
    monkeypatch.setattr(review, "compare_stack", compare)
    parts = review.comment("main", stacks, None).split("\n\n")
    assert "Unchanged" not in parts[-1]
    previews = [part for part in parts if part.startswith("`pulumi preview`")]
    # In name order: bad, my-dev, my-gpu (the comment's last line).
    assert previews[0].startswith("`pulumi preview`: not run, the stack config is invalid: ")
    assert previews[1] == EXISTING
    assert previews[2] == NO_PREVIEW + "\n"  # previewable, but no output was given
    # A previews directory without the stack's file: the same reason.
    assert NO_PREVIEW in review.comment("main", stacks, stacks)


@pytest.mark.parametrize("with_previews", [False, True], ids=["no-previews", "long-previews"])
def test_long_summaries_diffs_and_previews_are_cut_to_fit_one_comment(
    with_previews: bool, stacks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(stack_file("ask-eci"), stacks / "Pulumi.my-eci.yaml")
    long_diff = [f"+line {i:06d} " + "x" * 60 for i in range(3_000)]  # ~220 kB each
    summary = "\n".join(f"fact {i:05d}" for i in range(1_000))  # 11 kB
    changed = ("my-gpu", "my-eci", "my-dev")
    compare = _Compare({s: _diff(s, summary, long_diff) for s in changed})
    monkeypatch.setattr(review, "compare_stack", compare)
    previews = tmp_path / "previews"
    previews.mkdir()
    preview = "\n".join(f"  ~ resource {i:05d} update" for i in range(2_000))  # 52 kB
    for stack in changed:
        (previews / f"{stack}.txt").write_text(preview)
    text = review.comment("main", stacks, previews if with_previews else None)
    assert len(text) <= GITHUB_LIMIT
    # Three summaries and three diffs cut, and two previews (my-dev is never previewed).
    assert text.count(CUT) == 6 + 2 * with_previews
    # Cut at a line's end, never inside one.
    for block in text.split("```")[1::2]:
        last_kept = block.split(f"\n{CUT}")[0].splitlines()[-1]
        assert last_kept in summary.splitlines() + long_diff + preview.splitlines()


def test_a_summary_is_cut_only_when_its_block_would_pass_the_limit(
    stacks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fits = "y" * (review.SUMMARY_LIMIT - len("```\n\n```"))
    compare = _Compare({"my-gpu": _diff("my-gpu", fits, ["-a"]), "my-dev": _diff("my-dev")})
    monkeypatch.setattr(review, "compare_stack", compare)
    assert f"\n\n```\n{fits}\n```\n\n" in review.comment("main", stacks, None)
    lines = "\n".join(f"fact {i:04d}" for i in range(600))  # 6,599 characters
    compare.answers["my-gpu"] = _diff("my-gpu", lines, ["-a"])
    block = review.comment("main", stacks, None).split("\n\n")[4]
    assert len(block) <= review.SUMMARY_LIMIT
    # Whole lines of 9 characters and a newline, as many as fit beside the note and fences.
    kept = (review.SUMMARY_LIMIT - len("```\n\n```") - len(CUT) - 1) // 10
    assert block == "```\n" + "\n".join(lines.splitlines()[:kept]) + f"\n{CUT}\n```"


def test_previewable_lists_the_stacks_ci_can_preview(
    stacks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (stacks / "Pulumi.bad.yaml").write_text("config: {}\n")
    assert review.main(["--stacks-dir", str(stacks), "previewable"]) == 0
    assert capsys.readouterr().out == "my-gpu\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["--base", "v1", "--previews", "p"],
        ["comment", "--base", "v1", "--previews", "p"],
        ["--base", "v1", "--previews", "p", "comment"],
    ],
)
def test_comment_takes_its_options_before_or_after_the_verb(
    argv: list[str],
    stacks: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls = []
    monkeypatch.setattr(review, "comment", lambda *args: calls.append(args) or "the comment\n")
    assert review.main(["--stacks-dir", str(stacks), *argv]) == 0
    assert calls == [("v1", stacks, Path("p"))]
    assert capsys.readouterr().out == "the comment\n"


def test_without_a_base_it_reviews_against_where_the_branch_left_the_default_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []
    monkeypatch.setattr(review, "default_base", lambda: "abc123")
    monkeypatch.setattr(review, "comment", lambda *args: calls.append(args) or "c\n")
    assert review.main([]) == 0
    assert calls == [("abc123", None, None)]

    def nowhere() -> str:
        raise DiffError("no default branch to review against")

    monkeypatch.setattr(review, "default_base", nowhere)
    assert review.main(["comment"]) == 2
    assert capsys.readouterr().err.endswith("error: no default branch to review against\n")


def test_a_cut_keeps_every_whole_line_that_fits(
    stacks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fences = len("```\n\n```")
    keep = review.SUMMARY_LIMIT - fences - len(CUT) - 1  # the lines kept, a newline, the note
    summary = "x\n" + "a" * (keep - 2) + "\n" + "m" * 200  # two lines of exactly `keep`
    compare = _Compare({"my-gpu": _diff("my-gpu", summary, ["-a"]), "my-dev": _diff("my-dev")})
    monkeypatch.setattr(review, "compare_stack", compare)
    block = review.comment("main", stacks, None).split("\n\n")[4]
    assert block == "```\nx\n" + "a" * (keep - 2) + f"\n{CUT}\n```"
    assert len(block) == review.SUMMARY_LIMIT


def test_one_changed_stack_gets_the_whole_rest_of_the_comment(
    stacks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_diff = [f"+{i:04d}" for i in range(20_000)]  # 6 characters a line
    compare = _Compare({"my-gpu": _diff("my-gpu", "s", long_diff), "my-dev": _diff("my-dev")})
    monkeypatch.setattr(review, "compare_stack", compare)
    text = review.comment("main", stacks, None)
    # Cut at a line's end: at most one line short of the comment's own limit.
    assert review.COMMENT_LIMIT - 6 <= len(text) <= review.COMMENT_LIMIT


def test_help_says_what_each_verb_and_option_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        review.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert text.startswith("usage: tftrain review [-h] [--stacks-dir DIR] [--base REV]")
    for words in (
        "--stacks-dir DIR default: stacks/",
        "--base REV the pull request's base (default: where this branch left the default branch)",
        "--previews DIR `pulumi preview` output per stack",
        "previewable stacks CI can run `pulumi preview` on",
        "comment the review comment, as Markdown (the default)",
        "tftrain review comment --base main the comment for this branch against main",
        "2 bad arguments",
    ):
        assert words in text
    with pytest.raises(SystemExit):
        review.main(["comment", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--base REV the pull request's base" in text
    assert "--previews DIR `pulumi preview` output per stack" in text


def test_a_preview_or_a_failure_is_cut_only_past_its_own_limit(
    stacks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    previews = tmp_path / "previews"
    previews.mkdir()
    compare = _Compare({"my-gpu": _diff("my-gpu", "s", ["-a"]), "my-dev": _diff("my-dev")})
    monkeypatch.setattr(review, "compare_stack", compare)
    fits = 12_000 - len("```diff\n\n```")  # a preview block is at most 12,000 characters
    for length, cut in ((fits, False), (fits + 1, True)):
        (previews / "my-gpu.txt").write_text("x\n" + "y" * (length - 2))
        text = review.comment("main", stacks, previews)
        preview = text.split("<code>pulumi preview --diff</code></summary>\n\n")[1]
        assert (CUT in preview) is cut, length
    fits = 4_000 - len("```\n\n```")  # a failure's message: at most 4,000
    for length, cut in ((fits, False), (fits + 1, True)):
        compare.answers["my-dev"] = DiffError("x\n" + "y" * (length - 2))
        failure = review.comment("main", stacks, None).split("\n\n")[4]
        assert (CUT in failure) is cut, length


def test_the_comment_is_utf_8_whatever_the_terminal_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(review, "comment", lambda *args: "Run: r1 → r2\n")
    raw = io.BytesIO()
    terminal = io.TextIOWrapper(raw, encoding="latin-1")
    with contextlib.redirect_stdout(terminal):
        assert review.main(["--base", "main"]) == 0
        terminal.flush()
    assert raw.getvalue() == "Run: r1 → r2\n".encode()


def test_help_keeps_its_examples_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        review.main(["--help"])
    out = capsys.readouterr().out
    assert "The pull request's review comment: every changed stack's consequences" in out
    assert "\nexit status:\n  0  printed\n  2  bad arguments\n" in out
