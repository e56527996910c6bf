#!/usr/bin/env bash
# Install the built wheel as a user would (a fresh venv with pip, then pipx when it is available)
# and run the first commands: --version, init, lint, check on the bundled example, preview.
# Slow (the dependencies are installed each time), so not a test: tests/tooling/test_wheel_install.py
# checks the wheel's own contents quickly.  Usage: scripts/try_wheel.sh [PYTHON]
set -euo pipefail
python=${1:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -m build --no-isolation --wheel --outdir "$work/dist" "$root" >/dev/null
wheel=$(ls "$work"/dist/*.whl)

try() {  # $1: the installed rubric-gate; runs it in a new repository holding the bundled example
  local rg=$1 repo=$work/repo-$2
  mkdir -p "$repo" && cd "$repo" && git init -q -b main
  "$rg" --version
  "$rg" init --name mine >/dev/null
  "$rg" lint rubrics/mine.yaml >/dev/null
  cp -r "$root/rubrics" "$root/calibration" "$root/examples" .
  status=0; "$rg" check --base rubrics/cloud-security-review.yaml --head examples/drifting-revision.yaml >/dev/null || status=$?
  test "$status" -eq 1 || { echo "check: exit $status, expected 1"; exit 1; }
  git add -A && git -c user.name=t -c user.email=t@example.com commit -qm base
  git checkout -qb edit && sed -i 's/- id: severity-fits/- id: severity-is-right/' rubrics/cloud-security-review.yaml
  git -c user.name=t -c user.email=t@example.com commit -qam rename
  "$rg" preview --base main >/dev/null 2>&1
  echo "$2: --version, init, lint, check (exit 1 as expected) and preview (pass) ran"
}

"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$wheel"
try "$work/venv/bin/rubric-gate" pip

if command -v pipx >/dev/null; then pipx=pipx
else "$work/venv/bin/pip" install --quiet pipx && pipx=$work/venv/bin/pipx; fi
PIPX_HOME=$work/pipx PIPX_BIN_DIR=$work/pipx/bin "$pipx" install --quiet "$wheel" >/dev/null
try "$work/pipx/bin/rubric-gate" pipx
