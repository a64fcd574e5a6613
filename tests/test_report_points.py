"""The report's figures draw a bounded number of points whatever the horizon (issue 40,
spec/report.md REP-FIG-POINTS, spec/hostile.md HOSTILE-HORIZON): 12,000 distinct horizons took
minutes of matplotlib. Counted on the figure objects (points per line and band, ticks), not timed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from prefixexec import read_records
from prefixexec.inference import evaluate
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.report import ReportOptions, build_report
from prefixexec.report.figures import MAX_DRAWN_DEPTHS, drawn_depths, elig_figure, pec_figure
from prefixexec.report.model import pec_at

#: Distinct horizons 1..K over 10 tasks (10 x 3,000 histogram cells: within HOSTILE-CELLS).
K = 3000


def long_horizons(path: Path) -> Path:
    r = random.Random(40)
    with path.open("w", encoding="utf-8") as f:
        for method in ("x", "y"):
            for T in range(1, K + 1):
                line = {"dataset": "d", "task_id": f"t{T % 10}", "model": "m", "method": method,
                        "trial": T // 10, "success": r.random() < 0.5,
                        "outcome": {"T": T, "fed": r.randint(1, T + 1)}}  # fmt: skip
                f.write(json.dumps(line) + "\n")
    return path


def points(fig: Figure) -> tuple[list[int], list[int], int]:
    """Points of every line, vertices of every band, and the most tick labels on one axis."""
    lines = [len(a.get_xdata()) for ax in fig.axes for a in ax.get_children() if isinstance(a, Line2D)]
    bands = [
        sum(len(p.vertices) for p in c.get_paths())
        for ax in fig.axes
        for c in ax.collections
        if isinstance(c, PolyCollection)
    ]
    ticks = max(max(len(ax.get_xticks()), len(ax.get_yticks())) for ax in fig.axes)
    return lines, bands, ticks


@pytest.mark.spec("REP-FIG-POINTS", "HOSTILE-HORIZON", "REP-PEC-FIG", "REP-ELIG-FIG")
def test_three_thousand_horizons_draw_at_most_400_depths(tmp_path: Path) -> None:
    rollouts = read_records([str(long_horizons(tmp_path / "r.jsonl"))])
    results = evaluate(rollouts, BootstrapSettings(B=20, seed=1))
    report = build_report(rollouts, results, "sig", ReportOptions(eligible=True), (20, 1, 0.95))
    assert max(len(r.metrics.PEC) for b in report.blocks for r in b.rows) == K
    depths = drawn_depths(K)
    assert len(depths) == MAX_DRAWN_DEPTHS and depths[0] == 1 and depths[-1] == K
    assert depths == sorted(set(depths))
    for fig in (pec_figure(report), elig_figure(report)):
        lines, bands, ticks = points(fig)
        assert lines and max(lines) <= MAX_DRAWN_DEPTHS  # before: 3,000 points a line
        assert bands and max(bands) <= 2 * MAX_DRAWN_DEPTHS + 3  # fill_between: both edges, closed
        assert ticks <= 12
    # The drawn points are the exact values at the drawn depths.
    fig = pec_figure(report)
    row = report.blocks[0].rows[0]
    (line,) = [a for a in fig.axes[0].get_lines() if a.get_label() == "x"]
    assert list(line.get_xdata()) == depths
    assert np.array_equal(line.get_ydata(), [float(pec_at(row.metrics, k)) for k in depths])


@pytest.mark.spec("REP-FIG-POINTS")
def test_short_curves_draw_every_depth() -> None:
    assert drawn_depths(1) == [1]
    assert drawn_depths(MAX_DRAWN_DEPTHS) == list(range(1, MAX_DRAWN_DEPTHS + 1))
    assert len(drawn_depths(MAX_DRAWN_DEPTHS + 1)) == MAX_DRAWN_DEPTHS
