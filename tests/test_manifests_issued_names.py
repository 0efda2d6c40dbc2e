"""The contract between a platform stack and its run stacks, which deploy separately and may
run different tftrain versions: the labels a claim selects its issued volume by, and the
registry credentials file the kubelet reads. Written out by hand: a change to either is a
change both sides must make at once."""

from __future__ import annotations

import json

from infra.manifests.issued_names import CLAIMS, issued_labels, issued_volume_name
from infra.manifests.registry import docker_config_json


def test_an_issued_volume_carries_the_labels_its_claim_selects() -> None:
    assert issued_labels("team-a", "data") == {
        "app.kubernetes.io/name": "tftrain",
        "tftrain.io/namespace": "team-a",
        "tftrain.io/volume": "data",
    }
    assert issued_volume_name("team-a", "export") == "tftrain-team-a-export"
    assert CLAIMS == {"data": "tftrain-data", "input": "tftrain-input", "export": "tftrain-export"}


def test_the_pull_secret_is_the_docker_config_in_its_compact_form() -> None:
    # The kubelet's format (kubernetes.io/dockerconfigjson): auth is base64 of user:password
    # ("u:p" -> "dTpw"). Compact, so the Secret's bytes do not change between versions.
    text = docker_config_json("reg.example.com", "u", "p")
    assert text == ('{"auths":{"reg.example.com":{"username":"u","password":"p","auth":"dTpw"}}}')
    assert json.loads(text)["auths"]["reg.example.com"]["auth"] == "dTpw"
