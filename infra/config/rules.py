"""Rules between keys: what Kubernetes, Alibaba Cloud or the trainer would refuse later.

They run once every key is valid on its own, and all of them run, so a stack's problems are
listed at once. Each rule is a small function over the whole config, listed in RULES, that
yields the key a user would change and what it allows.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_snake

from infra.config.errors import problem
from infra.config.image_ref import canonical_registry, registry_of
from infra.config.instance_types import cpu_cores, instance_shape, memory_mib
from infra.config.model import BUNDLED_IMAGE_REPOSITORY, StackConfig, is_bundled_image
from infra.config.node_fit import Room, ack_node_room, eci_room
from infra.config.paths import RUN_PREFIX, under
from infra.config.stack_file import PROJECT
from infra.config.types import DNS_LABEL, LATEST_VERSION

# Where a relative data.localInputDir is read from (the project: Pulumi.yaml's directory).
REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def local_input_root(local_input_dir: str) -> Path:
    """`data.localInputDir` as the program uploads it: relative to the repository root."""
    return REPOSITORY_ROOT / Path(local_input_dir).expanduser()


def check_rules(stack: StackConfig) -> list[str]:
    # A platform stack's run sections are absent (infra.config.roles): their defaults are no
    # run of anyone's to check.
    rules = RULES if stack.has_run else PLATFORM_RULES
    return [
        problem(f"{PROJECT}:{key}", _value(stack, key), allowed)
        for rule in rules
        for key, allowed in rule(stack)
    ]


def _role_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    cluster = stack.cluster
    if cluster.role != "standalone" and cluster.kind == "existing":
        yield (
            "cluster.role",
            "standalone when cluster.kind is existing (platform and run stacks share the ack "
            "or ask cluster a platform stack creates; stacks on an existing cluster already "
            "share it, one namespace each)",
        )
    if cluster.role == "run" and not cluster.platform_stack:
        yield (
            "cluster.platformStack",
            "<organization>/<project>/<stack> of the platform stack whose cluster this run uses",
        )
    if cluster.platform_stack and cluster.role != "run":
        yield "cluster.platformStack", "empty unless cluster.role is run"
    if cluster.run_namespaces and cluster.role == "standalone":  # a run's: roles.CLOUD_KEYS
        yield (
            "cluster.runNamespaces",
            "empty unless cluster.role is platform (the platform issues each listed namespace "
            "its run stack's credentials)",
        )
    if cluster.role == "run" and cluster.image_cache:
        yield (
            "cluster.imageCache",
            "false in a run stack: an ECI ImageCache is cluster-scoped, and a run's credentials "
            "(its platform's for its namespace) create nothing outside its namespace",
        )
    if cluster.role == "run" and stack.storage.kind != "nas":
        yield (
            "storage.kind",
            "nas in a run stack: its volume is the one its platform issues to its namespace "
            "(/tftrain/<namespace> on the platform's NAS)",
        )
    # On an existing cluster the role is refused above, which is the fix to name.
    if cluster.role == "platform" and cluster.kind != "existing" and stack.storage.kind != "nas":
        yield (
            "storage.kind",
            "nas in a platform stack: it issues each of cluster.runNamespaces a volume on its "
            "NAS (/tftrain/<namespace>), the only volume a run stack mounts",
        )
    repeated = sorted({n for n in cluster.run_namespaces if cluster.run_namespaces.count(n) > 1})
    if repeated:
        yield "cluster.runNamespaces", f"each namespace once ({', '.join(repeated)} repeated)"


def _value(stack: StackConfig, key: str) -> Any:
    """The value of a key as typed (`cluster.gpuPool.size`), to show it in the problem."""
    value: Any = stack
    for part in key.split("."):
        value = getattr(value, to_snake(part))
    return value


def _image_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    for group in stack.replica_groups:
        if group.number and not group.image:
            yield f"{group.type}.image", f"a container image (or set {PROJECT}:image for all)"


def _image_registry_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """Pull credentials are whole, and for a registry the stack pulls from: the kubelet offers
    them only to images of that host (`crpi-<id>.` and `crpi-<id>-vpc.` are two hosts), so
    credentials for another would leave every pod in ImagePullBackOff. Images of other
    registries (public ones) are pulled without credentials, as before."""
    registry = stack.image_registry
    keys = {"server": registry.server, "username": registry.username, "password": registry.password}
    if not any(keys.values()):
        return
    for name in (name for name, value in keys.items() if not value):
        # Only empty keys are named: a password is never shown in a problem.
        yield (
            f"imageRegistry.{name}",
            "set when any of imageRegistry's server, username and password is: all three or none",
        )
    hosts = list(dict.fromkeys(registry_of(image) for image in stack.images))
    if registry.server and canonical_registry(registry.server) not in hosts:
        yield (
            "imageRegistry.server",
            f"the registry of an image the stack pulls ({', '.join(hosts)}): the kubelet "
            "offers credentials only to images of their host",
        )


def _tensorboard_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    board = stack.tensorboard
    if board.enabled and not board.image:
        yield (
            "tensorboard.image",
            f"an image with tensorboard in it (unset: {PROJECT}:image when that is tftrain's "
            f"<registry>/{BUNDLED_IMAGE_REPOSITORY}, which has it; a trainer image of yours "
            "may not)",
        )
    if board.public and board.service_type != "LoadBalancer":
        yield "tensorboard.public", "false unless serviceType is LoadBalancer"
    # TensorBoard has no authentication: on the internet only behind an allow-list.
    if board.public and not board.allowed_source_ranges:
        yield "tensorboard.allowedSourceRanges", "a non-empty list of IPv4 CIDRs if public is true"
    if board.allowed_source_ranges and board.service_type != "LoadBalancer":
        yield "tensorboard.allowedSourceRanges", "empty unless serviceType is LoadBalancer"
    if board.allowed_source_ranges and stack.cluster.role == "run":
        yield (
            "tensorboard.allowedSourceRanges",
            "empty in a run stack: the allow-list is a cloud ACL, which a run stack does not "
            "create (use the intranet load balancer, or serviceType ClusterIP and port-forward)",
        )


def _trainer_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """The bundled trainer's own rules apply to it alone."""
    if stack.runs_bundled_trainer:
        yield from _bundled_trainer_rules(stack)


def _gpu_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """GPUs need nodes that have them; GPU nodes need work."""
    cluster = stack.cluster
    pool = cluster.gpu_pool
    for group in (g for g in stack.replica_groups if g.gpu_count and g.number):
        key = f"{group.type}.gpuCount"
        # A spot group is served by the spot GPU pool (its own rule below).
        if cluster.kind == "ack" and not (group.spot or pool.size or pool.max_size):
            yield key, "0 while cluster.gpuPool has size 0 and maxSize 0 (no GPU nodes)"
        if cluster.kind == "ask" and not cluster.eci_gpu_spec:
            yield key, "0 unless cluster.eciGpuSpec names an ECI GPU instance type"
    if cluster.kind == "ack" and pool.size and not stack.uses_gpu:
        yield "cluster.gpuPool.size", "0 when no replica requests a GPU (idle GPU nodes are billed)"


def _fit_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """Every pod's requests fit one node of what runs it (`infra.config.node_fit`): on ack
    the pool it is placed on, on ask the ECI GPU type it names. A type whose shape the name
    does not give is not guessed at."""
    groups = (g for g in stack.replica_groups if g.number)
    pods = [(g.type, g.cpu, g.memory, g.gpu_count, g.spot) for g in groups]
    board = stack.tensorboard
    if board.enabled:
        pods.append(("tensorboard", board.cpu, board.memory, 0, False))
    for section, cpu, memory, gpus, spot in pods:
        rooms = _rooms(stack, gpus > 0, spot)
        if not rooms:
            continue
        name, room = min(rooms, key=lambda pair: pair[1].millicores)
        if cpu_cores(cpu) * 1000 > room.millicores:
            yield f"{section}.cpu", f"at most {_cores(room.millicores)}: {_why(stack, gpus, name)}"
        sized = [(n, r.memory_mib) for n, r in rooms if r.memory_mib is not None]
        if sized:
            name, mib = min(sized, key=lambda pair: pair[1])
            if memory_mib(memory) > mib:
                yield f"{section}.memory", f"at most {mib}Mi: {_why(stack, gpus, name)}"
        name, room = min(rooms, key=lambda pair: pair[1].gpus)
        if gpus > room.gpus:
            kind = "pod" if stack.cluster.kind == "ask" else "node"
            allowed = f"at most {room.gpus}: one {name} {kind} has {room.gpus} GPU(s)"
            yield f"{section}.gpuCount", allowed


def _rooms(stack: StackConfig, gpu: bool, spot: bool) -> list[tuple[str, Room]]:
    cluster = stack.cluster
    if cluster.kind == "ask":
        shape = instance_shape(cluster.eci_gpu_spec) if gpu else None
        return [(cluster.eci_gpu_spec, eci_room(shape))] if shape else []
    # A run stack's nodes are its platform's pools, which its config does not hold.
    if cluster.kind != "ack" or cluster.role == "run":
        return []
    pool = cluster.gpu_pool if gpu else cluster.cpu_pool
    # The spot GPU pool (the GPU pool's types) always autoscales.
    autoscaled = spot or bool(pool.max_size)
    shapes = [(name, instance_shape(name)) for name in pool.instance_types]
    return [
        (name, ack_node_room(shape, cluster.network_plugin, autoscaled))
        for name, shape in shapes
        if shape is not None
    ]


def _cores(millicores: int) -> str:
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def _why(stack: StackConfig, gpus: int, name: str) -> str:
    """Why a request is too large: one ECI pod of type `name` (ask) or one `name` node of the
    pool the pod is placed on (ack) has no more room."""
    if stack.cluster.kind == "ask":
        return f"one {name} pod has no more"
    pool = "cluster.gpuPool" if gpus else "cluster.cpuPool"
    return (
        f"what one {name} node of {pool} can give a pod, after ACK's reserve, the node's "
        "DaemonSets and, if the pool autoscales, ACK's 70 % guidance (docs/deploy.md "
        '"Sizing requests")'
    )


def _spot_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """Spot capacity: ECI spot pods on ask, the spot GPU pool on ack; an existing cluster's
    nodes are not the stack's to choose."""
    cluster = stack.cluster
    spot_pool = cluster.spot_gpu_pool.max_size
    for group in (g for g in stack.replica_groups if g.spot and g.number):
        key = f"{group.type}.spot"
        if cluster.kind == "existing":
            yield key, "false on an existing cluster (its nodes are not the stack's)"
        elif cluster.kind == "ack" and not group.gpu_count:
            yield key, "false unless gpuCount > 0: on ack only the GPU pool has a spot twin"
        elif cluster.kind == "ack" and not spot_pool and cluster.role != "run":
            yield key, "false unless cluster.spotGpuPool.maxSize > 0 (the spot GPU pool)"
    if spot_pool and cluster.kind != "ack":
        yield "cluster.spotGpuPool.maxSize", "0 unless cluster.kind is ack (ask: set <group>.spot)"


def _cluster_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """The cluster, its node pools and storage every node can reach."""
    cluster, storage = stack.cluster, stack.storage
    for name in ("gpuPool", "cpuPool"):
        node_pool = getattr(cluster, to_snake(name))
        if 0 < node_pool.max_size < node_pool.min_size:
            yield f"cluster.{name}.maxSize", "0 (fixed size) or >= minSize (autoscaling)"
        # Either a fixed size or a range: the provider would ignore one of them silently.
        if node_pool.size and node_pool.max_size:
            allowed = "0 when maxSize > 0 (an autoscaling pool has no fixed size)"
            yield f"cluster.{name}.size", allowed
    # A platform may park its CPU pool at 0 while it has no runs (docs/teams.md).
    cpu_nodes = cluster.cpu_pool.size or cluster.cpu_pool.max_size
    if cluster.kind == "ack" and not cpu_nodes and stack.has_run:
        yield "cluster.cpuPool.size", "> 0 (or maxSize > 0): ps and TensorBoard run on the CPU pool"
    if cluster.image_cache and cluster.kind != "ask":
        yield "cluster.imageCache", "false unless cluster.kind is ask (an ECI feature)"
    if storage.kind == "nas" and cluster.kind == "existing":
        yield "storage.kind", "nfs or hostPath on an existing cluster (NAS needs the stack's VPC)"
    if storage.file_system_id and storage.kind != "nas":
        yield "storage.fileSystemId", "empty unless storage.kind is nas"
    if storage.kind == "nfs" and not storage.nfs_server:
        yield "storage.nfsServer", "the NFS server's address when storage.kind is nfs"
    if storage.kind == "hostPath" and cluster.kind != "existing":
        yield "storage.kind", "nas or nfs on ack/ask (hostPath is local to a node; pods move)"


def _zone_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    network = stack.network
    # A looked-up zone can change between runs, and the vSwitch, the NAS file system (with
    # the data) and the cluster are replaced when it does: a cloud stack names its zone.
    if stack.makes_cloud and not (network.zone_id or network.vswitch_id):
        yield (
            "network.zoneId",
            "set when cluster.kind is ack or ask (e.g. cn-hangzhou-i), unless vswitchId is: "
            "the vSwitch, NAS file system and cluster are created in it",
        )


def _network_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """ACK refuses overlapping node, pod and service ranges, but only mid-deploy."""
    cluster, network = stack.cluster, stack.network
    if network.vswitch_id and not network.vpc_id:
        yield "network.vswitchId", "empty unless vpcId is set (the existing VPC of that vSwitch)"
    if cluster.kind == "ack" and not network.nat_gateway:
        # The provider sends new_nat_gateway only when true, and CreateCluster's snat_entry
        # then defaults to true: ACK would add a NAT gateway and EIP the user turned off.
        yield (
            "network.natGateway",
            "true on ack (ACK creates its own NAT gateway and EIP when the stack does not: "
            "the provider cannot send new_nat_gateway=false); ask honours false",
        )
    if network.vpn_joined and not network.vpc_id:
        # A VPC the stack creates cannot be joined to anything before it exists.
        yield "network.vpnJoined", "false unless vpcId names the existing VPC your network joins"
    names = ("vpcCidr", "vswitchCidr", "podCidr", "serviceCidr", "podVswitchCidr")
    blocks = {name: ipaddress.IPv4Network(getattr(network, to_snake(name))) for name in names}
    inside_vpc = f"a block inside vpcCidr {network.vpc_cidr}"
    # An existing vSwitch's real range is read from the cloud at deploy time instead.
    if not network.vswitch_id and not blocks["vswitchCidr"].subnet_of(blocks["vpcCidr"]):
        yield "network.vswitchCidr", inside_vpc
    pairs = [("podCidr", "vpcCidr"), ("serviceCidr", "vpcCidr"), ("serviceCidr", "podCidr")]
    # The pods' own vSwitch (Terway's; ASK's isolated ECI pods): inside the VPC's primary
    # CIDR, apart from the cluster's vSwitch.
    pod_vswitch = cluster.has_pod_vswitch
    if pod_vswitch and not blocks["podVswitchCidr"].subnet_of(blocks["vpcCidr"]):
        yield "network.podVswitchCidr", inside_vpc
    if pod_vswitch and not network.vswitch_id:
        pairs.append(("podVswitchCidr", "vswitchCidr"))
    for name, other in pairs:
        if blocks[name].overlaps(blocks[other]):
            yield f"network.{name}", f"a block that does not overlap {other} {blocks[other]}"


def _data_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """The OSS input and export: apart from each other, in a bucket the stack can use, with
    credentials the cluster can use."""
    data = stack.data
    if not stack.uses_oss:
        return
    if not data.input_prefix:
        yield (
            "data.inputPrefix",
            "a prefix such as mnist/ (empty is the whole bucket, which includes the exports)",
        )
    elif data.export_prefix.startswith(data.input_prefix) or data.input_prefix.startswith(
        data.export_prefix
    ):
        yield (
            "data.exportPrefix",
            f"a prefix apart from inputPrefix {data.input_prefix} (neither inside the other): "
            "a run's export must not change what the next run reads",
        )
    yield from _bucket_rules(stack)
    yield from _credential_rules(stack)


def _bucket_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    data, kind = stack.data, stack.cluster.kind
    if data.create_bucket and kind == "existing":
        yield "data.createBucket", "false on an existing cluster (the stack has no cloud account)"
    if kind == "existing" and not data.bucket:
        yield "data.bucket", "the name of your bucket on an existing cluster"
    if kind == "existing" and not data.endpoint:
        yield "data.endpoint", "the bucket's OSS endpoint on an existing cluster"
    if data.bucket_owner == "another-account" and (data.create_bucket or not data.bucket):
        yield (
            "data.bucketOwner",
            "this-account when the stack creates the bucket or takes its platform's; "
            "another-account only with data.bucket naming that account's bucket",
        )
    # Uploaded by the program: it must be there when `pulumi up` (or the render) runs.
    uploaded = data.local_input_dir and data.create_bucket
    root = local_input_root(data.local_input_dir).resolve() if uploaded else None
    if root is not None and not root.is_relative_to(REPOSITORY_ROOT):
        # Everything under it goes to the bucket: /etc/ssl or ~ would be published there.
        yield (
            "data.localInputDir",
            f"a directory inside the project ({REPOSITORY_ROOT}), relative to it, such as "
            "data/mnist: its files are uploaded to the bucket",
        )
    elif uploaded and not local_input_root(data.local_input_dir).is_dir():
        yield (
            "data.localInputDir",
            "a directory of this machine (relative to the repository root) whose files "
            "are uploaded to the bucket's input prefix when the stack creates the bucket",
        )


def _credential_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    data, kind = stack.data, stack.cluster.kind
    mode = stack.oss_credentials
    keys = bool(data.access_key_id or data.access_key_secret)
    if data.rrsa_role_name and stack.cluster.role == "platform":
        yield (
            "data.rrsaRoleName",
            "empty on a platform stack: it makes a RAM role per run namespace (its output "
            "runOssRoleNames)",
        )
    if mode == "rrsa" and kind == "ask":
        yield "data.credentials", "secret or auto on ask (RRSA for the CSI OSS plugin is ACK's)"
    if mode == "rrsa" and kind == "existing" and not data.rrsa_role_name:
        yield "data.rrsaRoleName", "the RAM role the cluster's CSI OSS plugin assumes (rrsa)"
    if mode == "rrsa" and (keys or data.credentials_secret):
        yield (
            "data.credentials",
            "secret when data.accessKeyId, accessKeySecret or credentialsSecret is set (rrsa "
            "uses a RAM role, no key)",
        )
    if mode != "secret" or not stack.has_run:
        return
    secret_ref = data.credentials_secret
    if keys and secret_ref:
        yield (
            "data.credentialsSecret",
            "empty when data.accessKeyId and accessKeySecret are set (the stack then makes "
            "the Secret): one of the two",
        )
    for name in ("accessKeyId", "accessKeySecret"):
        if keys and not getattr(data, to_snake(name)):
            yield f"data.{name}", "set when the other AccessKey key is: both or neither"
    if not keys and not secret_ref:
        yield (
            "data.accessKeyId",
            "a RAM user's AccessKey as Pulumi secrets (pulumi config set --secret --path "
            f"{PROJECT}:data.accessKeyId / accessKeySecret) when credentials is secret, or "
            "data.credentialsSecret naming a Secret you manage",
        )
    if secret_ref.split("/", 1)[0] == stack.job.namespace:
        yield (
            "data.credentialsSecret",
            f"a Secret in a namespace that exists before `up`, not job.namespace "
            f"{stack.job.namespace} (the stack creates that one, so no Secret can be in it "
            "first); or unset, with data.accessKeyId and accessKeySecret as Pulumi secrets",
        )


def _init_checkpoint_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """Fine-tuning starts from a checkpoint the replicas can reach: on the volume, in the
    input, or another run of this job (`infra/replica_plan/run_data.py` resolves it)."""
    wanted, job = stack.job.init_checkpoint, stack.job
    if not wanted:
        return
    has_input = bool(stack.uses_oss or stack.data.local_input_dir)
    allowed = (
        f"run:<runId> (another run of job {job.name}), or an absolute path under "
        f"storage.mountPath {stack.storage.mount_path}"
        + (f" or data.inputPath {stack.data.input_path}" if has_input else "")
    )
    if wanted.startswith(RUN_PREFIX):
        run_id = wanted.removeprefix(RUN_PREFIX)
        if not re.fullmatch(DNS_LABEL, run_id):
            yield "job.initCheckpoint", allowed + "; the run id is a DNS label"
        elif run_id == job.run_id:
            yield "job.initCheckpoint", allowed + "; not this run's own id (it resumes by itself)"
        return
    roots = [stack.storage.mount_path, *([stack.data.input_path] if has_input else [])]
    if not any(under(wanted, root) is not None for root in roots):
        yield "job.initCheckpoint", allowed


# The Jobs' podFailurePolicy (fail at once on exit 2, 126, 127; ignore disruptions) is beta and
# on by default from Kubernetes 1.26 (JobPodFailurePolicy, alpha and off in 1.25): an older API
# server drops the field without a word, and a final exit would be retried like any failure.
MIN_KUBERNETES = (1, 26)


def _kubernetes_version_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    version = stack.cluster.kubernetes_version
    if version == LATEST_VERSION:
        return  # unknown before the cluster exists (see `infra.render.cloud` for existing)
    if tuple(int(part) for part in version.split("-")[0].split(".")[:2]) < MIN_KUBERNETES:
        yield (
            "cluster.kubernetesVersion",
            "1.26 or newer: an older API server drops the Jobs' podFailurePolicy, so exit 2 "
            "(a bad flag, env or TF_CONFIG) would be retried like any failure",
        )


def _topology_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """What any TFJob-style run needs: one replica whose exit ends it (TFJob's success
    policy: the chief or master, else worker 0)."""
    chief, master, worker = stack.chief, stack.master, stack.worker
    if chief.number and master.number:
        yield "master.number", "0 when chief.number is 1: master is TFJob's older name for chief"
    if not (worker.number or chief.number or master.number):
        yield "worker.number", ">= 1 (or chief.number 1): a chief or worker 0 ends the run"


def _command_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """A user's image needs its command: the supervisor replaces the image's ENTRYPOINT and
    cannot read it, so an unset command would run the bundled trainer, which is not there."""
    if stack.job.command:
        return
    for group in stack.replica_groups:
        image = group.image
        if group.number and not group.command and image and not is_bundled_image(image):
            yield (
                "job.command",
                f"the command that starts your trainer in {image} (or {group.type}.command),"
                " e.g. [python, /app/train.py]: the image's ENTRYPOINT does not run under the "
                f"replica supervisor; unset runs the bundled trainer (python -m trainer), which "
                f"only tftrain's image <registry>/{BUNDLED_IMAGE_REPOSITORY} has",
            )
            return


# Env names the stack sets for every replica itself (infra/replica_plan/plan.py, trainer_env.py,
# run_data.py); a test keeps this list complete.
STACK_ENV = (
    "TF_CONFIG", "HOME", "TMPDIR", "POD_NAME", "POD_NAMESPACE", "TFTRAIN_OUTPUT_DIR",
    "TFTRAIN_DATA_DIR", "TFTRAIN_INPUT_DIR", "TFTRAIN_EXPORT_DIR", "TFTRAIN_INIT_CHECKPOINT",
    "TFTRAIN_JOB_NAME", "TFTRAIN_RUN_ID", "TFTRAIN_IMAGES", "TFTRAIN_STACK", "TFTRAIN_EPOCHS",
    "TFTRAIN_BATCH_SIZE", "TFTRAIN_LEARNING_RATE", "TFTRAIN_STRATEGY",
    "TFTRAIN_CHECKPOINT_STEPS", "TFTRAIN_KEEP_CHECKPOINTS", "TFTRAIN_LOG_STEPS",
    "TFTRAIN_STEPS_PER_EXECUTION", "TFTRAIN_MAX_STEPS", "TFTRAIN_GPUS",
)  # fmt: skip


def _env_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    sections = [("job", stack.job.env), *((g.type, g.env) for g in stack.replica_groups)]
    for section, env in sections:
        for name in env:
            if name in STACK_ENV:
                yield (
                    f"{section}.env",
                    f"names the stack does not set itself, not {name} (hyperparameters, paths "
                    'and TF_CONFIG have their own keys: docs/trainer.md "What your trainer gets")',
                )


def _bundled_trainer_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """The topology and the strategy as the bundled trainer checks them when it starts; a
    user's own command is not held to them."""
    chief, worker, ps, hyper = stack.chief, stack.worker, stack.ps, stack.hyperparams
    if stack.master.number:
        yield "master.number", "0 for the bundled trainer (its chief is chief.number 1)"
    if ps.gpu_count:
        yield "ps.gpuCount", "0: the bundled trainer's parameter servers do no GPU work"
    if ps.number and not chief.number:
        yield "chief.number", "1 when ps.number > 0: ParameterServerStrategy needs a chief"
    if ps.number and not worker.number:
        yield "worker.number", ">= 1 when ps.number > 0: the chief dispatches to workers"
    if hyper.strategy == "parameter_server" and not ps.number:
        yield "hyperparams.strategy", "auto or multi_worker_mirrored with 0 ps"
    if hyper.strategy == "multi_worker_mirrored" and ps.number:
        yield "hyperparams.strategy", "auto or parameter_server when ps.number > 0"
    strategy, replicas = stack.effective_strategy, stack.replicas_in_sync
    devices = {max(group.gpu_count, 1) for group in (chief, worker) if group.number}
    # multi_worker_mirrored keeps one copy of the model per device, in lockstep.
    if strategy == "multi_worker_mirrored" and len(devices) > 1:
        yield "chief.gpuCount", "worker.gpuCount or both <= 1: as many devices on every replica"
    # No trainer at all is reported by _topology_rules; there is no batch to split then.
    if replicas and hyper.batch_size % replicas:
        yield (
            "hyperparams.batchSize",
            f"a multiple of {replicas}: {strategy} splits each batch over {replicas} replicas",
        )


# Every rule, in the order its problems are listed.
def _budget_rules(stack: StackConfig) -> Iterator[tuple[str, str]]:
    """A budget on a run needs a bound on the run (infra.pricing.budget checks the amounts)."""
    budget = stack.budget
    bounded = stack.job.active_deadline_seconds is not None
    for key, value in (
        ("maxCnyPerRun", budget.max_cny_per_run),
        ("maxCnyPerSweep", budget.max_cny_per_sweep),
    ):
        if value is not None and not bounded:
            yield (
                f"budget.{key}",
                "unset unless job.activeDeadlineSeconds is set: without it a run has no most "
                "it can cost",
            )
    if budget.max_cny_per_sweep is not None and stack.sweep is None:
        yield "budget.maxCnyPerSweep", "unset unless the stack has a sweep"


RULES: tuple[Callable[[StackConfig], Iterator[tuple[str, str]]], ...] = (
    _role_rules,
    _budget_rules,
    _image_rules,
    _image_registry_rules,
    _tensorboard_rules,
    _topology_rules,
    _command_rules,
    _env_rules,
    _trainer_rules,
    _gpu_rules,
    _fit_rules,
    _spot_rules,
    _cluster_rules,
    _zone_rules,
    _network_rules,
    _data_rules,
    _init_checkpoint_rules,
    _kubernetes_version_rules,
)
# A platform stack's: the cloud side alone (its GPU pools serve the run stacks' replicas).
PLATFORM_RULES = (
    _role_rules,
    _spot_rules,
    _cluster_rules,
    _zone_rules,
    _network_rules,
    _data_rules,
    _kubernetes_version_rules,
)
