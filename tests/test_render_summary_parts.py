"""The summary's run line beside a sweep (infra/render/summary.py): a sweep's runs are its
trials, listed by their own lines, so the run line is left out when both sides are sweeps and
kept when a stack becomes a sweep or stops being one (its single run stops or starts)."""

from __future__ import annotations

from typing import Any

from infra.config import parse_config
from infra.render.kubernetes import render_kubernetes
from infra.render.summary import summarize

IMAGE = "registry.example.com/tftrain/trainer:1"
LR = "hyperparams.learningRate"


def _render(*rates: float) -> str:
    raw: dict[str, Any] = {"image": IMAGE, "cluster": {"kind": "existing"}}
    if rates:
        raw["sweep"] = {"parameters": {LR: {"values": list(rates)}}, "parallel": len(rates)}
    return render_kubernetes(parse_config(raw))


def _heads(old: str, new: str) -> list[str]:
    summary = summarize(old, new, "s", "a", "b")
    return [line.split(":")[0] for line in summary.splitlines() if not line.startswith(" ")]


def test_both_sides_sweeps_have_trial_lines_and_no_run_line() -> None:
    heads = _heads(_render(0.1, 0.2), _render(0.1, 0.2, 0.3))
    assert "Sweep" in heads and "Run" not in heads
    assert heads[0] == "Consequences for s, a → b"


def test_a_stack_that_becomes_a_sweep_or_stops_being_one_keeps_its_run_line() -> None:
    for old, new in ((_render(), _render(0.1, 0.2)), (_render(0.1, 0.2), _render())):
        heads = _heads(old, new)
        assert heads[1] == "Run" and "Sweep" in heads
    heads = _heads(_render(), _render())
    assert heads[1] == "Run" and "Sweep" not in heads
