"""The JSON Schema of a stack file (`stacks/Pulumi.<stack>.yaml`), generated from the model.

    python -m infra.config.schema > schema/stack.schema.json

Editors with a YAML language server complete and check stack files with it (docs/config.md, "Editor
support"); `tests/test_config_schema.py` fails when the committed file is out of date. The
schema checks each key on its own; rules between keys are the model's (`infra.config.rules`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from infra.config import KUBECONFIG_KEY, StackConfig
from infra.config.roles import CLOUD_KEYS, ISSUED, ISSUED_KEYS, NO_CLOUD, NO_RUN, RUN_SECTIONS
from infra.config.stack_file import NAMESPACES, PROJECT, TOP_LEVEL_KEYS

_SECRET = {
    "description": "a secret: `pulumi config set --secret` stores {secure: <ciphertext>}",
    "anyOf": [
        {"type": "string"},
        {
            "type": "object",
            "properties": {"secure": {"type": "string"}},
            "required": ["secure"],
            "additionalProperties": False,
        },
    ],
}


def _refused(why: str) -> dict[str, Any]:
    return {"not": {}, "description": why}


def _when_role(role: str, then: dict[str, Any]) -> dict[str, Any]:
    cluster = {"properties": {"role": {"const": role}}, "required": ["role"]}
    is_role = {"properties": {f"{PROJECT}:cluster": cluster}, "required": [f"{PROJECT}:cluster"]}
    return {"if": is_role, "then": {"properties": then}}


def _role_conditions() -> list[dict[str, Any]]:
    """The keys each `cluster.role` refuses (`infra.config.roles`), so an editor marks them."""
    platform = {f"{PROJECT}:{section}": _refused(NO_RUN) for section in RUN_SECTIONS}
    run: dict[str, Any] = {}
    for section, keys in CLOUD_KEYS.items():
        refused = {"properties": {key: _refused(NO_CLOUD) for key in keys or ()}}
        run[f"{PROJECT}:{section}"] = _refused(NO_CLOUD) if keys is None else refused
    for section, keys in ISSUED_KEYS.items():
        refused = run.setdefault(f"{PROJECT}:{section}", {"properties": {}})
        refused["properties"].update({key: _refused(ISSUED) for key in keys})
    return [_when_role("platform", platform), _when_role("run", run)]


def stack_file_schema() -> dict[str, Any]:
    model = TypeAdapter(StackConfig).json_schema(by_alias=True)
    keys = {f"{PROJECT}:{key}": value for key, value in model["properties"].items()}
    keys[f"{PROJECT}:{KUBECONFIG_KEY}"] = {**_SECRET, "title": "Kubeconfig of an existing cluster"}
    others = "|".join(namespace for namespace in NAMESPACES if namespace != PROJECT)
    config = {
        "type": "object",
        "description": f"Stack config: {PROJECT}:<section> keys, and provider config",
        "properties": keys,
        "patternProperties": {f"^({others}):.+$": {}},
        "additionalProperties": False,
        "allOf": _role_conditions(),
    }
    top = {key: {"type": "string"} for key in TOP_LEVEL_KEYS if key != "config"}
    top["environment"] = {"description": "Pulumi ESC environments to import"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{PROJECT} stack file (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "properties": {"config": config, **top},
        "additionalProperties": False,
        "$defs": model["$defs"],
    }


def render() -> str:
    return json.dumps(stack_file_schema(), indent=2) + "\n"


if __name__ == "__main__":
    print(render(), end="")
