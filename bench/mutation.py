"""Mutation score of the riskiest modules: how many one-token changes the tests catch.

mutmut 3 (configured in pyproject.toml, `[tool.mutmut]`) copies the code to `mutants/`,
makes every mutant of the modules listed there, runs the listed tests once to learn which
tests call each function, and then runs each mutant against only those tests, fastest
first, stopping at the first failure. This script runs it niced (the machine is shared) and
writes the score per module to docs/mutation-score.md, with the surviving mutants named.

    .venv/bin/python -m bench.mutation                        # every listed module
    .venv/bin/python -m bench.mutation 'infra.replica_plan.run_data*'  # one module's mutants again
    .venv/bin/python -m bench.mutation --score-only           # rewrite the score file
    .venv/bin/mutmut show <mutant>                            # what a survivor changed

A mutant counts as caught when a test fails or it times out (a loop that no longer ends).
EQUIVALENT lists mutants no test can catch because they change nothing observable, each
with the reason; they are left out of the score. Takes tens of minutes on 2 shared cores:
not part of ./scripts/test.sh.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCORE_FILE = ROOT / "docs" / "mutation-score.md"
MUTMUT = Path(sys.executable).with_name("mutmut")
CAUGHT = {"killed", "timeout"}
NOT_RUN = "not checked"  # a run stopped before it, or a mutant newer than the last run
TARGET = 0.90

# Mutant → why no test can tell it from the code (mutant names: `mutmut results --all true`).
EQUIVALENT: dict[str, str] = {
    **{
        f"infra.config.rules.x__credential_rules__mutmut_{n}": (
            "another cut of data.credentialsSecret before its namespace is read: the config "
            "accepts only <namespace>/<name> (one /), which every cut splits alike"
        )
        for n in (93, 94, 96)
    },
    **{
        f"infra.config.rules.x__where__mutmut_{n}": (
            "the key named for an ECI pod: `_why` reads it only for nodes, never for a pod"
        )
        for n in (6, 7, 8)
    },
    **{
        f"infra.config.rules.x__fit_rules__mutmut_{n}": (
            "`or 1` for `or 0` after a memory size: only types whose memory is known are "
            "compared, so the fallback is never taken"
        )
        for n in (55, 59)
    },
    **{
        f"infra.config.rules.x__kubernetes_version_rules__mutmut_{n}": (
            "how the version is cut before its major and minor are read: every version the "
            "config accepts is <major>.<minor>.<patch>-aliyun.<n>, so the first two numbers "
            "are the same however it is cut"
        )
        for n in (6, 7, 10)
    },
    "trainer.checkpoint_store.xǁCheckpointStoreǁ_candidate__mutmut_6": (
        "the step of the empty candidate for a step without files: publish reads only its "
        "(empty) paths and checks completeness with its own step"
    ),
    "trainer.checkpoint_store.xǁCheckpointStoreǁ_set_aside__mutmut_17": (
        "one more numbered name for a set-aside directory: differs only after 999 clashes "
        "within one second"
    ),
    "infra.replica_plan.plan.x_expand__mutmut_37": (
        "looks for `)` from i + 3 instead of i + 2: differs only for `$()`, an empty name, "
        "which no env holds (Kubernetes refuses an empty env var name), so both keep it as "
        "written"
    ),
}


def run(patterns: Sequence[str], jobs: int) -> None:
    log = ROOT / "mutants" / "run.log"
    log.parent.mkdir(exist_ok=True)
    command = ["nice", "-n", "10", str(MUTMUT), "run", "--max-children", str(jobs), *patterns]
    with log.open("w") as out:
        # mutmut exits non-zero when mutants survive; the score says how many.
        subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, check=False)


def results() -> dict[str, str]:
    """Every mutant's status, by name."""
    done = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.findall(r"^\s+(\S+): (.+)$", done.stdout, flags=re.MULTILINE)
    return {name: status.strip() for name, status in found}


def module_of(mutant: str) -> str:
    """`infra.replica_plan.run_data.x_under__mutmut_3` → infra.replica_plan.run_data
    (methods: `xǁClassǁmethod`)."""
    return mutant.split(".x", 1)[0]


def listed_modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    return [path.removesuffix(".py").replace("/", ".") for path in config["only_mutate"]]


def score_table(statuses: dict[str, str], modules: Iterable[str]) -> list[str]:
    lines = [
        "| module | caught / counted | score | not caught | equivalent (left out) | not run |",
        "|---|---|---|---|---|---|",
    ]
    for module in modules:
        mine = {n: s for n, s in statuses.items() if module_of(n) == module}
        equivalent = sum(1 for n in mine if n in EQUIVALENT)
        counted = [s for n, s in mine.items() if n not in EQUIVALENT and s != NOT_RUN]
        tally = Counter(counted)
        caught = sum(tally[s] for s in CAUGHT)
        total = len(counted)
        share = f"{caught / total:.1%}" if total else "-"
        not_run = sum(1 for n, s in mine.items() if n not in EQUIVALENT and s == NOT_RUN)
        lines.append(
            f"| {module} | {caught} / {total} | {share} | {total - caught} | {equivalent} "
            f"| {not_run} |"
        )
    return lines


def write_score(statuses: dict[str, str], command: str) -> None:
    modules = listed_modules()
    survivors = sorted(n for n, s in statuses.items() if s not in CAUGHT and n not in EQUIVALENT)
    text = [
        "# Mutation score",
        "",
        "What the tests catch of one-token changes (mutmut 3, `[tool.mutmut]` in",
        "pyproject.toml; caught = a test failed or the mutant timed out). Written by",
        "`bench/mutation.py`; aim: at least 90 % per module.",
        "",
        f"Command: `{command}`",
        "",
        *score_table(statuses, modules),
        "",
        "## Left out as equivalent",
        "",
        *(f"- `{name}`: {why}" for name, why in sorted(EQUIVALENT.items())),
        *([] if EQUIVALENT else ["None."]),
        "",
        "## Not caught",
        "",
        *(f"- `{name}` ({statuses[name]})" for name in survivors),
        *([] if survivors else ["None."]),
        "",
    ]
    SCORE_FILE.write_text("\n".join(text))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("patterns", nargs="*", help="mutant names or globs (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--score-only", action="store_true", help="rewrite the score file")
    args = parser.parse_args(argv)
    if not args.score_only:
        run(args.patterns, args.jobs)
    statuses = results()
    write_score(statuses, ".venv/bin/python -m bench.mutation")
    print(SCORE_FILE.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
