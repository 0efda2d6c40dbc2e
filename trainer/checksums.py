"""SHA-256 checksums in `sha256sum` format: `<64 hex digits>  <file name>` per line.

One format for the data set's `SHA256SUMS` and for each checkpoint's manifest, so a person
can check either by hand with `sha256sum -c`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

_LINE = re.compile(r"([0-9a-fA-F]{64}) [ *](\S.*)")


def parse_sha256sums(text: str) -> dict[str, str]:
    """File name → lower-case hex digest; ValueError naming the first malformed line."""
    checksums = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = _LINE.fullmatch(line.strip())
        if match is None:
            raise ValueError(f"line {number} is not `<sha256>  <file name>`: {line[:80]!r}")
        checksums[match.group(2)] = match.group(1).lower()
    return checksums


def format_sha256sums(checksums: Mapping[str, str]) -> str:
    return "".join(f"{digest}  {name}\n" for name, digest in sorted(checksums.items()))


def file_sha256(path: Path) -> str:
    """The file's digest, read in chunks: a checkpoint can be larger than memory allows."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
