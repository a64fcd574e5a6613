#!/usr/bin/env bash
# mypy --strict over kernel/, adapters/ and prefixexec/. mypy cannot follow setuptools'
# editable-install import hook, so the three source folders are laid out as the installed
# package (prefixexec/, prefixexec/kernel, prefixexec/adapters) in a temporary folder of
# symbolic links and checked there; messages name the real source files.
# Usage: bash tests/mypy.sh VENV
#
# Speed: mypy's incremental cache lives in the virtual environment ($VENV/.prefixexec-mypy-cache),
# so a second run with the environment present re-checks only what changed (about 0.5 s instead
# of about 20 s of CPU). mypy validates every cache entry against the source file's size and
# hash, the options and its own version, so a stale entry is never used; a new environment
# starts with an empty cache.
set -euo pipefail
venv="$(cd "$1" && pwd)"  # absolute: mypy runs from the staging folder below
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${PREFIXEXEC_MYPY_CACHE:-$venv/.prefixexec-mypy-cache}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/prefixexec"
for f in "$repo"/prefixexec/*; do ln -s "$f" "$stage/prefixexec/"; done
ln -s "$repo/kernel" "$stage/prefixexec/kernel"
ln -s "$repo/adapters" "$stage/prefixexec/adapters"
cd "$stage"
"$venv/bin/mypy" --strict --config-file "$repo/pyproject.toml" --cache-dir "$cache" \
  -p prefixexec 2>&1 | sed "s#^prefixexec/kernel/#kernel/#; s#^prefixexec/adapters/#adapters/#" \
  | tee "$stage/out"
grep -q "^Success" "$stage/out"
