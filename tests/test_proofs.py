"""Links between spec/, the Coq proofs of proofs/ and their README (issue 8).

The proofs themselves are compiled and their axioms checked by ``bash proofs/check.sh``, which
``tests/run.sh`` runs before pytest; nothing here calls Coq. These tests check, on the text,
that every **Proven:** marker of the spec names a theorem that exists and says which spec item
it proves, that every ``(* spec: ID *)`` comment names a defined ID whose marker lists the
theorem, that no proof is admitted or rests on an unlisted axiom, and that every row of the
README's table names a theorem, spec ID and property test that exist.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from spec_ids import ID_HEADING, REPO, TESTS_DIR, cited_ids, spec_files, spec_ids

PROOFS = REPO / "proofs"
README = PROOFS / "README.md"

THEOREM_KINDS = "Theorem|Lemma|Corollary|Proposition|Fact|Remark"
THEOREM_DECL = re.compile(rf"^[ \t]*(?:{THEOREM_KINDS})\s+([A-Za-z_][A-Za-z0-9_']*)", re.M)
# A "(* spec: ID, ID *)" comment and the declaration that must follow it on the next line.
SPEC_COMMENT = re.compile(r"\(\*\s*spec:\s*([^*]*?)\s*\*\)")
SPEC_COMMENT_THEN_DECL = re.compile(
    rf"\(\*\s*spec:\s*([^*]*?)\s*\*\)[ \t]*\n[ \t]*(?:{THEOREM_KINDS})\s+([A-Za-z_][A-Za-z0-9_']*)"
)
ID_TOKEN = re.compile(r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+")
PROVEN_MARKER = re.compile(r"\*\*Proven:\*\*\s*((?:`[A-Za-z_][A-Za-z0-9_']*`(?:\s*,\s*)?)+)")
BACKTICKED = re.compile(r"`([^`]+)`")

# Anything that lets a proof skip its obligations (looked for in the raw text, comments too).
FORBIDDEN = {
    "Admitted": re.compile(r"\bAdmitted\b"),
    "admit": re.compile(r"\badmit\b"),
    "Admit": re.compile(r"\bAdmit\b"),
    "give_up": re.compile(r"\bgive_up\b"),
    "Unset ... Checking": re.compile(r"\bUnset\s+(?:Guard|Positivity|Universe)\s+Checking\b"),
    "bypass_check": re.compile(r"\bbypass_check\b"),
}
# Declarations that add an assumption to the global context (outside a Section).
ASSUMPTION_DECL = re.compile(
    r"(?<![\w'])(Axioms?|Parameters?|Conjecture|Hypothes[ie]s|Variables?)\s+([^.]*?)\s*\.(?:\s|$)"
)


def strip_coq_comments(text: str) -> str:
    """The text with every (possibly nested) ``(* ... *)`` comment blanked, newlines kept."""
    out: list[str] = []
    depth = 0
    i = 0
    in_string = False
    while i < len(text):
        pair = text[i : i + 2]
        ch = text[i]
        if depth == 0 and ch == '"':
            in_string = not in_string
        if not in_string and pair == "(*":
            depth += 1
            out.append("  ")
            i += 2
            continue
        if not in_string and depth > 0 and pair == "*)":
            depth -= 1
            out.append("  ")
            i += 2
            continue
        out.append(ch if depth == 0 or ch == "\n" else " ")
        i += 1
    return "".join(out)


def proof_files() -> list[Path]:
    return sorted(PROOFS.glob("*.v"))


def declared_theorems() -> dict[str, Path]:
    """Name -> file of every Theorem/Lemma/... declared outside comments in proofs/*.v."""
    found: dict[str, Path] = {}
    for path in proof_files():
        for match in THEOREM_DECL.finditer(strip_coq_comments(path.read_text(encoding="utf-8"))):
            name = match.group(1)
            assert name not in found, f"{name} declared in {found[name].name} and {path.name}"
            found[name] = path
    return found


def spec_comments() -> list[tuple[Path, list[str], str | None]]:
    """(file, IDs, theorem right after the comment or None) for every ``(* spec: ... *)``."""
    result: list[tuple[Path, list[str], str | None]] = []
    for path in proof_files():
        text = path.read_text(encoding="utf-8")
        following = {m.start(): m.group(2) for m in SPEC_COMMENT_THEN_DECL.finditer(text)}
        for match in SPEC_COMMENT.finditer(text):
            ids = [part.strip() for part in match.group(1).split(",")]
            result.append((path, ids, following.get(match.start())))
    return result


def proven_markers() -> dict[str, list[str]]:
    """Spec ID -> the theorem names its ``**Proven:**`` marker lists."""
    markers: dict[str, list[str]] = {}
    for path in spec_files():
        text = path.read_text(encoding="utf-8")
        headings = list(ID_HEADING.finditer(text))
        for n, heading in enumerate(headings):
            end = headings[n + 1].start() if n + 1 < len(headings) else len(text)
            section = text[heading.end() : end]
            section = re.split(r"^##", section, maxsplit=1, flags=re.M)[0]
            names = [
                name
                for marker in PROVEN_MARKER.finditer(section)
                for name in BACKTICKED.findall(marker.group(1))
            ]
            if names:
                markers[heading.group(1)] = names
    return markers


def forbidden_constructs(text: str, allowed: set[str]) -> list[str]:
    """What in one .v file skips a proof or assumes something not in ``allowed``."""
    problems = [what for what, pattern in FORBIDDEN.items() if pattern.search(text)]
    code = strip_coq_comments(text)
    for match in ASSUMPTION_DECL.finditer(code):
        body = match.group(2).strip()
        if body.startswith("("):
            names = [n for group in re.findall(r"\(([^:()]*):", body) for n in group.split()]
        else:
            names = body.split(":", 1)[0].split()
        problems.extend(f"{match.group(1)} {n}" for n in names if n not in allowed)
    return problems


def allowed_axioms() -> set[str]:
    lines = [ln for ln in README.read_text(encoding="utf-8").splitlines() if ln.startswith("Allowed axioms:")]
    assert len(lines) == 1, "proofs/README.md must have exactly one 'Allowed axioms:' line"
    return set(BACKTICKED.findall(lines[0]))


def readme_table() -> list[tuple[str, list[str], list[str]]]:
    """(theorem, spec IDs, property tests) for each row of the README's theorem table."""
    lines = README.read_text(encoding="utf-8").splitlines()
    header = [i for i, ln in enumerate(lines) if re.match(r"\|\s*theorem\s*\|\s*spec ID\s*\|", ln)]
    assert len(header) == 1, "proofs/README.md must have one '| theorem | spec ID | property test |' table"
    rows: list[tuple[str, list[str], list[str]]] = []
    for line in lines[header[0] + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 3, f"README table row does not have 3 cells: {line!r}"
        theorems = BACKTICKED.findall(cells[0])
        assert len(theorems) == 1, f"README table row must name one theorem: {line!r}"
        rows.append((theorems[0], ID_TOKEN.findall(cells[1]), BACKTICKED.findall(cells[2])))
    return rows


def property_test_names() -> set[str]:
    names: set[str] = set()
    for path in sorted(TESTS_DIR.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


# The spec items marked **Proven:** (checked against the markers below, so this stays exact).
@pytest.mark.spec(
    "EQ-1",
    "EQ-2",
    "EQ-7",
    "EQ-10",
    "EQ-12",
    "INV-PEC-MONO",
    "INV-PEC-ZERO",
    "INV-TER-AUC",
    "INV-RR-ELIG",
    "INV-LABEL-SUM",
    "INV-TER-HORIZON",
    "INV-PERM",
    "INV-ADDITIVE",
    "PASSK-MONO",
    "PASSK-K1",
)
def test_every_proven_marker_names_an_existing_theorem() -> None:
    markers = proven_markers()
    cited_here = {
        i
        for i, tests in cited_ids().items()
        if f"{Path(__file__).name}::test_every_proven_marker_names_an_existing_theorem" in tests
    }
    assert set(markers) == cited_here, "update this test's spec citations to the proven spec IDs"
    theorems = declared_theorems()
    linked = {(thm, ident) for _, ids, thm in spec_comments() if thm for ident in ids}
    for ident, names in markers.items():
        for name in names:
            assert name in theorems, f"{ident} is marked proven by {name}, which proofs/*.v does not declare"
            assert (name, ident) in linked, f"{name} lacks a '(* spec: {ident} *)' comment right before it"


def test_spec_comments_name_defined_ids_and_marked_theorems() -> None:
    ids = spec_ids()
    markers = proven_markers()
    comments = spec_comments()
    assert comments, "no (* spec: ID *) comment in proofs/*.v"
    for path, comment_ids, theorem in comments:
        assert theorem is not None, f"{path.name}: a spec comment {comment_ids} is not right before a theorem"
        for ident in comment_ids:
            assert ident in ids, (
                f"{path.name}: {theorem} names spec ID {ident!r}, which spec/ does not define"
            )
            assert theorem in markers.get(ident, []), (
                f"{path.name}: {theorem} says it proves {ident}, "
                f"but {ident} is not marked **Proven:** `{theorem}`"
            )


def test_no_admitted_proof_or_unlisted_axiom() -> None:
    allowed = allowed_axioms()
    assert proof_files(), "proofs/ has no .v file"
    problems = {p.name: forbidden_constructs(p.read_text(encoding="utf-8"), allowed) for p in proof_files()}
    assert not any(problems.values()), f"not allowed by proofs/README.md's trust model: {problems}"


def test_the_forbidden_construct_scan_finds_what_it_must() -> None:
    # The scan above must not be vacuous: each construct is reported, a listed axiom is not.
    proof = "Lemma x : True.\nProof. exact I. Qed.\n"
    assert forbidden_constructs(proof, set()) == []
    assert forbidden_constructs(proof.replace("Qed", "Admitted"), set()) == ["Admitted"]
    assert forbidden_constructs("Proof. admit. Defined.", set()) == ["admit"]
    assert forbidden_constructs("Proof. give_up. Qed.", set()) == ["give_up"]
    assert forbidden_constructs("Axiom em : forall P : Prop, P \\/ ~ P.", set()) == ["Axiom em"]
    assert forbidden_constructs("Axiom em : forall P : Prop, P \\/ ~ P.", {"em"}) == []
    assert forbidden_constructs("Parameters (a b : nat) (f : nat -> nat).", {"b"}) == [
        "Parameters a",
        "Parameters f",
    ]
    assert forbidden_constructs("Conjecture c : 1 = 2.", set()) == ["Conjecture c"]
    assert forbidden_constructs("(* Axiom in a comment : False. *) Lemma y : True.", set()) == []
    comment = "(* b (* c *) d *)"
    assert strip_coq_comments(f"a {comment} e\n(* x\n*)") == "a " + " " * len(comment) + " e\n" + "    \n  "


def test_readme_table_names_existing_theorems_ids_and_tests() -> None:
    rows = readme_table()
    assert rows, "proofs/README.md's theorem table is empty"
    theorems = declared_theorems()
    ids = spec_ids()
    functions = property_test_names()
    cited_by: dict[str, set[str]] = {}
    for ident, tests in cited_ids().items():
        for test in tests:
            cited_by.setdefault(test.split("::", 1)[1], set()).add(ident)
    for theorem, row_ids, tests in rows:
        assert theorem in theorems, f"README table: theorem {theorem} is not declared in proofs/*.v"
        assert row_ids, f"README table: row of {theorem} names no spec ID"
        assert tests, f"README table: row of {theorem} names no property test"
        for test in tests:
            assert test in functions, f"README table: {theorem}: property test {test} not found in tests/"
        for ident in row_ids:
            assert ident in ids, f"README table: {theorem}: spec ID {ident} does not exist"
            assert any(ident in cited_by.get(t, set()) for t in tests), (
                f"README table: no property test of the row of {theorem} cites {ident}"
            )


def test_readme_table_matches_the_proven_markers() -> None:
    table = {(theorem, ident) for theorem, row_ids, _ in readme_table() for ident in row_ids}
    marked = {(theorem, ident) for ident, names in proven_markers().items() for theorem in names}
    assert table == marked, (
        f"in the README table only: {sorted(table - marked)}; marked in spec/ only: {sorted(marked - table)}"
    )


def test_the_test_command_compiles_the_proofs() -> None:
    # tests/run.sh (the README's test command, which .ci/run runs) must call proofs/check.sh.
    assert (PROOFS / "check.sh").is_file()
    run = (REPO / "tests" / "run.sh").read_text(encoding="utf-8")
    assert re.search(r'^\s*bash "\$repo/proofs/check\.sh"\s*$', run, re.M), (
        "tests/run.sh does not run check.sh"
    )
    assert "tests/run.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
