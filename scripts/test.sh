#!/usr/bin/env bash
# Lint, then the test suite. Extra arguments go to pytest (e.g. -m slow, -k stacks).
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
ruff check .
ruff format --check .
# The design's layers and no import circle (contracts in pyproject.toml).
lint-imports --no-cache >/dev/null || lint-imports --no-cache
# Every workflow, including deprecated action runtimes (the next Node removal fails here first).
actionlint
# The replica supervisor runs under whatever /bin/sh an image has: POSIX sh only.
shellcheck -s sh infra/lifecycle/*.sh
exec python -m pytest "$@"
