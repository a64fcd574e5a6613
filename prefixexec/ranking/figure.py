"""The leaderboard figure: success against TER and against AUC-PEC (spec: LB-FIGURE).

One row of two panels per dataset; each system is one point at (TER, success) and (AUC-PEC,
success) with both intervals as error bars, numbered by its place in the table (best success
first) and named in the legend under the panels, so that names never overlap the points. The
dashed diagonal is success = TER: a system above it succeeds more often than its trajectories
stay executable (successes after a first failure, RR). Built without pyplot and rendered with the
report's reproducible :func:`~prefixexec.report.figures.render`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from prefixexec.report import figures as report_figures
from prefixexec.report.figures import (
    FIGURE_FORMATS,
    METHOD_COLOURS,
    METHOD_MARKERS,
    _shown,  # names from the input, escaped (HOSTILE-CONTROL)
)

from .core import TITLES

#: The x-axis metrics of the two panels.
X_METRICS: tuple[str, ...] = ("TER", "AUC_PEC")
#: Size of one panel in inches (two panels fit a paper's full text width).
PANEL = (3.4, 3.1)


def _err(value: float, ci: Sequence[float] | None) -> tuple[float, float]:
    return (0.0, 0.0) if ci is None else (max(0.0, value - ci[0]), max(0.0, ci[1] - value))


def _style(i: int) -> tuple[str, str]:
    return METHOD_COLOURS[i % len(METHOD_COLOURS)], METHOD_MARKERS[
        (i // len(METHOD_COLOURS)) % len(METHOD_MARKERS)
    ]


def _panel(ax: Axes, systems: Sequence[Mapping[str, Any]], x_metric: str, dataset: str) -> None:
    ax.plot([0, 1], [0, 1], linestyle="--", linewidth=0.7, color="#999999", zorder=0)
    for i, s in enumerate(systems):
        x, y = s["metrics"][x_metric], s["metrics"]["success"]
        if x["value"] is None or y["value"] is None:
            continue
        colour, marker = _style(i)
        xerr, yerr = _err(x["value"], x.get("ci")), _err(y["value"], y.get("ci"))
        ax.errorbar(
            x["value"],
            y["value"],
            xerr=[[xerr[0]], [xerr[1]]],
            yerr=[[yerr[0]], [yerr[1]]],
            fmt=marker,
            color=colour,
            markersize=5,
            elinewidth=0.8,
            capsize=2,
        )
        ax.annotate(
            str(i + 1),
            (x["value"], y["value"]),
            textcoords="offset points",
            xytext=(4, 3),
            fontsize=7,
            color=colour,
        )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(TITLES[x_metric], fontsize=8)
    ax.set_ylabel("success", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(linewidth=0.3, color="#dddddd")
    ax.set_title(f"{_shown(dataset)}: success vs {TITLES[x_metric]}", fontsize=8)


def leaderboard_figure(document: Mapping[str, Any]) -> Figure:
    """LB-FIGURE: two panels per dataset, numbered points, a legend of the systems."""
    datasets = document["datasets"]
    if not datasets:  # the report's leaderboard when no dataset could be ranked (LB-REPORT)
        fig = Figure(figsize=(2 * PANEL[0], 1.0), layout="constrained")
        fig.text(0.5, 0.5, "no dataset has systems that share a task", ha="center", va="center", fontsize=8)
        return fig
    most = max(len(ds["systems"]) for ds in datasets)
    legend_rows = math.ceil(most / 2)
    height = PANEL[1] * len(datasets) + 0.18 * legend_rows * len(datasets) + 0.3
    fig = Figure(figsize=(2 * PANEL[0], height), layout="constrained")
    grid = fig.subfigures(len(datasets), 1, squeeze=False)
    for row, ds in zip(grid[:, 0], datasets, strict=True):
        axes = row.subplots(1, 2, squeeze=False)[0]
        for ax, metric in zip(axes, X_METRICS, strict=True):
            _panel(ax, ds["systems"], metric, ds["dataset"])
        handles = [
            Line2D([], [], linestyle="", marker=_style(i)[1], color=_style(i)[0], markersize=5)
            for i in range(len(ds["systems"]))
        ]
        names = [f"{i + 1}  {_shown(s['system'])}" for i, s in enumerate(ds["systems"])]
        row.legend(handles, names, loc="outside lower center", ncols=2, fontsize=6.5, frameon=False)
    if document["settings"]["bootstrap"]:
        fig.suptitle(
            f"bars: {document['settings']['level']:g} task-bootstrap intervals "
            f"(B = {document['settings']['bootstrap']})",
            fontsize=7,
            color="#444444",
        )
    return fig


def figure_bytes(document: Mapping[str, Any], fmt: str) -> bytes:
    """The figure as ``png``, ``svg`` or ``pdf`` bytes (REP-FIG-FILES)."""
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"figure format must be one of {', '.join(FIGURE_FORMATS)}: {fmt!r}")
    return report_figures.render(leaderboard_figure(document), fmt)
