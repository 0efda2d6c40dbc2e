"""The type factories every stack key is built from (`infra.config.types`), each used on its own:
what a made type accepts, what it refuses and why, and the JSON Schema it gives editors (the
keywords JSON Schema draft 2020-12 defines for a range, a pattern and a length). The model's
keys built from them have their tables in test_config_ranges.py."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError, create_model

from infra.config import ConfigError, parse_config
from infra.config.types import (
    SECRET_KEYS,
    SECRET_PLACEHOLDER,
    Bool,
    EnvMap,
    Ipv4Cidr,
    ObjectPrefix,
    SweepValue,
    checked,
    integer,
    is_image_reference,
    is_secure,
    secret_text,
    text,
)


def _reason(adapter: TypeAdapter, value: Any, context: dict | None = None) -> str:
    with pytest.raises(ValidationError) as refused:
        adapter.validate_python(value, context=context)
    (error,) = refused.value.errors(include_url=False)
    return str(error.get("ctx", {}).get("error", error["type"]))


def test_an_integer_type_takes_its_range_ends_included() -> None:
    adapter = TypeAdapter(integer(2, 5))
    assert [adapter.validate_python(v) for v in (2, 5, "3", 4.0)] == [2, 5, 3, 4]
    for value in (1, 6, 2.5, True, False, "010", "x", None):
        with pytest.raises(ValidationError):
            adapter.validate_python(value)
    assert adapter.json_schema() == {
        "type": "integer", "minimum": 2, "maximum": 5, "description": "an integer from 2 to 5"
    }  # fmt: skip


def test_a_one_value_range_takes_only_it() -> None:
    adapter = TypeAdapter(integer(0, 0))
    assert adapter.validate_python(0) == 0
    assert adapter.validate_python("0") == 0
    for value in (-1, 1):
        with pytest.raises(ValidationError):
            adapter.validate_python(value)


def test_a_text_type_takes_its_pattern_up_to_its_length() -> None:
    adapter = TypeAdapter(text(r"^a+$", "one to three a's", 3))
    assert adapter.validate_python("aaa") == "aaa"
    for value in ("aaaa", "b", "", 1):
        with pytest.raises(ValidationError):
            adapter.validate_python(value)
    assert adapter.json_schema() == {
        "type": "string", "pattern": "^a+$", "maxLength": 3, "description": "one to three a's"
    }  # fmt: skip
    unbounded = TypeAdapter(text(r"^a+$", "a's"))
    assert unbounded.validate_python("a" * 500) == "a" * 500
    assert "maxLength" not in unbounded.json_schema()


def test_a_checked_type_refuses_with_what_is_allowed() -> None:
    adapter = TypeAdapter(checked(lambda v: v.startswith("x"), "a word starting with x"))
    assert adapter.validate_python("xy") == "xy"
    assert _reason(adapter, "yx") == "a word starting with x"
    assert adapter.json_schema() == {"type": "string", "description": "a word starting with x"}


def test_a_checked_type_on_a_base_type_checks_both() -> None:
    base = text(r"^[a-z]+$", "lower-case letters", 5)
    adapter = TypeAdapter(checked(lambda v: v != "nope", "lower-case letters, not nope", base))
    assert adapter.validate_python("yes") == "yes"
    assert _reason(adapter, "nope") == "lower-case letters, not nope"
    for value in ("ABC", "abcdef"):
        with pytest.raises(ValidationError):
            adapter.validate_python(value)
    assert adapter.json_schema()["description"] == "lower-case letters, not nope"


SECRET = {"secure": "v1:0Jx+ciphertext=="}
ALLOWED = (
    "empty or a Pulumi secret: pulumi config set --secret --path tftrain:data.accessKeyId "
    "<value> (plain text would sit in the stack file and the state)"
)


def test_a_secret_key_takes_a_secret_or_nothing_and_plain_text_only_as_the_engine_s_secret() -> (
    None
):
    adapter = TypeAdapter(secret_text("data", "accessKeyId"))
    assert adapter.validate_python(SECRET) == SECRET_PLACEHOLDER  # offline: not decryptable
    assert adapter.validate_python("") == ""
    # In the program: a decrypted secret arrives as text, its section marked secret.
    marked = {SECRET_KEYS: frozenset({"data"})}
    assert adapter.validate_python("LTAI5t", context=marked) == "LTAI5t"
    for context in (None, {}, {SECRET_KEYS: frozenset({"imageRegistry"})}):
        assert _reason(adapter, "LTAI5t", context) == ALLOWED
    for value in ({"secure": 1}, {"secure": "x", "other": "y"}, 5, None):
        assert _reason(adapter, value, marked) == ALLOWED
    assert adapter.json_schema() == {
        "description": ALLOWED,
        "anyOf": [
            {"const": ""},
            {
                "type": "object",
                "properties": {"secure": {"type": "string"}},
                "required": ["secure"],
                "additionalProperties": False,
            },
        ],
    }


@pytest.mark.parametrize(
    ("value", "secure"),
    [(SECRET, True), ({"secure": ""}, True), ({"secure": 1}, False),
     ({"secure": "x", "b": 1}, False), ({}, False), ("secure", False), (None, False)],
)  # fmt: skip
def test_a_stack_file_secret_is_a_mapping_of_secure_to_its_ciphertext(
    value: Any, secure: bool
) -> None:
    assert is_secure(value) is secure


@pytest.mark.parametrize(
    ("value", "text_value"),
    [("x", "x"), (1, "1"), (0, "0"), (2.0, "2"), (0.5, "0.5"), (1e20, "100000000000000000000"),
     (-3, "-3"), (SECRET, SECRET_PLACEHOLDER), ("", "")],
)  # fmt: skip
def test_an_env_value_is_text_as_written(value: Any, text_value: str) -> None:
    assert TypeAdapter(EnvMap).validate_python({"A": value}) == {"A": text_value}


@pytest.mark.parametrize("value", [True, False, None, [1], {"a": 1}])
def test_an_env_value_is_no_boolean_nor_a_structure(value: Any) -> None:
    with pytest.raises(ValidationError) as refused:
        TypeAdapter(EnvMap).validate_python({"A": value})
    if isinstance(value, bool):
        (error,) = refused.value.errors(include_url=False)
        assert str(error["ctx"]["error"]) == "a string (quote it: 'true')"


@pytest.mark.parametrize(
    ("name", "valid"),
    [("A", True), ("_a.b-c9", True), ("-x", True), ("9A", False), ("A B", False), ("", False),
     ("a" * 253, True), ("a" * 254, False), ("Ä", False)],
)  # fmt: skip
def test_an_env_name_is_what_kubernetes_takes(name: str, valid: bool) -> None:
    adapter = TypeAdapter(EnvMap)
    if valid:
        assert adapter.validate_python({name: "v"}) == {name: "v"}
    else:
        with pytest.raises(ValidationError):
            adapter.validate_python({name: "v"})


def test_a_swept_value_is_never_a_secret() -> None:
    adapter = TypeAdapter(SweepValue)
    assert adapter.validate_python(0.1) == 0.1
    said = (
        "a plain value: a Pulumi secret cannot be swept (each trial's value is shown in its "
        "Jobs, the review and its run id); keep it in job.env, the same for all trials"
    )
    assert _reason(adapter, SECRET) == said
    # The engine marked the whole sweep section secret: each value arrived decrypted.
    assert _reason(adapter, 0.1, {SECRET_KEYS: frozenset({"sweep"})}) == said
    assert adapter.validate_python(0.1, context={SECRET_KEYS: frozenset({"job"})}) == 0.1


@pytest.mark.parametrize(
    ("image", "valid"),
    [("registry.example.com/tftrain/trainer:1", True), ("busybox", True), ("", False),
     ("Registry/UPPER:1", False), ("a:b:c", False)],
)  # fmt: skip
def test_an_image_reference_is_one_the_distribution_grammar_takes(image: str, valid: bool) -> None:
    assert is_image_reference(image) is valid


def test_an_integer_s_refusal_says_why() -> None:
    adapter = TypeAdapter(integer(0, 9))
    assert _reason(adapter, "010") == "a number without a leading 0"
    assert _reason(adapter, True) == "a number, not true or false"


@pytest.mark.parametrize(
    ("block", "valid"),
    [("192.168.0.0/16", True), ("10.0.0.0/8", True), ("192.168.0.1/16", False),  # host bits
     ("192.168.0.0", True), ("fd00::/8", False), ("192.168.0.0/33", False), ("x", False)],
)  # fmt: skip
def test_an_ipv4_block_is_a_network_without_host_bits(block: str, valid: bool) -> None:
    adapter = TypeAdapter(Ipv4Cidr)
    if valid:
        assert adapter.validate_python(block) == block
    else:
        with pytest.raises(ValidationError):
            adapter.validate_python(block)


# OSS object names and RAM's resource wildcards (docs/data.md): a relative prefix ending in /.
@pytest.mark.parametrize(
    ("prefix", "valid"),
    [("", True), ("mnist/", True), ("my data/v1/", True), ("Xdata/", True), ("a.b/..c/", True),
     ("mnist", False), ("/mnist/", False), ("a//", False), ("./", False), ("a/./", False),
     ("../", False), ("a/../", False), ("a/b/../", False), ("a\x1f/", False), ("a\x00/", False),
     ("a*/", False), ("a?/", False)],
)  # fmt: skip
def test_an_object_prefix_is_relative_plain_and_ends_in_a_slash(prefix: str, valid: bool) -> None:
    adapter = TypeAdapter(ObjectPrefix)
    if valid:
        assert adapter.validate_python(prefix) == prefix
    else:
        with pytest.raises(ValidationError):
            adapter.validate_python(prefix)


def test_a_secret_typed_in_the_clear_is_refused_by_key_with_the_command_to_use() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({"image": "registry.example.com/tftrain/trainer:1",
                      "data": {"accessKeyId": "LTAI5tPlainText"}})  # fmt: skip
    (problem,) = refused.value.problems
    assert problem.startswith("tftrain:data.accessKeyId = ")
    assert problem.endswith(f": must be {ALLOWED}")
    assert "LTAI5tPlainText" not in problem


@pytest.mark.parametrize(
    ("value", "read"),
    [(True, True), (False, False), ("true", True), ("false", False), (" TRUE ", True),
     ("False", False), ("yes", None), ("1", None), (1, None), (0, None), (None, None)],
)  # fmt: skip
def test_a_boolean_is_true_or_false_or_their_text_as_the_engine_hands_it(
    value: Any, read: bool | None
) -> None:
    """Pulumi hands a value typed at the top (`pulumi config set`) over as text; yes/no and 1/0
    are not YAML 1.2 booleans, so they are not guessed."""
    adapter = TypeAdapter(Bool)
    if read is None:
        assert _reason(adapter, value) == "true or false"
    else:
        assert adapter.validate_python(value) is read


def test_a_secret_key_s_description_is_what_an_error_about_it_says() -> None:
    """errors.describe words a refusal with the key's description: a model made here, since the
    stack's own model is made at import."""
    holder = create_model("Holder", secret=(secret_text("data", "accessKeyId"), ""))
    assert holder.model_fields["secret"].description == ALLOWED
