"""The Python API in a notebook, executed in a fresh kernel with nbclient (API-NOTEBOOK, API-DISPLAY).

examples/api.ipynb (written by tests/make_example_notebook.py, kept without outputs) calls every
public command function on real runs; executed here, every code cell that ends in a result
shows it as HTML (a table: ``<table``) or as a PNG (a figure), without ``%matplotlib inline``,
and no cell raises.
"""

from __future__ import annotations

import json
from pathlib import Path

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
