"""Start-up of ``prefixexec score`` (issue 16): the table is laid out without importing rich when
its text is plain, exactly as rich lays it out; a one-line score loads no table or plot package."""

from __future__ import annotations

import json
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
#: engine (only to explain a rejected line), plotting, Arrow, Dask, SciPy, installed metadata,
#: tempfile (only a command that writes a file needs it). pathlib is not listed: the editable
#: install's import hook loads it in the test environment.
NOT_LOADED = ("rich", "jsonschema", "matplotlib", "pyarrow", "dask", "distributed", "scipy", "tempfile")


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


# The exit (prefixexec.cli.leave): at once when that loses nothing, else Python's usual exit.


class _Left(Exception):
    """What the patched ``os._exit`` raises: the process would have ended at once."""


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``os._exit`` recorded instead of taken; no exit callback and one thread unless a test says so."""
    import atexit
    import os
    import threading

    taken: list[int] = []

    def fake_exit(status: int) -> None:
        taken.append(status)
        raise _Left

    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(atexit, "_ncallbacks", lambda: 0)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    return taken


@pytest.mark.parametrize("status", [0, 1, 2])
def test_leave_ends_at_once_with_the_status_when_nothing_is_left_to_clean_up(
    exits: list[int], status: int
) -> None:
    from prefixexec.cli import leave

    with pytest.raises(_Left):
        leave(status)
    assert exits == [status]


def test_leave_exits_as_usual_when_an_exit_callback_or_a_thread_is_left(
    exits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    import atexit
    import threading

    from prefixexec.cli import leave

    monkeypatch.setattr(atexit, "_ncallbacks", lambda: 1)
    with pytest.raises(SystemExit) as ended:
        leave(2)
    assert ended.value.code == 2
    monkeypatch.setattr(atexit, "_ncallbacks", lambda: 0)
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    with pytest.raises(SystemExit) as ended:
        leave(1)
    assert ended.value.code == 1
    monkeypatch.delattr(atexit, "_ncallbacks")  # not CPython: no way to know, so the usual exit
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    with pytest.raises(SystemExit) as ended:
        leave(0)
    assert ended.value.code == 0
    assert exits == []


def test_leave_exits_as_usual_when_standard_output_cannot_be_flushed(
    exits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefixexec.cli import leave

    class Broken:
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Broken())
    with pytest.raises(SystemExit) as ended:
        leave(0)
    assert ended.value.code == 141  # HOSTILE-PIPE: a closed standard output, whatever the command
    assert exits == []


#: A script that runs the command line as the console script does, with an object whose
#: finalizer reports the interpreter's teardown, and optionally an exit callback.
RUN = (
    "import sys\n"
    "class Witness:\n"
    "    def __del__(self):\n"
    "        sys.stderr.write('teardown\\n')\n"
    "witness = Witness()\n"
    "{callback}"
    "from prefixexec.cli import run\n"
    "sys.argv = ['prefixexec'] + {argv!r}\n"
    "run()\n"
)


def _run(argv: list[str], callback: str = "") -> subprocess.CompletedProcess[str]:
    code = RUN.format(argv=argv, callback=callback)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_the_console_script_skips_the_teardown_and_keeps_all_its_output(tmp_path: Path) -> None:
    # Many conditions, so that the JSON document is far larger than a pipe's buffer: all of it
    # arrives although the process ends without Python's teardown (the witness is not finalized).
    path = tmp_path / "many.jsonl"
    lines = [
        f'{{"dataset": "d", "task_id": "t{i % 7}", "model": "m{i}", "method": "x", "success": false, '
        f'"outcome": {{"T": 3, "fed": {1 + i % 3}, "label": "schema"}}}}\n'
        for i in range(400)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    done = _run(["score", "--json", "--bootstrap", "0", str(path)])
    assert done.returncode == 0, done.stderr
    assert "teardown" not in done.stderr
    assert len(done.stdout) > 1 << 17
    document = json.loads(done.stdout)
    assert len(document["conditions"]) == 400


def test_the_console_script_keeps_the_status_and_message_of_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"dataset": "d"}\n', encoding="utf-8")
    done = _run(["score", "--bootstrap", "0", str(path)])
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"prefixexec: error: {path}:1: ")
    assert "teardown" not in done.stderr


def test_the_console_script_runs_exit_callbacks_and_the_teardown_when_some_are_registered(
    tmp_path: Path,
) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(
        '{"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": true, '
        '"outcome": {"T": 2, "fed": 3}}\n',
        encoding="utf-8",
    )
    callback = "import atexit\natexit.register(lambda: sys.stderr.write('callback\\n'))\n"
    done = _run(["score", "--bootstrap", "0", str(path)], callback)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("d / m\n")
    assert "callback\n" in done.stderr
    assert "teardown\n" in done.stderr
