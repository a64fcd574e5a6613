"""Start-up of ``prefixexec score`` (issue 16): the table is laid out without importing rich when
its text is plain, exactly as rich lays it out; a one-line score loads no table or plot package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.scoring import _plain, render_blocks, render_blocks_rich

#: Printable ASCII, with what could trip a layout: spaces (leading, trailing, repeated), '-', and
#: '[' followed by what does not open a rich markup tag (a digit, '+', an upper-case letter).
PIECES = [" ", "  ", "-", ".", ":", "+", "|", "x", "0", "Z", "]", "=", "(", "a", "M", "99", "[+", "[1", "[Q"]
plain_text = st.lists(st.sampled_from(PIECES), max_size=8).map("".join).filter(_plain)


@st.composite
def blocks(draw: st.DrawFn) -> list[tuple[str, list[str], list[list[str]]]]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        columns = draw(st.integers(1, 6))
        headers = draw(st.lists(plain_text, min_size=columns, max_size=columns))
        row = st.lists(plain_text, min_size=columns, max_size=columns)
        rows = draw(st.lists(row, min_size=1, max_size=4))
        out.append((draw(plain_text), headers, rows))
    return out


@pytest.mark.spec("OUT-TABLE")
@given(blocks(), plain_text)
def test_plain_tables_are_laid_out_exactly_as_rich_lays_them_out(
    tables: list[tuple[str, list[str], list[list[str]]]], signature: str
) -> None:
    texts = [t for title, headers, rows in tables for t in (title, *headers, *(c for r in rows for c in r))]
    assert all(_plain(t) for t in texts)  # the strategy makes plain text only: the fast layout is used
    assert render_blocks(tables, signature) == render_blocks_rich(tables, signature)


@pytest.mark.spec("OUT-TABLE")
@pytest.mark.parametrize(
    "cell",
    ["[bold]x", "naïve", "表", "a\tb", "\\[x]", "x\u200by", ""],
)
def test_other_text_is_laid_out_by_rich(cell: str) -> None:
    tables = [("t", ["method", "N"], [[cell, "1"], ["b", "22"]])]
    assert render_blocks(tables, "s") == render_blocks_rich(tables, "s")


@pytest.mark.spec("OUT-TABLE")
def test_a_typical_score_table() -> None:
    # Written out by hand from OUT-TABLE: each column as wide as its widest cell, two spaces
    # between columns, a rule of '-' as wide as each column plus its padding.
    tables = [("d / m", ["method", "N", "TER"], [["react", "1", "0.00 [0.00, 1.00]"], ["x", "10", "n/a"]])]
    assert render_blocks(tables, "sig") == (
        "d / m\n"
        "method  N   TER\n"
        "------- --- -----------------\n"
        "react   1   0.00 [0.00, 1.00]\n"
        "x       10  n/a\n"
        "\n"
        "signature: sig\n"
    )


#: What a one-line ``score`` with the table must not load: the table package (rich), the schema
#: engine (only to explain a rejected line), plotting, Arrow, Dask, SciPy, installed metadata.
NOT_LOADED = ("rich", "jsonschema", "matplotlib", "pyarrow", "dask", "distributed", "scipy")


@pytest.mark.spec("OUT-TABLE")
def test_scoring_one_record_loads_no_table_package(tmp_path: Path) -> None:
    record = (
        '{"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": true, '
        '"outcome": {"T": 2, "fed": 3}}\n'
    )
    path = tmp_path / "one.jsonl"
    path.write_text(record, encoding="utf-8")
    code = (
        "import contextlib, io, sys\nfrom prefixexec.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    assert main(['score', {str(path)!r}, '--bootstrap', '0']) == 0\n"
        "assert out.getvalue().startswith('d / m\\nmethod'), out.getvalue()\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {NOT_LOADED!r} or m == 'importlib.metadata']\n"
        "print(','.join(sorted(bad)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
