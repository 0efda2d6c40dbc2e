#!/usr/bin/env bash
# Run a stack's training topology on this machine: ./scripts/local.sh dev [--tensorboard]
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
exec python -m infra.local "${@:-dev}"
