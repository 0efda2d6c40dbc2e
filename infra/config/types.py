"""What each stack config key accepts, as `Annotated` types: one per key of the model.

A type's description completes "must be ..." in the error a user reads and is the key's
description in the JSON Schema. Coercions are only those the Pulumi engine needs: it hands
scalars over as strings ("4", "true") and numbers inside objects as floats (2.0). Nothing
else is guessed: `yes` is not a boolean and 2.5 is not a replica count.
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, WithJsonSchema

from infra.config.image_ref import FORMAT as IMAGE_REFERENCE_FORMAT
from infra.config.image_ref import ImageReferenceError, parse_image_reference
from infra.config.stack_file import PROJECT

# Kubernetes' own limits: RFC 1123 labels (namespaces), label names and prefixes.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_PREFIX = r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/"
_ECS_TYPE = r"ecs\.[a-z0-9][a-z0-9.-]*"
INT32_MAX = 2**31 - 1
# Replica names are `<job>-<type>-<index>`: the longest type ("evaluator") and a three-digit
# index must still fit the 63 characters of a Service name.
MAX_JOB_NAME = 63 - len("-evaluator-999")
QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
FACTORS = {"": 1, "m": 1e-3} | {s: 1000.0 ** (i + 1) for i, s in enumerate("kMGTPE")}
FACTORS |= {f"{s}i": 1024.0 ** (i + 1) for i, s in enumerate("KMGTPE")}
_BYTES = (None, *(suffix for suffix in FACTORS if suffix not in ("", "m")))
# The stack creates its namespace: one every cluster already has would fail mid-deploy.
_RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# A volume must not hide the root, /tmp (the pods' scratch emptyDir) or system trees.
_SYSTEM_DIRS = ("/", "/tmp", "/proc", "/sys", "/dev", "/etc", "/usr", "/bin", "/sbin", "/lib")
_SCRATCH = ("/tmp/", "/proc/", "/sys/", "/dev/")  # nor anything under these


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number, not true or false")
    return value


# "010" as text (`pulumi config set --path ... 010` keeps it a string) would be 10, while `010`
# unquoted in a stack file is 8 to the engine (Go's octal): neither is guessed.
_LEADING_ZERO = re.compile(r"^\s*[-+]?0[0-9_]+\s*$")


def _whole_number(value: Any) -> Any:
    if isinstance(value, str) and _LEADING_ZERO.match(value):
        raise ValueError("a number without a leading 0")
    return _not_bool(value)


def _bool(value: Any) -> Any:
    # Pulumi passes booleans set on the command line as the strings "true" and "false".
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise ValueError("true or false")
    return value


def _number_as_text(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def integer(low: int, high: int) -> Any:
    bounds = f"an integer from {low} to {high}"
    return Annotated[
        int, Field(ge=low, le=high, description=bounds), BeforeValidator(_whole_number)
    ]


def text(pattern: str, allowed: str, max_length: int | None = None) -> Any:
    return Annotated[str, Field(pattern=pattern, max_length=max_length, description=allowed)]


def checked(check: Callable[[str], bool], allowed: str, base: Any = str) -> Any:
    def validate(value: Any) -> Any:
        if not check(value):
            raise ValueError(allowed)
        return value

    return Annotated[base, Field(description=allowed), AfterValidator(validate)]


def _amount(value: str, suffixes: tuple[str | None, ...], minimum: float, maximum: float) -> bool:
    match = QUANTITY.fullmatch(value)
    if not match or match.group(2) not in suffixes:
        return False
    return minimum <= float(match.group(1)) * FACTORS[match.group(2) or ""] <= maximum


def _image(value: str) -> str:
    if value:
        try:
            parse_image_reference(value)
        except ImageReferenceError as error:
            # The grammar's reason follows the description (`errors.describe` shows it).
            raise ValueError(f"{_IMAGE}: {error}") from None
    return value


def is_image_reference(value: str) -> bool:
    try:
        return bool(_image(value))
    except ValueError:
        return False


def _absolute(value: str) -> bool:
    return value.startswith("/") and "//" not in value and posixpath.normpath(value) == value


def _mount_ok(value: str) -> bool:
    return _absolute(value) and value not in _SYSTEM_DIRS and not value.startswith(_SCRATCH)


def _ipv4_block(value: str) -> bool:
    try:
        return ipaddress.ip_network(value, strict=True).version == 4
    except ValueError:
        return False


_AS_TEXT = BeforeValidator(_number_as_text, json_schema_input_type=str | float)
# Upper bounds well above the largest ECS or ECI instance (hundreds of vCPUs, a few TiB): a
# larger request can never be scheduled, so its pods would stay Pending forever.
MAX_CPU = 1024
MAX_MEMORY = 32 * 2**40
_CPU = f"a positive Kubernetes quantity of CPU such as 500m, 1 or 2.5 (at most {MAX_CPU})"
_MEMORY = (
    "a positive Kubernetes quantity of memory such as 512Mi or 4Gi (at least 64Mi, at most 32Ti)"
)
_IMAGE = f"an image reference {IMAGE_REFERENCE_FORMAT}"
_NAMESPACE = "a DNS label of at most 63 characters, not default or kube-* (every cluster has them)"
_LABEL = "a Kubernetes label: [prefix/]name and value of at most 63 alphanumerics and - _ ."

Bool = Annotated[bool, BeforeValidator(_bool), Field(description="true or false")]
Cpu = Annotated[checked(lambda v: _amount(v, (None, "m"), 0.001, MAX_CPU), _CPU), _AS_TEXT]
Memory = Annotated[checked(lambda v: _amount(v, _BYTES, 64 * 2**20, MAX_MEMORY), _MEMORY), _AS_TEXT]
Image = Annotated[str, Field(description=_IMAGE), AfterValidator(_image)]
AbsolutePath = checked(_absolute, "an absolute, normalised path such as /data (no //, . or ..)")
MountPath = checked(_mount_ok, "an absolute, normalised path outside /tmp, / and system dirs")
# A node directory given to every training pod read-write: never the root or a directory the
# node's own software lives in (a pod could rewrite the kubelet's config or /etc/passwd).
_NODE_DIRS = ("/boot", "/etc", "/proc", "/sys", "/dev", "/usr", "/bin", "/sbin", "/lib",
              "/lib64", "/root", "/run", "/var/run", "/var/lib/kubelet", "/var/lib/docker",
              "/var/lib/containerd", "/var/log", "/opt/cni")  # fmt: skip
HostPath = checked(
    lambda v: _mount_ok(v) and not any(v == d or v.startswith(d + "/") for d in _NODE_DIRS),
    "an absolute, normalised node directory such as /var/lib/tftrain, not / and not in a "
    "system directory (" + ", ".join(_NODE_DIRS) + ", /tmp)",
)
Ipv4Cidr = checked(_ipv4_block, "an IPv4 CIDR block such as 192.168.0.0/16")
# Who may reach a public endpoint: a prefix written out, so a bare address is not taken for /32.
# The whole Internet is not a source range: a public endpoint without one is refused already.
SourceRange = checked(
    lambda v: "/" in v and _ipv4_block(v) and not v.endswith("/0"),
    "an IPv4 CIDR block such as 203.0.113.0/24, not 0.0.0.0/0 (the whole Internet)",
)
Namespace = checked(
    lambda v: not v.startswith("kube-") and v not in _RESERVED_NAMESPACES,
    _NAMESPACE,
    text(DNS_LABEL, _NAMESPACE, 63),
)
Labels = Annotated[
    dict[text(f"^({_LABEL_PREFIX})?{_LABEL_NAME}$", _LABEL), text(f"^({_LABEL_NAME})?$", _LABEL)],
    Field(min_length=1, description=f"a non-empty mapping (e.g. train: mnist), each {_LABEL}"),
]
JobName = text(
    r"^[a-z]([-a-z0-9]*[a-z0-9])?$",  # a Service name (RFC 1035): starts with a letter
    f"a DNS label starting with a letter, of at most {MAX_JOB_NAME} characters",
    MAX_JOB_NAME,
)
RunId = text(f"^$|{DNS_LABEL}", "empty (derived) or a DNS label such as lr-0-01", 63)
# An element may span lines: a `sh -c` script written as a YAML block (`- |`) ends in a newline.
Command = Annotated[
    tuple[text(r"\S", "a string with a non-space character (lines allowed)"), ...],
    Field(min_length=1, description="a non-empty list of non-blank strings"),
]
# Optional per group: unset (None) means the job's command / args.
GroupCommand = Annotated[
    Command | None,
    Field(description="unset (the job's command) or a non-empty list of non-blank strings"),
]
GroupArgs = Annotated[
    tuple[str, ...] | None, Field(description="unset (the job's args) or a list of strings")
]


# What an env value set with `pulumi config set --secret --path` reads as offline: the
# ciphertext cannot be decrypted without Pulumi, and must not be shown either.
SECRET_PLACEHOLDER = "[secret]"


def is_secure(value: Any) -> bool:
    """A stack file's form of a secret: `{secure: <ciphertext>}`."""
    return isinstance(value, dict) and set(value) == {"secure"} and isinstance(value["secure"], str)


def _env_value(value: Any) -> Any:
    # Env values are text to Kubernetes; `1` and `0.5` are meant as written. true/false are
    # refused: quoted they are unambiguous, unquoted they would read as "True" to some tools.
    if is_secure(value):
        return SECRET_PLACEHOLDER
    if isinstance(value, bool):
        raise ValueError("a string (quote it: 'true')")
    return _number_as_text(value)


# Kubernetes' env var names (C_IDENTIFIER-ish: validation.IsEnvVarName) and their values.
EnvName = text(
    r"^[-._a-zA-Z][-._a-zA-Z0-9]*$",
    "an environment variable name: letters, digits, _, - and ., not starting with a digit",
    253,
)
EnvMap = Annotated[
    dict[EnvName, Annotated[str, BeforeValidator(_env_value)]],
    Field(
        description="a mapping of environment variable names to string values (a value may "
        "be a Pulumi secret: pulumi config set --secret --path)"
    ),
]
DataDir = checked(lambda v: not v or _absolute(v), "empty (bundled MNIST) or an absolute path")
LearningRate = Annotated[
    float,
    Field(gt=0, lt=10, allow_inf_nan=False, description="a number > 0 and < 10"),
    BeforeValidator(_not_bool),
]
StorageSize = text(r"^[1-9][0-9]*(Mi|Gi|Ti)$", "a size in Mi, Gi or Ti such as 5Gi")
Host = text(r"^$|^[A-Za-z0-9][-A-Za-z0-9.:]*$", "empty or a host name or IP address")
InstanceTypes = Annotated[
    tuple[text(f"^{_ECS_TYPE}$", "an ECS instance type such as ecs.g7.xlarge"), ...],
    Field(min_length=1, description="a non-empty list of ECS instance types"),
]
ClusterName = text(f"^$|{DNS_LABEL}", "empty (derived) or a DNS label", 63)
# A platform stack as `pulumi.StackReference` names it: fully qualified, so the reference does
# not depend on who runs `pulumi up` (organization/ for the self-managed backends).
StackName = text(
    r"^$|^[A-Za-z0-9][-_.A-Za-z0-9]*/[-_.A-Za-z0-9]+/[-_.A-Za-z0-9]+$",
    "empty or <organization>/<project>/<stack> (a platform stack's fully qualified name)",
)
# ACK creates the cluster on the newest version it offers; later runs keep that version.
# Only the format is checked here: whether ACK offers an explicit version depends on the
# region and the day, so the program looks it up at deploy time (infra.cloud.kubernetes_version).
LATEST_VERSION = "latest"
AckVersion = text(
    rf"^({LATEST_VERSION}|1\.[0-9]+\.[0-9]+(-aliyun\.[0-9]+)?)$",
    f"{LATEST_VERSION} (the newest ACK offers at creation, then kept) or a version ACK offers "
    "for new clusters, such as 1.34.1-aliyun.1 (looked up at deploy time)",
)
EciSpec = text(f"^$|^{_ECS_TYPE}$", "empty or an ECS GPU type such as ecs.gn6i-c4g1.xlarge")
VpcId = text(r"^$|^vpc-[a-z0-9]+$", "empty or a VPC id vpc-...")
VswitchId = text(r"^$|^vsw-[a-z0-9]+$", "empty or a vSwitch id vsw-...")
ZoneId = text(
    r"^$|^[a-z]{2}(-[a-z0-9]+)+-[a-z0-9]*[a-z]$", "empty or a zone id such as cn-hangzhou-i", 64
)
# A General-purpose NAS file system's id: ten lower-case letters and digits (the NAS API's
# samples 31a8e4****, 1ca404****); Extreme (extreme-...) and CPFS (cpfs-...) are other products.
NasFileSystemId = text(
    r"^$|^[0-9a-z]{10}$",
    "empty (the stack creates a NAS file system) or the id of an existing General-purpose NAS "
    "file system: ten lower-case letters and digits such as 31a8e48eda",
    10,
)
# OSS bucket names (OSS naming rules): 3-63 lower-case letters, digits and hyphens, starting
# and ending with a letter or digit.
BucketName = text(
    r"^$|^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$",
    "empty or an OSS bucket name: 3 to 63 lower-case letters, digits and -, not starting or "
    "ending with -",
)


def _object_prefix(value: str) -> bool:
    if not value:
        return True
    parts = value.split("/")
    return (
        value.endswith("/")
        and len(value) <= 1023
        and all(part not in ("", ".", "..") for part in parts[:-1])
        and not any(ord(c) < 32 for c in value)
        # RAM reads * and ? in a policy's resource as wildcards: `*/` would grant the
        # export's writes on every prefix of the bucket, the input's included.
        and not any(c in "*?" for c in value)
    )


# An object prefix inside a bucket: relative, '/'-separated, no empty, . or .. segments.
ObjectPrefix = checked(
    _object_prefix,
    "empty (the bucket's root) or a relative prefix ending in / such as mnist/ (no leading /, "
    "no empty, . or .. segments, no * or ? (RAM wildcards), at most 1023 characters)",
)
# RAM role names: 1-64 letters, digits, '.' and '-' (RAM CreateRole, RoleName).
RamRoleName = text(
    r"^$|^[A-Za-z0-9.-]{1,64}$", "empty or a RAM role name: letters, digits, . and -", 64
)
# A Kubernetes object name (a DNS subdomain), or empty.
ResourceName = text(
    r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    "empty or a Kubernetes object name such as oss-credentials",
    253,
)
# A Secret the user manages, as `<namespace>/<name>`: a PersistentVolume's nodePublishSecretRef
# names both, and the namespace must exist before the stack (the job's own does not).
SecretRef = text(
    r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    "empty or <namespace>/<name> of a Secret you manage (keys akId, akSecret), such as "
    "oss/oss-credentials",
    317,
)
# An Alibaba Cloud OSS endpoint host (no scheme), as OSS's "Regions and endpoints" lists them:
# oss-<region>[-internal].aliyuncs.com, the dual-stack <region>.oss.aliyuncs.com, or the
# acceleration endpoints. Any other host would receive the signed requests and serve the data.
OssEndpoint = text(
    r"^$|^(oss-(accelerate(-overseas)?|[a-z]{2}-[a-z0-9-]+?(-internal)?)"
    r"|[a-z]{2}-[a-z0-9-]+\.oss)\.aliyuncs\.com$",
    "empty (the region's internal endpoint) or an Alibaba Cloud OSS endpoint host: "
    "oss-<region>[-internal].aliyuncs.com such as oss-cn-hangzhou-internal.aliyuncs.com, "
    "<region>.oss.aliyuncs.com, or oss-accelerate[-overseas].aliyuncs.com",
    253,
)


# The validation context key (`infra.config.parse_config`) listing the top-level keys the
# engine marked secret: in the program a secret arrives decrypted, as plain text, and only
# this list tells it from a value typed in the clear.
SECRET_KEYS = "secret_keys"


class Secret:
    """Marks a key whose value must be a Pulumi secret; an error about it never shows it."""


def secret_text(section: str, key: str) -> Any:
    """Key `key` of `section`, which holds a secret: `{secure: ...}` in a stack file read
    offline (then SECRET_PLACEHOLDER: it cannot be decrypted here), or the decrypted text when
    the engine marked `section` secret (`pulumi config set --secret --path` does)."""
    allowed = (
        f"empty or a Pulumi secret: pulumi config set --secret --path {PROJECT}:{section}.{key} "
        "<value> (plain text would sit in the stack file and the state)"
    )

    def validate(value: Any, info: ValidationInfo) -> Any:
        if is_secure(value):
            return SECRET_PLACEHOLDER
        if value == "":
            return value
        if isinstance(value, str) and section in (info.context or {}).get(SECRET_KEYS, ()):
            return value
        raise ValueError(allowed)

    schema = {
        "description": allowed,
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
    return Annotated[
        str,
        Field(description=allowed),
        Secret(),
        BeforeValidator(validate),
        WithJsonSchema(schema),
    ]


# Where the kubelet pulls from, as its credential lookup names it: a host[:port], no scheme.
RegistryHost = text(
    r"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$",
    "empty (no credentials) or a registry host[:port] in lower case, such as "
    "crpi-<id>-vpc.cn-hangzhou.personal.cr.aliyuncs.com (no https://, no path)",
    253,
)
# Docker's `auth` is base64(username:password), split at the first colon: none in the name.
RegistryUsername = text(r"^$|^[^\s:]+$", "empty or a user name without spaces or :", 255)


# Sweeps (`infra.config.model.SweepConfig`): how many trials one stack may hold, and the keys.
MAX_TRIALS = 1000
SweepBound = Annotated[
    float,
    Field(allow_inf_nan=False, description="a number"),
    BeforeValidator(_not_bool),
]


def _not_secret(value: Any, info: ValidationInfo) -> Any:
    # A trial's Jobs, review lines and run id all show its point: a secret cannot be one.
    if is_secure(value) or "sweep" in (info.context or {}).get(SECRET_KEYS, ()):
        raise ValueError(
            "a plain value: a Pulumi secret cannot be swept (each trial's value is shown in "
            "its Jobs, the review and its run id); keep it in job.env, the same for all trials"
        )
    return value


SweepValue = Annotated[Any, BeforeValidator(_not_secret)]
MetricName = text(
    r"^[A-Za-z0-9_.][-A-Za-z0-9_./]*$",
    "a TensorBoard scalar tag such as test_accuracy or eval/loss",
    256,
)

# A budget (`infra.config.model.BudgetConfig`): amounts of money in CNY, as the price table's.
Cny = Annotated[
    float,
    Field(gt=0, allow_inf_nan=False, description="an amount in CNY greater than 0"),
    BeforeValidator(_not_bool),
]
