"""Container image references, validated by the grammar the kubelet and containerd apply.

The grammar is distribution/reference's (`name[:tag][@digest]`), read the way the kubelet
reads a pod's image (`ParseNormalizedNamed`): the first path component is a registry when it
contains `.` or `:`, is `localhost`, or has upper case; the repository path is lower case;
a bare 64-hex string is an image id, not a name. Digests follow opencontainers/go-digest:
a registered algorithm (sha256, sha384, sha512) and exactly its length in lower-case hex.

Only validation: a reference is never rewritten, so what the stack says is what the pods run
and what a review diff shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# distribution/reference: a path component is lower-case alphanumerics joined by one `.`,
# one or two `_`, or any run of `-`.
_PATH_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_DOMAIN_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
# A DNS-like name (IPv4 included) or a bracketed IPv6 address, then an optional port.
_DOMAIN = re.compile(rf"(?:{_DOMAIN_LABEL}(?:\.{_DOMAIN_LABEL})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_DIGEST_ALGORITHM = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*")
_IMAGE_ID = re.compile(r"[a-f0-9]{64}")
# go-digest's registered algorithms and their hex lengths.
DIGEST_HEX_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
MAX_PATH_LENGTH = 255
# Docker Hub's implicit prefix for single-component names (`ubuntu` = `library/ubuntu`); it
# counts towards the path length limit.
_OFFICIAL_PREFIX = "library/"

FORMAT = "[registry[:port]/]repository[:tag][@sha256:<64 hex digits>]"


class ImageReferenceError(ValueError):
    """Not a valid image reference; the message says which part is wrong."""


@dataclass(frozen=True)
class ImageReference:
    domain: str  # "" when the name has no registry part (Docker Hub)
    path: str
    tag: str  # "" when absent
    digest: str  # "" when absent, else "<algorithm>:<hex>"


def _check_digest(digest: str) -> None:
    algorithm, colon, hex_digits = digest.partition(":")
    if not colon or not algorithm or not hex_digits:
        raise ImageReferenceError(f"digest {digest!r} is not <algorithm>:<hex>")
    if not _DIGEST_ALGORITHM.fullmatch(algorithm):
        raise ImageReferenceError(f"digest algorithm {algorithm!r} is malformed")
    length = DIGEST_HEX_LENGTHS.get(algorithm)
    if length is None:
        known = ", ".join(DIGEST_HEX_LENGTHS)
        raise ImageReferenceError(f"digest algorithm {algorithm!r} is not one of {known}")
    if len(hex_digits) != length or not re.fullmatch(r"[a-f0-9]+", hex_digits):
        raise ImageReferenceError(
            f"a {algorithm} digest is {length} lower-case hex digits, got {hex_digits!r}"
        )


def _split_domain(name: str) -> tuple[str, str]:
    """(registry, repository path), the kubelet's way (splitDockerDomain)."""
    first, slash, rest = name.partition("/")
    if slash and (any(c in first for c in ".:") or first == "localhost" or first != first.lower()):
        return first, rest
    return "", name


def parse_image_reference(text: str) -> ImageReference:
    """The parts of `text`; raises ImageReferenceError naming the part that is wrong."""
    if not text:
        raise ImageReferenceError("the reference is empty")
    if _IMAGE_ID.fullmatch(text):
        raise ImageReferenceError("a bare 64-hex string is an image id, not a repository name")
    name_tag, at, digest = text.partition("@")
    if at:
        _check_digest(digest)
    name, tag = name_tag, ""
    colon = name_tag.rfind(":")
    if colon > name_tag.rfind("/"):  # a ':' before the last '/' is a registry port
        name, tag = name_tag[:colon], name_tag[colon + 1 :]
        if not _TAG.fullmatch(tag):
            raise ImageReferenceError(
                f"tag {tag!r} is not 1-128 of letters, digits, '_', '.', '-' "
                "(not starting with '.' or '-')"
            )
    domain, path = _split_domain(name)
    if domain and not _DOMAIN.fullmatch(domain):
        raise ImageReferenceError(f"registry {domain!r} is not a host name or [IPv6] with a port")
    if path != path.lower():
        raise ImageReferenceError(f"repository {path!r} must be lower case")
    for component in path.split("/"):
        if not _PATH_COMPONENT.fullmatch(component):
            raise ImageReferenceError(
                f"repository component {component!r} is not lower-case letters and digits "
                "joined by '.', '_', '__' or '-'"
            )
    full_path = path if domain or "/" in path else _OFFICIAL_PREFIX + path
    if len(full_path) > MAX_PATH_LENGTH:
        raise ImageReferenceError(f"repository is longer than {MAX_PATH_LENGTH} characters")
    return ImageReference(domain=domain, path=path, tag=tag, digest=digest)


# Docker Hub, as an image without a registry part is pulled from it; the kubelet's credential
# lookup takes `index.docker.io` (Docker's own config key) for the same registry.
DOCKER_HUB = "docker.io"
_DOCKER_HUB_ALIASES = (DOCKER_HUB, "index.docker.io")


def canonical_registry(host: str) -> str:
    """A registry host as compared for credentials: lower case, Docker Hub by one name."""
    host = host.lower()
    return DOCKER_HUB if host in _DOCKER_HUB_ALIASES else host


def registry_of(text: str) -> str:
    """The registry an image is pulled from (`canonical_registry`), Docker Hub if unnamed."""
    return canonical_registry(parse_image_reference(text).domain or DOCKER_HUB)
