#!/usr/bin/env bash
# Mutation testing of kernel/ with mutmut (issue 19; report: tests/mutation.md). Not part of the
# test command: it takes long. Usage: bash tests/mutation.sh [WORKDIR]
#
# The editable install maps kernel/ -> prefixexec.kernel, adapters/ -> prefixexec.adapters and
# spec/vectors/ -> prefixexec.vectors, so mutating kernel/ in place would (a) change the files
# every other test run in this tree imports and (b) leave a mutant behind if interrupted. This
# script therefore copies the package, in its installed layout, into WORKDIR/stage/src/prefixexec
# (plus tests/, spec/ and pyproject.toml) and runs mutmut there; mutmut puts its mutated copy
# (WORKDIR/stage/mutants/src) first on sys.path, and the editable finder comes after sys.path,
# so the tests import the mutated prefixexec.kernel. The script checks that before running: it
# applies one mutant to a scratch copy and verifies a test fails on it.
#
# Environment: PREFIXEXEC_TEST_VENV (default .venv-test, with mutmut installed),
# MUTATION_CHILDREN (parallel mutant runs, default 2), MUTATION_NICE (default 15),
# MUTATION_TESTS (the pytest files, default the kernel's tests below), MUTATION_EXAMPLES
# (Hypothesis examples per property test in the staged copy's "mutation" profile, default 20;
# the test suite's own profiles are unchanged), MUTATION_MUTATE (what to mutate, globs relative to
# the staged src/, default "src/prefixexec/kernel/*"; e.g. "src/prefixexec/adapters/bfcl/semantics.py"
# with that adapter's tests in MUTATION_TESTS), MUTATION_PROBE and MUTATION_PROBE_TEST (a mutant that
# must fail the probe test file, to show the tests import the mutated copy; default a kernel mutant
# and tests/test_regression.py; the probe test may carry pytest options, e.g. --deselect=...), MUTATION_BUDGET (seconds `mutmut run` may take, default 3600).
#
# Two phases, one command: `mutmut run` checks the mutants in its own order (those whose tests run
# fastest first) for at most MUTATION_BUDGET seconds and is then stopped as Ctrl-C stops it (every
# finished result kept). The mutants it did not check are left in the functions that nearly every
# test reaches, where mutmut would rerun all those tests in a new process per mutant (about a
# minute each here); tests/mutation_rerun.py checks them in one process against the whole test
# selection: first without the property tests (-m "not hypothesis"), then the survivors of that
# with them. tests/mutation_summary.py counts both phases and prints the whole command's wall time.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${PREFIXEXEC_TEST_VENV:-$repo/.venv-test}"
work="${1:-$(mktemp -d "${TMPDIR:-/tmp}/prefixexec-mutation.XXXXXX")}"
children="${MUTATION_CHILDREN:-2}"
niceness="${MUTATION_NICE:-15}"
budget="${MUTATION_BUDGET:-3600}"
mutate="${MUTATION_MUTATE:-src/prefixexec/kernel/*}"
probe="${MUTATION_PROBE:-prefixexec.kernel.metrics.x_compute_metrics__mutmut_1}"
probe_test="${MUTATION_PROBE_TEST:-tests/test_regression.py}"
tests="${MUTATION_TESTS:-tests/test_kernel.py tests/test_properties.py tests/test_bootstrap.py tests/test_accumulator.py tests/test_regression.py tests/test_mutation_kernel.py tests/test_compare.py tests/test_monitor.py tests/test_monitor_properties.py}"

if [ ! -x "$venv/bin/mutmut" ]; then
  echo "mutation: installing mutmut (pyproject extra 'mutation') into $venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "mutmut==3.8.1"
fi

stage="$work/stage"
rm -rf "$stage"
mkdir -p "$stage/src"
cp -rL "$repo/prefixexec" "$stage/src/prefixexec"
cp -rL "$repo/kernel" "$stage/src/prefixexec/kernel"
cp -rL "$repo/adapters" "$stage/src/prefixexec/adapters"
cp -rL "$repo/spec/vectors" "$stage/src/prefixexec/vectors"
cp -rL "$repo/tests" "$stage/tests"
cp -rL "$repo/spec" "$stage/spec"
cp -rL "$repo/examples" "$stage/examples"
cp "$repo/pyproject.toml" "$stage/pyproject.toml"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
# A Hypothesis profile for the staged copy only: every surviving mutant reruns each property
# test that reaches it, so 100 examples (profile dev) cost hours on a shared machine.
examples="${MUTATION_EXAMPLES:-20}"
printf '\nsettings.register_profile("mutation", max_examples=%s, deadline=None)\n' "$examples" \
  >>"$stage/tests/conftest.py"
printf 'settings.load_profile("mutation")\n' >>"$stage/tests/conftest.py"
# mutmut forks each mutant's worker from the process that recorded which tests reach which
# function: a functools cache filled there (BFCL's task(), chat's _validator) would hide the
# mutant from the tests that reuse it. Clear them before every test (staged copy only).
cat >>"$stage/tests/conftest.py" <<'PY'


@pytest.fixture(autouse=True)
def _mutation_fresh_caches():  # mutation runs only: no cached result crosses a test
    import sys as _sys

    for _name, _cached in (
        ("prefixexec.adapters.bfcl.semantics", "task"),
        ("prefixexec.adapters.chat.semantics", "_validator"),
    ):
        if _name in _sys.modules:
            getattr(_sys.modules[_name], _cached).cache_clear()
    yield
PY
{
  echo "[mutmut]"
  echo "source_paths ="
  echo "    src/prefixexec"
  echo "only_mutate ="
  set -f  # the globs are mutmut's, not the shell's
  for m in $mutate; do echo "    $m"; done
  set +f
  echo "also_copy ="
  echo "    spec"
  echo "    examples"
  echo "pytest_add_cli_args_test_selection ="
  for t in $tests; do echo "    $t"; done
  echo "pytest_add_cli_args ="
  echo "    -p"
  echo "    no:cacheprovider"
} >"$stage/setup.cfg"

cd "$stage"
start=$(date +%s)
echo "mutation: mutmut $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mutmut"))')" \
  "in $stage, tests: $tests; mutmut run for at most $budget s"
# setsid: mutmut and its workers in a process group of their own, apart from this script;
# env --default-signal=INT: a background command of a script starts with Ctrl-C ignored, and
# Python then never raises KeyboardInterrupt, which is how mutmut stops keeping its results.
setsid env --default-signal=INT nice -n "$niceness" "$venv/bin/mutmut" run --max-children "$children" \
  >"$work/run.log" 2>&1 &
mutmut_pid=$!
while kill -0 "$mutmut_pid" 2>/dev/null && [ $(($(date +%s) - start)) -lt "$budget" ]; do
  sleep 5
done
stopped=0
if kill -0 "$mutmut_pid" 2>/dev/null; then
  stopped=1
  echo "mutation: budget of $budget s reached: stopping mutmut run (Ctrl-C; finished results are kept)"
  # Ctrl-C again every 20 s: before its mutation loop (stats, clean tests) mutmut's pytest takes
  # the first one as the end of that test run and goes on.
  for i in $(seq 120); do
    kill -0 "$mutmut_pid" 2>/dev/null || break
    if [ $((i % 20)) = 1 ]; then kill -INT "$mutmut_pid" 2>/dev/null || true; fi
    sleep 1
  done
  kill -KILL -- "-$mutmut_pid" 2>/dev/null || true
  wait "$mutmut_pid" || true
elif ! wait "$mutmut_pid"; then
  tail -n 40 "$work/run.log" >&2
  exit 1
fi
mutmut_end=$(date +%s)
# The tests import the mutated copy: prefixexec.kernel comes from mutants/src, and a known
# mutant switched on through mutmut's trampoline (MUTANT_UNDER_TEST) fails a test that passes
# without it.
(
  cd "$stage/mutants"
  export PYTHONPATH=src
  unset PYTHONDONTWRITEBYTECODE
  module="${probe%.x_*}"
  module="${module%.xǁ*}"
  "$venv/bin/python" -c "import $module as m, sys; sys.exit(0 if '/mutants/src/prefixexec/' in m.__file__ else 1)" \
    || { echo "mutation: the tests do not import the mutated $module" >&2; exit 1; }
  # shellcheck disable=SC2086  # a test file and pytest options: words
  "$venv/bin/python" -m pytest -q -p no:cacheprovider $probe_test >/dev/null \
    || { echo "mutation: $probe_test fails without a mutant" >&2; exit 1; }
  # shellcheck disable=SC2086
  if MUTANT_UNDER_TEST=$probe "$venv/bin/python" -m pytest -q -p no:cacheprovider $probe_test >/dev/null; then
    echo "mutation: mutant $probe is not active in the tests" >&2
    exit 1
  fi
  echo "mutation: checked: the tests import the mutated $module from $stage/mutants/src and $probe fails $probe_test"
)
"$venv/bin/mutmut" results --all true >"$work/results.txt" || true
# Phase two: what mutmut did not check, in one process (see the top of this file).
sed -n 's/^ *\([^ ]*\): not checked$/\1/p' "$work/results.txt" >"$work/unchecked.txt"
: >"$work/unchecked-survivors.txt"
if [ -s "$work/unchecked.txt" ]; then
  echo "mutation: $(wc -l <"$work/unchecked.txt") mutants not checked by mutmut run: rerun in one process"
  rm -rf "$work/rerun-examples" "$work/rerun-all"
  (
    cd "$stage/mutants"
    export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}"  # and the caller's (a plugin in MUTATION_TESTS)
    # shellcheck disable=SC2086  # the test files are words
    nice -n "$niceness" "$venv/bin/python" "$repo/tests/mutation_rerun.py" "$work/rerun-examples" \
      "$work/unchecked.txt" $tests -m "not hypothesis" >"$work/rerun-examples.log" 2>&1
    while read -r name; do
      if [ "$(cat "$work/rerun-examples/$name")" = 0 ]; then echo "$name"; fi
    done <"$work/unchecked.txt" >"$work/unchecked-survivors.txt"
    if [ -s "$work/unchecked-survivors.txt" ]; then
      # shellcheck disable=SC2086
      nice -n "$niceness" "$venv/bin/python" "$repo/tests/mutation_rerun.py" "$work/rerun-all" \
        "$work/unchecked-survivors.txt" $tests >"$work/rerun-all.log" 2>&1
    fi
  )
fi
end=$(date +%s)
"$venv/bin/python" "$repo/tests/mutation_summary.py" "$work" "$((mutmut_end - start))" "$((end - start))" "$stopped"
echo "mutation: details: cd $stage && $venv/bin/mutmut show MUTANT; rerun logs in $work/rerun-*"
