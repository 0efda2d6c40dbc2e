"""Layer 4: Pulumi components over pulumi_alicloud (network, cluster + node pools, NAS).

Thin wrappers with secure defaults: no public IPs on nodes, NAT-only egress, private API
server unless configured, NAS reachable only from the cluster's vSwitches (on ASK: the job's pod
vSwitch), ECI pods in security groups of their own, kubeconfig as a secret.
"""

from infra.cloud.api_server_reach import kubeconfig_reachable, require_reachable_api_server
from infra.cloud.cluster import (
    GPU_NODE_LABEL,
    GPU_TAINT_EFFECT,
    GPU_TAINT_KEY,
    GPU_TAINT_VALUE,
    AckCluster,
    AskCluster,
    needs_pod_vswitch,
)
from infra.cloud.kubernetes_version import require_offered_version
from infra.cloud.load_balancer_acl import LoadBalancerAcl
from infra.cloud.naming import physical_name
from infra.cloud.nas import NasStorage
from infra.cloud.network import Network
from infra.cloud.oss import (
    OssBucket,
    OssRrsaAccess,
    access_policy,
    require_usable_bucket,
    stack_bucket,
)
from infra.cloud.pod_isolation import EciPodFirewall
from infra.cloud.zone_offers import require_zone_offers

__all__ = [
    "GPU_NODE_LABEL",
    "GPU_TAINT_EFFECT",
    "GPU_TAINT_KEY",
    "GPU_TAINT_VALUE",
    "AckCluster",
    "AskCluster",
    "EciPodFirewall",
    "LoadBalancerAcl",
    "NasStorage",
    "Network",
    "OssBucket",
    "OssRrsaAccess",
    "access_policy",
    "kubeconfig_reachable",
    "needs_pod_vswitch",
    "physical_name",
    "require_offered_version",
    "require_reachable_api_server",
    "require_usable_bucket",
    "require_zone_offers",
    "stack_bucket",
]
