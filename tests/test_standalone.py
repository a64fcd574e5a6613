"""The repository stands alone (REPO-STANDALONE, REPO-REAL-RUNS): nothing in tests/, docs/,
README.md, benchmarks/, examples/ or .ci/ names a path outside the checkout, every relative link of
the documentation resolves inside it, and every real third-party run the suite reads is in
tests/data/real/ with its provenance and licence.

Two guards: the scan below (sources, doc blocks, benchmark scripts), and conftest.py's audit hook,
which refuses and records any open or listing under ``../shared`` by a test of this process.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import conftest
from conftest import REAL, REPO

#: What names a place outside the checkout: the folder the real runs were read from before they
#: were copied in, and absolute paths of this machine's work folder. Built from pieces so this
#: file does not match itself.
OUTSIDE = re.compile(
    "|".join([r"\.\./" + "shared", "shared/" + "fixtures", r"(?<![\w.])/" + "work/", r"REPO\.parent\s*/"])
)

#: The sources scanned: code and prose, not data (a real run may hold its writer's paths).
SOURCES = ("tests", "docs", "benchmarks", "examples", ".ci")
SUFFIXES = {".py", ".md", ".sh", ".toml", ".txt", ".ipynb", ".cfg", ".ini", ""}


#: The guard's own files, which name the folder they guard against.
GUARDS = (REPO / "tests" / "conftest.py", REPO / "tests" / "test_standalone.py")


def scanned() -> list[Path]:
    files = [REPO / "README.md", REPO / "pyproject.toml"]
    for top in SOURCES:
        for path in sorted((REPO / top).rglob("*")):
            if not path.is_file() or path.suffix not in SUFFIXES or "__pycache__" in path.parts:
                continue
            if path in GUARDS:
                continue
            if (REPO / "tests" / "data") in path.parents and path.name not in ("SOURCE.md", "README.md"):
                continue  # data, not a source
            files.append(path)
    return files


@pytest.mark.spec("REPO-STANDALONE")
def test_no_source_names_a_path_outside_the_checkout() -> None:
    found = []
    for path in scanned():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.split("\n"), start=1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert len(scanned()) > 140  # the scan sees the suite, the docs and the benchmarks (146 files)
    assert found == []


@pytest.mark.spec("REPO-STANDALONE")
def test_the_scan_finds_an_outside_path() -> None:
    # The pattern itself, on lines of the kinds it must catch and must let pass.
    assert OUTSIDE.search("TAU = '../" + "shared/fixtures/x.json'")
    assert OUTSIDE.search("x = REPO.parent / 'data'")
    assert OUTSIDE.search("see /" + "work/main/README.md")
    assert not OUTSIDE.search("paired differences on shared tasks; tests/data/real/tau2")


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.spec("REPO-STANDALONE")
def test_every_relative_link_of_the_documentation_resolves_inside_the_checkout() -> None:
    bad = []
    docs = sorted((REPO / "docs").glob("*.md"))
    pages = [REPO / "README.md", *docs, *sorted((REPO / "spec").rglob("*.md"))]
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a web address or an anchor on the same page
            path = (page.parent / target.split("#", 1)[0]).resolve()
            if REPO.resolve() not in path.parents or not path.exists():
                bad.append(f"{page.relative_to(REPO)}: {target}")
    assert bad == []


@pytest.mark.spec("REPO-STANDALONE")
def test_the_audit_hook_refuses_and_records_a_read_outside() -> None:
    before = len(conftest.OUTSIDE_READS)
    with pytest.raises(PermissionError, match="REPO-STANDALONE"):
        open(Path(conftest.OUTSIDE) / "fixtures" / "any.json", encoding="utf-8")
    recorded = conftest.OUTSIDE_READS[before:]
    del conftest.OUTSIDE_READS[before:]  # this test's own read is the expected one
    assert recorded == [str(Path(conftest.OUTSIDE) / "fixtures" / "any.json")]


def real_sources() -> list[Path]:
    return sorted(p for p in REAL.iterdir() if p.is_dir())


@pytest.mark.spec("REPO-REAL-RUNS")
def test_every_real_source_has_its_provenance_and_licence() -> None:
    assert [p.name for p in real_sources()] == [
        "agentrx-tau-retail", "bfcl-glyphh-ada", "bfcl-gpt-oss-20b", "bfcl-v4", "claude-code", "inspect",
        "inspect_ai", "inspect_scout", "tau-bench-v1", "tau-bench-v1-retail", "tau2", "tau2-leaderboard",
        "tau2-runs", "tau2-sft", "tau2-submissions", "tau2-voice", "vitals",
    ]
    for source in real_sources():
        provenance = (source / "SOURCE.md").read_text(encoding="utf-8")
        assert re.search(r"[0-9a-f]{7,40}", provenance), f"{source.name}: SOURCE.md names no commit"
        assert list(source.glob("LICENSE*")), f"{source.name}: no licence file"


@pytest.mark.spec("REPO-REAL-RUNS")
def test_every_real_file_is_named_in_its_source_note_and_used() -> None:
    """Every data file of tests/data/real is named in its folder's SOURCE.md (its provenance) and
    by a test, a doc or a benchmark (its use); nothing is kept that nothing reads."""
    users = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in scanned()
        if p.name != "SOURCE.md"
    )
    unnamed, unused = [], []
    for source in real_sources():
        provenance = (source / "SOURCE.md").read_text(encoding="utf-8")
        for path in sorted(source.rglob("*")):
            if not path.is_file() or path.name == "SOURCE.md" or path.name.startswith("LICENSE"):
                continue
            inner = path.relative_to(source)
            plain = inner.name.removesuffix(".gz").removesuffix(".zst")
            # Names in a SOURCE.md may be wrapped across a table cell, or say the folder of a run.
            if plain not in provenance and inner.parts[0] not in provenance:
                unnamed.append(str(path.relative_to(REAL)))
            folder = f"{source.name}/{inner.parts[0]}"
            if plain not in users and inner.name not in users and folder not in users:
                unused.append(str(path.relative_to(REAL)))
    assert unnamed == []
    assert unused == []
