"""Where the Pulumi engine runs the program, and how a path reaches a provider from there.

`Pulumi.yaml` says `main: infra/`. The engine then runs the program *in that folder* and starts
every resource provider there too (pulumi/pulumi `pkg/engine/project.go` `getPwdMain`: a
directory `main` becomes the working directory; the Python language host passes it as
`--pwd` and its exec script calls `os.chdir`; `sdk/go/common/resource/plugin/plugin.go`
starts each provider with `cmd.Dir = pwd`). A relative path in a resource input (an OSS
object's `source`) is therefore opened from `main`, never from the project root.
docs/cloud-evidence.md, "Where the engine runs the program", keeps the sources.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import yaml

# The directory of Pulumi.yaml: the project's root (the language host's RootDirectory).
PROJECT_DIR = Path(__file__).resolve().parent.parent


@cache
def program_dir(project_dir: Path = PROJECT_DIR) -> Path:
    """The engine's working directory for the program and its providers: Pulumi.yaml's `main`
    when it names a directory, the directory of the file it names, else the project's own
    directory (getPwdMain's three cases)."""
    main = yaml.safe_load((project_dir / "Pulumi.yaml").read_text(encoding="utf-8")).get("main")
    folder = (project_dir / main).resolve() if main else project_dir
    return folder if folder.is_dir() else folder.parent


def as_provider_path(path: Path) -> str:
    """`path`, a file of the project (`data.localInputDir` must lie inside it), as a provider
    running in `program_dir()` opens it: relative to that directory, so state and reviews do
    not depend on where the checkout lives."""
    return Path(os.path.relpath(path.absolute(), program_dir())).as_posix()
