"""`python -m infra.render <stack> [--diff REV] [--stacks-dir DIR] [--only kubernetes|cloud]`.

Exit status: 0 rendered (also for a diff, changes or not); 2 for a bad stack config, an unknown
revision or no git repository; 1 if REV's side of a diff failed to render.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from infra.config import ConfigError, load_stack_file, stack_file
from infra.render import SECTIONS, render_stack
from infra.render.diff import DiffError, RevisionRenderError, diff_stack
from infra.topology import hang_warnings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tftrain render",
        description=(
            "Render what `pulumi up` on a stack would create (cloud resources and Kubernetes "
            "objects) offline, for review; or diff it against a git revision."
        ),
        epilog="""\
examples:
  tftrain render dev                   every object `pulumi up -s dev` would create
  tftrain render ack-gpu --diff main   what the working tree changes against main: the review
  tftrain render dev --only kubernetes the Kubernetes objects alone

exit status:
  0  rendered
  1  the revision REV could not be rendered
  2  bad arguments or stack config
""",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("stack", metavar="STACK", help="stack name: stacks/Pulumi.STACK.yaml")
    parser.add_argument(
        "--diff",
        metavar="REV",
        help="print a unified diff from the stack at git revision REV to the working tree",
    )
    parser.add_argument(
        "--stacks-dir", type=Path, metavar="DIR", help="where the stack files are (stacks/)"
    )
    parser.add_argument("--only", choices=SECTIONS, help="render just one section")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(encoding="utf-8")  # the same bytes whatever the locale
    try:
        if args.diff is None:
            text = render_stack(args.stack, args.stacks_dir, args.only)
            config = load_stack_file(stack_file(args.stack, args.stacks_dir))
            for warning in hang_warnings(config) if config.has_run else ():
                print(warning, file=sys.stderr)
        else:
            text, notes = diff_stack(args.diff, args.stack, args.stacks_dir, args.only)
            for note in notes:
                print(note, file=sys.stderr)
    except (ConfigError, DiffError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except RevisionRenderError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
