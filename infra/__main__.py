"""Pulumi entry point (Pulumi.yaml `main: infra/`): everything happens in `build()`."""

import sys
from pathlib import Path

# Pulumi runs this directory as a script, so only `infra/` itself is on sys.path; the
# program imports `infra.*` like the tests and the offline render do.
_PROJECT_ROOT = str(Path(__file__).resolve().parent.parent)
if _PROJECT_ROOT not in sys.path:
    sys.path.insert(0, _PROJECT_ROOT)

from infra.program import build  # noqa: E402  (needs the path above)

build()
