#!/usr/bin/env bash
# Lint, the docs build, then the default test suite on both cores. Extra arguments go to pytest
# (e.g. `-m slow`, `-k stacks`; `-n 0` for one process).
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
ruff check .
ruff format --check .
# The design's layers and no import circle (contracts in pyproject.toml).
lint-imports --no-cache >/dev/null || lint-imports --no-cache
# No function in infra/ or trainer/ over 60 lines (flake8-functions; only that check).
flake8 --select CFQ001 --max-function-length 60 infra trainer
# Every workflow, including deprecated action runtimes (the next Node removal fails here first).
actionlint
# The replica supervisor runs under whatever /bin/sh an image has: POSIX sh only.
shellcheck -s sh infra/lifecycle/*.sh
# The reference site: a broken link or anchor fails here (mkdocs.yml: strict, validation).
site="$(mktemp -d)"
mkdocs build --strict --quiet --site-dir "$site"
rm -rf "$site"
exec python -m pytest -n 2 "$@"
