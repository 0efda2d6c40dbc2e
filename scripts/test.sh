#!/usr/bin/env bash
# Lint, then the test suite. Extra arguments go to pytest (e.g. -m slow, -k stacks).
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
ruff check .
ruff format --check .
exec python -m pytest "$@"
