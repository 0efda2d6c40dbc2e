"""Which Kubernetes versions ACK offers, read from `cs.get_kubernetes_version`'s `metadatas`
(provider SDK `cs/get_kubernetes_version.py`: each entry's `version`, such as
`1.33.3-aliyun.1`; docs/cloud-evidence.md), and the refusals naming the key."""

from __future__ import annotations

from types import SimpleNamespace

import pulumi
import pytest

from infra.cloud import kubernetes_version
from infra.cloud.kubernetes_version import check_offered, cluster_version, offered_versions
from infra.config.model import ClusterConfig


def metadata(*versions: str | None) -> list[SimpleNamespace]:
    return [SimpleNamespace(version=version) for version in versions]


def test_versions_are_listed_newest_first_by_number_not_by_text() -> None:
    found = metadata("1.30.7-aliyun.1", "1.9.0-aliyun.1", "1.33.3-aliyun.1", "1.32.1-aliyun.2")
    found += metadata("1.32.1-aliyun.1", "1.32.10-aliyun.1")
    assert offered_versions(found) == [
        "1.33.3-aliyun.1",
        "1.32.10-aliyun.1",
        "1.32.1-aliyun.2",
        "1.32.1-aliyun.1",
        "1.30.7-aliyun.1",
        "1.9.0-aliyun.1",
    ]


def test_a_version_with_a_part_that_is_no_number_is_listed_after_the_numbered_ones() -> None:
    # Not a form ACK lists today; a later one (a suffix such as "rc") must neither stop the
    # check nor rank above a released version of the same numbers.
    found = metadata("1.33.rc-aliyun.1", "1.33.0-aliyun.1", "1.32.7-aliyun.1")
    assert offered_versions(found) == ["1.33.0-aliyun.1", "1.33.rc-aliyun.1", "1.32.7-aliyun.1"]


def test_a_version_listed_twice_is_offered_once_and_entries_without_one_are_left_out() -> None:
    found = metadata("1.33.3-aliyun.1", None, "", "1.33.3-aliyun.1")
    found.append(SimpleNamespace())  # an entry with no version field at all
    assert offered_versions(found) == ["1.33.3-aliyun.1"]


@pytest.mark.parametrize("nothing", [None, []])
def test_no_answer_offers_nothing(nothing: list[SimpleNamespace] | None) -> None:
    assert offered_versions(nothing) == []


def test_an_offered_version_is_passed_on() -> None:
    found = metadata("1.33.3-aliyun.1", "1.32.7-aliyun.1")
    assert check_offered("1.32.7-aliyun.1", "ack", found) == "1.32.7-aliyun.1"
    assert check_offered("1.33.3-aliyun.1", "ask", found) == "1.33.3-aliyun.1"


@pytest.mark.parametrize(("kind", "profile"), [("ack", "Default"), ("ask", "Serverless")])
def test_a_version_not_offered_names_the_key_the_query_and_what_is_offered(
    kind: str, profile: str
) -> None:
    found = metadata("1.32.7-aliyun.1", "1.33.3-aliyun.1")
    with pytest.raises(pulumi.RunError) as refused:
        check_offered("1.31.1-aliyun.1", kind, found)
    message = str(refused.value)
    assert message.startswith("tftrain:cluster.kubernetesVersion = '1.31.1-aliyun.1': ")
    assert f"new ManagedKubernetes clusters with profile {profile} in this region" in message
    assert message.endswith(
        "offered: 1.33.3-aliyun.1, 1.32.7-aliyun.1. Pick one of them, or `latest`, which keeps "
        "a running cluster on its version and creates a new one on the newest"
    )


@pytest.mark.parametrize(("kind", "profile"), [("ack", "Default"), ("ask", "Serverless")])
def test_an_empty_list_refuses_and_says_why(kind: str, profile: str) -> None:
    with pytest.raises(pulumi.RunError) as refused:
        check_offered("1.33.3-aliyun.1", kind, metadata(None))
    message = str(refused.value)
    assert message.startswith("tftrain:cluster.kubernetesVersion = '1.33.3-aliyun.1': ")
    assert f"listed no versions for new ManagedKubernetes clusters with profile {profile}" in (
        message
    )
    assert "use `latest`" in message


def test_latest_sends_no_version_and_a_pinned_one_is_sent_as_written() -> None:
    assert cluster_version(ClusterConfig(kubernetes_version="latest")) is None
    pinned = ClusterConfig(kubernetes_version="1.33.3-aliyun.1")
    assert cluster_version(pinned) == "1.33.3-aliyun.1"


class VersionLookup:
    """cs.get_kubernetes_version as the check calls it: its arguments, and `metadatas`."""

    def __init__(self, *versions: str) -> None:
        self.asked: list[dict[str, str]] = []
        self.versions = versions

    def __call__(self, **kwargs: str) -> SimpleNamespace:
        self.asked.append(kwargs)
        return SimpleNamespace(metadatas=metadata(*self.versions))


@pytest.mark.parametrize(("kind", "profile"), [("ack", "Default"), ("ask", "Serverless")])
def test_a_pinned_version_is_looked_up_for_the_kinds_profile(
    monkeypatch: pytest.MonkeyPatch, kind: str, profile: str
) -> None:
    lookup = VersionLookup("1.33.3-aliyun.1")
    monkeypatch.setattr(kubernetes_version.cs, "get_kubernetes_version", lookup)
    pinned = ClusterConfig(kind=kind, kubernetes_version="1.33.3-aliyun.1")
    kubernetes_version.require_offered_version(pinned)
    # TF data_source_alicloud_cs_kubernetes_version.go: cluster_type, profile; no version
    # filter, so the answer is every version new clusters can be created on.
    assert lookup.asked == [{"cluster_type": "ManagedKubernetes", "profile": profile}]


def test_a_pinned_version_not_offered_stops_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    lookup = VersionLookup("1.33.3-aliyun.1")
    monkeypatch.setattr(kubernetes_version.cs, "get_kubernetes_version", lookup)
    with pytest.raises(pulumi.RunError, match=r"offered: 1\.33\.3-aliyun\.1"):
        kubernetes_version.require_offered_version(
            ClusterConfig(kind="ack", kubernetes_version="1.31.1-aliyun.1")
        )


def test_latest_asks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    lookup = VersionLookup()
    monkeypatch.setattr(kubernetes_version.cs, "get_kubernetes_version", lookup)
    kubernetes_version.require_offered_version(ClusterConfig(kubernetes_version="latest"))
    assert lookup.asked == []
