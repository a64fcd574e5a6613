"""The front page and docs/ stay true (issue 30): generated blocks equal what the code prints,
examples run, links resolve, the extras tables list pyproject.toml's extras, the front page is
short, and the set-up command installs what the tests install."""

from __future__ import annotations

import doctest
import re
import tomllib
from pathlib import Path
from typing import cast

import pytest

from prefixexec.cli import build_parser

import doc_blocks
from conftest import REPO

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
#: Pages whose ``pycon`` examples run as doctests.
EXAMPLE_PAGES = [README, *DOCS, *sorted((REPO / "spec").glob("*.md"))]


def test_the_front_page_is_one_screen_of_about_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move reference text to docs/"


def test_every_docs_page_is_linked_from_the_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    missing = [p.name for p in DOCS if f"](docs/{p.name}" not in text]
    assert not missing, f"docs pages the front page does not link: {missing}"


# ------------------------------------------------------------------------ generated blocks


def test_every_block_has_a_generator_and_an_end() -> None:
    for page in doc_blocks.pages():
        for name, _, _ in doc_blocks.blocks(page.read_text(encoding="utf-8")):
            assert name in doc_blocks.GENERATORS, f"{page.name}: unknown generated block {name!r}"
    assert doc_blocks.used(), "no generated block in any page"


#: Blocks checked here (the demo table needs a demo run: tests/test_report_demo.py checks it).
CHEAP = sorted(name for name in doc_blocks.used() if name != "demo-table")


@pytest.mark.parametrize("name", CHEAP)
def test_generated_blocks_equal_what_the_code_prints_now(name: str) -> None:
    want = doc_blocks.GENERATORS[name]()
    for page in doc_blocks.used()[name]:
        text = page.read_text(encoding="utf-8")
        for block, start, end in doc_blocks.blocks(text):
            if block == name:
                got = doc_blocks.block_text(text, start, end)
                assert got == want, (
                    f"{page.relative_to(REPO)}: block {name!r} is out of date; run python tests/doc_blocks.py"
                )


def test_replace_rewrites_only_the_named_block() -> None:
    end = "<!-- end generated -->"
    text = f"a\n<!-- generated: x -->\nold\n{end}\nb\n<!-- generated: y -->\nkeep\n{end}\n"
    new = doc_blocks.replace(text, "x", "new\nlines")
    assert new == text.replace("old", "new\nlines")
    assert doc_blocks.blocks(new) == [("x", 2, 4), ("y", 7, 8)]
    with pytest.raises(ValueError, match="no '<!-- end generated -->' line"):
        doc_blocks.blocks("<!-- generated: z -->\nx\n")


# ------------------------------------------------------------------------ examples


def pycon_examples(page: Path) -> str:
    """The ``pycon`` fenced blocks of a page, in order, as one doctest text."""
    text = page.read_text(encoding="utf-8")
    return "\n".join(m.group(1) for m in re.finditer(r"^```pycon\n(.*?)^```$", text, re.S | re.M))


@pytest.mark.parametrize("page", [p for p in EXAMPLE_PAGES if "```pycon" in p.read_text(encoding="utf-8")],
                         ids=lambda p: p.name)  # fmt: skip
def test_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the examples' paths are the checkout's, as the pages say
    examples = pycon_examples(page)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(examples, {"__name__": "docs"}, page.name, str(page), 0)
    assert test.examples, f"{page.name}: no examples found"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


# ------------------------------------------------------------------------ links


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = re.sub(r"^```.*?^```$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: link to {target} names nothing"
        if anchor:
            assert resolved.suffix == ".md" and anchor in anchors(resolved), (
                f"{page.name}: no anchor {target}"
            )


# ------------------------------------------------------------------------ installation


def extras() -> dict[str, list[str]]:
    with open(REPO / "pyproject.toml", "rb") as handle:
        found: dict[str, list[str]] = tomllib.load(handle)["project"]["optional-dependencies"]
    return found


def extras_table(page: Path) -> dict[str, str]:
    """Extra -> the ``brings`` cell of a page's extras table."""
    rows = re.findall(r"^\| `\[([a-z]+)\]`[^|]* \| ([^|]+) \|", page.read_text(encoding="utf-8"), re.M)
    return {name: brings.strip() for name, brings in rows}


@pytest.mark.parametrize("page", [README, REPO / "docs" / "install.md"], ids=lambda p: p.name)
def test_the_extras_tables_list_every_extra_with_its_packages(page: Path) -> None:
    table = extras_table(page)
    assert sorted(table) == sorted(extras()), f"{page.name}: extras table {sorted(table)}"
    for name, requirements in extras().items():
        if requirements[0].startswith("prefix-executability["):
            continue  # [all] and [test]: other extras (and tools)
        packages = {re.split(r"[\[<>=]", r)[0].lower().replace("-", "_") for r in requirements}
        shown = {p.strip().lower().replace("-", "_") for p in table[name].split(",")}
        assert packages <= shown | {"dask"} and shown - {"distributed"} <= packages, (name, table[name])


def test_the_install_hints_name_the_requirements_of_pyproject() -> None:
    from prefixexec.extras import EXTRA_OF, REQUIREMENT

    found = extras()
    assert {name: found[name] for name in REQUIREMENT} == {name: [r] for name, r in REQUIREMENT.items()}
    assert set(EXTRA_OF.values()) == set(REQUIREMENT)


def test_the_set_up_command_installs_the_pins_of_the_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    (pins,) = re.findall(r'^pins="([^"]+)"$', (REPO / "tests" / "run.sh").read_text(encoding="utf-8"), re.M)
    setup = [ln for ln in text.splitlines() if ln.startswith("python3 -m venv .venv && ")]
    assert len(setup) == 1 and f"pip install -q --no-deps {pins} && " in setup[0], setup
    assert "\nbash tests/run.sh\n" in text
    assert "pip install prefix-executability" not in "".join(
        p.read_text(encoding="utf-8") for p in [README, *DOCS]
    )


def test_the_front_page_lists_every_command() -> None:
    text = README.read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    commands = sorted(cast(dict[str, object], sub.choices))
    missing = [c for c in commands if f"\nprefixexec {c} " not in text]
    assert not missing, f"commands missing from the front page: {missing}"


# ------------------------------------------------------------------------ counted claims


def test_the_number_of_conformance_vectors_is_counted() -> None:
    count = len(list((REPO / "spec" / "vectors").glob("*.json")))
    for page in DOCS:
        for found in re.findall(
            r"\b(\d[\d,]*) (?:language-neutral conformance )?vectors\b", page.read_text(encoding="utf-8")
        ):
            assert int(found.replace(",", "")) == count, (
                f"{page.name} says {found} vectors, spec/vectors has {count}"
            )


def test_the_front_page_prose_about_its_example_is_counted() -> None:
    # "Three in four rollouts are executable end to end, yet only 11 of the 52 that hit a failing
    # call still succeed": TER, recovered and RR-Eligible of the same run, from the scorer.
    import prefixexec

    text = README.read_text(encoding="utf-8")
    (c,) = prefixexec.score(REPO / doc_blocks.TAU, bootstrap=0).conditions
    assert "Three in four rollouts are executable" in text and round(4 * c.TER) == 3
    assert f"only {c.recovered} of the {c.RR_eligible} that hit a failing call" in text.replace("\n", " ")
