"""The run id the program gives a config: what the tests compare, read off the validated stack
(the product has no second way to compute it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.config import parse_config


def run_id(raw: Mapping[str, Any]) -> str:
    """`job.runId` of a prefix-less `tftrain:` config: derived when the config leaves it unset."""
    return parse_config(raw).job.run_id
