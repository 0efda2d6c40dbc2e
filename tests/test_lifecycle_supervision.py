"""What each replica's supervisor is told, and the time bounds derived from it: the argv
against supervise.sh's usage (its header), the bounds worked out by hand from the constants
the module documents (30 s of silence, a beat every 5 s, 2 s or 30 s of stop grace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from infra.config import parse_config
from infra.lifecycle import (
    Supervision,
    _final_exit_codes,
    deploy_generation,
    lost_bound,
    run_key,
    settle_seconds,
    supervision,
)
from infra.topology import build_topology

IMAGE = {"image": "registry.example.com/tftrain/trainer:1"}
EVALUATED = {**IMAGE, "evaluator": {"number": 1}, "job": {"backoffLimit": 4}}


def test_a_silent_death_ends_the_run_after_the_silence_one_beat_and_the_stop_grace() -> None:
    assert lost_bound() == 30 + 5 + 2
    assert lost_bound(30) == 30 + 5 + 30


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        (IMAGE, 37),  # no evaluator: the lost bound with the 2 s stop grace
        (EVALUATED, 600 + 30 + 1),  # the evaluator's finish window, its grace, a second
        ({**EVALUATED, "job": {"evaluatorFinishSeconds": 0}}, 30 + 5 + 30),
        ({**EVALUATED, "job": {"evaluatorFinishSeconds": 34}}, 65),  # 34 + 30 + 1 = 65
        ({**EVALUATED, "job": {"evaluatorFinishSeconds": 35}}, 66),
    ],
)
def test_settle_seconds_is_the_longer_of_the_lost_bound_and_the_evaluators_finish(
    raw: dict[str, Any], seconds: int
) -> None:
    config = parse_config(raw)
    assert settle_seconds(config, build_topology(config)) == seconds


def test_a_follower_is_told_every_flag_in_the_scripts_usage() -> None:
    follower = Supervision(
        ends_run=False,
        outcomes="/out/.tftrain-run",
        run_key="run-1",
        replica="job-worker-1",
        backoff_limit=3,
        stop_grace=2,
        peers=("job-chief-0", "job-worker-1"),
        finish_grace=600,
    )
    argv = follower.wrap("/lib/supervise.sh", ["python", "-m", "trainer"], "abc", "/w", "/logs")
    assert argv == [
        "/bin/sh", "/lib/supervise.sh", "--follows-run", "--outcomes", "/out/.tftrain-run",
        "--run", "run-1", "--generation", "abc", "--replica", "job-worker-1",
        "--backoff-limit", "3", "--stop-grace", "2", "--finish-grace", "600",
        "--peers", "job-chief-0 job-worker-1", "--lost-after", "30", "--logs", "/logs",
        "--workdir", "/w", "--", "python", "-m", "trainer",
    ]  # fmt: skip


def test_the_replica_that_ends_the_run_exports_after_awaiting_the_evaluator() -> None:
    ender = Supervision(
        ends_run=True,
        outcomes="/o",
        run_key="k",
        replica="c",
        backoff_limit=0,
        stop_grace=2,
        peers=("c", "e"),
        on_success="/x/export.sh",
        awaited=("e", "e2"),
        await_limit=635,
    )
    assert ender.wrap("s.sh", ["t"], "g") == [
        "/bin/sh", "s.sh", "--ends-run", "--outcomes", "/o", "--run", "k", "--generation", "g",
        "--replica", "c", "--backoff-limit", "0", "--peers", "c e", "--lost-after", "30",
        "--on-success", "/x/export.sh", "--await", "e e2", "--await-limit", "635", "--", "t",
    ]  # fmt: skip
    # Nothing to await without an export: --await is only read before --on-success runs.
    plain = Supervision(True, "/o", "k", "c", 0, 2, ("c",), awaited=("e",), await_limit=9)
    assert "--await" not in plain.wrap("s.sh", ["t"], "g")


def test_each_replica_gets_its_part_grace_and_export() -> None:
    config = parse_config(EVALUATED)
    topology = build_topology(config)
    by_type = {r.type: r for r in topology.replicas}
    names = tuple(r.name for r in topology.replicas)

    chief = supervision(config, topology, by_type["chief"], "/runs/r/", "/x/export.sh")
    assert chief == Supervision(
        ends_run=True,
        outcomes="/runs/r/.tftrain-run",
        run_key=config.job.run_id,
        replica="mnist-chief-0",
        backoff_limit=4,
        stop_grace=2,
        peers=names,
        finish_grace=0,
        on_success="/x/export.sh",
        awaited=("mnist-evaluator-0",),
        await_limit=600 + 30 + 5,
    )
    evaluator = supervision(config, topology, by_type["evaluator"], "/runs/r", "/x/export.sh")
    assert (evaluator.ends_run, evaluator.stop_grace, evaluator.finish_grace) == (False, 30, 600)
    assert (evaluator.on_success, evaluator.awaited) == ("", ())
    assert evaluator.outcomes == "/runs/r/.tftrain-run"
    assert supervision(config, topology, by_type["ps"], "/X/").outcomes == "/X/.tftrain-run"
    worker = supervision(config, topology, by_type["worker"], "/runs/r")
    assert (worker.ends_run, worker.stop_grace, worker.finish_grace) == (False, 2, 0)
    # Without an export the run's end awaits nobody.
    assert supervision(config, topology, by_type["chief"], "/runs/r").awaited == ()


def test_the_final_exit_codes_are_read_from_the_scripts_one_line(tmp_path: Path) -> None:
    script = tmp_path / "s.sh"
    script.write_text("# FINAL_EXIT_CODES='9'\nFINAL_EXIT_CODES='3 64 126'\nexit 0\n")
    assert _final_exit_codes(script) == (3, 64, 126)
    script.write_text('FINAL_EXIT_CODES="3"\n')
    with pytest.raises(RuntimeError, match="does not define FINAL_EXIT_CODES"):
        _final_exit_codes(script)


def test_a_deploy_generation_names_the_templates_not_their_key_order() -> None:
    one = deploy_generation([{"spec": {"a": 1, "b": [1, 2]}}, {"image": Path("/x")}])
    assert len(one) == 12 and int(one, 16) >= 0
    assert one == deploy_generation([{"spec": {"b": [1, 2], "a": 1}}, {"image": Path("/x")}])
    assert one != deploy_generation([{"spec": {"a": 2, "b": [1, 2]}}, {"image": Path("/x")}])
    assert one != deploy_generation([{"spec": {"a": 1, "b": [1, 2]}}, {"image": Path("/y")}])


def test_a_pinned_run_id_is_keyed_by_env_names_not_values() -> None:
    # A secret's value may be decrypted where the key is made, and the key is in every Job's
    # args: only the names count (for a derived id, see below).
    def pinned(env: dict[str, str]) -> str:
        return run_key(parse_config({**IMAGE, "job": {"runId": "base", "env": env}}))

    assert pinned({"TOKEN": "a"}) == pinned({"TOKEN": "b"}) != pinned({"OTHER": "a"})


@pytest.mark.parametrize(
    "secret",
    [["job"], ["worker"], ["job", "worker"]],
)
def test_a_derived_run_id_with_secret_env_is_the_runs_key(secret: list[str]) -> None:
    # The engine marks a section holding a secret; the id was derived with its env values
    # left out, which the key must recognise as derived (no fingerprint appended).
    raw = {
        **IMAGE,
        "job": {"env": {"TOKEN": "t0k3n"}},
        "worker": {"number": 2, "env": {"WORKER_TOKEN": "w"}},
    }
    config = parse_config(raw, secret_keys=secret)
    assert run_key(config) == config.job.run_id
