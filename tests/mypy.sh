#!/usr/bin/env bash
# mypy --strict over kernel/, adapters/ and prefixexec/. mypy cannot follow setuptools'
# editable-install import hook, so the three source folders are laid out as the installed
# package (prefixexec/, prefixexec/kernel, prefixexec/adapters) in a temporary folder of
# symbolic links and checked there; messages name the real source files.
set -euo pipefail
venv="$1"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/prefixexec"
for f in "$repo"/prefixexec/*; do ln -s "$f" "$stage/prefixexec/"; done
ln -s "$repo/kernel" "$stage/prefixexec/kernel"
ln -s "$repo/adapters" "$stage/prefixexec/adapters"
cd "$stage"
"$venv/bin/mypy" --strict --config-file "$repo/pyproject.toml" --cache-dir "$stage/.mypy_cache" \
  -p prefixexec 2>&1 | sed "s#^prefixexec/kernel/#kernel/#; s#^prefixexec/adapters/#adapters/#" \
  | tee "$stage/out"
grep -q "^Success" "$stage/out"
