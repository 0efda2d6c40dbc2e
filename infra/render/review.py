"""The pull request's review comment: every changed stack's consequences and diff, and what
`pulumi preview` said where CI can run it (or why it cannot).

`tftrain review` (no arguments) prints the comment for the current branch against where it
left the default branch; `tftrain review previewable` lists the stacks CI may preview;
`tftrain review comment [--base REV] [--previews DIR]` prints the comment as Markdown. The
workflow (.github/workflows/stack-review.yml) posts it as one comment per pull request, found
again by `MARKER` and edited in place on every push.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from infra.config import ConfigError, load_stack, stack_file
from infra.render.diff import DiffError, RevisionRenderError, StackDiff, compare_stack, default_base

MARKER = "<!-- tftrain-stack-review -->"
# GitHub refuses comments over 65,536 characters: the diffs share what the rest leaves.
COMMENT_LIMIT = 65_000
SUMMARY_LIMIT = 6_000  # a stack's config change, consequences and cost
EXISTING_CLUSTER_REASON = (
    "cluster.kind is existing: CI holds no kubeconfig for that cluster, so `pulumi preview` "
    "cannot reach it; review the render above"
)
NO_CREDENTIALS_REASON = (
    "no preview ran: the repository has no Pulumi and Alibaba Cloud credentials as secrets, "
    "or this pull request comes from a fork, which gets none"
)


def stack_names(stacks_dir: Path | None) -> list[str]:
    directory = stack_file("any", stacks_dir).parent
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in directory.glob("Pulumi.*.yaml"))


def preview_blocker(stack: str, stacks_dir: Path | None) -> str | None:
    """Why CI cannot preview `stack` even with credentials, or None if it can."""
    try:
        config = load_stack(stack, stacks_dir)
    except ConfigError as error:
        return f"the stack config is invalid: {error}"
    if config.cluster.kind == "existing":
        return EXISTING_CLUSTER_REASON
    return None


CUT_NOTE = "... cut here to fit the comment; run the command in the job log for all"
_DIFF_OPEN, _DIFF_CLOSE = "<details><summary>Diff</summary>\n\n", "\n</details>"


def _fenced(text: str, language: str, limit: int) -> str:
    """`text` in a code fence of at most `limit` characters, fences and cut note included,
    cut at a line's end."""
    opening, closing = f"```{language}\n", "\n```"
    body = text.rstrip()
    room = limit - len(opening) - len(closing)
    if len(body) > room:
        cut = body[: max(room - len(CUT_NOTE), 0)].rsplit("\n", 1)[0]
        body = f"{cut}\n{CUT_NOTE}"
    return f"{opening}{body}{closing}"


def _preview_section(stack: str, stacks_dir: Path | None, previews: Path | None) -> str:
    blocker = preview_blocker(stack, stacks_dir)
    if blocker:
        return f"`pulumi preview`: not run, {blocker}."
    output = previews / f"{stack}.txt" if previews else None
    if output is None or not output.is_file():
        return f"`pulumi preview`: {NO_CREDENTIALS_REASON}."
    body = _fenced(output.read_text(encoding="utf-8"), "diff", 12_000)
    return f"<details><summary><code>pulumi preview --diff</code></summary>\n\n{body}\n</details>"


def comment(base: str, stacks_dir: Path | None, previews: Path | None) -> str:
    """The whole comment for a pull request whose base is `base`."""
    results: list[StackDiff] = []
    failures: list[str] = []
    for stack in stack_names(stacks_dir):
        try:
            results.append(compare_stack(base, stack, stacks_dir, None))
        except (ConfigError, DiffError, RevisionRenderError) as error:
            failures.append(f"### {stack}: the render failed\n\n{_fenced(str(error), '', 4_000)}")
    changed = [result for result in results if result.changed]
    unchanged = [result.stack for result in results if not result.changed]
    parts = [
        MARKER,
        f"## Stack review against `{base}`",
        f"Rendered offline by `tftrain render <stack> --diff {base}`: the config change, its "
        "consequences and cost first, then the objects' diff.",
        *failures,
    ]
    tail = (
        [f"Unchanged: {', '.join(unchanged)} (render identical to `{base}`)."] if unchanged else []
    )
    sections = [
        (
            f"### {result.stack}",
            _fenced(result.summary, "", SUMMARY_LIMIT),
            _preview_section(result.stack, stacks_dir, previews),
        )
        for result in changed
    ]
    # The diffs share what the rest leaves: each comes with its wrapper and two separators.
    rest = len("\n\n".join([*parts, *(part for section in sections for part in section), *tail]))
    wrapper = len(_DIFF_OPEN) + len(_DIFF_CLOSE) + len("\n\n")
    budget = (COMMENT_LIMIT - rest - 1) // max(1, len(changed)) - wrapper
    for result, (heading, summary, preview) in zip(changed, sections, strict=True):
        diff = _fenced("\n".join(result.diff), "diff", max(budget, 1_000))
        parts += [heading, summary, _DIFF_OPEN + diff + _DIFF_CLOSE, preview]
    return "\n\n".join([*parts, *tail]) + "\n"


def _comment_options(parser: argparse.ArgumentParser, default: object) -> None:
    """`--base` and `--previews`, for `tftrain review` itself and for its `comment`."""
    parser.add_argument(
        "--base",
        metavar="REV",
        default=default,
        help="the pull request's base (default: where this branch left the default branch)",
    )
    parser.add_argument(
        "--previews",
        type=Path,
        metavar="DIR",
        default=default,
        help="`pulumi preview` output per stack",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tftrain review",
        description=__doc__,
        epilog="""\
examples:
  tftrain review comment --base main   the comment for this branch against main
  tftrain review previewable           the stacks CI can run `pulumi preview` on

exit status:
  0  printed
  2  bad arguments
""",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--stacks-dir", type=Path, metavar="DIR", help="default: stacks/")
    _comment_options(parser, None)
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("previewable", help="stacks CI can run `pulumi preview` on")
    make = commands.add_parser("comment", help="the review comment, as Markdown (the default)")
    # SUPPRESS: given after `comment` or before it, the option keeps its value.
    _comment_options(make, argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(encoding="utf-8")
    if args.command == "previewable":
        for stack in stack_names(args.stacks_dir):
            if preview_blocker(stack, args.stacks_dir) is None:
                print(stack)
        return 0
    try:
        base = args.base or default_base()
    except DiffError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(comment(base, args.stacks_dir, args.previews))
    return 0


if __name__ == "__main__":
    sys.exit(main())
