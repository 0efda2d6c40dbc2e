"""The stack-file reader: YAML as the Pulumi engine reads it (Go's gopkg.in/yaml.v3); every
fault a ConfigError naming the file and line, never another exception."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infra.config import load_stack_file
from infra.config.stack_file import (
    ConfigError,
    StackFile,
    engine_config,
    key_path,
    namespace_problem,
    parse_yaml,
    program_value,
    read_stack,
)

IMAGE = b"  tftrain:image: registry.example.com/tftrain/trainer:1\n"

# name: (file content, the line named, a fragment of the message)
FAULTS: dict[str, tuple[bytes, int, str]] = {
    "syntax-error": (b"config:\n  tftrain:job: {name: [\n", 3, "not valid YAML"),
    "two-documents": (b"config: {}\n---\nconfig: {}\n", 2, "a single document"),
    "python-tag": (b"config:\n  tftrain:job: !!python/object:os.system {}\n", 2, "tag"),
    "custom-tag": (b"config:\n  tftrain:image: !Ref x\n", 2, "the tag !Ref is not allowed"),
    "binary-tag": (b"config:\n  tftrain:image: !!binary aGk=\n", 2, "not allowed"),
    "recursive-alias": (b"config:\n  tftrain:job: &a\n    args: *a\n", 2, "contains itself"),
    "alias-bomb": (
        b"a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
        b"e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
        1,
        "values",
    ),
    "nul-byte": (b"config:\n  tftrain:image: a\x00b\n", 2, "#x0000"),
    "not-utf8": (b"config:\n  tftrain:image: caf\xe9\n", 2, "not UTF-8"),
    "deep-nesting": (b"config:\n  tftrain:job: " + b"[" * 40 + b"]" * 40, 2, "deeper than 32"),
    "config-not-a-mapping": (b"config: [1, 2]\n", 1, "config: must be a mapping"),
    "document-not-a-mapping": (b"hello\n", 1, "a stack file is a mapping"),
    "integer-key": (b"config:\n  tftrain:worker:\n    1: x\n", 3, "not a string: quote it"),
    "duplicate-key": (b"config:\n" + IMAGE + IMAGE, 3, "duplicate key 'tftrain:image'"),
    "duplicate-nested-key": (
        b"config:\n  tftrain:worker:\n    number: 1\n    number: 2\n",
        4,
        "(first on line 3)",
    ),
    "misspelt-namespace": (b"config:\n  tftrian:worker: {}\n", 2, "did you mean tftrain?"),
    "capitalised-namespace": (b"config:\n  Tftrain:worker: {}\n", 2, "did you mean tftrain?"),
    "bare-key-twice": (
        b"config:\n  tftrain:worker: {}\n  worker: {}\n",
        3,
        "the same key as tftrain:worker",
    ),
    "misspelt-config": (b"confg:\n  tftrain:worker: {}\n", 1, "did you mean config?"),
    "merge-key": (b"config:\n  tftrain:worker:\n    <<: {number: 1}\n", 3, "not allowed"),
    "infinity": (b"config:\n  tftrain:hyperparams: {epochs: .inf}\n", 2, "infinity or NaN"),
    "nan-at-the-top": (b"config:\n  tftrain:image: .nan\n", 2, "infinity or NaN"),
    "tag-against-value": (b"config:\n  tftrain:worker: {number: !!int abc}\n", 2, "not a YAML int"),
    # Only a float's tag widens an int (yaml.v3: "cannot decode !!int `5` as a !!bool").
    "bool-tag-on-an-int": (
        b"config:\n  tftrain:worker: {number: !!bool 5}\n",
        2,
        "not a YAML bool",
    ),
    "yaml-1.1-directive": (b"%YAML 1.1\n---\nconfig: {}\n", 1, "directives"),
}


def _refused(name: str, tmp_path: Path) -> tuple[Path, list[str]]:
    """FAULTS[name] written to a stack file: its path and the problems reading it raises."""
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_bytes(FAULTS[name][0])
    with pytest.raises(ConfigError) as error:
        read_stack(path)
    return path, error.value.problems


@pytest.mark.parametrize("name", FAULTS)
def test_every_fault_is_a_config_error_with_file_and_line(name: str, tmp_path: Path) -> None:
    _, line, fragment = FAULTS[name]
    path, problems = _refused(name, tmp_path)
    assert any(p.startswith(f"{path}:{line}") and fragment in p for p in problems), problems


# The whole message, where its words are this project's (or the YAML reader's own context and
# problem, for a syntax error).
WHOLE = {
    "syntax-error": "not valid YAML: while parsing a flow node expected the node content, but "
    "found '<stream end>'",
    "recursive-alias": "an alias that contains itself",
    "infinity": ".inf: the Pulumi engine cannot pass infinity or NaN to a program: write a number",
    "deep-nesting": "nested deeper than 32 or over 100000 values",
}


@pytest.mark.parametrize("name", WHOLE)
def test_the_fault_says_exactly_what_is_wrong(name: str, tmp_path: Path) -> None:
    path, problems = _refused(name, tmp_path)
    assert problems == [f"{path}:{FAULTS[name][1]}: {WHOLE[name]}"]


# Worked by hand from yaml.v3's resolve.go (its word table, strconv.ParseInt(s, 0, 64), then
# ParseUint, then its float pattern and strconv.ParseFloat, which fails out of range).
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1:30", "1:30"),  # no base 60 in yaml.v3
        ("yes", "yes"),  # yaml.v3 has only true/false
        ("on", "on"),
        ("2024-01-15", "2024-01-15"),  # a timestamp decoded into `any` stays its text
        ("0x10", 16),
        ("010", 8),  # Go's base 0: a leading 0 is octal
        ("0o17", 15),
        ("0b101", 5),
        ("09", 9.0),  # not octal, so ParseFloat reads it
        ("1_000", 1000),  # yaml.v3 drops underscores first
        ("+5", 5),
        ("1e3", 1000.0),
        ("1.0e3", 1000.0),
        (".5", 0.5),
        ("9" * 400, "9" * 400),  # ParseFloat: out of range, so a string
        ("18446744073709551615", 2**64 - 1),  # ParseUint
        # The int64 and uint64 ranges at their ends (strconv.ParseInt, then ParseUint, which
        # takes no sign, then ParseFloat).
        ("0", 0),
        ("-5", -5),
        ("-127", -127),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("-9223372036854775809", -9.223372036854776e18),
        ("9223372036854775808", 2**63),
        ("+9223372036854775808", 9.223372036854776e18),
        ("18446744073709551616", 1.8446744073709552e19),
        ("0x1", 1),  # the shortest hexadecimal
        ("0x", "0x"),  # a prefix without digits: no number at all
        ("True", True),
        ("~", None),
        ("'010'", "010"),
        ("!!float 3", 3.0),  # an int where a float is tagged: yaml.v3 widens it
        ("!!int 5", 5),
        ('!!int "5"', 5),  # quoted, so only its tag makes it a number
        ("!!bool true", True),
        ("[a, 2]", ["a", 2]),
    ],
)
def test_scalars_are_read_as_yaml_v3_resolves_them(text: str, value: object) -> None:
    read = parse_yaml(text, "--set")
    assert read == value and type(read) is type(value)


def test_model_problems_name_the_line_of_their_key(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_bytes(b"config:\n" + IMAGE + b"  tftrain:worker:\n    number: -1\n")
    with pytest.raises(
        ConfigError, match=r"tftrain:worker\.number = -1: .*\(Pulumi\.bad\.yaml:4\)"
    ):
        load_stack_file(path)


def test_a_date_like_run_id_is_the_string_written(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dated.yaml"
    path.write_bytes(b"config:\n" + IMAGE + b"  tftrain:job: {runId: 2024-01-15}\n")
    assert load_stack_file(path).job.run_id == "2024-01-15"


ESC_STACK = """\
environment:
  - team/training-secrets
config:
  tftrain:image: registry.example.com/tftrain/trainer:1
  tftrain:storage:
    kind: hostPath
"""


def test_esc_environments_are_refused_offline_by_line(tmp_path: Path) -> None:
    """Pulumi ESC merges an environment's pulumiConfig into the stack's config in the engine
    (Pulumi docs, "Pulumi ESC: Integrate with Pulumi IaC"), which an offline reader cannot."""
    path = tmp_path / "Pulumi.esc.yaml"
    path.write_text(ESC_STACK)
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    (problem,) = refused.value.problems
    assert problem.startswith(f"{path}:1: environment:")
    assert "team/training-secrets" in problem and "pulumi preview" in problem
    # Two environments, listed by name as written.
    path.write_text(ESC_STACK.replace("  - team/training-secrets\n", "  - team/a\n  - team/b\n"))
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    assert refused.value.problems == [
        f"{path}:1: environment: this stack imports Pulumi ESC environments (team/a, team/b), "
        "whose values this offline reading cannot see, so it would show a different stack than "
        "`pulumi up` deploys. Use `pulumi preview --diff` for this stack, or copy the stack file "
        "without `environment:` (and with the tftrain: values the environments supply) for the "
        "render and the local launcher"
    ]


@pytest.mark.parametrize("module", ["infra.render", "infra.local"])
def test_the_render_and_the_launcher_answer_an_esc_stack_with_one_line(
    module: str, tmp_path: Path
) -> None:
    (tmp_path / "Pulumi.esc.yaml").write_text(ESC_STACK)
    args = ["esc", "--stacks-dir", str(tmp_path)]
    if module == "infra.local":
        args.append("--dry-run")
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "environment: this stack imports Pulumi ESC environments" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("\r", 'tftrain:worker["\\r"]'),
        ("a b", 'tftrain:worker["a b"]'),
        ("x.y", 'tftrain:worker["x.y"]'),
    ],
)
def test_an_odd_key_is_named_in_the_quoted_path_form(key: str, shown: str, tmp_path: Path) -> None:
    """Pulumi's `--path` syntax quotes a key holding `.`, spaces or control characters as
    `["…"]`; shown raw, a "\\r" would rewind the terminal line over the message."""
    path = tmp_path / "Pulumi.odd.yaml"
    path.write_text(f"config:\n  tftrain:worker:\n    {json.dumps(key)}: 1\n")
    with pytest.raises(ConfigError) as refused:
        load_stack_file(path)
    (problem,) = refused.value.problems
    assert problem.startswith(f"{shown}: unknown key"), problem


def test_an_oversized_stack_file_is_refused_before_parsing(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.big.yaml"
    # A valid document: only its size is wrong (a 60 MB one took minutes to parse).
    padding = "# " + "x" * 1000 + "\n"
    stack.write_text("config:\n  tftrain:image: registry.example.com/a/b:1\n" + padding * 5000)
    started = time.monotonic()
    with pytest.raises(ConfigError) as refused:
        read_stack(stack)
    assert time.monotonic() - started < 5
    assert refused.value.problems == [
        f"{stack}: larger than 4 MiB; a stack file is a few kilobytes of settings (data belongs "
        "in the bucket or data.localInputDir)"
    ]


def test_a_problem_is_located_at_the_nearest_key_the_file_writes(tmp_path: Path) -> None:
    """`locate` walks a problem's key up, one `.name` or `[index]` at a time, to a key the
    file wrote; the lines below are the file's as written here."""
    path = tmp_path / "Pulumi.s.yaml"
    lines = {"tftrain:a.b": 3, 'tftrain:a.b["x.y"]': 5, "tftrain:imageX": 9}
    stack = StackFile(path, {}, lines)
    located = stack.locate(
        ConfigError(
            [
                'tftrain:a.b["x.y"][2] = 1: an index under a quoted key',
                'tftrain:a.b["x.y"].c = 1: a name under a quoted key',
                "tftrain:imageX: unknown key",
                "tftrain:other = 1: a key the file does not write",
            ]
        )
    )
    assert located.problems == [
        'tftrain:a.b["x.y"][2] = 1: an index under a quoted key (Pulumi.s.yaml:5)',
        'tftrain:a.b["x.y"].c = 1: a name under a quoted key (Pulumi.s.yaml:5)',
        "tftrain:imageX: unknown key (Pulumi.s.yaml:9)",
        "tftrain:other = 1: a key the file does not write",
    ]


def test_a_config_error_lists_each_problem_on_its_own_line() -> None:
    error = ConfigError(["tftrain:a = 1: first", "tftrain:b = 2: second"])
    assert error.problems == ["tftrain:a = 1: first", "tftrain:b = 2: second"]
    assert (
        str(error) == "invalid stack config:\n  - tftrain:a = 1: first\n  - tftrain:b = 2: second"
    )


@pytest.mark.parametrize(
    ("parts", "namespace", "shown"),
    [
        ((), "tftrain", "tftrain"),
        (("cluster", "gpuPool", "instanceTypes", 0), "tftrain",
         "tftrain:cluster.gpuPool.instanceTypes[0]"),
        (("sweep", "parameters", "hyperparams.learningRate", "values", 1, "x"), "tftrain",
         'tftrain:sweep.parameters["hyperparams.learningRate"].values[1].x'),
        (("region",), "alicloud", "alicloud:region"),
    ],
)  # fmt: skip
def test_a_key_is_named_as_pulumi_config_set_path_takes_it(
    parts: tuple, namespace: str, shown: str
) -> None:
    assert key_path(parts, namespace) == shown


def test_the_engine_hands_the_program_text_and_go_s_json() -> None:
    """pulumi/pulumi's config.Plaintext: a string as written, null as "", anything else as
    Go's encoding/json (compact; a whole float below 1e21 without a fraction or exponent)."""
    entries = {
        "worker": {"number": 2, "cpu": "2"},
        "tftrain:image": "reg.io/x:1",
        "alicloud:region": None,
        "tftrain:sizes": [1e20, 1e21, 2.5],
    }
    assert engine_config(entries) == {
        "tftrain:worker": '{"number":2,"cpu":"2"}',
        "tftrain:image": "reg.io/x:1",
        "alicloud:region": "",
        "tftrain:sizes": "[100000000000000000000,1e+21,2.5]",
    }


@pytest.mark.parametrize(
    ("text", "value"),
    [("4", "4"), ("true", "true"), (' [1, "a"]', [1, "a"]), ('{"a": 1}', {"a": 1}), ("[x", "[x")],
)
def test_the_program_decodes_objects_and_lists_and_keeps_scalars_as_text(
    text: str, value: object
) -> None:
    assert program_value(text) == value


def test_a_list_item_s_problem_names_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(
        "config:\n"
        "  tftrain:image: registry.example.com/tftrain/trainer:1\n"
        "  tftrain:cluster:\n"
        "    kind: ack\n"
        "    gpuPool:\n"
        "      instanceTypes:\n"
        "        - ecs.gn6i-c4g1.xlarge\n"
        "        - Not_A_Type\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_stack_file(path)
    [problem] = [p for p in caught.value.problems if "instanceTypes" in p]
    assert problem.startswith('tftrain:cluster.gpuPool.instanceTypes[1] = "Not_A_Type": ')
    assert problem.endswith(" (Pulumi.s.yaml:8)")


def test_a_missing_stack_file_names_the_stacks_beside_it(tmp_path: Path) -> None:
    missing = tmp_path / "Pulumi.c.yaml"
    with pytest.raises(ConfigError) as refused:
        read_stack(missing)
    assert refused.value.problems == [f"stack file {missing} not found; stacks here: none"]
    for name in ("b", "a"):
        (tmp_path / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    with pytest.raises(ConfigError) as refused:
        read_stack(missing)
    assert refused.value.problems == [f"stack file {missing} not found; stacks here: a, b"]


def test_an_empty_stack_file_has_no_config_and_an_odd_top_key_is_named(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.e.yaml"
    path.write_text("")
    assert read_stack(path).entries == {}
    path.write_text("config: {}\nzzz: 1\n")
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    assert refused.value.problems == [
        f"{path}:2: zzz: unknown key; a stack file has config, encryptedkey, encryptionsalt, "
        "environment, secretsprovider"
    ]


def test_a_key_with_a_second_colon_is_refused_by_key_as_pulumi_refuses_it(
    tmp_path: Path,
) -> None:
    """pulumi/pulumi's config.ParseKey takes one colon, or the old `<ns>:config:<name>`; any
    other key (`tftrain:worker:number`, a section's setting written as a key) it refuses, so
    the stack never deploys: refused here too, by key and line, not later as unknown."""
    path = tmp_path / "Pulumi.colons.yaml"
    path.write_text(
        "config:\n"
        "  tftrain:image: registry.example.com/tftrain/trainer:1\n"
        "  tftrain:worker:number: 3\n"
        "  alicloud:a:b:c: x\n"
        "  tftrain:config:worker:number: 3\n"
    )
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    assert refused.value.problems == [
        f"{path}:3: tftrain:worker:number: not a config key: Pulumi reads a key as "
        "<namespace>:<name>, with one colon, and refuses this one; a setting inside a section "
        "is nested under it (number under tftrain:worker)",
        f"{path}:4: alicloud:a:b:c: not a config key: Pulumi reads a key as "
        "<namespace>:<name>, with one colon, and refuses this one; a setting inside a section "
        "is nested under it (b:c under alicloud:a)",
        f"{path}:5: tftrain:config:worker:number: not a config key: Pulumi reads a key as "
        "<namespace>:<name>, with one colon, and refuses this one; a setting inside a section "
        "is nested under it (worker:number under tftrain:config)",
    ]


def test_the_old_config_form_of_a_key_is_the_key_itself(tmp_path: Path) -> None:
    """`tftrain:config:worker` is `tftrain:worker` to config.ParseKey (its compatibility form),
    so it configures the worker, names its line, and clashes with `tftrain:worker`."""
    path = tmp_path / "Pulumi.old.yaml"
    path.write_text(
        "config:\n"
        "  tftrain:image: registry.example.com/tftrain/trainer:1\n"
        "  tftrain:config:worker:\n"
        "    number: 3\n"
        "  alicloud:config:region: cn-hangzhou\n"
    )
    stack = read_stack(path)
    assert stack.entries["alicloud:region"] == "cn-hangzhou"
    assert stack.lines["tftrain:worker.number"] == 4
    assert load_stack_file(path).worker.number == 3
    path.write_text("config:\n  tftrain:worker: {}\n  tftrain:config:worker: {}\n")
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    assert refused.value.problems == [
        f"{path}:3: tftrain:config:worker: the same key as tftrain:worker to Pulumi, set twice"
    ]


def test_an_environment_named_alone_is_listed_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.esc.yaml"
    path.write_text(ESC_STACK.replace("  - team/training-secrets\n", " team/solo\n"))
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    (problem,) = refused.value.problems
    assert problem.startswith(
        f"{path}:1: environment: this stack imports Pulumi ESC environments (team/solo), "
    )


def test_yaml_that_does_not_parse_is_named_by_where_it_came_from() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_yaml("[1, 2", "--set worker.number")
    (problem,) = refused.value.problems
    assert problem.startswith("--set worker.number:1: not valid YAML: ")


# strconv.ParseInt's int64 range with an explicit + sign (ParseUint takes no sign).
@pytest.mark.parametrize(
    ("text", "value"),
    [("+127", 127), ("+9223372036854775807", 2**63 - 1), ("-0", 0), ("+0x7f", 127)],
)
def test_a_signed_integer_is_read_up_to_int64(text: str, value: int) -> None:
    read = parse_yaml(text, "--set")
    assert read == value and type(read) is int


def test_a_stack_file_of_exactly_the_limit_is_read_and_one_byte_more_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small limit: 4 MiB of YAML takes seconds to parse on a loaded machine.
    # The module (infra.config's stack_file is a function of the same name).
    monkeypatch.setattr(sys.modules["infra.config.stack_file"], "MAX_STACK_FILE_BYTES", 100)
    path = tmp_path / "Pulumi.edge.yaml"
    head = "config:\n  tftrain:image: registry.example.com/a/b:1\n#"
    path.write_text(head + "x" * (99 - len(head)) + "\n")
    assert path.stat().st_size == 100
    assert read_stack(path).entries == {"tftrain:image": "registry.example.com/a/b:1"}
    path.write_text(head + "x" * (100 - len(head)) + "\n")
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    assert refused.value.problems[0].startswith(f"{path}: larger than ")


def test_an_unknown_namespace_lists_the_ones_read() -> None:
    assert namespace_problem("kubernets:context") == (
        "kubernets:context: unknown config namespace, did you mean kubernetes? keys are "
        "<namespace>:<name> with a namespace of tftrain, alicloud, kubernetes, pulumi"
    )
    assert namespace_problem("aws:region") == (
        "aws:region: unknown config namespace; keys are <namespace>:<name> with a namespace of "
        "tftrain, alicloud, kubernetes, pulumi"
    )
    assert namespace_problem("tftrain:worker") is None
    assert namespace_problem("tftrain:") is not None


@pytest.mark.parametrize("text", [".hidden", ".5.5", ".e3", ".1x"])
def test_a_word_starting_with_a_dot_that_is_no_float_stays_text(text: str) -> None:
    assert parse_yaml(text, "--set") == text


def test_a_top_level_key_s_problem_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.top.yaml"
    path.write_text("config:\n  tftrain:image: registry.example.com/a/b:1\n  tftrain:imag: x\n")
    with pytest.raises(ConfigError) as refused:
        load_stack_file(path)
    (problem,) = refused.value.problems
    assert problem.startswith("tftrain:imag: unknown key, did you mean image?")
    assert problem.endswith(" (Pulumi.top.yaml:3)")


def test_a_document_of_exactly_the_value_limit_is_read_and_one_more_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A small limit (the real one is 100,000): a list node and its items each count.
    monkeypatch.setattr(sys.modules["infra.config.stack_file"], "MAX_VALUES", 5)
    assert parse_yaml("[1, 2, 3, 4]", "--set") == [1, 2, 3, 4]
    with pytest.raises(ConfigError) as refused:
        parse_yaml("[1, 2, 3, 4, 5]", "--set")
    assert refused.value.problems == ["--set:1: nested deeper than 32 or over 5 values"]


@pytest.mark.parametrize(("lists", "accepted"), [(29, True), (30, False)])
def test_a_value_32_keys_and_indices_deep_is_the_deepest_read(
    lists: int, accepted: bool, tmp_path: Path
) -> None:
    # config, tftrain:job, args and 29 list indices: the innermost value is 32 deep.
    path = tmp_path / "Pulumi.deep.yaml"
    path.write_text("config:\n  tftrain:job: {args: " + "[" * lists + "1" + "]" * lists + "}\n")
    if accepted:
        read_stack(path)
    else:
        with pytest.raises(ConfigError, match="nested deeper than 32"):
            read_stack(path)


def test_nesting_past_the_readers_recursion_is_refused_by_file(tmp_path: Path) -> None:
    # 2,000 levels: the YAML composer recurses once per level and stops at Python's limit
    # (1,000) before the depth rule (32) can look; the file is named, nothing is read.
    path = tmp_path / "Pulumi.deep.yaml"
    path.write_text("config:\n  tftrain:job: " + "[" * 2000 + "]" * 2000 + "\n")
    with pytest.raises(ConfigError) as refused:
        read_stack(path)
    assert refused.value.problems == [f"{path}: nested too deeply to read"]
