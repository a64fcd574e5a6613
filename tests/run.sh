#!/usr/bin/env bash
# The whole test suite, from a fresh machine: makes its own virtual environment, installs the
# package and its test dependencies, then runs ruff, mypy --strict and pytest (Hypothesis
# profile "ci"). Usage: bash tests/run.sh [extra pytest arguments]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
venv="${PREFIXEXEC_TEST_VENV:-$repo/.venv-test}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -U pip
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"
"$venv/bin/python" -m pip install -q --no-deps bfcl-eval==2026.3.23 mpmath

echo "== ruff"
"$venv/bin/ruff" check kernel adapters prefixexec tests benchmarks
echo "== mypy --strict (kernel/, adapters/, prefixexec/)"
bash "$repo/tests/mypy.sh" "$venv"
if [ -f "$repo/proofs/check.sh" ]; then
  echo "== Coq proofs"
  bash "$repo/proofs/check.sh"
fi
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  # tests/test_report_html.py opens report.html in headless Chromium (Debian package `chromium`);
  # tests/test_report_drill.py drives it through Selenium and Debian's `chromium-driver`.
  echo "== installing chromium and chromium-driver (apt)"
  as_root=""
  if [ "$(id -u)" -ne 0 ]; then as_root="sudo"; fi
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
fi
echo "== pytest"
HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}" "$venv/bin/pytest" -p no:cacheprovider "$@"
