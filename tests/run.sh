#!/usr/bin/env bash
# The whole test suite, from a fresh machine: makes its own virtual environment, installs the
# package and its test dependencies, then runs ruff, mypy --strict, the Coq proofs and pytest
# (Hypothesis profile "ci", one pytest-xdist worker per core).
# Usage: bash tests/run.sh [extra pytest arguments]
#
# Environment: PREFIXEXEC_TEST_VENV (default .venv-test), PREFIXEXEC_TEST_WORKERS (pytest-xdist
# workers, default "auto": one per core; 0 runs pytest in one process), HYPOTHESIS_PROFILE,
# PREFIXEXEC_TEST_NO_BYTECODE (1: leave PYTHONDONTWRITEBYTECODE alone; see below).
#
# Speed: the installation is skipped when the virtual environment already holds it (a stamp
# file records a hash of pyproject.toml, the pins below and the interpreter; any change
# reinstalls), and mypy and the Coq proofs run while pytest runs (their output is printed
# after pytest's; the script fails when any step fails). mypy keeps its incremental cache in the
# virtual environment (tests/mypy.sh) and proofs/check.sh skips compiling when its stamp shows
# proofs/extracted/score was built and checked from the same inputs, so a second run redoes
# neither; tests/test_extracted.py waits for (and reuses) check.sh's build instead of compiling
# the proofs a second time. pytest-xdist runs with --dist loadgroup: tests/conftest.py keeps the
# tests that share an expensive module- or session-scoped fixture on one worker.
set -euo pipefail
SECONDS=0
step() { echo "== $1 (at ${SECONDS} s)"; }
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
venv="${PREFIXEXEC_TEST_VENV:-$repo/.venv-test}"
# BFCL's checker (tests/bfcl_parity.py) imports bfcl_eval.model_handler.utils, which needs tree_sitter
# and its two grammars, filelock and python-dotenv beside the --no-deps bfcl-eval (benchmarks.md).
# The BFCL adapter's benchmark package (the README's set-up command installs the same pins) ...
pins="bfcl-eval==2026.3.23 mpmath"
# ... and what BFCL's own checker and handler decoders import, for the parity tests only.
checker_pins="tree_sitter==0.21.3 tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4 filelock python-dotenv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
stamp="$venv/.prefixexec-install-stamp"
want="$( { cat pyproject.toml; echo "$pins $checker_pins"; "$venv/bin/python" -VV; } | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && "$venv/bin/python" -c "import prefixexec.cli, xdist" 2>/dev/null; then
  step "installation up to date ($stamp)"
else
  step "installing (pip)"
  rm -f "$stamp"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -U pip
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"
  # shellcheck disable=SC2086  # several requirement words
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps $pins $checker_pins
  echo "$want" > "$stamp"
fi

step "ruff"
"$venv/bin/ruff" check kernel adapters prefixexec tests benchmarks
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  # tests/test_report_html.py opens report.html in headless Chromium (Debian package `chromium`);
  # tests/test_report_drill.py drives it through Selenium and Debian's `chromium-driver`.
  step "installing chromium and chromium-driver (apt)"
  as_root=""
  if [ "$(id -u)" -ne 0 ]; then as_root="sudo"; fi
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
fi

# tests/test_guard_mcp.py runs the npm MCP filesystem server with node, installed into the test
# environment (the version is FILESYSTEM_PACKAGE there); Debian's nodejs and npm when missing.
guard_npm_package="@modelcontextprotocol/server-filesystem@2026.8.31"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  step "installing nodejs and npm (apt)"
  as_root=""
  if [ "$(id -u)" -ne 0 ]; then as_root="sudo"; fi
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
fi
if [ ! -f "$venv/guard-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
  step "installing $guard_npm_package (npm)"
  mkdir -p "$venv/guard-npm"
  npm install --no-audit --no-fund --prefix "$venv/guard-npm" "$guard_npm_package"
fi

# Python's default bytecode cache (__pycache__, ignored by git) even when the environment turns it
# off: without it every pytest worker and every `python -m prefixexec` subprocess of the tests
# compiles the test modules and the package again (pytest's assertion rewriting alone is about
# 4 s of CPU a worker). PREFIXEXEC_TEST_NO_BYTECODE=1 keeps PYTHONDONTWRITEBYTECODE as it is.
if [ -z "${PREFIXEXEC_TEST_NO_BYTECODE:-}" ]; then
  unset PYTHONDONTWRITEBYTECODE
fi

# mypy and the proofs in the background, each with its own log; pytest in the foreground.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
bash "$repo/tests/mypy.sh" "$venv" >"$logs/mypy" 2>&1 &
mypy_pid=$!
export PREFIXEXEC_TEST_VENV="$venv"  # the prefixexec that check.sh runs the conformance vectors with
proofs() {
  bash "$repo/proofs/check.sh"
}
proofs_pid=""
if [ -f "$repo/proofs/check.sh" ]; then
  proofs >"$logs/proofs" 2>&1 &
  proofs_pid=$!
fi

step "pytest"
status=0
workers="${PREFIXEXEC_TEST_WORKERS:-auto}"
parallel=()
# --dist loadgroup: tests/conftest.py groups the tests sharing a module-scoped fixture, so that
# fixture is made on one worker only; every other test is handed out one by one.
if [ "$workers" != "0" ]; then parallel=(-n "$workers" --dist loadgroup); fi
# --durations: the slowest tests are listed at the end, to keep an eye on the suite's time.
HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}" "$venv/bin/pytest" -p no:cacheprovider --durations=15 \
  "${parallel[@]}" "$@" || status=$?

step "mypy --strict (kernel/, adapters/, prefixexec/), run beside pytest"
if wait "$mypy_pid"; then cat "$logs/mypy"; else cat "$logs/mypy"; echo "mypy FAILED"; status=1; fi
if [ -n "$proofs_pid" ]; then
  step "Coq proofs, run beside pytest"
  if wait "$proofs_pid"; then cat "$logs/proofs"; else cat "$logs/proofs"; echo "Coq proofs FAILED"; status=1; fi
fi
step "done, status $status"
exit "$status"
