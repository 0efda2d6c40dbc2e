"""No test reaches the network: the program's private-API-server checks (a TCP probe of the
intranet endpoint, the ECS metadata service) answer as from a machine inside the stack's VPC
that is not an ECS instance. Tests of those checks set their own answers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

import hypothesis  # noqa: F401  (see below)
import pytest

from infra.cloud import api_server_reach

# hypothesis is imported here, not first by its plugin's terminal summary: after the Pulumi
# mocks' failed runs that late parse failed ("SystemError: AST constructor recursion depth
# mismatch", a CPython 3.11 bookkeeping bug: python/cpython#106905, pytest-dev/pytest#10763).


@pytest.fixture(autouse=True)
def _no_network_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: True)
    monkeypatch.setattr(api_server_reach, "this_machine_vpc", lambda: None)


# Files whose tests start real training processes or whole launches (seconds each). Run first:
# with `-n 2`, one of them left for the end keeps a core busy while the other idles.
_HEAVY_FIRST = (
    "test_local_trainer.py",
    "test_watch_a_run.py",
    "test_tfjob_fixtures.py",
    "test_tf1_fixtures.py",
    "test_trainer_distributed.py",
    "test_bring_your_data.py",
    "test_config_properties.py",
    "test_fault_tolerance.py",
    "test_checkpoint_resume.py",
    "test_program_venv.py",
)


# Under a mutant (mutmut sets MUTANT_UNDER_TEST; its runs stop at the first failure and pass
# the tests in no set order), the files that launch processes go last instead: a mutant a
# unit test catches is caught in a second, not after every launch of the selection.
_LAUNCHING = (*_HEAVY_FIRST, "test_true_records.py", "test_local_launcher.py",
              "test_run_state_restarts.py", "test_supervise_script.py", "test_supervise_logs.py",
              "test_supervise_stops.py", "test_local_isolation.py")  # fmt: skip


# Under a mutant, a test that has not ended after this long is failed: a mutant that makes
# the launcher wait forever (its exits never handled) sleeps, so mutmut's CPU-time limit would
# not end it for hours. The slowest test here takes ~15 s alone, a few times that when loaded.
MUTANT_TEST_SECONDS = 240


def _fresh_default_executor() -> None:
    """mutmut runs each mutant in a fork of the process that ran the tests once. The Pulumi
    mocks run the program's RPCs on the event loop's default thread pool; a fork copies that
    pool without its threads, and one it believes idle never takes the work: every test of
    the program would wait forever. The child gets a pool of its own."""
    if "pulumi" not in sys.modules:
        return
    with warnings.catch_warnings(), contextlib.suppress(RuntimeError):
        warnings.simplefilter("ignore", DeprecationWarning)
        asyncio.get_event_loop().set_default_executor(ThreadPoolExecutor())


os.register_at_fork(after_in_child=_fresh_default_executor)


class MutantHung(Exception):
    """A test under a mutant outlived MUTANT_TEST_SECONDS."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if not os.environ.get("MUTANT_UNDER_TEST"):
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise MutantHung(f"{item.nodeid} ran {MUTANT_TEST_SECONDS}s under a mutant")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(MUTANT_TEST_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.environ.get("MUTANT_UNDER_TEST"):
        items.sort(key=lambda item: item.path.name in _LAUNCHING)  # stable: order kept within
    else:
        items.sort(key=lambda item: item.path.name not in _HEAVY_FIRST)
