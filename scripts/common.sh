# Shared by scripts/example and scripts/test: install what is missing and
# prepare the Python virtual environment. Sourced, not run.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

# Install the Debian packages that are not installed yet (apt-get update
# only when something is missing).
ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

# The virtual environment at .venv with the test dependencies, and strided
# installed into it with `pip install .`, exactly as a user would.
ensure_venv() {
  if [ ! -x .venv/bin/python ]; then
    echo "== creating .venv"
    python3 -m venv .venv
  fi
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q "numpy>=2.4" pytest hypothesis ml_dtypes
  echo "== pip install ."
  .venv/bin/python -m pip install -q .
}

jobs=$(nproc 2>/dev/null || echo 2)
