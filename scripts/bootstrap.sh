#!/usr/bin/env bash
# Sourced by the other scripts: makes sure .venv exists and matches requirements.txt.
# First use on a fresh machine installs everything (a few minutes: TensorFlow is large);
# later uses cost one checksum comparison.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$repo/requirements.txt" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/python" ]]; then
  echo "tftrain: creating $venv (first run)" >&2
  python3 -m venv "$venv"
fi
if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
  echo "tftrain: installing requirements.txt into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$repo/requirements.txt"
  echo "$want" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
# gRPC to localhost hangs behind an http_proxy; the local cluster never needs one.
export no_proxy="localhost,127.0.0.1${no_proxy:+,$no_proxy}"
export NO_PROXY="$no_proxy"
cd "$repo"
