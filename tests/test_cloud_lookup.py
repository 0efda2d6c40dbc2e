"""The preflight lookups' one rule (infra/cloud/lookup.py): an unknown result skips the check,
any known result is a list, an empty one included; and names put in the provider's RE2 filters
match only themselves."""

from __future__ import annotations

import re
from typing import Any

import pulumi
import pytest
from pulumi.runtime.invoke import InvokeResult

from infra.cloud.lookup import answered, listed, re2_literal

TOKEN = "alicloud:cs/getClusters:getClusters"


class Engine:
    """The engine's invoke: answers `value` (known or not) and records every call."""

    def __init__(self) -> None:
        self.value: Any = {}
        self.known = True
        self.calls: list[tuple[str, Any, Any]] = []

    def invoke(self, token: str, args: Any, opts: Any = None, typ: Any = None) -> InvokeResult:
        self.calls.append((token, args, opts))
        return InvokeResult(self.value, is_known=self.known)


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Engine:
    fake = Engine()
    monkeypatch.setattr(pulumi.runtime, "invoke", fake.invoke)
    return fake


def answer(engine: Engine, value: Any, known: bool = True) -> None:
    engine.value, engine.known = value, known


def test_the_lookup_is_invoked_by_its_token_with_the_args_given(engine: Engine) -> None:
    answer(engine, {"clusters": [{"clusterName": "a"}]})
    args = {"nameRegex": "^a$"}
    assert answered(TOKEN, args) == {"clusters": [{"clusterName": "a"}]}
    ((token, sent, opts),) = engine.calls
    assert token == TOKEN and sent == args
    assert isinstance(sent, dict) and sent is not args  # a copy: the caller's stays its own
    assert isinstance(opts, pulumi.InvokeOptions)


def test_an_unknown_result_is_none_and_skips_the_check(engine: Engine) -> None:
    answer(engine, None, known=False)
    assert answered(TOKEN, {}) is None
    assert listed(TOKEN, {}, "clusters") is None
    answer(engine, {"clusters": [{"clusterName": "a"}]}, known=False)
    assert listed(TOKEN, {}, "clusters") is None


@pytest.mark.parametrize("empty", [None, {}])
def test_a_known_empty_result_is_an_answer_not_a_skip(engine: Engine, empty: Any) -> None:
    answer(engine, empty)
    assert answered(TOKEN, {}) == {}
    assert listed(TOKEN, {}, "clusters") == []


@pytest.mark.parametrize("field_value", [None, [], ()])
def test_a_missing_or_empty_field_is_an_empty_list(engine: Engine, field_value: Any) -> None:
    answer(engine, {"clusters": field_value, "other": [1]})
    assert listed(TOKEN, {}, "clusters") == []


def test_the_named_field_is_listed(engine: Engine) -> None:
    entries = ({"clusterName": "a"}, {"clusterName": "b"})
    answer(engine, {"clusters": entries, "ids": ["x"]})
    found = listed(TOKEN, {}, "clusters")
    assert found == [{"clusterName": "a"}, {"clusterName": "b"}]
    assert isinstance(found, list)


# RE2's syntax characters (github.com/google/re2/wiki/Syntax): each escaped; every other
# character as it is (RE2 refuses `\ ` and `\-`, so an escape of every character would not do).
LITERALS = [
    ("tftrain-dev-cluster", "tftrain-dev-cluster"),
    ("a.b", r"a\.b"),
    ("a+b*c?", r"a\+b\*c\?"),
    ("(x|y)", r"\(x\|y\)"),
    ("[0-9]{2}", r"\[0-9\]\{2\}"),
    ("^start$", r"\^start\$"),
    ("back\\slash", "back\\\\slash"),
    ("with space_and-dash", "with space_and-dash"),
]


@pytest.mark.parametrize(("text", "pattern"), LITERALS)
def test_re2_literal_escapes_only_re2_syntax(text: str, pattern: str) -> None:
    assert re2_literal(text) == pattern
    # Python's re reads these escapes as RE2 does: the pattern matches the text and only it.
    assert re.fullmatch(pattern, text)
    assert not re.fullmatch(pattern, text + "x")
