#!/usr/bin/env bash
# Sourced by the other scripts: makes sure both virtualenvs exist and match their requirements.
# - .venv: development (requirements-dev.txt: the program, the trainer, tests and lint);
# - .venv-program: the Pulumi program alone (requirements.txt), the venv Pulumi.yaml names,
#   so `pulumi up` runs with exactly what a fresh machine installs; the tests check it.
# First use on a fresh machine installs everything (a few minutes: TensorFlow is large);
# later uses cost one checksum comparison per venv.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ensure_venv DIR REQUIREMENTS FILES...: DIR holds REQUIREMENTS installed; FILES are every
# file it reads (a change to any of them reinstalls).
ensure_venv() {
  local venv="$1" requirements="$2"
  shift 2
  local stamp="$venv/.requirements.sha256" want
  want="$(cd "$repo" && sha256sum "$@" | sha256sum | cut -d' ' -f1)"
  if [[ ! -x "$venv/bin/python" ]]; then
    echo "tftrain: creating $venv (first run)" >&2
    python3 -m venv "$venv"
  fi
  if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
    echo "tftrain: installing $requirements into $venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$repo/$requirements"
    if [[ "$venv" == "$repo/.venv" ]]; then
      # The `tftrain` command (pyproject.toml [project.scripts]), running this checkout's code.
      # setuptools warns about editable installs at length: shown only if the install fails.
      local log
      log="$(mktemp)"
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$repo" \
        >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; return 1; }
      rm -f "$log"
    fi
    echo "$want" > "$stamp"
  fi
}

ensure_venv "$repo/.venv" requirements-dev.txt \
  requirements-dev.txt requirements.txt requirements-trainer.txt pyproject.toml
ensure_venv "$repo/.venv-program" requirements.txt requirements.txt

# The supervisor tests run the script under dash, bash and busybox sh, as images ship them.
# Debian has dash and bash; busybox is installed where we may (root, as CI runs).
if ! command -v busybox >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
  echo "tftrain: installing busybox (supervisor tests)" >&2
  { apt-get update -qq && apt-get install -y -qq busybox; } >/dev/null 2>&1 ||
    echo "tftrain: could not install busybox; its supervisor tests will be skipped" >&2
fi

export PATH="$repo/.venv/bin:$PATH"
# gRPC to localhost hangs behind an http_proxy; the local cluster never needs one.
export no_proxy="localhost,127.0.0.1${no_proxy:+,$no_proxy}"
export NO_PROXY="$no_proxy"
cd "$repo"
