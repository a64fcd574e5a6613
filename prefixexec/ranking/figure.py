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
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import Bbox

from prefixexec.report import figures as report_figures
from prefixexec.report.figures import (
    FIGURE_FORMATS,
    METHOD_COLOURS,
    METHOD_MARKERS,
    _shown,  # names from the input, escaped (HOSTILE-CONTROL)
    panel_title,
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
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(TITLES[x_metric], fontsize=8)
    ax.set_ylabel("success", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(linewidth=0.3, color="#dddddd")
    title = panel_title(f"{_shown(dataset)}: success vs {TITLES[x_metric]}", PANEL[0] - 0.3)
    ax.set_title(title, fontsize=8)


#: Distances (points) at which a rank label is tried around its point, nearest first, and the
#: distance from which a thin line joins the label to its point (LB-FIGURE, FIG-NO-OVERLAP).
RINGS: tuple[float, ...] = (4.5, 8.0, 13.0, 19.0, 26.0, 34.0, 44.0)
LEADER_FROM = 13.0
#: Directions tried on each ring: upper right first, then the other diagonals, then the axes.
DIRECTIONS: tuple[tuple[float, float], ...] = (
    (1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (0, 1), (-1, 0), (0, -1),
)  # fmt: skip
#: Half the side of a point's marker box, in points (markersize 5 and its edge).
MARKER_HALF = 3.5


def _overlaps(a: Bbox, b: Bbox) -> bool:
    return bool(a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1)


def _label_points(fig: Figure, ax: Axes, systems: Sequence[Mapping[str, Any]], x_metric: str) -> int:
    """Number each system's point (its row of the table) where the number lies on no other number,
    on no point's marker and inside the panel's frame: the nearest free place on rings around the
    point, joined to it by a thin line when it is far (FIG-NO-OVERLAP). A number with no free place
    is left out (its point keeps the colour and marker of its legend entry); returns how many."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # the Agg canvas of the figure
    frame = ax.get_window_extent(renderer).padded(-1.0)
    scale = fig.dpi / 72.0
    points = [
        (i, s["metrics"][x_metric]["value"], s["metrics"]["success"]["value"]) for i, s in enumerate(systems)
    ]
    points = [(i, x, y) for i, x, y in points if x is not None and y is not None]
    half = MARKER_HALF * scale
    markers = []
    for _, x, y in points:
        px, py = ax.transData.transform((x, y))
        markers.append(Bbox.from_extents(px - half, py - half, px + half, py + half))
    placed: list[Bbox] = []
    left_out = 0
    for i, x, y in points:
        colour = _style(i)[0]
        chosen = None
        for r in RINGS:
            for dx, dy in DIRECTIONS:
                norm = math.hypot(dx, dy)
                offset = (r * dx / norm, r * dy / norm)
                ha = "left" if dx > 0 else "right" if dx < 0 else "center"
                va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
                text = ax.annotate(
                    str(i + 1), (x, y), textcoords="offset points", xytext=offset, fontsize=7,
                    color=colour, ha=ha, va=va,
                )  # fmt: skip
                box = text.get_window_extent(renderer)
                text.remove()
                inside = frame.x0 <= box.x0 <= box.x1 <= frame.x1 and frame.y0 <= box.y0 <= box.y1 <= frame.y1
                if inside and not any(_overlaps(box, other) for other in (*placed, *markers)):
                    chosen = (offset, ha, va, r, box)
                    break
            if chosen is not None:
                break
        if chosen is None:
            left_out += 1
            continue
        offset, ha, va, r, box = chosen
        ax.annotate(
            str(i + 1), (x, y), textcoords="offset points", xytext=offset, fontsize=7, color=colour,
            ha=ha, va=va,
        )  # fmt: skip
        if r >= LEADER_FROM:  # a thin line from the marker's edge to the label (not part of its text)
            px, py = ax.transData.transform((x, y))
            ux, uy = offset[0] / r, offset[1] / r
            ends = [(px + ux * d * scale, py + uy * d * scale) for d in (MARKER_HALF + 0.5, r - 1.0)]
            (x0, y0), (x1, y1) = ax.transData.inverted().transform(ends)
            ax.plot([x0, x1], [y0, y1], color=colour, linewidth=0.4, zorder=1)
        placed.append(box)
    return left_out


def leaderboard_figure(document: Mapping[str, Any]) -> Figure:
    """LB-FIGURE: two panels per dataset, numbered points, a legend of the systems."""
    datasets = document["datasets"]
    if not datasets:  # the report's leaderboard when no dataset could be ranked (LB-REPORT)
        fig = Figure(figsize=(2 * PANEL[0], 1.0), layout="constrained")
        fig.text(0.5, 0.5, "no dataset has systems that share a task", ha="center", va="center", fontsize=8)
        return fig
    most = max(len(ds["systems"]) for ds in datasets)
    legend_rows = math.ceil(most / 2)
    height = (PANEL[1] + 0.18 * (legend_rows + 1) + 0.25) * len(datasets) + 0.1  # + the note, the titles
    fig = Figure(figsize=(2 * PANEL[0], height), layout="constrained")
    grid = fig.subfigures(len(datasets), 1, squeeze=False)
    boot = document["settings"]["bootstrap"]
    note = (
        f"bars: {document['settings']['level']:g} task-bootstrap intervals (B = {boot})" if boot else ""
    )
    for row, ds in zip(grid[:, 0], datasets, strict=True):
        axes = row.subplots(1, 2, squeeze=False)[0]
        for ax, metric in zip(axes, X_METRICS, strict=True):
            _panel(ax, ds["systems"], metric, ds["dataset"])
        handles = [
            Line2D([], [], linestyle="", marker=_style(i)[1], color=_style(i)[0], markersize=5)
            for i in range(len(ds["systems"]))
        ]
        names = [f"{i + 1}  {_shown(s['system'])}" for i, s in enumerate(ds["systems"])]
        # The bars note heads the legend (a figure title over the subfigures lay on the panel
        # titles: issue 37).
        row.legend(
            handles, names, loc="outside lower center", ncols=2, fontsize=6.5, frameon=False,
            title=note or None, title_fontsize=6.5,
        )  # fmt: skip
    # The rank labels are placed once the layout is settled (it does not move them: each lies
    # inside its panel), measured with the figure's own renderer.
    FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    for row, ds in zip(grid[:, 0], datasets, strict=True):
        for ax, metric in zip(row.axes, X_METRICS, strict=True):
            _label_points(fig, ax, ds["systems"], metric)
    return fig


def figure_bytes(document: Mapping[str, Any], fmt: str) -> bytes:
    """The figure as ``png``, ``svg`` or ``pdf`` bytes (REP-FIG-FILES)."""
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"figure format must be one of {', '.join(FIGURE_FORMATS)}: {fmt!r}")
    return report_figures.render(leaderboard_figure(document), fmt)
