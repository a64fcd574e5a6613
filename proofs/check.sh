#!/usr/bin/env bash
# Machine-check the Coq proofs of proofs/*.v (issue 8) and build and run the extracted
# reference scorer (issue 19). Usage: bash proofs/check.sh [--no-conformance] [--force]
#
# 1. Installs Debian's `coq` with apt-get when `coqc` is missing (it brings ocamlopt; the
#    `ocaml-nox` package is installed too when ocamlopt is still missing).
# 2. Compiles every proofs/*.v in dependency order (coqdep -sort) in a temporary copy, so no
#    .vo/.glob/.aux file is ever written into the repository; the copy is removed on exit.
#    Compiling Extract.v extracts the scorer of Reference.v to OCaml in that copy.
# 3. Runs `Print Assumptions` over every Theorem/Lemma/Corollary and fails when one depends
#    on an axiom that the "Allowed axioms:" line of proofs/README.md does not list (an Admitted
#    proof shows up there as an axiom too).
# 4. Compiles the extracted code with proofs/extracted/driver.ml (ocamlopt, OCaml stdlib only,
#    every warning an error in the driver) into proofs/extracted/score (ignored by git).
# 5. Unless --no-conformance: runs `prefixexec conformance --command proofs/extracted/score`
#    over every conformance vector (prefixexec from $PREFIXEXEC_TEST_VENV, default .venv-test,
#    else from PATH) and fails unless every vector agrees.
# Exits non-zero when any step fails.
#
# Speed: steps 2-4 are skipped when proofs/extracted/score was built and checked by this script
# from the same inputs: proofs/extracted/.score.stamp (ignored by git) holds a SHA-256 of this
# script, every proofs/*.v, driver.ml, the "Allowed axioms:" line, `coqc --version` and
# `ocamlopt -version`, and the SHA-256 of the binary it produced; it is written only after every
# check passed, and any difference (or a missing or changed binary) rebuilds. A fresh clone has
# no stamp, so it always compiles and checks everything. `--force` rebuilds regardless. Runs that
# overlap (tests/run.sh and tests/test_extracted.py's fixture) take turns on a lock file, so the
# second one finds the first one's stamp instead of compiling again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
conformance=1
force=0
for arg in "$@"; do
  case "$arg" in
    --no-conformance) conformance=0 ;;
    --force) force=1 ;;
    *) echo "usage: bash proofs/check.sh [--no-conformance] [--force]" >&2; exit 2 ;;
  esac
done

if ! command -v coqc >/dev/null 2>&1; then
  echo "proofs: coqc not found; installing Debian's coq with apt-get" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    else
      echo "proofs: coqc is missing and this user cannot run apt-get; install the 'coq' package" >&2
      exit 1
    fi
  fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q coq
fi
if ! command -v ocamlopt >/dev/null 2>&1; then
  echo "proofs: ocamlopt not found; installing Debian's ocaml-nox with apt-get" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo="sudo"
    else
      echo "proofs: ocamlopt is missing and this user cannot run apt-get; install 'ocaml-nox'" >&2
      exit 1
    fi
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q ocaml-nox
fi

shopt -s nullglob
sources=("$here"/*.v)
if [ "${#sources[@]}" -eq 0 ]; then
  echo "proofs: no .v files in $here" >&2
  exit 1
fi

sha() { sha256sum | cut -d' ' -f1; }
stamp="$here/extracted/.score.stamp"
inputs="$(
  {
    for f in "${BASH_SOURCE[0]}" "${sources[@]}" "$here/extracted/driver.ml"; do
      echo "== ${f##*/}"
      cat "$f"
    done
    grep -E '^Allowed axioms:' "$here/README.md" || true
    coqc --version
    ocamlopt -version
  } | sha
)"
up_to_date() {
  [ "$force" -eq 0 ] && [ -f "$here/extracted/score" ] && [ -f "$stamp" ] \
    && [ "$(cat "$stamp")" = "$inputs $(sha <"$here/extracted/score")" ]
}
if command -v flock >/dev/null 2>&1; then
  exec 9>"$here/extracted/.score.lock"
  flock 9
fi
if up_to_date; then
  echo "proofs: unchanged since they were last compiled and checked (inputs ${inputs:0:12}," \
    "$stamp); proofs/extracted/score is up to date"
  skip_build=1
else
  skip_build=0
fi

build="$(mktemp -d "${TMPDIR:-/tmp}/prefixexec-proofs.XXXXXX")"
trap 'rm -rf "$build"' EXIT
if [ "$skip_build" -eq 0 ]; then
  rm -f "$stamp"
  cp "${sources[@]}" "$build"/
  cp "$here/extracted/driver.ml" "$build"/
  cd "$build"

  lib=Prefixexec
  read -r -a ordered <<<"$(coqdep -sort -R . "$lib" ./*.v)"
  echo "proofs: $(coqc --version | head -n 1)"
  for file in "${ordered[@]}"; do
    file="${file#./}"
    echo "proofs: coqc ${file}"
    coqc -q -R . "$lib" "$file"
  done

  # Print Assumptions of one tuple holding every named result (one query is much faster than
  # one per theorem, and reports the union of their axioms).
  theorem_re='^[[:space:]]*(Theorem|Lemma|Corollary|Proposition|Fact|Remark)[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)'
  {
    for file in "${ordered[@]}"; do
      file="${file#./}"
      echo "From $lib Require ${file%.v}."
    done
    echo "Definition all_results := ("
    for file in "${ordered[@]}"; do
      file="${file#./}"
      { grep -E "$theorem_re" "$file" || true; } | sed -E "s/${theorem_re}.*/  @$lib.${file%.v}.\\2,/"
    done
    echo "  tt)."
    echo "Print Assumptions all_results."
  } >Assumptions_check.v
  count="$(grep -c '^  @' Assumptions_check.v || true)"
  if [ "$count" -eq 0 ]; then
    echo "proofs: found no theorems to check" >&2
    exit 1
  fi
  output="$(coqc -q -R . "$lib" Assumptions_check.v)"

  # Coq prints "Closed under the global context", or a header "Axioms:" followed by one
  # "name : type" per axiom (name at column 0, the type maybe on the next, indented, lines).
  allowed="$(grep -E '^Allowed axioms:' "$here/README.md" | grep -oE '`[^`]+`' | tr -d '`' || true)"
  bad=0
  while IFS= read -r name; do
    [ -n "$name" ] || continue
    short="${name##*.}"
    if ! grep -qxF -e "$name" -e "$short" <<<"$allowed"; then
      echo "proofs: a theorem depends on the axiom '$name', not listed in proofs/README.md" >&2
      bad=1
    fi
  done < <(grep -E '^[^[:space:]]' <<<"$output" | grep -vE ':$|^Closed under the global context$' \
    | sed -E 's/ :.*//' | sort -u)
  if [ "$output" != "Closed under the global context" ] && [ -z "$allowed" ]; then
    bad=1
  fi
  if [ "$bad" -ne 0 ]; then
    echo "$output" >&2
    exit 1
  fi
  echo "proofs: ${#ordered[@]} files compiled; assumptions of ${count} theorems and lemmas:" \
    "$(head -n 1 <<<"$output")"

  # The extracted reference scorer: score_extracted.ml(i) were written here by Extract.v.
  for f in score_extracted.mli score_extracted.ml; do
    if [ ! -f "$f" ]; then
      echo "proofs: Extract.v did not write $f" >&2
      exit 1
    fi
  done
  echo "proofs: $(ocamlopt -version | sed 's/^/ocamlopt /'): extracted reference scorer"
  ocamlopt -w +a-4-9-40-41-42-44-45-70 -warn-error +a -c score_extracted.mli
  ocamlopt -w -a -c score_extracted.ml
  ocamlopt -w +a-4-9-40-41-42-44-45-70 -warn-error +a -c driver.ml
  ocamlopt -o score score_extracted.cmx driver.cmx
  # Install atomically (a concurrent run never sees a half-written binary).
  cp score "$here/extracted/.score.$$"
  mv -f "$here/extracted/.score.$$" "$here/extracted/score"
  echo "$inputs $(sha <"$here/extracted/score")" >"$stamp"
  echo "proofs: built proofs/extracted/score"
fi
exec 9>&-  # release the lock: the conformance run below only reads the binary

if [ "$conformance" -eq 1 ]; then
  venv="${PREFIXEXEC_TEST_VENV:-$repo/.venv-test}"
  if [ -x "$venv/bin/prefixexec" ]; then
    prefixexec="$venv/bin/prefixexec"
  elif command -v prefixexec >/dev/null 2>&1; then
    prefixexec="$(command -v prefixexec)"
  else
    echo "proofs: cannot run the conformance vectors: no prefixexec in $venv or on PATH" \
      "(install the package, or pass --no-conformance)" >&2
    exit 1
  fi
  jobs=()
  if "$prefixexec" conformance --help | grep -q -- '--jobs'; then
    jobs=(--jobs 2)
  fi
  echo "proofs: prefixexec conformance --command proofs/extracted/score ${jobs[*]}"
  (cd "$repo" && "$prefixexec" conformance --command "$here/extracted/score" "${jobs[@]}")
fi
