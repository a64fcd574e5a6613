"""The Python API in a notebook, executed in a fresh kernel with nbclient (API-NOTEBOOK, API-DISPLAY).

examples/api.ipynb (written by tests/make_example_notebook.py, kept without outputs) calls every
public command function on real runs; executed here, every code cell that ends in a result
shows it as HTML (a table: ``<table``) or as a PNG (a figure), without ``%matplotlib inline``,
and no cell raises. Every public function of ``prefixexec.__all__`` that returns a result
(``Scores``, ``Result``, ``ReportResult``) is called in it and shown as a table, and each that
has figures (``ReportResult.figure``) shows one.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from make_example_notebook import notebook
from nbclient import NotebookClient

from conftest import REPO

NOTEBOOK = REPO / "examples" / "api.ipynb"


@pytest.mark.spec("API-NOTEBOOK")
def test_the_kept_notebook_is_the_generated_one() -> None:
    assert json.loads(NOTEBOOK.read_text(encoding="utf-8")) == json.loads(json.dumps(notebook()))


@pytest.mark.spec("API-NOTEBOOK", "API-DISPLAY")
def test_every_function_shows_a_table_or_a_figure(tmp_path: Path) -> None:
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    assert not any("%matplotlib" in c.source for c in nb.cells if c.cell_type == "code")
    where = {"metadata": {"path": str(REPO)}}
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources=where)
    client.execute()
    shown: dict[str, set[str]] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
        last = cell.source.splitlines()[-1]
        if last.startswith(("import", "while", "    ")):
            continue
        kinds = {k for o in cell.outputs if o.output_type == "execute_result" for k in o.get("data", {})}
        shown[last] = kinds
        if "figure(" in last:
            assert "image/png" in kinds, (last, kinds)  # not a bare "<Figure size ...>"
        else:
            html = next(o.data["text/html"] for o in cell.outputs if "text/html" in o.get("data", {}))
            assert "<table" in html or "<iframe" in html, last
    for name in ("scores", "board", "cmp", "why", "sub", "bfcl", "drawn", "rows"):
        assert name in shown and "text/html" in shown[name], name
    _every_public_function_shows_its_tables_and_figures(nb)


#: What a public function returns when it gives a result a notebook shows (API-INTERFACE).
RESULTS = ("Scores", "Result", "ReportResult")


def public_result_functions() -> dict[str, str]:
    """The functions of ``prefixexec.__all__`` that return a result -> the result's class name
    (``prefixexec.explain`` and the other callable modules: their function in prefixexec.calls)."""
    import prefixexec
    import prefixexec.calls
    from prefixexec._callable import CommandModule

    found = {}
    for name in prefixexec.__all__:
        value = getattr(prefixexec, name)
        if isinstance(value, CommandModule):
            value = getattr(prefixexec.calls, name)
        if inspect.isfunction(value):
            returns = str(inspect.signature(value).return_annotation)
            if returns in RESULTS:
                found[name] = returns
    return found


def _every_public_function_shows_its_tables_and_figures(nb: Any) -> None:
    """API-NOTEBOOK on the executed notebook: each public result function is called into a
    variable (``x = prefixexec.NAME(...)``); a cell ending in that variable (or a table of it,
    ``x.to_pandas(...)``) shows an HTML table, and for a ``ReportResult`` a cell ending in
    ``x.figure(...)`` shows a PNG."""
    functions = public_result_functions()
    # Every command's function at least (a name the scan cannot miss for a typo in RESULTS).
    assert {"score", "leaderboard", "compare", "explain", "crosscheck", "report", "demo"} <= set(functions)
    assert {"sample", "convert", "audit", "audit_table", "conformance"} <= set(functions)
    called: dict[str, str] = {}  # variable -> function
    tables: set[str] = set()
    figures: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for variable, function in re.findall(r"^(\w+) = prefixexec\.(\w+)\(", cell.source, re.M):
            called[variable] = function
        last = cell.source.splitlines()[-1]
        data = [o.get("data", {}) for o in cell.outputs if o.output_type == "execute_result"]
        html = "".join(d.get("text/html", "") for d in data)
        variable = re.match(r"(\w+)", last)
        if variable is None:
            continue
        if re.fullmatch(r"\w+(\.to_pandas\([^)]*\))?", last) and "<table" in html:
            tables.add(variable.group(1))
        if re.fullmatch(r"\w+\.figure\([^)]*\)", last) and any("image/png" in d for d in data):
            figures.add(variable.group(1))
    for function, returns in functions.items():
        variables = [v for v, f in called.items() if f == function]
        assert variables, f"prefixexec.{function} is not called in {NOTEBOOK.name}"
        assert any(v in tables for v in variables), f"no table of prefixexec.{function} is shown"
        if returns == "ReportResult":
            assert any(v in figures for v in variables), f"no figure of prefixexec.{function} is shown"


@pytest.mark.spec("API-NOTEBOOK")
def test_the_notebook_calls_every_public_result_function() -> None:
    # Without executing it: each function is called into a variable the notebook then shows.
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for function in public_result_functions():
        assert re.search(rf"^\w+ = prefixexec\.{function}\(", sources, re.M), function
