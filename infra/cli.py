"""`tftrain`: the one command a user types. Each verb is a module's `main(argv) -> int`.

The verbs are imported only when called, so `tftrain --help` answers at once (TensorFlow and
Pulumi load only for the verbs that need them). The `python -m infra.<module>` forms stay for
scripts and CI.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Verb:
    name: str
    module: str
    summary: str


VERBS = (
    Verb(
        "run", "infra.local.cli", "train a stack on this machine, no cloud (e.g. `tftrain run dev`)"
    ),
    Verb(
        "render",
        "infra.render.__main__",
        "what `pulumi up` would create, offline; --diff REV to review",
    ),
    Verb(
        "status",
        "infra.status",
        "what a stack's runs are doing or did, here or in the cluster, causes named",
    ),
    Verb(
        "logs",
        "infra.status.logs",
        "a replica's log (the chief's, or the failed one's); -f follows it",
    ),
    Verb(
        "list",
        "infra.status.runs_list",
        "every run on this machine, newest first; a sweep's trials beneath it",
    ),
    Verb(
        "compare",
        "infra.sweep.cli",
        "a sweep's trials in one table, best first (CSV, Markdown, PNG)",
    ),
    Verb(
        "review",
        "infra.render.review",
        "the pull request comment: every changed stack's config change, consequences, cost",
    ),
    Verb(
        "prices",
        "infra.pricing.refresh",
        "`prices refresh`: the price table from your own account (ECS and ECI price APIs)",
    ),
    Verb(
        "completion",
        "infra.completion",
        'the shell completion script (bash or zsh): eval "$(tftrain completion bash)"',
    ),
)

_USAGE = """\
usage: tftrain VERB [ARGS...]      (tftrain VERB --help for a verb's options)
       tftrain --version

tftrain trains TensorFlow ps/worker/chief topologies from one stack file
(stacks/Pulumi.STACK.yaml): on this machine, or on Alibaba Cloud with `pulumi up`.

verbs:
{verbs}

a first session:
  tftrain run dev                      train the dev stack here (real MNIST, a minute or two)
  tftrain run dev --set hyperparams.learningRate=0.01
  tftrain status dev                   how the run went: outcome, metric, logs, report
  tftrain logs dev -f                  follow the chief's log while it trains
  tftrain list                         every run on this machine, newest first
  tftrain run dev-sweep                two learning rates, then `tftrain compare dev-sweep`
  tftrain render ack-gpu --diff main   review what a stack edit changes before `pulumi up`
  pulumi up -s ack-gpu                 deploy (docs/deploy.md "Deploy to Alibaba Cloud")
  tftrain status ack-gpu               the run in the cluster: phases, and why not running
  pulumi config set -s ack-gpu --path tftrain:job.suspend true && pulumi up -s ack-gpu
                                       stop the cluster run and keep it (false + up resumes)

exit status: the verb's (each verb's --help lists its own); 2 for an unknown verb;
             141 when the reader of the output left first (`tftrain list | head`)
"""


def usage() -> str:
    width = max(len(verb.name) for verb in VERBS)
    lines = "\n".join(f"  {verb.name:<{width}}  {verb.summary}" for verb in VERBS)
    return _USAGE.format(verbs=lines)


def _entry(verb: Verb) -> Callable[[list[str]], int]:
    return importlib.import_module(verb.module).main


def version() -> str:
    """The installed distribution's version (pyproject.toml's, read once installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("tftrain")
    except PackageNotFoundError:
        return "unknown (not installed: scripts/bootstrap.sh installs it)"


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in {"-h", "--help", "help"}:
        print(usage(), end="")
        return 0
    if args[0] in {"-V", "--version", "version"}:
        print(f"tftrain {version()}")
        return 0
    by_name = {verb.name: verb for verb in VERBS}
    verb = by_name.get(args[0])
    if verb is None:
        known = ", ".join(by_name)
        print(f"tftrain: unknown verb {args[0]!r}; the verbs are: {known}", file=sys.stderr)
        return 2
    return _entry(verb)(args[1:])


def _reader_gone() -> int:
    """stdout's reader left (`tftrain list | head -3`): end quietly, with the status a tool
    killed by SIGPIPE gives the shell, as `cat` and `git` do, not with a traceback."""
    # Python ignores SIGPIPE, so the interpreter's flush at exit would fail again and print.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + signal.SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except BrokenPipeError:
        return _reader_gone()


if __name__ == "__main__":
    sys.exit(main())
