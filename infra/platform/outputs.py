"""The contract between a platform stack and its run stacks: the outputs a run reads.

A platform stack (`cluster.role: platform`) exports these; a run stack (`cluster.role: run`)
reads them through a `pulumi.StackReference` (infra/program.py) and requires the ones its
config needs. Offline (the render, the review) a run stack gets them as marked placeholders.

No Pulumi import: the offline render uses the names and placeholders.
"""

from __future__ import annotations

from typing import Any

from infra.config import StackConfig

CLUSTER_KIND = "clusterKind"
CLUSTER_ID = "clusterId"  # the run's Kubernetes provider identity (its clusterIdentifier)
KUBECONFIG = "kubeconfig"  # a secret: the platform's own (cluster-admin); no run stack reads it
# A secret: {namespace: kubeconfig} of the ServiceAccount the platform issues each of its
# cluster.runNamespaces, bound to a Role in that namespace only. A run stack deploys with its
# namespace's entry.
RUN_KUBECONFIGS = "runKubeconfigs"
RUN_OSS_ROLE_NAMES = "runOssRoleNames"  # {namespace: the RRSA role its OSS volumes assume}
# {namespace: the RAM policy its OSS access needs}, where no role of the platform's holds it:
# for the RAM user of a run's AccessKey (ASK), or another account's bucket policy.
RUN_OSS_ACCESS_POLICIES = "runOssAccessPolicies"
NAS_DOMAIN = "nasDomain"  # the NAS mount target: the platform issues each run namespace a volume
REGION = "region"  # the platform's region
OSS_BUCKET = "ossBucket"  # the platform's bucket: its issued volumes mount it
# The prefixes the issued volumes mount: the input read-only, `<export prefix><namespace>/`.
OSS_INPUT_PREFIX = "ossInputPrefix"
OSS_EXPORT_PREFIX = "ossExportPrefix"


def required_outputs(config: StackConfig) -> tuple[str, ...]:
    """The platform outputs run stack `config` cannot deploy without."""
    names = [CLUSTER_KIND, CLUSTER_ID, RUN_KUBECONFIGS]
    if config.storage.kind == "nas":
        names.append(NAS_DOMAIN)
    if config.uses_oss:
        names += [OSS_BUCKET, OSS_INPUT_PREFIX, OSS_EXPORT_PREFIX]
    return tuple(names)


def unissued_namespace(config: StackConfig, kubeconfigs: dict[str, str]) -> str | None:
    """Why the platform issued no credentials for this run's namespace, or None."""
    namespace = config.job.namespace
    if namespace in kubeconfigs:
        return None
    issued = ", ".join(sorted(kubeconfigs)) or "none"
    return (
        f"job.namespace = {namespace!r}: platform stack {config.cluster.platform_stack} issues "
        f"credentials only for the namespaces [{issued}]: add {namespace} to that stack's "
        "cluster.runNamespaces and `pulumi up` it, or use one of those"
    )


def platform_data_problem(config: StackConfig, platform: dict[str, str]) -> str | None:
    """Why the volumes the platform issued would not hold this run's data, or None: they
    mount the platform's bucket, its input prefix and `<export prefix><namespace>/`."""
    data = config.data
    checks = (
        ("bucket", data.bucket, platform[OSS_BUCKET]),
        ("inputPrefix", data.input_prefix, platform[OSS_INPUT_PREFIX]),
        ("exportPrefix", data.export_prefix, platform[OSS_EXPORT_PREFIX]),
    )
    for key, ours, theirs in checks:
        if ours and ours != theirs:
            return (
                f"data.{key} = {ours!r}: the volumes platform stack "
                f"{config.cluster.platform_stack} issues to namespace {config.job.namespace} "
                f"mount {theirs!r}; use that (or leave it unset)"
            )
    return None


def placeholder(name: str) -> str:
    return f"<platform output {name}>"


def placeholder_outputs(config: StackConfig) -> dict[str, Any]:
    """What the offline render answers for run stack `config`'s StackReference: a marked
    placeholder per required output (its namespace's kubeconfig one), and the kind, bucket and
    prefixes its config states (at deploy the program checks them against the platform's)."""
    outputs: dict[str, Any] = {name: placeholder(name) for name in required_outputs(config)}
    outputs[CLUSTER_KIND] = config.cluster.kind
    outputs[RUN_KUBECONFIGS] = {config.job.namespace: placeholder(RUN_KUBECONFIGS)}
    data = config.data
    stated = {OSS_BUCKET: data.bucket, OSS_INPUT_PREFIX: data.input_prefix,
              OSS_EXPORT_PREFIX: data.export_prefix}  # fmt: skip
    outputs.update({name: value for name, value in stated.items() if name in outputs and value})
    return outputs
