"""Image references: the distribution grammar as the kubelet reads it, by table and by property.

The property tests generate references from the grammar's productions (so every part is
exercised in every combination) and check that each parses back into exactly its parts; they
also throw arbitrary text at the parser, which must answer with ImageReferenceError or a
result that an independent whole-reference regex (the grammar written out in one piece,
below) also accepts.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from infra.config import ConfigError, parse_config
from infra.config.image_ref import (
    DIGEST_HEX_LENGTHS,
    ImageReference,
    ImageReferenceError,
    parse_image_reference,
)

SHA = "sha256:" + "0123456789abcdef" * 4

VALID = {
    "ubuntu": ImageReference("", "ubuntu", "", ""),
    "tensorflow/tensorflow:2.21.0-gpu": ImageReference(
        "", "tensorflow/tensorflow", "2.21.0-gpu", ""
    ),
    f"registry.cn-hangzhou.aliyuncs.com/tftrain/trainer@{SHA}": ImageReference(
        "registry.cn-hangzhou.aliyuncs.com", "tftrain/trainer", "", SHA
    ),
    f"registry.cn-hangzhou.aliyuncs.com/tftrain/trainer:0.1.0-cpu@{SHA}": ImageReference(
        "registry.cn-hangzhou.aliyuncs.com", "tftrain/trainer", "0.1.0-cpu", SHA
    ),
    "localhost:5000/a__b/c--d.e_f:Latest_1": ImageReference(
        "localhost:5000", "a__b/c--d.e_f", "Latest_1", ""
    ),
    "x:_" + "a" * 127: ImageReference("", "x", "_" + "a" * 127, ""),
    "localhost/x": ImageReference("localhost", "x", "", ""),
    "[2001:db8::1]:5000/x/y:1": ImageReference("[2001:db8::1]:5000", "x/y", "1", ""),
    "10.0.0.5:5000/x": ImageReference("10.0.0.5:5000", "x", "", ""),
    "Registry.Example.com/x": ImageReference("Registry.Example.com", "x", "", ""),
    "Host/x": ImageReference("Host", "x", "", ""),  # upper case makes it a registry
    "foo:5000": ImageReference("", "foo", "5000", ""),  # no '/': 5000 is a tag
    "x@sha512:" + "a" * 128: ImageReference("", "x", "", "sha512:" + "a" * 128),
    # The 255-character limit on the repository path, at the limit: a path under a registry
    # or with a '/' counts as written, a single Docker Hub name as library/<name> (8 + 247).
    "reg.io/" + "a" * 255: ImageReference("reg.io", "a" * 255, "", ""),
    "a/" + "b" * 253: ImageReference("", "a/" + "b" * 253, "", ""),
    "x" * 247: ImageReference("", "x" * 247, "", ""),
}

INVALID = {
    "": "empty",
    "trainer@sha256:abc": "64 lower-case hex digits",
    "trainer@sha256:" + "A" * 64: "64 lower-case hex digits",
    "trainer@sha256:" + "a" * 63: "64 lower-case hex digits",
    "trainer@sha1:" + "a" * 40: "not one of sha256, sha384, sha512",
    "trainer@sha256": "not <algorithm>:<hex>",
    "trainer@": "not <algorithm>:<hex>",
    "trainer@sha256:" + "a" * 64 + "@sha256:" + "a" * 64: "64 lower-case hex digits",
    "trainer@1sha:" + "a" * 64: "malformed",
    "reg.io/Tftrain/trainer": "must be lower case",
    "tftrain/Trainer:1": "must be lower case",
    "reg.io/a//b": "repository component ''",
    "reg.io/-a": "repository component '-a'",
    "reg.io/a.": "repository component 'a.'",
    "reg.io/a...b": "repository component 'a...b'",
    "reg.io/a___b": "repository component 'a___b'",
    "trainer:": "tag ''",
    "trainer:.1": "tag '.1'",
    "trainer:" + "a" * 129: "tag",
    "trainer:a b": "tag 'a b'",
    "-reg.io/x": "registry '-reg.io'",
    "reg.io:port/x": "registry 'reg.io:port'",
    "0123456789abcdef" * 4: "image id",
    "reg.io/" + "a" * 256: "longer than 255",
    " reg.io/x": "registry ' reg.io'",
    "x" * 248: "longer than 255",  # counted as library/<name>, as Docker Hub does
}


@pytest.mark.parametrize("text", VALID)
def test_valid_references_parse_into_their_parts(text: str) -> None:
    assert parse_image_reference(text) == VALID[text]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_references_say_which_part_is_wrong(text: str) -> None:
    with pytest.raises(ImageReferenceError, match=re.escape(INVALID[text])):
        parse_image_reference(text)


_COMPONENT_RULE = "is not lower-case letters and digits joined by '.', '_', '__' or '-'"
# The whole message, as the user reads it under the config key, for one input of each rule.
MESSAGES = {
    "": "the reference is empty",
    "0123456789abcdef" * 4: "a bare 64-hex string is an image id, not a repository name",
    "trainer:.1": "tag '.1' is not 1-128 of letters, digits, '_', '.', '-' (not starting with "
    "'.' or '-')",
    "reg.io/a..b": f"repository component 'a..b' {_COMPONENT_RULE}",
    # The last ':' before the last '/' is not a tag's: the component holding it is wrong.
    "reg.io/team:x/app": f"repository component 'team:x' {_COMPONENT_RULE}",
    # An empty algorithm or hex part is not <algorithm>:<hex> (not a malformed algorithm or
    # a short digest).
    "trainer@sha256:": "digest 'sha256:' is not <algorithm>:<hex>",
    "trainer@:" + "a" * 64: "digest ':" + "a" * 64 + "' is not <algorithm>:<hex>",
    "x" * 248: "repository is longer than 255 characters",
}


@pytest.mark.parametrize("text", MESSAGES)
def test_each_rule_s_message_reads_in_full(text: str) -> None:
    with pytest.raises(ImageReferenceError) as caught:
        parse_image_reference(text)
    assert str(caught.value) == MESSAGES[text]


# --- the grammar, production by production, as generators ----------------------------------

alnum = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)
separator = st.sampled_from([".", "_", "__", "-", "--", "---"])
path_component = st.builds(
    lambda first, rest: first + "".join(s + a for s, a in rest),
    alnum,
    st.lists(st.tuples(separator, alnum), max_size=3),
)
path = st.lists(path_component, min_size=1, max_size=4).map("/".join)
domain_label = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,8}[a-zA-Z0-9])?", fullmatch=True)
dotted = st.lists(domain_label, min_size=2, max_size=4).map(".".join)  # has a '.': a registry
ipv6 = st.from_regex(r"\[[a-f0-9]{1,4}(:[a-f0-9]{0,4}){2,7}\]", fullmatch=True)
port = st.integers(1, 65535).map(lambda p: f":{p}")
domain = st.one_of(
    dotted,
    st.just("localhost"),
    st.tuples(st.one_of(dotted, domain_label.map(str.lower), ipv6), port).map("".join),
)
tag = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,15}", fullmatch=True)  # 128: in the table
digest = st.sampled_from(sorted(DIGEST_HEX_LENGTHS)).flatmap(
    lambda algorithm: st.text(
        "0123456789abcdef",
        min_size=DIGEST_HEX_LENGTHS[algorithm],
        max_size=DIGEST_HEX_LENGTHS[algorithm],
    ).map(lambda hex_digits: f"{algorithm}:{hex_digits}")
)


@st.composite
def references(draw: st.DrawFn) -> tuple[str, ImageReference]:
    registry = draw(st.one_of(st.just(""), domain))
    repository = draw(path)
    first = repository.split("/")[0]
    # Without a registry, a first component that looks like one ('.', localhost) becomes one.
    assume(registry or "/" not in repository or ("." not in first and first != "localhost"))
    the_tag = draw(st.one_of(st.just(""), tag))
    the_digest = draw(st.one_of(st.just(""), digest))
    text = (f"{registry}/" if registry else "") + repository
    text += (f":{the_tag}" if the_tag else "") + (f"@{the_digest}" if the_digest else "")
    return text, ImageReference(registry, repository, the_tag, the_digest)


@given(references())
@settings(max_examples=200, deadline=None)
def test_every_reference_the_grammar_generates_parses_back_into_its_parts(
    case: tuple[str, ImageReference],
) -> None:
    text, parts = case
    if re.fullmatch(r"[a-f0-9]{64}", text) or len(parts.path) > 200:
        return  # an image id, or beyond the length limit: covered by the table
    assert parse_image_reference(text) == parts


# The whole reference as one anchored regex, written from the grammar independently of the
# parser's piecewise checks (no digest-length or normalisation rules: a superset).
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_HOST = rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
GRAMMAR = re.compile(
    rf"(?:{_HOST}/)?{_COMPONENT}(?:/{_COMPONENT})*"
    r"(?::[\w][\w.-]{0,127})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?",
    re.ASCII,
)
reference_ish = st.text(st.sampled_from("abcXYZ019._-:/@[]"), max_size=40) | references().map(
    lambda case: case[0]
)


@given(reference_ish)
@settings(max_examples=300, deadline=None)
@example("a/B")
@example("A/b")
@example("a:1/b:2")
def test_the_parser_accepts_nothing_the_grammar_does_not(text: str) -> None:
    try:
        parse_image_reference(text)
    except ImageReferenceError:
        return
    assert GRAMMAR.fullmatch(text), text


@given(references(), st.text("0123456789abcdefABCDEF", max_size=130))
@settings(max_examples=100, deadline=None)
def test_a_digest_of_the_wrong_length_or_case_is_always_rejected(
    case: tuple[str, ImageReference], hex_digits: str
) -> None:
    name = case[0].split("@")[0]
    if len(hex_digits) == 64 and hex_digits == hex_digits.lower():
        return
    with pytest.raises(ImageReferenceError):
        parse_image_reference(f"{name}@sha256:{hex_digits}")


# --- the stack config -----------------------------------------------------------------------

PINNED = f"registry.example.com/tftrain/trainer:1@{SHA}"


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"image": "reg.io/x@sha256:abc"}, "tftrain:image"),
        (
            {"image": PINNED, "worker": {"image": "reg.io/x@sha256:" + "A" * 64}},
            "tftrain:worker.image",
        ),
        ({"image": PINNED, "tensorboard": {"image": "reg.io/X:1"}}, "tftrain:tensorboard.image"),
        ({"image": PINNED, "evaluator": {"number": 1, "image": "x:"}}, "tftrain:evaluator.image"),
    ],
)
def test_config_rejects_a_malformed_reference_under_its_own_key(config: dict, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(config)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{key} = ")
    assert "must be an image reference [registry[:port]/]repository[:tag][@sha256:" in problem


def test_an_inherited_bad_image_is_reported_once_under_tftrain_image() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"image": "Bad/Name"})
    assert [p.split(" = ")[0] for p in caught.value.problems] == ["tftrain:image"]
