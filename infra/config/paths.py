"""Path vocabulary the config rules check and the run's data mapping resolves: one definition."""

from __future__ import annotations

import posixpath

# job.initCheckpoint's prefix for another run of the same job: `run:<runId>`.
RUN_PREFIX = "run:"


def under(path: str, directory: str) -> str | None:
    """`path` relative to `directory` ("" for the directory itself), or None if outside it."""
    path, directory = posixpath.normpath(path), posixpath.normpath(directory)
    if path == directory:
        return ""
    if path.startswith(directory.rstrip("/") + "/"):
        return path[len(directory.rstrip("/")) + 1 :]
    return None
