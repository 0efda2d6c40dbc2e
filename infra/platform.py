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


def required_outputs(config: StackConfig) -> tuple[str, ...]:
    """The platform outputs run stack `config` cannot deploy without."""
    names = [CLUSTER_KIND, CLUSTER_ID, KUBECONFIG]
    if config.storage.kind == "nas":
        names.append(NAS_DOMAIN)
    data = config.data
    if data.bucket and not data.endpoint:
        names.append(REGION)
    if data.bucket and config.oss_credentials == "rrsa" and not data.rrsa_role_name:
        names.append(OSS_ROLE_NAME)
    return tuple(names)


def placeholder(name: str) -> str:
    return f"<platform output {name}>"


def placeholder_outputs(config: StackConfig) -> dict[str, str]:
    """What the offline render answers for run stack `config`'s StackReference: a marked
    placeholder per required output, and the kind its config states (the objects depend on
    it; at deploy the program checks it against the platform's)."""
    outputs = {name: placeholder(name) for name in required_outputs(config)}
    outputs[CLUSTER_KIND] = config.cluster.kind
    return outputs
