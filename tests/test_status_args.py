"""`tftrain status`'s arguments (`infra.status.parse_args`): what each option takes, its
default, and the help a user reads for it, as docs/watch.md describes the command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infra.status import main, parse_args

# Each option as --help shows it, with what it says (docs/watch.md: where runs are read, the
# cluster asked only when there are no local runs, --report's mirror under runs/STACK/cluster/).
HELP = [
    "STACK stack name (stacks/Pulumi.STACK.yaml)",
    "-h, --help show this help message and exit",
    "--stacks-dir DIR where Pulumi.STACK.yaml lives",
    "--local only the runs on this machine",
    "--cluster only the run in the cluster (default: asked only when there are no local runs "
    "and the stack has a cluster: --kubeconfig or its stack output `kubeconfig`)",
    "--kubeconfig FILE the cluster's kubeconfig (default: the stack output `kubeconfig`, "
    "else kubectl's)",
    "--runs-dir DIR a run's output dir, or a directory of JOB/RUN_ID runs (default: runs/STACK)",
    "--last N how many local runs (default 3)",
    "--json print JSON for scripts",
    "--report cluster: fetch the run's records, logs and event files (through TensorBoard's "
    "pod) into runs/STACK/cluster/ and write its report there",
]
USAGE = (
    "usage: tftrain status [-h] [--stacks-dir DIR] [--local | --cluster] [--kubeconfig FILE] "
    "[--runs-dir DIR] [--last N] [--json] [--report] STACK"
)


def _help(capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as ended:
        main(["--help"])
    assert ended.value.code == 0
    return re.sub(r"\s+", " ", capsys.readouterr().out)


def test_the_help_lists_every_option_with_what_it_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _help(capsys)
    assert text.startswith(USAGE + " Show a stack's runs: on this machine (runs/STACK/) or in "
                           "its cluster. ")  # fmt: skip
    for entry in HELP:
        assert f" {entry} " in text, entry
    example = "tftrain status ack-gpu --report fetch a cluster run's logs and write its report here"
    assert example in text
    assert "2 bad arguments or stack config" in text


def test_the_defaults() -> None:
    args = parse_args(["dev"])
    assert (args.stack, args.stacks_dir, args.local, args.cluster) == ("dev", None, False, False)
    assert (args.kubeconfig, args.runs_dir, args.last) == (None, None, 3)
    assert (args.json, args.report) == (False, False)


def test_the_options_take_paths_and_a_count() -> None:
    args = parse_args(
        ["dev", "--stacks-dir", "s", "--kubeconfig", "k", "--runs-dir", "r", "--last", "7",
         "--json", "--report", "--cluster"]
    )  # fmt: skip
    assert (args.stacks_dir, args.kubeconfig, args.runs_dir) == (Path("s"), Path("k"), Path("r"))
    assert (args.last, args.json, args.report, args.cluster) == (7, True, True, True)
    assert parse_args(["dev", "--local"]).local is True


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["dev", "--local", "--cluster"], "argument --cluster: not allowed with argument --local"),
        (["dev", "--last", "x"], "argument --last: invalid int value: 'x'"),
        ([], "the following arguments are required: STACK"),
    ],
)
def test_bad_arguments_exit_2_naming_them(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: tftrain status ")
    assert err.rstrip().endswith(f"tftrain status: error: {said}")
