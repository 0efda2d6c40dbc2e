"""The stack config model: one frozen dataclass per section of a stack file, one line per key.

Attributes are snake_case; the keys a user types are their camelCase aliases
(`tftrain:hyperparams.batchSize` is `config.hyperparams.batch_size`). A key's type says what
it accepts (`infra.config.types`); rules between keys live in `infra.config.rules`. To add a
key: add its line here, a row to docs/config.md's table, and a rule if it has one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass
from pydantic.json_schema import SkipJsonSchema

from infra.config import types as t
from infra.config.image_ref import ImageReferenceError, parse_image_reference

# Keys only as typed (camelCase); snake_case names are for code (e.g. dataclasses.replace).
_KEYS = ConfigDict(
    extra="forbid",
    alias_generator=to_camel,
    validate_by_name=True,
    field_title_generator=lambda name, _: to_camel(name),
)
section = partial(dataclass, frozen=True, config=_KEYS)


@section
class JobConfig:
    name: t.JobName = "mnist"
    namespace: t.Namespace = "tftrain"
    run_id: t.RunId = ""
    # Unset: the bundled trainer (BUNDLED_COMMAND), which only tftrain's trainer image has.
    command: t.Command | None = Field(
        None,
        description="unset (the bundled trainer: python -m trainer, in tftrain's trainer image) "
        "or a non-empty list of non-blank strings",
    )
    args: tuple[str, ...] = Field((), description="a list of strings")
    env: t.EnvMap = Field(default_factory=dict)  # every replica's, under each group's own env
    data_dir: t.DataDir = ""
    # Fine-tuning: start a new run's weights from this checkpoint (issue 21; docs/data.md).
    init_checkpoint: str = Field(
        "", description="a string: the checkpoint a new run's weights start from, or empty"
    )
    # Never only: podFailurePolicy (fail at once on exit 2, ignore preemptions) requires it;
    # a failed replica still gets a new pod, up to backoffLimit.
    restart_policy: Literal["Never"] = "Never"
    backoff_limit: t.integer(0, 100) = 3
    # Unset: finished Jobs stay until the next run replaces them or `pulumi destroy`. A TTL
    # deletes them behind Pulumi's back, and after `pulumi refresh` the next `up` creates
    # them again (pulumi/pulumi#6456): every replica starts, GPUs are billed, for nothing.
    ttl_seconds_after_finished: t.integer(0, t.INT32_MAX) | None = Field(
        None,
        description="unset (finished Jobs stay until the next run or destroy) or an integer "
        "from 0 to 2147483647",
    )
    active_deadline_seconds: t.integer(1, t.INT32_MAX) | None = Field(
        None, description="unset (no deadline) or an integer from 1 to 2147483647"
    )
    # Stop the run, keep it: every Job's batch/v1 `spec.suspend`. Its pods get SIGTERM (the
    # trainer checkpoints), its Jobs, records and checkpoints stay; false resumes it from its
    # checkpoints. Not in the run id: a suspended run is the same run.
    suspend: t.Bool = False
    gang_scheduling: t.Bool = True  # ACK's coscheduling: all replicas start together or none
    evaluator_in_cluster: t.Bool = False  # Kubeflow's TF_CONFIG shape: evaluator in `cluster`
    # After the run's success the evaluator may still be scoring the final checkpoint: it gets
    # this long to end by itself before SIGTERM (infra/lifecycle), and the export waits for it.
    evaluator_finish_seconds: t.integer(0, 86400) = 600


@section
class ReplicaGroup:
    """One replica type (`chief`, `worker`, `ps`, `evaluator`) of the training job."""

    type: ClassVar[str] = ""
    number: t.integer(0, 1000) = 0
    image: t.Image = ""  # defaults to the stack's `image`
    image_pull_policy: Literal["IfNotPresent", "Always", "Never"] = "IfNotPresent"
    gpu_count: t.integer(0, 16) = 0
    cpu: t.Cpu = "1"
    memory: t.Memory = "2Gi"
    spot: t.Bool = False  # preemptible capacity: ECI spot pods (ask), the spot GPU pool (ack)
    command: t.GroupCommand = None  # this group's own command (TFJob: one per replica spec)
    args: t.GroupArgs = None
    env: t.EnvMap = Field(default_factory=dict)  # added to job.env; a name here wins


@section
class ChiefGroup(ReplicaGroup):
    type: ClassVar[str] = "chief"
    number: t.integer(0, 1) = 1


@section
class MasterGroup(ReplicaGroup):
    """TFJob's older name for the chief: the same role, `master` in TF_CONFIG."""

    type: ClassVar[str] = "master"
    number: t.integer(0, 1) = 0


@section
class WorkerGroup(ReplicaGroup):
    type: ClassVar[str] = "worker"
    number: t.integer(0, 1000) = 2


@section
class PsGroup(ReplicaGroup):
    type: ClassVar[str] = "ps"
    number: t.integer(0, 100) = 1
    memory: t.Memory = "1Gi"


@section
class EvaluatorGroup(ReplicaGroup):
    type: ClassVar[str] = "evaluator"
    number: t.integer(0, 1) = 0


@section
class Hyperparams:
    epochs: t.integer(1, 100000) = 4
    batch_size: t.integer(1, 65536) = 128
    learning_rate: t.LearningRate = 0.003
    strategy: Literal["auto", "parameter_server", "multi_worker_mirrored"] = "auto"
    checkpoint_steps: t.integer(1, t.INT32_MAX) = 500
    log_steps: t.integer(1, t.INT32_MAX) = 100
    steps_per_execution: t.integer(1, 1000) = 50
    max_steps: t.integer(0, t.INT32_MAX) = 0
    # >= 2: a damaged newest checkpoint must always have a predecessor to resume from.
    keep_checkpoints: t.integer(2, 1000) = 3


@section
class TensorBoardConfig:
    enabled: t.Bool = True
    image: t.Image = ""  # defaults to the stack's `image` if that is tftrain's trainer image
    service_type: Literal["ClusterIP", "LoadBalancer"] = "LoadBalancer"
    public: t.Bool = False
    # Who may reach a public TensorBoard.
    allowed_source_ranges: tuple[t.SourceRange, ...] = Field(
        (), description="a list of IPv4 CIDR blocks such as 203.0.113.0/24"
    )
    cpu: t.Cpu = "500m"
    memory: t.Memory = "1Gi"


@section
class StorageConfig:
    kind: Literal["nas", "nfs", "hostPath"] = "nas"  # hostPath when cluster.kind is existing
    size: t.StorageSize = "5Gi"
    mount_path: t.MountPath = "/data"
    pv_labels: t.Labels = Field(default_factory=lambda: {"train": "mnist"})
    nfs_server: t.Host = ""
    nfs_path: t.AbsolutePath = "/"
    host_path: t.HostPath = "/var/lib/tftrain"
    nas_storage_type: Literal["Performance", "Capacity"] = "Performance"
    nas_protocol: Literal["NFS"] = "NFS"
    retain_on_destroy: t.Bool = True  # `pulumi destroy` keeps the NAS file system (the runs)
    # An existing file system (e.g. one a destroyed stack kept): mounted, never created or
    # deleted by the stack.
    file_system_id: t.NasFileSystemId = ""


@section
class NodePoolConfig:
    instance_types: t.InstanceTypes = ("ecs.g7.xlarge",)
    size: t.integer(0, 1000) = 0
    min_size: t.integer(0, 1000) = 0
    max_size: t.integer(0, 1000) = 0
    disk_size: t.integer(40, 2048) = 120


@section
class GpuPoolConfig(NodePoolConfig):
    """ACK's GPU pool: autoscaled from 0 nodes unless size is set, so idle GPUs cost nothing."""

    # An unset maxSize is derived by StackConfig (never None once validated): one node per
    # GPU replica that is not spot, the most the job can use since a pod runs on one node. A
    # smaller cap could leave a gang-scheduled job waiting forever for its last replicas.
    instance_types: t.InstanceTypes = ("ecs.gn6i-c4g1.xlarge",)
    max_size: t.integer(0, 1000) | None = Field(
        None,
        description=(
            "unset (ack: one node per GPU replica that is not spot, autoscaled from minSize; "
            "0 when size is set) or an integer from 0 to 1000"
        ),
    )


@section
class CpuPoolConfig(NodePoolConfig):
    size: t.integer(0, 1000) = 2


@section
class SpotGpuPoolConfig:
    """The GPU pool's spot twin (ack): same instance types, scales from 0 to maxSize."""

    max_size: t.integer(0, 1000) = 0  # 0: no spot pool


@section
class ClusterConfig:
    kind: Literal["existing", "ack", "ask"] = "existing"
    # standalone: the stack makes the cloud side and runs on it (the quick start); platform:
    # the cloud side only, shared by run stacks; run: Kubernetes objects only, on the cluster
    # of `platformStack` (whose kind `kind` states: the objects depend on it, and the program
    # cannot read another stack's outputs before it builds them; it checks them at deploy).
    role: Literal["standalone", "platform", "run"] = "standalone"
    platform_stack: t.StackName = ""
    name: t.ClusterName = ""
    kubernetes_version: t.AckVersion = t.LATEST_VERSION
    public_api_server: t.Bool = False
    # Terway with its NetworkPolicy option enforces the job's NetworkPolicies; Flannel does not.
    network_plugin: Literal["terway", "flannel"] = "terway"
    gpu_pool: GpuPoolConfig = Field(default_factory=GpuPoolConfig)
    cpu_pool: CpuPoolConfig = Field(default_factory=CpuPoolConfig)
    spot_gpu_pool: SpotGpuPoolConfig = Field(default_factory=SpotGpuPoolConfig)
    eci_gpu_spec: t.EciSpec = ""
    image_cache: t.Bool = False  # true when kind is ask (not in a run stack)
    image_cache_size: t.integer(20, 2048) = 40
    # platform: the namespaces its run stacks deploy into. Each gets its own credentials (a
    # ServiceAccount bound to a Role in that namespace only) and volumes; a run stack whose
    # job.namespace is not listed cannot deploy (docs/teams.md).
    run_namespaces: tuple[t.Namespace, ...] = Field(
        default=(),
        description="a list of namespaces, each a DNS label (lower-case letters, digits and -, "
        "at most 63 characters) other than default and kube-*",
    )

    @property
    def isolates_eci_pods(self) -> bool:
        """An ASK stack that makes its own cluster puts the job's ECI pods on a vSwitch and in
        security groups of their own (`infra/cloud/pod_isolation.py`). A platform's run stacks
        are not isolated: their pods sit on the cluster's vSwitch (docs/security.md)."""
        return self.kind == "ask" and self.role == "standalone"

    @property
    def has_pod_vswitch(self) -> bool:
        """Whether pods take addresses from a vSwitch of their own (`network.podVswitchCidr`):
        ACK with Terway, and isolated ASK pods."""
        return (self.kind == "ack" and self.network_plugin == "terway") or self.isolates_eci_pods


@section
class NetworkConfig:
    vpc_id: t.VpcId = ""
    vswitch_id: t.VswitchId = ""
    vpc_cidr: t.Ipv4Cidr = "192.168.0.0/16"
    vswitch_cidr: t.Ipv4Cidr = "192.168.0.0/20"
    zone_id: t.ZoneId = ""
    nat_gateway: t.Bool = True
    # `pulumi up` runs in a network joined to the existing VPC (vpcId) by VPN, Express Connect
    # or CEN: a first up may then create a private API server it cannot prove it reaches.
    vpn_joined: t.Bool = False
    pod_cidr: t.Ipv4Cidr = "10.64.0.0/16"
    service_cidr: t.Ipv4Cidr = "172.21.0.0/20"
    pod_vswitch_cidr: t.Ipv4Cidr = "192.168.64.0/18"  # Terway's pods (ack), ECI pods (ask)


@section
class DataConfig:
    """The user's data in, the user's model out: an OSS bucket in the cloud, directories locally.

    Empty `bucket`: no OSS data (the trainer reads `job.dataDir` or its bundled MNIST).
    """

    # Empty with createBucket: the stack names it tftrain-<stack>-<account id> (unique, since an
    # account id is); empty on a run stack with an inputPrefix: its platform's bucket.
    bucket: t.BucketName = ""
    create_bucket: t.Bool = False  # the stack creates `bucket`: private, versioned, kept on destroy
    # Who owns an existing bucket: this account (looked up before anything is billed) or another
    # one, whose owner grants this account's role or RAM user access (docs/data.md).
    bucket_owner: Literal["this-account", "another-account"] = "this-account"
    input_prefix: t.ObjectPrefix = ""  # mounted read-only at inputPath in every training pod
    input_path: t.MountPath = "/input"
    export_prefix: t.ObjectPrefix = "exports/"  # a run's results: <exportPrefix><job>/<runId>/
    # The input on this machine: the local launcher's stand-in for the input prefix, and what a
    # stack that creates its bucket uploads there before any pod mounts it.
    local_input_dir: str = Field("", description="a string: a directory on this machine, or empty")
    # The local launcher's stand-in for the bucket's export prefix.
    local_export_dir: str = Field("", description="a string: a directory on this machine, or empty")
    # How the CSI OSS plugin authenticates: auto is rrsa on ack (a RAM role the stack makes,
    # assumed through the cluster's OIDC provider), secret elsewhere.
    credentials: Literal["auto", "rrsa", "secret"] = "auto"
    rrsa_role_name: t.RamRoleName = ""  # rrsa: the role (ack: empty = the stack's own role)
    # secret: either an AccessKey as Pulumi secrets, from which the stack makes the Secret the
    # volumes name (before them), or `<namespace>/<name>` of a Secret you manage elsewhere.
    access_key_id: t.secret_text("data", "accessKeyId") = ""
    access_key_secret: t.secret_text("data", "accessKeySecret") = ""
    credentials_secret: t.SecretRef = ""
    endpoint: t.OssEndpoint = ""  # empty: oss-<alicloud:region>-internal.aliyuncs.com
    retain_on_destroy: t.Bool = True  # a created bucket outlives `pulumi destroy`


@section
class ImageRegistryConfig:
    """Pull credentials for a private registry (docs/deploy.md "Images and registries"): a
    kubernetes.io/dockerconfigjson Secret every pod and the ECI ImageCache name.

    Empty `server`: none; images are pulled as the nodes can (public, or ACR passwordless).
    """

    server: t.RegistryHost = ""
    username: t.RegistryUsername = ""
    password: t.secret_text("imageRegistry", "password") = ""


@section
class SweepParameter:
    """One swept key: a list of `values`, or (random only) a range `min`..`max`."""

    # Marked Secret so an error never echoes a value that may have arrived decrypted.
    values: Annotated[tuple[t.SweepValue, ...] | None, t.Secret()] = Field(
        None, min_length=1, description="a non-empty list of the values the key takes"
    )
    min: t.SweepBound | None = Field(None, description="unset or a number (random only)")
    max: t.SweepBound | None = Field(None, description="unset or a number (random only)")
    # W&B's and Katib's names: uniform; log_uniform (min and max are values, as Katib's
    # logUniform, not W&B's exponents); int_uniform (whole numbers, both ends included).
    distribution: Literal["uniform", "log_uniform", "int_uniform"] = "uniform"


@section
class SweepMetric:
    name: t.MetricName = "test_accuracy"
    goal: Literal["maximize", "minimize"] = "maximize"


@section
class SweepConfig:
    """A hyperparameter sweep: every point is a trial, an ordinary run (`infra.sweep`)."""

    # Stack key paths (`hyperparams.learningRate`) to what each takes.
    parameters: dict[str, SweepParameter] = Field(
        min_length=1,
        description="a non-empty mapping of stack key paths (hyperparams.learningRate) to "
        "{values: [...]} or {min, max, distribution}",
    )
    method: Literal["grid", "random"] = "grid"
    samples: t.integer(1, t.MAX_TRIALS) | None = Field(
        None, description=f"unset (grid) or, for random, an integer from 1 to {t.MAX_TRIALS}"
    )
    seed: t.integer(0, t.INT32_MAX) = 0
    parallel: t.integer(1, t.MAX_TRIALS) = 1
    metric: SweepMetric = Field(default_factory=SweepMetric)


_CNY = "unset or an amount in CNY greater than 0"


@section
class BudgetConfig:
    """The most a stack may cost, in CNY, priced from infra/pricing/prices.csv: the review and
    the program refuse a change over it, and one whose cost the table cannot price."""

    max_cny_per_hour: t.Cny | None = Field(None, description=_CNY)  # what it keeps running
    max_cny_per_run: t.Cny | None = Field(None, description=_CNY)  # to activeDeadlineSeconds
    max_cny_per_sweep: t.Cny | None = Field(None, description=_CNY)  # every trial of a sweep


# The bundled trainer, and the interpreters a command may name it with.
BUNDLED_COMMAND = ("python", "-m", "trainer")
PYTHON = re.compile(r"^(/usr(/local)?/bin/)?python(3(\.[0-9]+)?)?$")


# The image that has the bundled trainer (and tensorboard): docs/trainer.md,
# <registry>/tftrain/trainer:<tag>.
BUNDLED_IMAGE_REPOSITORY = "tftrain/trainer"


def is_bundled_image(image: str) -> bool:
    try:
        path = parse_image_reference(image).path
    except ImageReferenceError:
        return False  # reported by the image's own type
    return path == BUNDLED_IMAGE_REPOSITORY or path.endswith("/" + BUNDLED_IMAGE_REPOSITORY)


def is_bundled_command(command: tuple[str, ...]) -> bool:
    return len(command) == 3 and bool(PYTHON.match(command[0])) and command[1:] == ("-m", "trainer")


def _default(section: Any, key: str, value: Any) -> Any:
    """`section` with `key: value` added if it is a mapping without that key."""
    if section is None:
        section = {}
    if isinstance(section, Mapping) and key not in section:
        return {key: value, **section}
    return section


# What the model holds for a sweep's trials (`infra.config.sweep`), never keys of a stack file.
INTERNAL_KEYS = ("trials", "trialPoint")


@section
class StackConfig:
    image: t.Image = ""  # every replica group's and TensorBoard's image, unless they set one
    job: JobConfig = Field(default_factory=JobConfig)
    cluster: ClusterConfig = Field(default_factory=ClusterConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    chief: ChiefGroup = Field(default_factory=ChiefGroup)
    master: MasterGroup = Field(default_factory=MasterGroup)
    worker: WorkerGroup = Field(default_factory=WorkerGroup)
    ps: PsGroup = Field(default_factory=PsGroup)
    evaluator: EvaluatorGroup = Field(default_factory=EvaluatorGroup)
    hyperparams: Hyperparams = Field(default_factory=Hyperparams)
    tensorboard: TensorBoardConfig = Field(default_factory=TensorBoardConfig)
    image_registry: ImageRegistryConfig = Field(default_factory=ImageRegistryConfig)
    sweep: SweepConfig | None = None
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    # A sweep's trials, each a whole stack config of its own (`infra.sweep.trials`): set by
    # `infra.config.parse_config`, never a key of the stack file.
    trials: SkipJsonSchema[tuple[Any, ...]] = Field(default=(), exclude=True, repr=False)
    trial_point: SkipJsonSchema[dict[str, Any]] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _defaults_that_follow_other_keys(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data  # construction in code, or a non-mapping the model rejects
        data = dict(data)
        image = data.get("image")
        if isinstance(image, str) and t.is_image_reference(image):
            for name in ("chief", "master", "worker", "ps", "evaluator"):
                data[name] = _default(data.get(name), "image", image)
            # TensorBoard needs tensorboard: tftrain's image has it, a user's may not.
            if is_bundled_image(image):
                data["tensorboard"] = _default(data.get("tensorboard"), "image", image)
        cluster = data.get("cluster")
        kind = cluster.get("kind", "existing") if isinstance(cluster, Mapping) else "existing"
        role = cluster.get("role") if isinstance(cluster, Mapping) else None
        # A run stack's credentials make no cluster-scoped object: no ImageCache.
        data["cluster"] = _default(cluster, "imageCache", kind == "ask" and role != "run")
        storage_kind = "hostPath" if kind == "existing" else "nas"
        data["storage"] = _default(data.get("storage"), "kind", storage_kind)
        return data

    @model_validator(mode="after")
    def _gpu_pool_range_follows_the_replicas(self) -> StackConfig:
        pool = self.cluster.gpu_pool
        if pool.max_size is not None:
            return self
        derived = 0
        if self.cluster.kind == "ack" and not pool.size:
            # Spot replicas are served by the spot GPU pool, not this one.
            on_demand = sum(g.number for g in self.replica_groups if g.gpu_count and not g.spot)
            derived = max(on_demand, pool.min_size) if on_demand else 0
        cluster = replace(self.cluster, gpu_pool=replace(pool, max_size=derived))
        return replace(self, cluster=cluster)

    @property
    def is_trial(self) -> bool:
        """One trial of a sweep: a run whose replicas carry its run id in their names."""
        return self.sweep is not None and not self.trials

    @property
    def runs(self) -> tuple[StackConfig, ...]:
        """What trains: a sweep's trials, or the stack itself."""
        return self.trials or (self,)

    @property
    def run_name(self) -> str:
        """What a run's replicas are named after: `<job>`, or `<job>-<run id>` for a trial,
        so the trials of one job sit side by side in one namespace."""
        return f"{self.job.name}-{self.job.run_id}" if self.is_trial else self.job.name

    @property
    def replica_groups(self) -> tuple[ReplicaGroup, ...]:
        """Groups in TFJob order, including empty ones."""
        return (self.chief, self.master, self.worker, self.ps, self.evaluator)

    @property
    def images(self) -> tuple[str, ...]:
        """Every image the stack's pods run (replicas, TensorBoard), in first-use order."""
        images = [group.image for group in self.replica_groups if group.number]
        if self.tensorboard.enabled:
            images.append(self.tensorboard.image)
        return tuple(dict.fromkeys(image for image in images if image))

    def command_of(self, group: ReplicaGroup) -> tuple[str, ...]:
        """What a group's replicas run: its own command, the job's, or the bundled trainer."""
        return group.command or self.job.command or BUNDLED_COMMAND

    def args_of(self, group: ReplicaGroup) -> tuple[str, ...]:
        return self.job.args if group.args is None else group.args

    def env_of(self, group: ReplicaGroup) -> dict[str, str]:
        """job.env with the group's env on top."""
        return {**self.job.env, **group.env}

    @property
    def runs_bundled_trainer(self) -> bool:
        """Every replica runs tftrain's trainer, so its own rules (topology, batch) apply."""
        return all(
            is_bundled_command(self.command_of(group))
            for group in self.replica_groups
            if group.number
        )

    @property
    def logs_root(self) -> str:
        """Where every run of this job writes, so TensorBoard can overlay runs."""
        return f"{self.storage.mount_path.rstrip('/')}/{self.job.name}"

    @property
    def output_dir(self) -> str:
        return f"{self.logs_root}/{self.job.run_id}"

    @property
    def oss_credentials(self) -> str:
        """rrsa or secret; auto is rrsa on ack (the stack owns the OIDC provider), else secret."""
        if self.data.credentials != "auto":
            return self.data.credentials
        return "rrsa" if self.cluster.kind == "ack" else "secret"

    @property
    def uses_oss(self) -> bool:
        """An OSS input/export: a named bucket, one the stack creates, or (a run stack with an
        input prefix and no bucket) its platform's."""
        data = self.data
        from_platform = self.cluster.role == "run" and bool(data.input_prefix)
        return bool(data.bucket or data.create_bucket or from_platform)

    @property
    def has_run(self) -> bool:
        """A platform stack has no run: no namespace, no Job, no Kubernetes object at all."""
        return self.cluster.role != "platform"

    @property
    def sends_kubernetes_objects(self) -> bool:
        """A run's objects, or a platform's run namespaces (their credentials and volumes)."""
        return self.has_run or bool(self.cluster.run_namespaces)

    @property
    def makes_cloud(self) -> bool:
        """Whether `pulumi up` creates Alibaba Cloud resources (a run's are its platform's)."""
        return self.cluster.kind != "existing" and self.cluster.role != "run"

    @property
    def uses_gpu(self) -> bool:
        return any(group.gpu_count > 0 for group in self.replica_groups if group.number)

    @property
    def effective_strategy(self) -> str:
        """The strategy the trainer resolves `auto` to for this topology."""
        if self.hyperparams.strategy != "auto":
            return self.hyperparams.strategy
        return "parameter_server" if self.ps.number else "multi_worker_mirrored"

    @property
    def replicas_in_sync(self) -> int:
        """Over how many replicas the trainer splits each batch (TensorFlow's count):
        a worker's devices under parameter_server, every trainer's under mirrored."""
        trainers = [g for g in (self.chief, self.worker) if g.number]
        devices = max(trainers[-1].gpu_count, 1) if trainers else 1
        if self.effective_strategy == "parameter_server":
            return devices
        return devices * sum(group.number for group in trainers)
