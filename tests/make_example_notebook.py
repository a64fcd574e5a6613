"""Write examples/api.ipynb, the Python API tried in a notebook (API-NOTEBOOK).

Run from the checkout's root: ``python tests/make_example_notebook.py``. The notebook is kept
without outputs; tests/test_notebook.py executes it in a fresh kernel with nbclient and checks
that every public function that returns a result shows a table, and a figure where it has one.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AIRLINE = "tests/data/real/tau-bench-v1/gpt-4o-airline.json"
SUBMISSION = "tests/data/real/tau2-leaderboard/gpt-oss-120b_openai.submission.json"
RETAIL = "tests/data/real/tau2-leaderboard/gpt-4.1_retail_defautl_gpt-4.1_1trials.json.zst"
BFCL = "tests/data/real/bfcl-v4/deepseek-v3.1-terminus-FC"

CELLS: list[tuple[str, str]] = [
    ("markdown", "# prefixexec in a notebook\n\nEvery public function, shown as a table or a figure "
     "(no `%matplotlib inline`: figures show themselves). Run from the checkout's root."),
    ("code", "import os, pathlib\nwhile not pathlib.Path('pyproject.toml').exists():\n    os.chdir('..')\n"
     "import prefixexec"),
    ("markdown", "## score: the conditions of a run (200 tau-bench rollouts)"),
    ("code", f"scores = prefixexec.score({AIRLINE!r}, bootstrap=500)\nscores"),
    ("code", "scores.to_pandas()"),
    ("code", "scores.to_pandas('pec').head()"),
    ("markdown", "## leaderboard: one row per system"),
    ("code", f"board = prefixexec.leaderboard({AIRLINE!r}, bootstrap=500)\nboard"),
    ("code", "board.to_pandas()"),
    ("markdown", "## compare: paired differences against a baseline"),
    ("code", "cmp = prefixexec.compare('examples/demo.jsonl', baseline='react', bootstrap=500)\ncmp"),
    ("code", "cmp.to_pandas()"),
    ("markdown", "## explain: which call failed (task 20, as `--task 20`)"),
    ("code", f"why = prefixexec.explain({AIRLINE!r}, task=20)\nwhy"),
    ("code", "why.to_pandas()"),
    ("markdown", "## crosscheck: a tau2 leaderboard submission and a BFCL score file"),
    ("code", f"sub = prefixexec.crosscheck({SUBMISSION!r}, [{RETAIL!r}])\nsub"),
    ("code", "sub.to_pandas()"),
    ("code", f"bfcl = prefixexec.crosscheck({BFCL + '/BFCL_v4_multi_turn_base_score.json'!r}, "
     f"[{BFCL + '/BFCL_v4_multi_turn_base_result.json'!r}], adapter='bfcl')\nbfcl"),
    ("code", "bfcl.to_pandas()"),
    ("markdown", "## report: the tables and figures of a report, in memory"),
    ("code", "rep = prefixexec.report('examples/demo.jsonl', bootstrap=200)\nrep.to_pandas()"),
    ("code", "rep.figure('pec')"),
    ("code", "rep.figure('labels')"),
    ("markdown", "## demo: the paper's worked example"),
    ("code", "demo = prefixexec.demo(bootstrap=200)\ndemo.figure('pec_elig')"),
    ("code", "demo.to_pandas()"),
    ("markdown", "## sample: the paper's stratified task sample"),
    ("code", f"drawn = prefixexec.sample({AIRLINE!r}, seed=1, size=10)\ndrawn"),
    ("markdown", "## convert: rollouts as records"),
    ("code", f"rows = prefixexec.convert({AIRLINE!r}, '/tmp/prefixexec-notebook-rollouts.jsonl')\nrows"),
    ("markdown", "## audit: an adapter's semantics against gold trajectories and mutants of them"),
    ("code", f"aud = prefixexec.audit('taubench', [{AIRLINE!r}])\naud"),
    ("code", "aud.to_pandas('checks')"),
    ("markdown", "## audit_table: could integer counts produce a reported (rounded) table?"),
    ("code", "tab = prefixexec.audit_table('tests/data/paper_table2.csv')\ntab"),
    ("markdown", "## conformance: an implementation (here this one) on the conformance vectors"),
    ("code", "import sys\nother = f'{sys.executable} -m prefixexec score --json --bootstrap 0 -'\n"
     "conf = prefixexec.conformance(other)\nconf"),
]


def notebook() -> dict[str, object]:
    cells = []
    for i, (kind, text) in enumerate(CELLS):
        cell: dict[str, object] = {"cell_type": kind, "id": f"cell-{i}", "metadata": {}, "source": text}
        if kind == "code":
            cell |= {"execution_count": None, "outputs": []}
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def main() -> None:
    text = json.dumps(notebook(), indent=1, ensure_ascii=False) + "\n"
    (ROOT / "examples" / "api.ipynb").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
