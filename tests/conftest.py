"""No test reaches the network: the program's private-API-server checks (a TCP probe of the
intranet endpoint, the ECS metadata service) answer as from a machine inside the stack's VPC
that is not an ECS instance. Tests of those checks set their own answers."""

from __future__ import annotations

import pytest

from infra.cloud import api_server_reach


@pytest.fixture(autouse=True)
def _no_network_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api_server_reach, "connects", lambda endpoint, timeout=5.0: True)
    monkeypatch.setattr(api_server_reach, "this_machine_vpc", lambda: None)
