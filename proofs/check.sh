#!/usr/bin/env bash
# Machine-check the Coq proofs of proofs/*.v (issue 8). Usage: bash proofs/check.sh
#
# 1. Installs Debian's `coq` with apt-get when `coqc` is missing.
# 2. Compiles every proofs/*.v in dependency order (coqdep -sort) in a temporary copy, so no
#    .vo/.glob/.aux file is ever written into the repository; the copy is removed on exit.
# 3. Runs `Print Assumptions` over every Theorem/Lemma/Corollary and fails when one depends
#    on an axiom that the "Allowed axioms:" line of proofs/README.md does not list (an Admitted
#    proof shows up there as an axiom too).
# Exits non-zero when any proof fails.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

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

shopt -s nullglob
sources=("$here"/*.v)
if [ "${#sources[@]}" -eq 0 ]; then
  echo "proofs: no .v files in $here" >&2
  exit 1
fi

build="$(mktemp -d "${TMPDIR:-/tmp}/prefixexec-proofs.XXXXXX")"
trap 'rm -rf "$build"' EXIT
cp "${sources[@]}" "$build"/
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
    grep -E "$theorem_re" "$file" | sed -E "s/${theorem_re}.*/  @$lib.${file%.v}.\\2,/"
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
