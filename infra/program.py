"""Layer 5: the Pulumi program. Config → topology → cloud → Kubernetes objects → exports.

Everything is created inside `build()`, never at import, so tests can run the program once
per stack under `pulumi.runtime.set_mocks`. The stack config is validated before the first
resource is registered: a bad stack creates nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import pulumi
import pulumi_kubernetes as k8s
from pulumi.runtime import config as runtime_config

from infra.config import (
    KUBECONFIG_KEY,
    PROJECT,
    ConfigError,
    StackConfig,
    parse_config,
    strip_project_prefix,
)
from infra.config.stack_file import namespace_problem, program_value
from infra.config.sweep_platform import platform_problems
from infra.kube_resources import kube_resource
from infra.manifests import build_objects
from infra.manifests.common import RUN_ID_LABEL
from infra.manifests.image_cache import KIND as IMAGE_CACHE_KIND
from infra.manifests.image_cache import REPLACE_ON_CHANGES as IMAGE_CACHE_REPLACES
from infra.manifests.run_access import platform_objects
from infra.manifests.tensorboard import PORT as TENSORBOARD_PORT
from infra.manifests.tensorboard import tensorboard_name
from infra.manifests.workloads import JOB_LABEL
from infra.platform.cluster_facts import (
    EciNetwork,
    cluster_facts,
    internal_oss_endpoint,
    needs_load_balancer_acl,
)
from infra.platform.outputs import (
    CLUSTER_ID,
    CLUSTER_KIND,
    KUBECONFIG,
    NAS_DOMAIN,
    OSS_BUCKET,
    OSS_EXPORT_PREFIX,
    OSS_INPUT_PREFIX,
    REGION,
    RUN_KUBECONFIGS,
    RUN_OSS_ACCESS_POLICIES,
    placeholder,
    platform_data_problem,
    required_outputs,
    unissued_namespace,
)
from infra.pricing.budget import budget_refusals
from infra.run_namespaces import issue_namespaces, namespace_data, namespace_roles
from infra.topology import build_topology

if TYPE_CHECKING:
    from infra.cloud import AckCluster, AskCluster, LoadBalancerAcl, NasStorage, Network


_POD_OWNERS = ("Job", "Deployment")
# Objects a pod's volumes name, which must exist before the pod: (kind, volume type, key).
_VOLUME_SOURCES = (
    ("PersistentVolumeClaim", "persistentVolumeClaim", "claimName"),
    ("ConfigMap", "configMap", "name"),
)
_REPLACE_ON_CHANGES = {IMAGE_CACHE_KIND: list(IMAGE_CACHE_REPLACES)}


def read_stack_config() -> dict[str, Any]:
    """The `tftrain:` config (prefix removed, JSON objects decoded; the kubeconfig as given:
    a kubeconfig may be JSON, and it stays the text the provider takes).

    The engine hands config to Python in the PULUMI_CONFIG environment variable; tests set
    it with `set_all_config`, which takes precedence, as it does for `pulumi.Config`.
    `parse_config` refuses a kubeconfig the engine did not mark secret, as it does offline.
    """
    values = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    misspelt = [problem for key in values if (problem := namespace_problem(key))]
    if misspelt:
        raise ConfigError(misspelt)
    return {
        key: value if key == KUBECONFIG_KEY else program_value(value)
        for key, value in strip_project_prefix(values).items()
    }


@dataclass
class ClusterAccess:
    """What the cloud layer hands the Kubernetes layer."""

    kubeconfig: pulumi.Output[str] | None
    # What the Kubernetes provider is replaced on, and only on (its `clusterIdentifier`): the
    # cluster, not its credential. Without it a re-issued kubeconfig or a swapped endpoint
    # replaces the provider and so every Job, PV, PVC and Service (pulumi-kubernetes #2745).
    identity: pulumi.Input[str] = ""
    # The provider waits for these (node pools), so no pod is created before nodes exist.
    ready: list[pulumi.Resource] = field(default_factory=list)
    nas: NasStorage | None = None  # when storage.kind is nas and the stack makes the NAS
    nas_domain: pulumi.Input[str] | None = None  # its mount target, or the platform's
    load_balancer_acl: LoadBalancerAcl | None = None  # when needs_load_balancer_acl
    eci_network: EciNetwork | None = None  # ask: the pods' own vSwitch and security groups
    exports: dict[str, Any] = field(default_factory=dict)
    data: DataAccess | None = None  # when the stack uses OSS (StackConfig.uses_oss)


@dataclass
class DataAccess:
    """The OSS input/export as the Kubernetes layer needs it (infra/manifests/oss.py)."""

    endpoint: pulumi.Input[str]
    bucket: pulumi.Input[str]  # data.bucket, the name derived from the account, or the platform's
    role_name: pulumi.Output[str] | None = None  # rrsa with the stack's own role
    # A platform's (ack, rrsa): the role of each run namespace's volumes, by namespace.
    namespace_roles: dict[str, Any] = field(default_factory=dict)
    # What the PVs wait for: the bucket, the role and its policy attachment.
    ready: list[pulumi.Resource] = field(default_factory=list)


def oss_endpoint(config: StackConfig, region: str | None) -> str:
    """data.endpoint, or the internal endpoint of the provider's region."""
    if config.data.endpoint:
        return config.data.endpoint
    if not region:
        raise pulumi.RunError(
            f"{PROJECT}:data.endpoint = '': no alicloud:region to derive the OSS endpoint "
            "from; set alicloud:region or data.endpoint (oss-<region>-internal.aliyuncs.com)"
        )
    return internal_oss_endpoint(region)


def data_exports(config: StackConfig, data: DataAccess) -> dict[str, Any]:
    """The endpoint and the RAM role the volumes use; without a role of the stack's, the
    least-privilege policy to attach to the RAM user or role the plugin authenticates as."""
    from infra.cloud.oss import access_policy

    exports: dict[str, Any] = {"ossEndpoint": data.endpoint, OSS_BUCKET: data.bucket}
    if not config.has_run:
        # What a run stack using this platform's role is held to (infra.platform.outputs).
        exports[OSS_INPUT_PREFIX] = config.data.input_prefix
        exports[OSS_EXPORT_PREFIX] = config.data.export_prefix
    if data.role_name is not None:
        exports["ossRoleName"] = data.role_name
    own_role = data.role_name is not None or bool(data.namespace_roles)
    if own_role and config.data.bucket_owner != "another-account":
        return exports

    def policies(bucket: str) -> Any:
        """What a RAM user (or another account's bucket policy) must allow; a platform's run
        namespaces each their own (the run's AccessKey user, or the namespace's role)."""
        if config.has_run:
            return json.dumps(access_policy(config.data, bucket))
        return {
            namespace: json.dumps(access_policy(namespace_data(config.data, namespace), bucket))
            for namespace in config.cluster.run_namespaces
        }

    key = "ossAccessPolicy" if config.has_run else RUN_OSS_ACCESS_POLICIES
    exports[key] = pulumi.Output.from_input(data.bucket).apply(policies)
    return exports


def rrsa_field(metadata: Any, name: str) -> str:
    """A field of the cluster's `rrsa_metadata`, or a message naming what to check: ACK leaves
    it empty when RRSA did not come on, and the role would trust nothing."""
    value = getattr(metadata, name, None) if metadata is not None else None
    if not value:
        raise pulumi.RunError(
            f"{PROJECT}:data.credentials = rrsa: the cluster reports no RRSA {name} (its "
            "rrsa_metadata is empty), so the OSS volumes' RAM role could not be trusted. Check "
            "in the ACK console that RRSA is on for the cluster, then `pulumi up` again, or use "
            "data.credentials: secret"
        )
    return str(value)


def provision_data(config: StackConfig, cluster: Any, endpoint: str, bucket: str) -> DataAccess:
    """The bucket (when the stack creates it) and, on ACK with rrsa, the plugin's RAM role."""
    from infra import cloud

    data = config.data
    access = DataAccess(endpoint=endpoint, bucket=bucket)
    if data.create_bucket:
        access.ready.append(cloud.OssBucket("data", data, bucket))
    if config.oss_credentials == "rrsa" and config.cluster.kind == "ack":
        metadata = cluster.rrsa_metadata
        arn = metadata.apply(lambda m: rrsa_field(m, "ram_oidc_provider_arn"))
        issuer = metadata.apply(lambda m: rrsa_field(m, "rrsa_oidc_issuer_url"))
        if not config.has_run:  # a platform: a role per run namespace, none of its own
            access.namespace_roles = namespace_roles(config, bucket, arn, issuer, access.ready)
            return access
        rrsa = cloud.OssRrsaAccess(
            "oss-access", data, bucket, oidc_provider_arn=arn, issuer_url=issuer,
            opts=pulumi.ResourceOptions(depends_on=list(access.ready)),
        )  # fmt: skip
        access.role_name = rrsa.role_name
        access.ready.append(rrsa)
    return access


def existing_cluster_identity(config: StackConfig) -> str:
    """An existing cluster's identity: its `cluster.name`, which a user changes only to point
    the stack at another cluster (new credentials for the same one change nothing)."""
    return f"existing/{config.cluster.name or 'default'}"


def preflight(config: StackConfig) -> tuple[str | None, str, str]:
    """Before anything is registered: the version, a reachable API server, the zone's stock,
    the bucket. Returns the provider's region, the bucket's name and the OSS endpoint."""
    from infra import cloud

    cloud.require_offered_version(config.cluster)
    if config.sends_kubernetes_objects:
        cloud.require_reachable_api_server(
            config.cluster, config.network, config.cluster.name or cloud.physical_name("cluster")
        )
    cloud.require_zone_offers(config)
    region = provider_region()
    cloud.require_usable_bucket(config, region)
    if not config.uses_oss:
        return region, "", ""
    return region, cloud.stack_bucket(config.data), oss_endpoint(config, region)


def provider_region() -> str | None:
    """The region the alicloud provider deploys into: `alicloud:region`, else the provider's
    own fallback, ALICLOUD_REGION (SDK `config/vars.py` `region`). The bucket check, the OSS
    endpoint and the budget's prices all read it here, so they agree with the provider."""
    return pulumi.Config("alicloud").get("region") or os.environ.get("ALICLOUD_REGION")


def provision_cluster(config: StackConfig, kubeconfig: str | None) -> ClusterAccess:
    if config.cluster.kind == "existing":
        return existing_cluster(config, kubeconfig)
    # Imported here: an existing-cluster stack needs no Alibaba Cloud provider at all.
    from infra import cloud

    region, bucket, endpoint = preflight(config)
    network = cloud.Network(
        "network",
        config.network,
        pod_vswitch=cloud.needs_pod_vswitch(config.cluster),
        pods="ECI" if config.cluster.kind == "ask" else "Terway",
    )
    cluster: cloud.AckCluster | cloud.AskCluster
    eci_network = None
    if config.cluster.kind == "ack":
        cluster = cloud.AckCluster(
            "cluster",
            config.cluster,
            network,
            # A platform's GPU pools serve its run stacks' replicas, which it cannot see.
            uses_gpu=config.uses_gpu or not config.has_run,
            enable_rrsa=config.uses_oss and config.oss_credentials == "rrsa",
        )
    else:
        cluster = cloud.AskCluster("cluster", config.cluster, network)
        eci_network = eci_pod_network(config, network, cluster.security_group_id)
    # ASK's NAS clients are the ECI pods themselves: only the job's pod vSwitch mounts.
    clients = [network.pod_vswitch_cidr] if eci_network is not None else None
    nas = (
        cloud.NasStorage("nas", config.storage, network, clients)
        if config.storage.kind == "nas"
        else None
    )
    acl = (
        cloud.LoadBalancerAcl("tensorboard", config.tensorboard.allowed_source_ranges)
        if needs_load_balancer_acl(config)
        else None
    )
    data = provision_data(config, cluster, endpoint, bucket) if config.uses_oss else None
    kubeconfig_out, public = cluster.kubeconfig, config.cluster.public_api_server
    if config.sends_kubernetes_objects:
        # Before any Kubernetes object: the API server the kubeconfig names opens from here.
        kubeconfig_out = kubeconfig_out.apply(
            lambda text: cloud.kubeconfig_reachable(
                text, f"{PROJECT}:cluster.publicApiServer = {str(public).lower()}"
            )
        )
    return ClusterAccess(
        kubeconfig=pulumi.Output.secret(kubeconfig_out),
        identity=cluster.cluster_id,
        # ASK has no node pools: its API server is ready for pods once the cluster is.
        ready=[*cluster.node_pools] or [cluster],
        nas=nas,
        nas_domain=nas.mount_target_domain if nas is not None else None,
        load_balancer_acl=acl,
        eci_network=eci_network,
        exports=cloud_exports(config, region, network.vpc_id, cluster, nas, data),
        data=data,
    )


def eci_pod_network(
    config: StackConfig, network: Network, cluster_group_id: pulumi.Output[str]
) -> EciNetwork | None:
    """An ASK stack's pods on their own vSwitch and behind their own security groups
    (`infra/cloud/pod_isolation.py`); None where the stack does not isolate them."""
    from infra import cloud

    if not config.cluster.isolates_eci_pods:
        return None
    firewall = cloud.EciPodFirewall("pods", config, network.vpc_id, cluster_group_id)
    return EciNetwork(
        vswitch_id=network.pod_vswitch_id,
        replicas_group_id=firewall.replicas_group_id,
        tensorboard_group_id=firewall.tensorboard_group_id,
    )


def existing_cluster(config: StackConfig, kubeconfig: str | None) -> ClusterAccess:
    # Without a kubeconfig the provider uses the ambient one (~/.kube/config, KUBECONFIG).
    secret = pulumi.Output.secret(kubeconfig) if kubeconfig else None
    identity = existing_cluster_identity(config)
    # Validated: an existing cluster names its endpoint and brings its own credentials.
    if not config.uses_oss:
        return ClusterAccess(kubeconfig=secret, identity=identity)
    data = DataAccess(endpoint=config.data.endpoint, bucket=config.data.bucket)
    exports = data_exports(config, data)
    return ClusterAccess(kubeconfig=secret, identity=identity, data=data, exports=exports)


def cloud_exports(
    config: StackConfig,
    region: str | None,
    vpc_id: pulumi.Output[str],
    cluster: AckCluster | AskCluster,
    nas: NasStorage | None,
    data: DataAccess | None,
) -> dict[str, Any]:
    """The stack outputs of the cloud side; a platform's are what its run stacks read."""
    exports: dict[str, Any] = {
        "clusterId": cluster.cluster_id,
        "vpcId": vpc_id,
        # The version the cluster runs: pin it as cluster.kubernetesVersion to upgrade on purpose.
        "kubernetesVersion": cluster.version,
    }
    if not config.has_run:
        # What run stacks read (infra/platform/outputs.py); the caller exports the kubeconfig.
        exports[CLUSTER_KIND] = config.cluster.kind
        if region:
            exports[REGION] = region
    if nas is not None:
        exports[NAS_DOMAIN] = nas.mount_target_domain
        exports["nasFileSystemId"] = nas.file_system_id
    if data is not None:
        exports.update(data_exports(config, data))
    return exports


def _check_platform(config: StackConfig, values: Mapping[str, Any]) -> bool:
    """Fail the run's Kubernetes provider, and so every object, when the platform lacks an
    output this run needs or runs another kind of cluster than the objects are built for."""
    stack, kind = config.cluster.platform_stack, values[CLUSTER_KIND]
    if kind and kind != config.cluster.kind:
        raise pulumi.RunError(
            f"{PROJECT}:cluster.kind = '{config.cluster.kind}': must be {kind}, the kind of "
            f"platform stack {stack}'s cluster (placement, gang scheduling and the image "
            "cache depend on it)"
        )
    missing = [name for name, value in values.items() if value in (None, "")]
    if missing:
        raise pulumi.RunError(
            f"{PROJECT}:cluster.platformStack = '{stack}': that stack has no output "
            f"{', '.join(missing)}, which this run needs: is it a platform stack "
            "(cluster.role: platform) that has been deployed, with the storage this run uses?"
        )
    problem = unissued_namespace(config, values[RUN_KUBECONFIGS])
    if problem is None and config.uses_oss:
        problem = platform_data_problem(config, dict(values))
    if problem is not None:
        raise pulumi.RunError(f"{PROJECT}:{problem}")
    return True


def platform_access(config: StackConfig) -> ClusterAccess:
    """A run stack's cluster: the platform stack's outputs, read through a StackReference.

    The Python program cannot wait for another stack's outputs before it registers its own
    resources, so the check is an input of the Kubernetes provider, which every object needs:
    a missing output fails the provider, and no object is ever sent to the engine."""
    reference = pulumi.StackReference("platform", stack_name=config.cluster.platform_stack)
    names = required_outputs(config)
    # Not secret itself (only whether the check passed), so the cluster id stays readable.
    checked = pulumi.Output.unsecret(
        pulumi.Output.all(*(reference.get_output(name) for name in names)).apply(
            lambda values: _check_platform(config, dict(zip(names, values, strict=True)))
        )
    )

    def checked_output(name: str) -> pulumi.Output[Any]:
        return pulumi.Output.all(checked, reference.get_output(name)).apply(lambda v: v[1])

    def reachable(kubeconfigs: Mapping[str, str]) -> str:
        """The namespace's kubeconfig the platform issued, once its API server opens from
        here (as a standalone stack's is checked before any object)."""
        from infra.cloud.api_server_reach import kubeconfig_reachable

        kubeconfig = kubeconfigs[config.job.namespace]
        if kubeconfig == placeholder(RUN_KUBECONFIGS):
            return kubeconfig  # the offline render: no cluster to reach
        key = f"{PROJECT}:cluster.platformStack = '{config.cluster.platform_stack}'"
        return kubeconfig_reachable(kubeconfig, key)

    exports: dict[str, Any] = {"platformStack": config.cluster.platform_stack}
    if config.uses_oss:
        exports[OSS_BUCKET] = config.data.bucket or reference.get_output(OSS_BUCKET)
    return ClusterAccess(
        kubeconfig=pulumi.Output.secret(checked_output(RUN_KUBECONFIGS).apply(reachable)),
        identity=checked_output(CLUSTER_ID),
        exports=exports,
    )


def kubernetes_provider(access: ClusterAccess) -> k8s.Provider:
    return k8s.Provider(
        "k8s",
        kubeconfig=access.kubeconfig,
        cluster_identifier=access.identity,
        opts=pulumi.ResourceOptions(depends_on=list(access.ready)),
    )


def export_platform(config: StackConfig, access: ClusterAccess) -> None:
    """A platform stack's outputs: the cloud side's, and what run stacks read, with each run
    namespace's credentials (`infra/run_namespaces.py`)."""
    pulumi.export(KUBECONFIG, access.kubeconfig)
    for key, value in access.exports.items():
        pulumi.export(key, value)
    data = access.data
    roles = data.namespace_roles if data else {}
    facts = cluster_facts(
        config,
        nas_domain=access.nas_domain,
        oss_endpoint=data.endpoint if data else None,
        oss_bucket=data.bucket if data else None,
    )
    objects = platform_objects(config, facts, {ns: r.role_name for ns, r in roles.items()})
    admin = (kubernetes_provider(access), access.kubeconfig) if objects else None
    volumes_after = [*([access.nas] if access.nas else []), *(data.ready if data else [])]
    for key, value in issue_namespaces(config, admin, objects, roles, volumes_after).items():
        pulumi.export(key, value)


def _volume_sources(obj: Mapping[str, Any], source: str, name_key: str) -> list[str]:
    """Names of the objects a pod template's volumes of type `source` refer to."""
    volumes = obj["spec"]["template"]["spec"].get("volumes", [])
    return [v[source][name_key] for v in volumes if source in v]


def _dependencies(
    obj: Mapping[str, Any],
    registered: Mapping[tuple[str, str, str], pulumi.Resource],
    by_kind: Mapping[str, list[pulumi.Resource]],
) -> list[pulumi.Resource]:
    """Ordering Kubernetes cannot express: read from the object, so new objects need no rule."""
    kind, meta = obj["kind"], obj["metadata"]
    namespace = meta.get("namespace", "")
    deps: list[pulumi.Resource] = []
    if ("Namespace", "", namespace) in registered:  # a run stack's is its platform's
        deps.append(registered[("Namespace", "", namespace)])
    if kind == "PersistentVolumeClaim":
        deps += by_kind.get("PersistentVolume", [])
    if kind == "PersistentVolume":
        # The node publish Secret exists before any node mounts the volume; a Secret the
        # stack does not make is the user's (data.credentialsSecret, checked by the config).
        ref = obj["spec"].get("csi", {}).get("nodePublishSecretRef")
        if ref and ("Secret", ref["namespace"], ref["name"]) in registered:
            deps.append(registered[("Secret", ref["namespace"], ref["name"])])
    if kind in _POD_OWNERS:
        for kind_used, source, name_key in _VOLUME_SOURCES:
            deps += [
                registered[(kind_used, namespace, name)]
                for name in _volume_sources(obj, source, name_key)
            ]
        # The kubelet reads the pull secret when it pulls, and the env Secret when it starts
        # the container: both exist before the first pod.
        pod = obj["spec"]["template"]["spec"]
        pulls = [ref["name"] for ref in pod.get("imagePullSecrets", [])]
        env_refs = {env["valueFrom"]["secretKeyRef"]["name"]
                    for container in pod["containers"] for env in container.get("env", [])
                    if "secretKeyRef" in env.get("valueFrom", {})}  # fmt: skip
        deps += [registered[("Secret", namespace, name)] for name in [*pulls, *sorted(env_refs)]]
        # Pods match the image cache only once it exists.
        deps += by_kind.get("ImageCache", [])
        # A pod never runs unisolated, nor before the policy admitting its peers is updated
        # to its run id (TensorFlow would retry, but only after timeouts).
        deps += by_kind.get("NetworkPolicy", [])
    if kind == IMAGE_CACHE_KIND:
        # ECI reads its pull secrets (`namespace:name`) when it builds the cache.
        refs = (ref.split(":", 1) for ref in obj["spec"].get("imagePullSecrets", []))
        deps += [registered[("Secret", ref_namespace, name)] for ref_namespace, name in refs]
    if kind == "Job":
        # The replica's DNS name exists before its process starts.
        deps.append(registered[("Service", namespace, meta["name"])])
    return deps


def secret_sections(sections: Iterable[str]) -> set[str]:
    """Which of the top-level `tftrain:` keys the engine marked secret. It marks a whole key
    secret when any value under it is (`job.env.TOKEN` makes `job` secret). The language
    host's exec script hands the runtime PULUMI_CONFIG_SECRET_KEYS before the program runs
    (`set_all_config(get_config_env(), get_config_secret_keys_env())`), so the runtime's set
    is the one reader."""
    return {s for s in sections if runtime_config.is_config_secret(f"{PROJECT}:{s}")}


def secret_env_sections(config: StackConfig) -> list[str]:
    """The sections whose env reaches the Jobs and that hold a Pulumi secret; every value of
    such a section is treated as one."""
    envs = {"job": config.job.env, **{group.type: group.env for group in config.replica_groups}}
    secret = secret_sections(envs)
    return [section for section, env in envs.items() if env and section in secret]


def user_secret_reads(
    objects: list[dict[str, Any]], provider: k8s.Provider
) -> list[pulumi.Resource]:
    """A read of each Secret a volume names that the stack does not make
    (`data.credentialsSecret`): every object waits for them, so a missing one fails its read
    and nothing is created in the cluster (pods would otherwise wait in ContainerCreating)."""
    made = {(o["metadata"].get("namespace", ""), o["metadata"]["name"])
            for o in objects if o["kind"] == "Secret"}  # fmt: skip
    named = {
        (ref["namespace"], ref["name"])
        for o in objects
        if o["kind"] == "PersistentVolume"
        and (ref := o["spec"].get("csi", {}).get("nodePublishSecretRef"))
    }
    return [
        k8s.core.v1.Secret.get(
            f"existing-secret-{namespace}/{name}",
            f"{namespace}/{name}",
            opts=pulumi.ResourceOptions(provider=provider),
        )
        for namespace, name in sorted(named - made)
    ]


def register_objects(
    objects: list[dict[str, Any]],
    provider: k8s.Provider,
    storage_ready: list[pulumi.Resource],
) -> dict[tuple[str, str, str], pulumi.Resource]:
    """Each layer-3 object as its typed resource, keyed by (kind, namespace, name), after the
    Secrets they need that the stack does not make. Secret env values live in a Secret
    (`infra/manifests/secret_env.py`), never in a Job: its spec stays readable in the
    preview and the state."""
    prerequisites = user_secret_reads(objects, provider)
    registered: dict[tuple[str, str, str], pulumi.Resource] = {}
    # Per-kind lists keep dependency lookups constant-time: 512 workers mean 1,000+ objects.
    by_kind: dict[str, list[pulumi.Resource]] = {}
    for obj in objects:
        kind, meta = obj["kind"], obj["metadata"]
        deps = [*prerequisites, *_dependencies(obj, registered, by_kind)]
        if kind == "PersistentVolume":
            deps += storage_ready  # e.g. the NAS access rule, before any node mounts it
        opts = pulumi.ResourceOptions(
            provider=provider, depends_on=deps, replace_on_changes=_REPLACE_ON_CHANGES.get(kind)
        )
        resource = kube_resource(obj, opts)
        registered[(kind, meta.get("namespace", ""), meta["name"])] = resource
        by_kind.setdefault(kind, []).append(resource)
    return registered


def _tensorboard_url(service: k8s.core.v1.Service) -> pulumi.Output[str]:
    """The load balancer's address once the cloud controller has assigned one."""

    def url(status: Any) -> str:
        balancer = getattr(status, "load_balancer", None)
        ingress = list(getattr(balancer, "ingress", None) or [])
        if not ingress:
            return "pending: the load balancer has no address yet"
        host = getattr(ingress[0], "ip", None) or getattr(ingress[0], "hostname", None)
        return f"http://{host}:{TENSORBOARD_PORT}"

    return service.status.apply(url)


def _run_outputs(config: StackConfig) -> dict[str, Any]:
    """What a user needs next about one run: where it writes, how to follow it."""
    namespace, job, run_id = config.job.namespace, config.job.name, config.job.run_id
    lead = build_topology(config).replicas[0].name  # the chief, or worker 0 without one
    outputs: dict[str, Any] = {
        "outputDir": config.output_dir,
        "kubectl": {
            "logs": f"kubectl -n {namespace} logs -f job/{lead}",
            "status": (
                f"kubectl -n {namespace} get jobs,pods -l {JOB_LABEL}={job},{RUN_ID_LABEL}={run_id}"
            ),
        },
    }
    if config.trial_point:
        outputs["point"] = config.trial_point
    return outputs


def export_outputs(
    config: StackConfig,
    access: ClusterAccess,
    registered: Mapping[tuple[str, str, str], pulumi.Resource],
) -> None:
    namespace = config.job.namespace
    pulumi.export("namespace", namespace)
    if config.trials:
        # Each trial is a run: its id, point, directory and commands, by run id.
        pulumi.export("trials", {run.job.run_id: _run_outputs(run) for run in config.trials})
        kubectl = {"status": f"kubectl -n {namespace} get jobs -l {JOB_LABEL}={config.job.name}"}
    else:
        pulumi.export("runId", config.job.run_id)
        pulumi.export("outputDir", config.output_dir)
        kubectl = _run_outputs(config)["kubectl"]
    if access.kubeconfig is not None:
        kubectl["kubeconfig"] = (
            "pulumi stack output --show-secrets kubeconfig > kubeconfig.yaml"
            " && export KUBECONFIG=$PWD/kubeconfig.yaml"
        )
        pulumi.export("kubeconfig", access.kubeconfig)
    pulumi.export("kubectl", kubectl)
    board = config.tensorboard
    if board.enabled:
        name = tensorboard_name(config)
        service = cast(k8s.core.v1.Service, registered[("Service", namespace, name)])
        if board.service_type == "LoadBalancer":
            pulumi.export("tensorboardUrl", _tensorboard_url(service))
        else:
            pulumi.export(
                "tensorboardPortForward",
                f"kubectl -n {namespace} port-forward svc/{name} {TENSORBOARD_PORT}",
            )
            pulumi.export("tensorboardUrl", f"http://localhost:{TENSORBOARD_PORT}")
    for key, value in access.exports.items():
        pulumi.export(key, value)


# pulumi-kubernetes reads this at `destroy` when the provider's state has no deleteUnreachable
# (provider/pkg/provider/provider.go, Configure); its Python SDK would store it on `up`.
DELETE_UNREACHABLE = "PULUMI_K8S_DELETE_UNREACHABLE"


def refuse_stored_delete_unreachable() -> None:
    """Keep deleteUnreachable out of the stack's state: stored, a later `refresh` from outside
    the VPC would drop the finished Jobs from the state, and the next `up` would start them
    again. It belongs on the `destroy` command line only (docs/deploy.md, Reaching the cluster)."""
    if DELETE_UNREACHABLE in os.environ:
        raise pulumi.RunError(
            f"{DELETE_UNREACHABLE} is set: on `pulumi up`/`preview` the Kubernetes provider "
            "would keep it in the stack's state, and a later refresh from a machine that cannot "
            "reach the cluster would forget its objects. Unset it here; use it only as "
            f"`{DELETE_UNREACHABLE}=true pulumi destroy` (docs/deploy.md, Reaching the cluster)"
        )


def build() -> None:
    try:
        raw = read_stack_config()
        config = parse_config(raw, secret_sections(raw))
        if problems := platform_problems(config):  # what the cluster cannot hold back
            raise ConfigError(problems)
        if problems := budget_refusals(config, provider_region() or ""):
            raise ConfigError(problems)  # a change over the stack's budget creates nothing
    except ConfigError as error:
        # RunError: Pulumi prints the message (every bad key) without a Python traceback.
        raise pulumi.RunError(str(error)) from error
    refuse_stored_delete_unreachable()

    if config.cluster.role == "run":
        access = platform_access(config)
    else:
        access = provision_cluster(config, raw.get(KUBECONFIG_KEY) or None)
    if not config.has_run:
        export_platform(config, access)
        return
    provider = kubernetes_provider(access)
    acl = access.load_balancer_acl
    data = access.data
    facts = cluster_facts(
        config,
        nas_domain=access.nas_domain,
        load_balancer_acl_id=acl.acl_id if acl else None,
        oss_endpoint=data.endpoint if data else None,
        oss_role_name=data.role_name if data else None,
        oss_bucket=data.bucket if data else None,
        eci_network=access.eci_network,
    )
    storage_ready = [access.nas] if access.nas is not None else []
    if data is not None:
        storage_ready += data.ready
    objects = build_objects(config, facts, secret_env_sections(config))
    registered = register_objects(objects, provider, storage_ready)
    export_outputs(config, access, registered)
