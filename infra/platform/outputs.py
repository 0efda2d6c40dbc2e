"""The contract between a platform stack and its run stacks: the outputs a run reads.

A platform stack (`cluster.role: platform`) exports these; a run stack (`cluster.role: run`)
reads them through a `pulumi.StackReference` (infra/program.py) and requires the ones its
config needs. Offline (the render, the review) a run stack gets them as marked placeholders.

No Pulumi import: the offline render uses the names and placeholders.
"""

from __future__ import annotations

from infra.config import StackConfig

CLUSTER_KIND = "clusterKind"
CLUSTER_ID = "clusterId"  # the run's Kubernetes provider identity (its clusterIdentifier)
KUBECONFIG = "kubeconfig"  # a secret
NAS_DOMAIN = "nasDomain"  # the NAS mount target every run's PersistentVolume mounts
REGION = "region"  # the OSS endpoint's region, unless a run sets data.endpoint
OSS_ROLE_NAME = "ossRoleName"  # the RRSA role the platform made for its bucket (ack)
OSS_BUCKET = "ossBucket"  # the platform's bucket: a run stack without data.bucket uses it
# The prefixes the platform's role may read and write: a run using that role stays inside them.
OSS_INPUT_PREFIX = "ossInputPrefix"
OSS_EXPORT_PREFIX = "ossExportPrefix"


def required_outputs(config: StackConfig) -> tuple[str, ...]:
    """The platform outputs run stack `config` cannot deploy without."""
    names = [CLUSTER_KIND, CLUSTER_ID, KUBECONFIG]
    if config.storage.kind == "nas":
        names.append(NAS_DOMAIN)
    data = config.data
    if config.uses_oss and not data.endpoint:
        names.append(REGION)
    if config.uses_oss and not data.bucket:
        names.append(OSS_BUCKET)
    if uses_platform_role(config):
        names += [OSS_ROLE_NAME, OSS_BUCKET, OSS_INPUT_PREFIX, OSS_EXPORT_PREFIX]
    return tuple(dict.fromkeys(names))


def uses_platform_role(config: StackConfig) -> bool:
    """A run stack whose volumes assume the RAM role its platform made (rrsa, no own role)."""
    data = config.data
    return config.uses_oss and config.oss_credentials == "rrsa" and not data.rrsa_role_name


def platform_data_problem(config: StackConfig, platform: dict[str, str]) -> str | None:
    """Why the platform's RAM role would refuse this run's bucket or prefixes, or None. The
    role may list and read the platform's input prefix and write its export prefix only, so
    another bucket fails at mount and another export prefix with 403 after training."""
    data = config.data
    checks = (
        ("bucket", data.bucket, platform[OSS_BUCKET], lambda ours, theirs: ours == theirs),
        ("inputPrefix", data.input_prefix, platform[OSS_INPUT_PREFIX], str.startswith),
        ("exportPrefix", data.export_prefix, platform[OSS_EXPORT_PREFIX], str.startswith),
    )
    for key, ours, theirs, allowed in checks:
        if ours and not allowed(ours, theirs):
            return (
                f"data.{key} = {ours!r}: the platform's RAM role ({config.cluster.platform_stack}) "
                f"covers {theirs!r} only; use it (or a prefix inside it), or give this run its "
                "own credentials (data.credentials: secret)"
            )
    return None


def placeholder(name: str) -> str:
    return f"<platform output {name}>"


def placeholder_outputs(config: StackConfig) -> dict[str, str]:
    """What the offline render answers for run stack `config`'s StackReference: a marked
    placeholder per required output, and the kind, bucket and prefixes its config states (the
    objects depend on them; at deploy the program checks them against the platform's)."""
    outputs = {name: placeholder(name) for name in required_outputs(config)}
    outputs[CLUSTER_KIND] = config.cluster.kind
    # Likewise what the run's data is checked against: its own (at deploy, the platform's).
    data = config.data
    stated = {OSS_BUCKET: data.bucket, OSS_INPUT_PREFIX: data.input_prefix,
              OSS_EXPORT_PREFIX: data.export_prefix}  # fmt: skip
    outputs.update({name: value for name, value in stated.items() if name in outputs and value})
    return outputs
