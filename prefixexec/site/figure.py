"""A system page's curves (SITE-PAGES): PEC(k) over depth k, pass^k and TER^k over k.

Left panel: the system's fixed-cohort PEC(k) (EQ-4, CONV-PEC-RANGE) from its rollouts, at every
depth up to its longest rollout. Right panel: the leaderboard's pass^k, pass@k, TER^k and TER@k
curves of the system (LB-JSON ``curves``), at k = 1 up to its largest allowed k. No text from the
input is drawn (the page names the system), so no name can overlap the panels (FIG-NO-OVERLAP).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from prefixexec.kernel import Rollout
from prefixexec.kernel.estimators import pec_curve
from prefixexec.report.figures import METHOD_COLOURS

#: The right panel's curves, in legend order, with their printed names.
CURVES: tuple[tuple[str, str], ...] = (
    ("pass_hat_k", "pass^k"),
    ("pass_at_k", "pass@k"),
    ("ter_hat_k", "TER^k"),
    ("ter_at_k", "TER@k"),
)


def system_curves(entry: Mapping[str, Any], k: int, rollouts: Sequence[Rollout] | None) -> Figure:
    """The two panels of one system's page (``entry``: one system of an LB-JSON dataset)."""
    # Fixed margins, not a layout engine: the labels are fixed strings and the ticks numbers, so
    # one layout fits every system, and a site draws one figure per system (a constrained layout
    # was half of a figure's time).
    fig = Figure(figsize=(7.0, 2.9))
    fig.subplots_adjust(left=0.075, right=0.985, bottom=0.16, top=0.9, wspace=0.25)
    left, right = fig.subplots(1, 2)
    if rollouts:
        T = np.array([r.outcome.T for r in rollouts], dtype=np.int64)
        fed = np.array([r.outcome.fed for r in rollouts], dtype=np.int64)
        values = [float(v) for v in pec_curve(T, fed)]
        ks = list(range(1, len(values) + 1))
        left.step(ks, values, where="post", color=METHOD_COLOURS[0], linewidth=1.2)
        left.set_xlim(0.5, max(len(values), 1) + 0.5)
    else:
        left.text(
            0.5, 0.5, "no rollouts given", ha="center", va="center", fontsize=8, transform=left.transAxes
        )
    left.set_ylim(-0.02, 1.02)
    left.set_xlabel("depth k", fontsize=8)
    left.set_ylabel("PEC(k)", fontsize=8)
    left.set_title("prefix executability", fontsize=8)
    for i, (key, name) in enumerate(CURVES):
        points = entry.get("curves", {}).get(key) or []
        xs = [p["k"] for p in points if p["value"] is not None]
        ys = [p["value"] for p in points if p["value"] is not None]
        if xs:
            right.plot(
                xs,
                ys,
                marker="o",
                markersize=3,
                linewidth=1.0,
                linestyle="-" if "hat" in key else ":",
                color=METHOD_COLOURS[i % len(METHOD_COLOURS)],
                label=name,
            )
    right.axvline(k, color="#999999", linewidth=0.6, linestyle="--")
    most = max((len(entry.get("curves", {}).get(key) or []) for key, _ in CURVES), default=1)
    right.set_xlim(0.5, max(most, 1) + 0.5)
    right.set_ylim(-0.02, 1.02)
    right.set_xlabel("k (trials)", fontsize=8)
    right.set_ylabel("share of tasks", fontsize=8)
    right.set_title(f"pass^k and TER^k (dashed line: k = {k})", fontsize=8)
    if right.get_lines()[:-1]:
        right.legend(fontsize=6.5, loc="best", frameon=False)
    for ax in (left, right):
        ax.tick_params(labelsize=7)
        ax.grid(linewidth=0.3, color="#dddddd")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    return fig


def svg_bytes(fig: Figure) -> bytes:
    """A system's figure as SVG for its page (SITE-STATIC): fixed ids, no date, and its text as
    SVG text (the face it was laid out in, DejaVu Sans, or the browser's), not glyph paths. The
    report's figures embed glyphs so that a file looks the same anywhere; a page's figure is read
    in the browser that shows the page, and glyph paths were 40% of a site's drawing time
    (benchmarks/leaderboard_submissions.py)."""
    import io

    import matplotlib as mpl

    buffer = io.BytesIO()
    with mpl.rc_context({"svg.hashsalt": "prefixexec", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
