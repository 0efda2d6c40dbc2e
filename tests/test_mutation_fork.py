"""How the tests behave under mutmut: each mutant's tests run in a fork of the process that
ran them once, where a Pulumi mocks program must still run (tests/conftest.py gives the child
a thread pool); and values a test file shares are not shared (tests/shared_values.py)."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
from pathlib import Path

import pulumi
import pytest

REPO = Path(__file__).resolve().parent.parent


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list | None]:
        return {}, None


def _program_runs() -> None:
    pulumi.runtime.set_mocks(_Mocks(), preview=False)

    @pulumi.runtime.test
    def check() -> pulumi.Output:
        resource = pulumi.CustomResource("test:index:Thing", "thing", {"size": 3})
        return resource.id.apply(lambda given: None if given == "thing-id" else 1 / 0)

    check()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is what mutmut does")
def test_a_mocks_program_runs_in_a_fork_of_a_process_that_ran_one() -> None:
    _program_runs()  # the parent's pool now has threads, idle
    child = os.fork()
    if child == 0:
        signal.alarm(10)  # a child waiting forever dies of SIGALRM instead
        try:
            _program_runs()
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize(
    ("environment", "calls", "scope"),
    [({}, 1, "module"), ({"MUTANT_UNDER_TEST": ""}, 2, "function")],
)
def test_shared_values_are_shared_except_under_mutmut(
    environment: dict[str, str], calls: int, scope: str
) -> None:
    """mutmut reruns only the tests it saw run the code: under it nothing is shared."""
    probe = (
        "from tests.shared_values import SHARED_SCOPE, shared\n"
        "seen = []\n"
        "f = shared(lambda x: seen.append(x))\n"
        "f(1); f(1)\n"
        "print(len(seen), SHARED_SCOPE)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env={**env, **environment, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == [str(calls), scope], done.stderr


# Fixtures shared by a file's tests that run none of infra/ or trainer/ in the test process,
# so mutmut's map of which test runs which function loses nothing by them.
SHARED_WITHOUT_PROJECT_CODE = {
    ("test_bring_your_data.py", "first_run"): "the run is a launcher child process",
    ("test_render.py", "origin"): "git commands on a copy of the project",
    ("test_train_loop_run.py", "data_dir"): "IDX bytes written by the test itself",
}


def _shares_across_tests(decorator: ast.expr) -> bool:
    """A cache decorator, or a fixture whose scope is wider than one test."""
    name = ast.unparse(decorator.func if isinstance(decorator, ast.Call) else decorator)
    if name in ("cache", "lru_cache", "functools.cache", "functools.lru_cache"):
        return True
    if isinstance(decorator, ast.Call) and name == "pytest.fixture":
        scopes = [k.value for k in decorator.keywords if k.arg == "scope"]
        return any(isinstance(s, ast.Constant) and s.value != "function" for s in scopes)
    return False


def test_test_files_share_values_only_through_shared_values() -> None:
    """A value computed in the first test that asks for it hides every later test from
    mutmut's map (tests/shared_values.py says why): a program run, a trained model or a parsed
    stack is shared through `shared` or SHARED_SCOPE, which mutmut turns off."""
    found = set()
    for path in sorted((REPO / "tests").glob("*.py")):
        if path.name == "shared_values.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                _shares_across_tests(d) for d in node.decorator_list
            ):
                found.add((path.name, node.name))
    assert found == set(SHARED_WITHOUT_PROJECT_CODE)


def test_each_equivalent_mutant_is_listed_once() -> None:
    """bench/mutation.py builds EQUIVALENT from literal entries and `**{...}` blocks: a name
    in two of them keeps only the later reason, silently."""
    source = (REPO / "bench" / "mutation.py").read_text()
    (table,) = [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "EQUIVALENT"
    ]
    assert isinstance(table, ast.Dict)
    names: list[str] = []
    for key, value in zip(table.keys, table.values, strict=True):
        if key is not None:
            names.append(ast.literal_eval(key))
        else:  # a `**{f"...{n}": reason for n in (...)}` block
            names.extend(eval(compile(ast.Expression(value), "EQUIVALENT", "eval"), {}))
    repeated = sorted({name for name in names if names.count(name) > 1})
    assert names and not repeated, repeated


@pytest.mark.slow
def test_each_equivalent_mutant_exists_in_todays_source() -> None:
    """An equivalent whose function was removed or shortened names no mutant today (or, after
    a renumbering, another one): mutmut's own generator, run over each module with listed
    equivalents, must make every listed name. (About 40 s of parsing: @slow.)"""
    import io

    from mutmut.__main__ import write_all_mutants_to_file

    from bench.mutation import EQUIVALENT, module_of, module_path

    missing = []
    for module in sorted({module_of(name) for name in EQUIVALENT}):
        path = Path(module_path(module))
        made = write_all_mutants_to_file(
            out=io.StringIO(), source=(REPO / path).read_text(), filename=path
        ).mutant_names
        names = {f"{module}.{name}" for name in made}
        missing += [n for n in EQUIVALENT if module_of(n) == module and n not in names]
    assert missing == []
