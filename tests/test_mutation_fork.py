"""mutmut runs each mutant's tests in a fork of the process that ran them once: a Pulumi
mocks program must still run there (tests/conftest.py gives the child a thread pool)."""

from __future__ import annotations

import os
import signal

import pulumi
import pytest


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
