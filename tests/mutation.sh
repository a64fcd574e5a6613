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
# and tests/test_regression.py).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${PREFIXEXEC_TEST_VENV:-$repo/.venv-test}"
work="${1:-$(mktemp -d "${TMPDIR:-/tmp}/prefixexec-mutation.XXXXXX")}"
children="${MUTATION_CHILDREN:-2}"
niceness="${MUTATION_NICE:-15}"
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
# conftest's SHARED is REPO.parent / "shared"; mutmut runs the tests in $stage/mutants.
if [ -d "$repo/../shared" ]; then
  ln -s "$(cd "$repo/../shared" && pwd)" "$stage/shared"
fi
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
  "in $stage, tests: $tests"
nice -n "$niceness" "$venv/bin/mutmut" run --max-children "$children" >"$work/run.log" 2>&1 || {
  tail -n 40 "$work/run.log" >&2
  exit 1
}
end=$(date +%s)
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
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$probe_test" >/dev/null \
    || { echo "mutation: $probe_test fails without a mutant" >&2; exit 1; }
  if MUTANT_UNDER_TEST=$probe "$venv/bin/python" -m pytest -q -p no:cacheprovider "$probe_test" >/dev/null; then
    echo "mutation: mutant $probe is not active in the tests" >&2
    exit 1
  fi
  echo "mutation: checked: the tests import the mutated $module from $stage/mutants/src and $probe fails $probe_test"
)
"$venv/bin/mutmut" export-cicd-stats >/dev/null
"$venv/bin/mutmut" results --all true >"$work/results.txt" || true
"$venv/bin/python" - "$stage/mutants/mutmut-cicd-stats.json" "$work/results.txt" "$((end - start))" <<'EOF'
import json
import sys

stats = json.load(open(sys.argv[1]))
total = stats["total"]
killed = stats["killed"]
effective = total - stats.get("skipped", 0)
print("mutation: " + ", ".join(f"{k} {v}" for k, v in stats.items()))
print(f"mutation: wall time {int(sys.argv[3])} s")
survivors = [ln.split(":")[0].strip() for ln in open(sys.argv[2]) if ln.rstrip().endswith(": survived")]
print(f"mutation: {len(survivors)} survived")
for name in survivors:
    print(f"  {name}")
EOF
echo "mutation: details: cd $stage && $venv/bin/mutmut show MUTANT"
