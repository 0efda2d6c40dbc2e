"""What the installed pulumi_alicloud SDK documents about a resource's arguments.

The SDK is generated from the provider's schema, and its docstrings carry what the provider
says about each argument: that it is deprecated (also logged as "<name> is deprecated:"),
that it is read only at creation ("Only works for **Create** Operation", "cannot be
modified"), or that changing it makes a new resource ("ForceNew", "recreates the resource").
The render's summary and the tests read the same text through this module, so both follow
whichever provider version is installed.

Only what the docstrings state is known here: the SDK leaves the force-new flag out of most
arguments' text (the provider plugin holds it), so an argument absent from
`force_new_arguments` may still be replaced on change. `replacing_arguments` adds what the
bridged Terraform provider's schema declares for the types the program registers
(`infra.render.force_new_fields`, read off the provider source by hand).
"""

from __future__ import annotations

import importlib
import inspect
import re
from functools import cache
from types import ModuleType

from infra.render.force_new_fields import FORCE_NEW

# A sentence saying a change makes a new resource; `_NEGATED` rules out "will not force a
# replacement" and "the ForceNew attribute has been removed".
_FORCE_NEW = re.compile(
    r"\bForceNew\b|\brecreates? the (?:resource|instance)\b|\bforces? (?:a )?(?:new resource|"
    r"replacement)\b|\bchanging (?:this|it)\b.*\bcreates? a new resource\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\bnot\b|\bremoved\b|\bno longer\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# `:param <type> name: text`, the text running on over indented lines up to the next
# `:param` or the docstring's end.
_PARAM = re.compile(r':param [^\n]*?\]{1,3} (\w+): (.*?)(?=\n\s*:param |\n\s*"""|\Z)', re.DOTALL)


def snake(name: str) -> str:
    """The SDK's argument name of an engine input name: `storageType` → `storage_type`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def sdk_module(token: str) -> ModuleType:
    """The SDK module of a type or function token, e.g. alicloud:cs/nodePool:NodePool."""
    module, member = token.split(":")[1].split("/")
    package = "pulumi_alicloud" if module == "index" else f"pulumi_alicloud.{module}"
    # The package first, loaded whole: the SDK's packages are pulumi `_LazyModule`s, which
    # load on the first attribute read outside the introspection ones (`dir`, `__name__`
    # are not enough). A submodule imported while its package is still a stub leaves the
    # package without its classes: `pulumi_alicloud.nas.FileSystem` missing for every later
    # program run in the process.
    getattr(importlib.import_module(package), "__all__", None)
    return importlib.import_module(f"{package}.{snake(member)}")


@cache
def sdk_source(token: str) -> str:
    """The source text of `sdk_module(token)`, whose docstrings the functions below read."""
    return inspect.getsource(sdk_module(token))


def argument_docs(source: str) -> dict[str, str]:
    """The `:param` text of each argument, all its lines (the first, the resource's own
    arguments class, wins over the state class and the constructor)."""
    docs: dict[str, str] = {}
    for name, text in _PARAM.findall(source):
        docs.setdefault(name, " ".join(text.split()))
    return docs


def deprecated_arguments(source: str) -> set[str]:
    logged = set(re.findall(r'pulumi\.log\.warn\("""(\w+) is deprecated:', source))
    documented = {
        name for name, text in argument_docs(source).items() if "deprecated" in text.lower()
    }
    return logged | documented


def resource_is_deprecated(source: str, class_name: str) -> bool:
    return bool(
        re.search(rf"class {class_name}\(pulumi\.CustomResource\):\s*\n\s*warnings\.warn", source)
    )


def says_force_new(text: str) -> bool:
    """Whether an argument's documentation states that changing it makes a new resource."""
    return any(
        _FORCE_NEW.search(sentence) and not _NEGATED.search(sentence)
        for sentence in _SENTENCE_END.split(text)
    )


@cache
def force_new_arguments(token: str) -> frozenset[str]:
    """The arguments (SDK names) of resource type `token` documented as replaced on change;
    none for a type outside the alicloud SDK."""
    if not token.startswith("alicloud:"):
        return frozenset()
    docs = argument_docs(sdk_source(token))
    return frozenset(name for name, text in docs.items() if says_force_new(text))


def has_schema_table(token: str) -> bool:
    """Whether the provider schema's force-new arguments of `token` were recorded, so that an
    argument outside `replacing_arguments` is known to update in place."""
    return token in FORCE_NEW


def replacing_arguments(token: str) -> frozenset[str]:
    """The arguments (SDK names) whose change replaces a resource of type `token`: those the
    provider schema declares force-new (the table) and those the SDK documents so."""
    return FORCE_NEW.get(token, frozenset()) | force_new_arguments(token)
