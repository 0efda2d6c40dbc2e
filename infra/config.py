"""The typed, validated model of one stack's configuration.

Built from a plain dict (the `tftrain:`-namespaced keys of a stack file, prefix removed), so
the Pulumi program, the offline render and the local launcher all read a stack the same
way. Every problem is collected and reported at once, each naming the key as a user would
type it for `pulumi config set --path`, the value found and what is allowed; a stack that
fails here creates nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infra.image_ref import FORMAT as IMAGE_REFERENCE_FORMAT
from infra.image_ref import ImageReferenceError, parse_image_reference

PROJECT = "tftrain"
CLUSTER_KINDS = ("existing", "ack", "ask")
# Terway with its NetworkPolicy option enforces the job's NetworkPolicies; Flannel ignores them.
NETWORK_PLUGINS = ("terway", "flannel")
# ACK creates the cluster on the newest version it offers; later runs keep that version.
LATEST_VERSION = "latest"
STORAGE_KINDS = ("nas", "nfs", "hostPath")
STRATEGIES = ("auto", "parameter_server", "multi_worker_mirrored")
SERVICE_TYPES = ("ClusterIP", "LoadBalancer")
PULL_POLICIES = ("IfNotPresent", "Always", "Never")

# RFC 1123 label: what Kubernetes accepts for namespaces and Service names.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# Kubernetes label keys (optional DNS prefix + name) and values.
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_STORAGE_SIZE = re.compile(r"^[1-9][0-9]*(Mi|Gi|Ti)$")
# Replica names are `<job>-<type>-<index>`; the longest type ("evaluator") and a
# three-digit index must still fit the 63-character Service-name limit.
_MAX_JOB_NAME = 63 - len("-evaluator-999")


class ConfigError(ValueError):
    """One or more stack config values are invalid; the message lists each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(
            "invalid stack config:\n" + "\n".join(f"  - {problem}" for problem in problems)
        )


@dataclass(frozen=True)
class JobConfig:
    name: str
    namespace: str
    run_id: str
    command: tuple[str, ...]
    args: tuple[str, ...]
    data_dir: str
    backoff_limit: int
    ttl_seconds_after_finished: int
    active_deadline_seconds: int | None  # None: no deadline
    gang_scheduling: bool
    evaluator_in_cluster: bool


@dataclass(frozen=True)
class ReplicaGroup:
    """One replica type (`chief`, `worker`, `ps`, `evaluator`) of the training job."""

    type: str
    number: int
    image: str
    image_pull_policy: str
    gpu_count: int
    cpu: str
    memory: str
    spot: bool  # preemptible capacity: ECI spot pods (ask), the spot GPU pool (ack)


@dataclass(frozen=True)
class Hyperparams:
    epochs: int
    batch_size: int
    learning_rate: float
    strategy: str
    checkpoint_steps: int
    keep_checkpoints: int
    log_steps: int
    steps_per_execution: int
    max_steps: int


@dataclass(frozen=True)
class TensorBoardConfig:
    enabled: bool
    image: str
    service_type: str
    public: bool
    allowed_source_ranges: tuple[str, ...]
    cpu: str
    memory: str


@dataclass(frozen=True)
class StorageConfig:
    kind: str
    size: str
    mount_path: str
    pv_labels: dict[str, str]
    nfs_server: str
    nfs_path: str
    host_path: str
    nas_storage_type: str
    nas_protocol: str
    retain_on_destroy: bool


@dataclass(frozen=True)
class NodePoolConfig:
    instance_types: tuple[str, ...]
    size: int
    min_size: int
    max_size: int
    disk_size: int


@dataclass(frozen=True)
class ClusterConfig:
    kind: str
    name: str
    kubernetes_version: str
    public_api_server: bool
    network_plugin: str
    gpu_pool: NodePoolConfig
    cpu_pool: NodePoolConfig
    eci_gpu_spec: str
    image_cache: bool
    image_cache_size: int
    # Nodes the spot GPU pool scales up to from 0; 0 = no spot pool (ack only).
    spot_gpu_pool_max_size: int


@dataclass(frozen=True)
class NetworkConfig:
    vpc_id: str
    vswitch_id: str
    vpc_cidr: str
    vswitch_cidr: str
    zone_id: str
    nat_gateway: bool
    pod_cidr: str
    service_cidr: str
    pod_vswitch_cidr: str


@dataclass(frozen=True)
class StackConfig:
    job: JobConfig
    cluster: ClusterConfig
    network: NetworkConfig
    storage: StorageConfig
    chief: ReplicaGroup
    worker: ReplicaGroup
    ps: ReplicaGroup
    evaluator: ReplicaGroup
    hyperparams: Hyperparams
    tensorboard: TensorBoardConfig
    raw: dict[str, Any] = field(compare=False, repr=False)

    @property
    def replica_groups(self) -> tuple[ReplicaGroup, ...]:
        """Groups in TFJob order, including empty ones."""
        return (self.chief, self.worker, self.ps, self.evaluator)

    @property
    def logs_root(self) -> str:
        """Where every run of this job writes, so TensorBoard can overlay runs."""
        return f"{self.storage.mount_path.rstrip('/')}/{self.job.name}"

    @property
    def output_dir(self) -> str:
        return f"{self.logs_root}/{self.job.run_id}"

    @property
    def uses_gpu(self) -> bool:
        return any(group.gpu_count > 0 for group in self.replica_groups if group.number)


class _Reader:
    """Walks one mapping of the raw config, collecting problems instead of raising."""

    def __init__(self, data: Any, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        self.seen: set[str] = set()
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            self.fail("", data, "a mapping of keys")
            data = {}
        self.data: Mapping[str, Any] = data

    def key(self, name: str) -> str:
        return f"{PROJECT}:{self.path}.{name}" if self.path else f"{PROJECT}:{name}"

    def fail(self, name: str, value: Any, allowed: str) -> None:
        where = self.key(name) if name else f"{PROJECT}:{self.path}"
        self.problems.append(f"{where} = {json.dumps(value, default=str)}: must be {allowed}")

    def child(self, name: str) -> _Reader:
        self.seen.add(name)
        return _Reader(
            self.data.get(name), f"{self.path}.{name}" if self.path else name, self.problems
        )

    def raw(self, name: str, default: Any) -> Any:
        self.seen.add(name)
        value = self.data.get(name, default)
        return default if value is None else value

    def integer(self, name: str, default: int, minimum: int = 0, maximum: int | None = None) -> int:
        value = self.raw(name, default)
        # Pulumi hands numbers over as floats; 2.0 is a fine replica count, 2.5 is not.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
            value = int(value)
        bounds = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(name, value, f"an integer {bounds}")
            return default
        if value < minimum or (maximum is not None and value > maximum):
            self.fail(name, value, f"an integer {bounds}")
            return default
        return value

    def number(self, name: str, default: float, minimum_exclusive: float = 0.0) -> float:
        value = self.raw(name, default)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(name, value, f"a number > {minimum_exclusive}")
            return default
        if not value > minimum_exclusive:
            self.fail(name, value, f"a number > {minimum_exclusive}")
            return default
        return float(value)

    def boolean(self, name: str, default: bool) -> bool:
        value = self.raw(name, default)
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            self.fail(name, value, "true or false")
            return default
        return value

    def text(
        self,
        name: str,
        default: str,
        pattern: re.Pattern[str] | None = None,
        allowed: str = "a string",
        required: bool = False,
    ) -> str:
        value = self.raw(name, default)
        if not isinstance(value, str):
            self.fail(name, value, allowed)
            return default
        if required and not value:
            self.fail(name, value, f"set ({allowed})")
            return default
        if value and pattern is not None and not pattern.fullmatch(value):
            self.fail(name, value, allowed)
            return default
        return value

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.raw(name, default)
        if value not in choices:
            self.fail(name, value, "one of " + ", ".join(choices))
            return default
        return str(value)

    def string_list(self, name: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self.raw(name, list(default))
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.fail(name, value, "a list of strings")
            return default
        return tuple(value)

    def check(self, name: str, ok: bool, value: Any, allowed: str) -> None:
        if not ok:
            self.fail(name, value, allowed)

    def finish(self) -> None:
        """Report keys nobody asked for: almost always a typo of a real key."""
        for name in sorted(set(self.data) - self.seen):
            known = ", ".join(sorted(self.seen)) or "none"
            self.problems.append(f"{self.key(name)}: unknown key; known keys here: {known}")


def _cidr(reader: _Reader, name: str, default: str) -> str:
    value = reader.text(name, default)
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        reader.fail(name, value, "an IPv4 CIDR block such as 192.168.0.0/16")
        return default
    return value


def _cidr_list(reader: _Reader, name: str) -> tuple[str, ...]:
    """A list of IPv4 CIDR blocks; a bare address is not accepted (say /32)."""
    values = reader.string_list(name)
    for value in values:
        try:
            ok = ipaddress.ip_network(value, strict=True).version == 4 and "/" in value
        except ValueError:
            ok = False
        if not ok:
            reader.fail(name, list(values), "a list of IPv4 CIDR blocks such as 203.0.113.0/24")
            return ()
    return values


def _optional_integer(reader: _Reader, name: str, minimum: int) -> int | None:
    """None when the key is unset, else an integer >= `minimum` (a bad value is reported)."""
    if reader.raw(name, None) is None:
        return None
    return reader.integer(name, minimum, minimum)


def _quantity(reader: _Reader, name: str, default: str) -> str:
    value = reader.raw(name, default)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        value = f"{value:g}"
    if (
        not isinstance(value, str)
        or not _QUANTITY.fullmatch(value)
        or float(re.sub(r"[a-zA-Z]+$", "", value)) <= 0
    ):
        reader.fail(name, value, "a positive Kubernetes quantity such as 500m, 2 or 4Gi")
        return default
    return value


def _image(reader: _Reader, name: str, default: str) -> str:
    """An image key. A value inherited from `tftrain:image` is checked once, under that key."""
    value = reader.text(name, default)
    if value and reader.data.get(name) is not None:
        try:
            parse_image_reference(value)
        except ImageReferenceError as error:
            reader.fail(name, value, f"an image reference {IMAGE_REFERENCE_FORMAT}: {error}")
    return value


def _labels(reader: _Reader, name: str, default: dict[str, str]) -> dict[str, str]:
    value = reader.raw(name, default)
    if not isinstance(value, Mapping) or not value:
        reader.fail(name, value, "a non-empty mapping of Kubernetes labels, e.g. {train: mnist}")
        return default
    labels: dict[str, str] = {}
    for key, label_value in value.items():
        prefix, _, label_name = str(key).rpartition("/")
        key_ok = (
            isinstance(key, str)
            and 0 < len(label_name) <= 63
            and bool(_LABEL_NAME.fullmatch(label_name))
            and (not prefix or (len(prefix) <= 253 and bool(_LABEL_PREFIX.fullmatch(prefix))))
        )
        value_ok = (
            isinstance(label_value, str)
            and len(label_value) <= 63
            and (label_value == "" or bool(_LABEL_NAME.fullmatch(label_value)))
        )
        if not key_ok or not value_ok:
            reader.fail(
                f"{name}.{key}",
                label_value,
                "a Kubernetes label: key [prefix/]name and value of at most 63 characters, "
                "alphanumeric with - _ . inside",
            )
            continue
        labels[key] = label_value
    return labels or default


def _job(reader: _Reader) -> JobConfig:
    name = reader.text(
        "name",
        "mnist",
        _DNS_LABEL,
        f"a DNS label (lower-case letters, digits, '-') of at most {_MAX_JOB_NAME} characters",
        required=True,
    )
    reader.check(
        "name",
        len(name) <= _MAX_JOB_NAME,
        name,
        f"at most {_MAX_JOB_NAME} characters, so `<name>-evaluator-999` fits 63",
    )
    run_id = reader.text(
        "runId", "", _DNS_LABEL, "empty (derived from the config) or a DNS label such as lr-0-01"
    )
    job = JobConfig(
        name=name,
        namespace=reader.text(
            "namespace",
            "tftrain",
            _DNS_LABEL,
            "a DNS label (lower-case letters, digits, '-')",
            required=True,
        ),
        run_id=run_id,
        command=reader.string_list("command", ("python", "-m", "trainer")),
        args=reader.string_list("args"),
        data_dir=reader.text("dataDir", ""),
        backoff_limit=reader.integer("backoffLimit", 3, 0, 100),
        ttl_seconds_after_finished=reader.integer("ttlSecondsAfterFinished", 86400, 0),
        active_deadline_seconds=_optional_integer(reader, "activeDeadlineSeconds", 1),
        gang_scheduling=reader.boolean("gangScheduling", True),
        evaluator_in_cluster=reader.boolean("evaluatorInCluster", False),
    )
    # Kept so TFJob-style values that spell out `Never` still load; OnFailure cannot be
    # combined with podFailurePolicy (infra/manifests/lifecycle.py).
    restart_policy = reader.raw("restartPolicy", "Never")
    reader.check(
        "restartPolicy",
        restart_policy == "Never",
        restart_policy,
        "Never: a failed replica always gets a new pod (up to job.backoffLimit), so that "
        "podFailurePolicy can fail the Job at once on exit code 2 and ignore preemptions",
    )
    reader.check("command", bool(job.command), list(job.command), "a non-empty list of strings")
    reader.check(
        "dataDir",
        not job.data_dir or job.data_dir.startswith("/"),
        job.data_dir,
        "empty (the trainer's bundled MNIST) or an absolute path",
    )
    reader.finish()
    return job


_GROUP_DEFAULTS: dict[str, dict[str, Any]] = {
    "chief": {"number": 1, "cpu": "1", "memory": "2Gi"},
    "worker": {"number": 2, "cpu": "1", "memory": "2Gi"},
    "ps": {"number": 1, "cpu": "1", "memory": "1Gi"},
    "evaluator": {"number": 0, "cpu": "1", "memory": "2Gi"},
}
_MAX_REPLICAS = {"chief": 1, "worker": 1000, "ps": 100, "evaluator": 1}


def _group(reader: _Reader, replica_type: str, default_image: str) -> ReplicaGroup:
    defaults = _GROUP_DEFAULTS[replica_type]
    number = reader.integer("number", defaults["number"], 0, _MAX_REPLICAS[replica_type])
    image = _image(reader, "image", default_image)
    if number and not image:
        reader.fail("image", image, f"a container image (or set {PROJECT}:image for all groups)")
    group = ReplicaGroup(
        type=replica_type,
        number=number,
        image=image,
        image_pull_policy=reader.choice("imagePullPolicy", "IfNotPresent", PULL_POLICIES),
        gpu_count=reader.integer("gpuCount", 0, 0, 16),
        cpu=_quantity(reader, "cpu", defaults["cpu"]),
        memory=_quantity(reader, "memory", defaults["memory"]),
        spot=reader.boolean("spot", False),
    )
    if replica_type == "ps":
        reader.check(
            "gpuCount",
            group.gpu_count == 0,
            group.gpu_count,
            "0: parameter servers hold variables and do no GPU work",
        )
    reader.finish()
    return group


def _hyperparams(reader: _Reader) -> Hyperparams:
    hyper = Hyperparams(
        epochs=reader.integer("epochs", 4, 1, 100000),
        batch_size=reader.integer("batchSize", 128, 1, 65536),
        learning_rate=reader.number("learningRate", 0.003),
        strategy=reader.choice("strategy", "auto", STRATEGIES),
        checkpoint_steps=reader.integer("checkpointSteps", 500, 1),
        # >= 2: a damaged newest checkpoint must always have a predecessor to resume from.
        keep_checkpoints=reader.integer("keepCheckpoints", 3, 2),
        log_steps=reader.integer("logSteps", 100, 1),
        steps_per_execution=reader.integer("stepsPerExecution", 50, 1, 1000),
        max_steps=reader.integer("maxSteps", 0, 0),
    )
    reader.check(
        "learningRate", hyper.learning_rate < 10, hyper.learning_rate, "a number > 0 and < 10"
    )
    reader.finish()
    return hyper


def _tensorboard(reader: _Reader, default_image: str) -> TensorBoardConfig:
    enabled = reader.boolean("enabled", True)
    board = TensorBoardConfig(
        enabled=enabled,
        image=_image(reader, "image", default_image),
        service_type=reader.choice("serviceType", "LoadBalancer", SERVICE_TYPES),
        public=reader.boolean("public", False),
        allowed_source_ranges=_cidr_list(reader, "allowedSourceRanges"),
        cpu=_quantity(reader, "cpu", "500m"),
        memory=_quantity(reader, "memory", "1Gi"),
    )
    if enabled and not board.image:
        reader.fail("image", board.image, f"a container image (or set {PROJECT}:image)")
    reader.check(
        "public",
        not board.public or board.service_type == "LoadBalancer",
        board.public,
        "false unless serviceType is LoadBalancer",
    )
    # TensorBoard has no authentication: on the internet only behind an allow-list.
    reader.check(
        "allowedSourceRanges",
        not board.public or bool(board.allowed_source_ranges),
        list(board.allowed_source_ranges),
        "a non-empty list of IPv4 CIDRs (who may reach TensorBoard) when public is true",
    )
    reader.check(
        "allowedSourceRanges",
        not board.allowed_source_ranges or board.service_type == "LoadBalancer",
        list(board.allowed_source_ranges),
        "empty unless serviceType is LoadBalancer",
    )
    reader.finish()
    return board


def _storage(reader: _Reader, cluster_kind: str) -> StorageConfig:
    default_kind = "nas" if cluster_kind != "existing" else "hostPath"
    storage = StorageConfig(
        kind=reader.choice("kind", default_kind, STORAGE_KINDS),
        size=reader.text("size", "5Gi", _STORAGE_SIZE, "a size in Mi, Gi or Ti such as 5Gi"),
        mount_path=reader.text(
            "mountPath",
            "/data",
            re.compile(r"^/[A-Za-z0-9._/-]*$"),
            "an absolute path such as /data",
            required=True,
        ),
        pv_labels=_labels(reader, "pvLabels", {"train": "mnist"}),
        nfs_server=reader.text("nfsServer", ""),
        nfs_path=reader.text("nfsPath", "/"),
        host_path=reader.text("hostPath", "/var/lib/tftrain"),
        nas_storage_type=reader.choice(
            "nasStorageType", "Performance", ("Performance", "Capacity")
        ),
        nas_protocol=reader.choice("nasProtocol", "NFS", ("NFS",)),
        retain_on_destroy=reader.boolean("retainOnDestroy", True),
    )
    mount = storage.mount_path.rstrip("/")
    reader.check(
        "mountPath",
        mount not in ("", "/tmp") and not mount.startswith("/tmp/"),
        storage.mount_path,
        "a directory other than / and outside /tmp (the pods' scratch emptyDir)",
    )
    if storage.kind == "nas":
        reader.check(
            "kind",
            cluster_kind != "existing",
            storage.kind,
            "nfs or hostPath when cluster.kind is existing (NAS needs the stack's VPC)",
        )
    if storage.kind == "nfs":
        reader.check(
            "nfsPath", storage.nfs_path.startswith("/"), storage.nfs_path, "an absolute export path"
        )
        reader.check(
            "nfsServer",
            bool(storage.nfs_server),
            storage.nfs_server,
            "the NFS server's address when storage.kind is nfs",
        )
    if storage.kind == "hostPath":
        reader.check(
            "kind",
            cluster_kind == "existing",
            storage.kind,
            "nas or nfs on ack/ask: hostPath is node-local and pods move between nodes",
        )
        reader.check(
            "hostPath",
            storage.host_path.startswith("/"),
            storage.host_path,
            "an absolute path on the node",
        )
    reader.finish()
    return storage


def _node_pool(
    reader: _Reader, default_types: tuple[str, ...], default_size: int
) -> NodePoolConfig:
    pool = NodePoolConfig(
        instance_types=reader.string_list("instanceTypes", default_types),
        size=reader.integer("size", default_size, 0, 1000),
        min_size=reader.integer("minSize", 0, 0, 1000),
        max_size=reader.integer("maxSize", 0, 0, 1000),
        disk_size=reader.integer("diskSize", 120, 40, 2048),
    )
    reader.check(
        "maxSize",
        pool.max_size == 0 or pool.max_size >= max(pool.min_size, 1),
        pool.max_size,
        "0 (fixed size) or >= minSize and >= 1 (autoscaling)",
    )
    reader.finish()
    return pool


def _cluster(reader: _Reader) -> ClusterConfig:
    kind = reader.choice("kind", "existing", CLUSTER_KINDS)
    gpu_pool = _node_pool(reader.child("gpuPool"), ("ecs.gn6i-c4g1.xlarge",), 0)
    cpu_pool = _node_pool(reader.child("cpuPool"), ("ecs.g7.xlarge",), 2)
    spot_pool = reader.child("spotGpuPool")  # same instance types as gpuPool
    spot_max_size = spot_pool.integer("maxSize", 0, 0, 1000)
    spot_pool.finish()
    cluster = ClusterConfig(
        kind=kind,
        name=reader.text("name", "", _DNS_LABEL, "empty (derived) or a DNS label"),
        kubernetes_version=reader.text(
            "kubernetesVersion",
            LATEST_VERSION,
            re.compile(rf"^({LATEST_VERSION}|1\.[0-9]+\.[0-9]+(-aliyun\.[0-9]+)?)$"),
            f"{LATEST_VERSION} (the newest ACK offers at creation, then kept) or a version such as "
            "1.34.1-aliyun.1",
        ),
        public_api_server=reader.boolean("publicApiServer", False),
        network_plugin=reader.choice("networkPlugin", NETWORK_PLUGINS[0], NETWORK_PLUGINS),
        gpu_pool=gpu_pool,
        cpu_pool=cpu_pool,
        eci_gpu_spec=reader.text(
            "eciGpuSpec",
            "",
            re.compile(r"^ecs\.[a-z0-9.-]+$"),
            "an ECS GPU instance type such as ecs.gn6i-c4g1.xlarge",
        ),
        image_cache=reader.boolean("imageCache", kind == "ask"),
        image_cache_size=reader.integer("imageCacheSize", 40, 20, 2048),
        spot_gpu_pool_max_size=spot_max_size,
    )
    reader.check(
        "spotGpuPool.maxSize",
        cluster.spot_gpu_pool_max_size == 0 or kind == "ack",
        cluster.spot_gpu_pool_max_size,
        "0 unless cluster.kind is ack (ask has ECI spot pods: set <group>.spot)",
    )
    if kind == "ack":
        reader.check(
            "cpuPool",
            cpu_pool.size > 0 or cpu_pool.max_size > 0,
            cpu_pool.size,
            "a pool with size or maxSize > 0: ps and TensorBoard run there",
        )
    reader.check(
        "imageCache",
        not cluster.image_cache or kind == "ask",
        cluster.image_cache,
        "false unless cluster.kind is ask (ImageCache is an ECI feature)",
    )
    reader.finish()
    return cluster


def _network(reader: _Reader, cluster_kind: str) -> NetworkConfig:
    network = NetworkConfig(
        vpc_id=reader.text(
            "vpcId", "", re.compile(r"^vpc-[a-z0-9]+$"), "empty or a VPC id vpc-..."
        ),
        vswitch_id=reader.text(
            "vswitchId", "", re.compile(r"^vsw-[a-z0-9]+$"), "empty or a vSwitch id vsw-..."
        ),
        vpc_cidr=_cidr(reader, "vpcCidr", "192.168.0.0/16"),
        vswitch_cidr=_cidr(reader, "vswitchCidr", "192.168.0.0/20"),
        zone_id=reader.text(
            "zoneId", "", re.compile(r"^[a-z]+-[a-z0-9-]+$"), "a zone id such as cn-hangzhou-i"
        ),
        nat_gateway=reader.boolean("natGateway", True),
        pod_cidr=_cidr(reader, "podCidr", "10.64.0.0/16"),
        service_cidr=_cidr(reader, "serviceCidr", "172.21.0.0/20"),
        pod_vswitch_cidr=_cidr(reader, "podVswitchCidr", "192.168.64.0/18"),
    )
    reader.check(
        "vswitchId",
        not network.vswitch_id or bool(network.vpc_id),
        network.vswitch_id,
        "empty unless vpcId is set too (an existing vSwitch lives in an existing VPC)",
    )
    # A looked-up zone can change between runs, and the vSwitch, the NAS file system (with
    # the data) and the cluster are replaced when it does: a cloud stack names its zone.
    reader.check(
        "zoneId",
        cluster_kind == "existing" or bool(network.zone_id) or bool(network.vswitch_id),
        network.zone_id,
        "set when cluster.kind is ack or ask (e.g. cn-hangzhou-i), unless vswitchId is: "
        "the vSwitch, NAS file system and cluster are created in it",
    )
    blocks = {
        "vpcCidr": ipaddress.ip_network(network.vpc_cidr),
        "vswitchCidr": ipaddress.ip_network(network.vswitch_cidr),
        "podCidr": ipaddress.ip_network(network.pod_cidr),
        "serviceCidr": ipaddress.ip_network(network.service_cidr),
    }
    # An existing vSwitch's real CIDR is read from the cloud at deploy time instead.
    if not network.vswitch_id:
        reader.check(
            "vswitchCidr",
            blocks["vswitchCidr"].subnet_of(blocks["vpcCidr"]),  # type: ignore[arg-type]
            network.vswitch_cidr,
            f"a block inside vpcCidr {network.vpc_cidr}",
        )
    # ACK refuses overlapping node, pod and service ranges, but only at deploy time.
    for key, other in (
        ("podCidr", "vpcCidr"),
        ("serviceCidr", "vpcCidr"),
        ("serviceCidr", "podCidr"),
    ):
        reader.check(
            key,
            not blocks[key].overlaps(blocks[other]),
            str(blocks[key]),
            f"a block that does not overlap {other} {blocks[other]}",
        )
    reader.finish()
    return network


def _check_pod_vswitch(network: NetworkConfig, fail: Callable[[str, Any, str], None]) -> None:
    """Terway's pod vSwitch: inside the VPC's primary CIDR, apart from the nodes' vSwitch."""
    pods = ipaddress.ip_network(network.pod_vswitch_cidr)
    vpc_cidr = ipaddress.ip_network(network.vpc_cidr)
    key = "network.podVswitchCidr"
    if not pods.subnet_of(vpc_cidr):  # type: ignore[arg-type]
        fail(key, network.pod_vswitch_cidr, f"a block inside vpcCidr {network.vpc_cidr}")
    elif not network.vswitch_id and pods.overlaps(ipaddress.ip_network(network.vswitch_cidr)):
        fail(
            key,
            network.pod_vswitch_cidr,
            f"a block that does not overlap vswitchCidr {network.vswitch_cidr}",
        )


def _cross_checks(stack: StackConfig, problems: list[str]) -> None:
    """Rules that span sections; each names the key a user would change."""

    def fail(key: str, value: Any, allowed: str) -> None:
        problems.append(f"{PROJECT}:{key} = {json.dumps(value)}: must be {allowed}")

    if stack.worker.number == 0 and stack.chief.number == 0:
        fail("worker.number", 0, ">= 1 (or chief.number 1): someone has to train")
    if stack.ps.number and stack.chief.number == 0:
        fail("chief.number", 0, "1 when ps.number > 0: ParameterServerStrategy needs a chief")
    if stack.ps.number and stack.worker.number == 0:
        fail("worker.number", 0, ">= 1 when ps.number > 0: the chief dispatches to workers")
    if stack.hyperparams.strategy == "parameter_server" and not stack.ps.number:
        fail("hyperparams.strategy", "parameter_server", "auto or multi_worker_mirrored with 0 ps")
    if stack.hyperparams.strategy == "multi_worker_mirrored" and stack.ps.number:
        fail(
            "hyperparams.strategy",
            "multi_worker_mirrored",
            "auto or parameter_server when ps.number > 0",
        )
    kind = stack.cluster.kind
    if kind == "ack" and stack.cluster.network_plugin == "terway":
        _check_pod_vswitch(stack.network, fail)
    for group in stack.replica_groups:
        if not group.gpu_count or not group.number:
            continue
        if (
            kind == "ack"
            and not group.spot  # the spot GPU pool serves it (checked in _check_spot)
            and stack.cluster.gpu_pool.size == 0
            and stack.cluster.gpu_pool.max_size == 0
        ):
            fail(
                f"{group.type}.gpuCount",
                group.gpu_count,
                "0 while cluster.gpuPool has size 0 and maxSize 0 (a CPU-only cluster)",
            )
        if kind == "ask" and not stack.cluster.eci_gpu_spec:
            fail(
                f"{group.type}.gpuCount",
                group.gpu_count,
                "0 unless cluster.eciGpuSpec names an ECI GPU instance type",
            )
    for group in stack.replica_groups:
        if group.spot and group.number:
            _check_spot(stack, group, fail)
    if kind == "ack" and stack.cluster.gpu_pool.size and not stack.uses_gpu:
        fail(
            "cluster.gpuPool.size",
            stack.cluster.gpu_pool.size,
            "0 when no replica requests a GPU (an idle GPU pool is billed by the hour)",
        )


def _check_spot(stack: StackConfig, group: ReplicaGroup, fail: Callable[..., None]) -> None:
    """Spot capacity exists on ASK (every pod is ECI) and on ACK through the spot GPU pool;
    an existing cluster's capacity is not the stack's to choose."""
    key, kind = f"{group.type}.spot", stack.cluster.kind
    if kind == "existing":
        fail(key, True, "false on an existing cluster (its nodes are not the stack's)")
    elif kind == "ack" and not group.gpu_count:
        fail(key, True, "false unless gpuCount > 0: on ack only the GPU pool has a spot twin")
    elif kind == "ack" and not stack.cluster.spot_gpu_pool_max_size:
        fail(key, True, "false unless cluster.spotGpuPool.maxSize > 0 (the spot GPU pool)")


def derive_run_id(raw: Mapping[str, Any]) -> str:
    """A short id that changes whenever what the training computes or runs on changes."""
    relevant = {
        key: raw.get(key) for key in ("image", "hyperparams", "chief", "worker", "ps", "evaluator")
    }
    # How many checkpoints are kept changes nothing the training computes: the same run.
    if isinstance(relevant["hyperparams"], dict):
        relevant["hyperparams"] = {
            key: value for key, value in relevant["hyperparams"].items() if key != "keepCheckpoints"
        }
    relevant["job"] = {
        key: value
        for key, value in (raw.get("job") or {}).items()
        if key in ("command", "args", "dataDir")
    }
    digest = hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode())
    return "run-" + digest.hexdigest()[:8]


def parse_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate a stack's `tftrain:` config (prefix removed) into a StackConfig."""
    problems: list[str] = []
    top = _Reader(raw, "", problems)
    default_image = _image(top, "image", "")
    job = _job(top.child("job"))
    cluster = _cluster(top.child("cluster"))
    network = _network(top.child("network"), cluster.kind)
    storage = _storage(top.child("storage"), cluster.kind)
    groups = {name: _group(top.child(name), name, default_image) for name in _GROUP_DEFAULTS}
    hyperparams = _hyperparams(top.child("hyperparams"))
    tensorboard = _tensorboard(top.child("tensorboard"), default_image)
    top.seen.add("kubeconfig")  # a secret the program reads itself; never part of the model
    top.finish()
    plain = {key: value for key, value in raw.items() if key != "kubeconfig"}
    stack = StackConfig(
        job=JobConfig(**{**asdict(job), "run_id": job.run_id or derive_run_id(plain)}),
        cluster=cluster,
        network=network,
        storage=storage,
        chief=groups["chief"],
        worker=groups["worker"],
        ps=groups["ps"],
        evaluator=groups["evaluator"],
        hyperparams=hyperparams,
        tensorboard=tensorboard,
        raw=plain,
    )
    _cross_checks(stack, problems)
    if problems:
        raise ConfigError(problems)
    return stack


def strip_project_prefix(config: Mapping[str, Any]) -> dict[str, Any]:
    """`{"tftrain:worker": ...}` → `{"worker": ...}`; keys of other namespaces are dropped."""
    prefix = f"{PROJECT}:"
    return {key[len(prefix) :]: value for key, value in config.items() if key.startswith(prefix)}


def stack_file(stack: str, stacks_dir: Path | None = None) -> Path:
    directory = stacks_dir or Path(__file__).resolve().parent.parent / "stacks"
    return directory / f"Pulumi.{stack}.yaml"


def read_stack_entries(path: Path) -> dict[str, Any]:
    """Every config entry of a stack file, all namespaces (`alicloud:region` too), as written."""
    if not path.is_file():
        known = sorted(
            p.name[len("Pulumi.") : -len(".yaml")] for p in path.parent.glob("Pulumi.*.yaml")
        )
        raise ConfigError(
            [f"stack file {path} not found; stacks here: {', '.join(known) or 'none'}"]
        )
    document = yaml.safe_load(path.read_text()) or {}
    return dict(document.get("config") or {})


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `tftrain:` config of a stack file, as the Pulumi engine would hand it over."""
    return strip_project_prefix(read_stack_entries(path))


def load_stack(stack: str, stacks_dir: Path | None = None) -> StackConfig:
    """Read and validate `stacks/Pulumi.<stack>.yaml` (the offline targets' entry point)."""
    return parse_config(read_stack_file(stack_file(stack, stacks_dir)))
