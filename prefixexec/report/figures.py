"""The report's figures: PEC curves and first-failure labels (spec: REP-PEC-FIG, REP-LABELS).

Figures are built as :class:`matplotlib.figure.Figure` objects without pyplot (no global state,
no display needed) and rendered to bytes with :func:`render`. Output is reproducible: the SVG
carries no date and a fixed id salt, the PNG no software stamp, and the fonts are matplotlib's
bundled DejaVu.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Sequence

import matplotlib as mpl
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from prefixexec.kernel import LABEL_KEYS

from .model import LABEL_TITLES, Block, Report, pec_at, pec_interval

#: Panels per figure row.
COLUMNS = 3
#: Size of one panel in inches.
PANEL = (5.0, 3.6)
#: Label colours (colour-blind safe, Okabe-Ito), in LABEL_KEYS order.
LABEL_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#999999")


def _grid(n: int) -> tuple[int, int]:
    cols = min(COLUMNS, max(n, 1))
    return math.ceil(max(n, 1) / cols), cols


def block_depth(block: Block, max_depth: int | None) -> int:
    """The deepest k drawn in a panel: the block's longest horizon, capped by ``--max-depth``."""
    K = max(len(row.metrics.PEC) for row in block.rows)
    return K if max_depth is None else min(K, max_depth)


def method_colours(report: Report) -> dict[str, str]:
    """One colour per method name, the same in every panel (matplotlib's cycle, by sorted name)."""
    methods = sorted({row.key.method for row in report.rows})
    return {m: f"C{i % 10}" for i, m in enumerate(methods)}


def _suptitle(fig: Figure, title: str, note: str | None) -> None:
    text = title
    if note:
        width = max(40, int(fig.get_figwidth() * 13))
        text += "\n" + textwrap.fill(note, width)
    fig.suptitle(text, fontsize=9)


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def pec_figure(report: Report) -> Figure:
    """REP-PEC-FIG: fixed-cohort PEC(k) against k, one panel per dataset x model.

    One line per method (markers at integer k), its percentile interval as a band, and with
    ``eligible`` a dashed line of PEC_elig(k) in the same colour (gaps where n_k = 0). Beyond a
    condition's longest horizon PEC(k) = 0 (INV-PEC-ZERO) and is drawn so.
    """
    n = len(report.blocks)
    rows, cols = _grid(n)
    fig = _figure(PANEL[0] * cols, PANEL[1] * rows + (0.8 if report.options.note else 0.3))
    axes = fig.subplots(rows, cols, squeeze=False)
    colours = method_colours(report)
    for index, block in enumerate(report.blocks):
        ax = axes[index // cols][index % cols]
        K = block_depth(block, report.options.max_depth)
        ks = list(range(1, K + 1))
        for row in block.rows:
            colour = colours[row.key.method]
            values = [float(pec_at(row.metrics, k)) for k in ks]
            ax.plot(ks, values, marker="o", markersize=3, color=colour, label=row.key.method)
            if row.result.intervals is not None:
                bands = [pec_interval(row, k) for k in ks]
                lows = [b[0] if b is not None else math.nan for b in bands]
                highs = [b[1] if b is not None else math.nan for b in bands]
                ax.fill_between(ks, lows, highs, color=colour, alpha=0.15, linewidth=0)
            if report.options.eligible:
                elig = [
                    float(v)
                    if k <= len(row.metrics.PEC_elig) and (v := row.metrics.PEC_elig[k - 1]) is not None
                    else math.nan
                    for k in ks
                ]
                ax.plot(
                    ks, elig, linestyle="--", color=colour, linewidth=1, label=f"{row.key.method} (PEC_elig)"
                )
        ax.set_title(block.name, fontsize=9)
        ax.set_xlabel("depth k")
        ax.set_ylabel("PEC(k)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlim(0.5, K + 0.5)
        if K <= 20:
            ax.set_xticks(ks)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    for index in range(n, rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    _suptitle(fig, "Prefix executability curves (fixed cohort, Eq. 4)", report.options.note)
    return fig


def labels_figure(report: Report) -> Figure:
    """REP-LABELS: one panel per dataset x model, one stacked bar of label counts per method."""
    n = len(report.blocks)
    rows, cols = _grid(n)
    fig = _figure((PANEL[0] + 1.5) * cols, PANEL[1] * rows + (0.8 if report.options.note else 0.3))
    axes = fig.subplots(rows, cols, squeeze=False)
    for index, block in enumerate(report.blocks):
        ax = axes[index // cols][index % cols]
        methods = [row.key.method for row in block.rows]
        y = list(range(len(methods)))
        left = [0] * len(methods)
        for key, colour in zip(LABEL_KEYS, LABEL_COLOURS, strict=True):
            counts = [row.metrics.label_counts[key] for row in block.rows]
            ax.barh(y, counts, left=left, color=colour, label=LABEL_TITLES[key], height=0.6)
            left = [a + b for a, b in zip(left, counts, strict=True)]
        ax.set_yticks(y, methods, fontsize=8)
        ax.invert_yaxis()
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("failing rollouts (RR-Eligible)")
        ax.set_title(block.name, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    for index in range(n, rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    _suptitle(fig, "First-failure labels", report.options.note)
    return fig


def render(fig: Figure, fmt: str) -> bytes:
    """The figure as ``png`` (150 dpi) or ``svg`` bytes, reproducibly."""
    buffer = io.BytesIO()
    metadata: dict[str, str | None] = {"Date": None} if fmt == "svg" else {"Software": None}
    with mpl.rc_context({"svg.hashsalt": "prefixexec", "svg.fonttype": "path"}):
        fig.savefig(buffer, format=fmt, dpi=150, metadata=metadata)
    return buffer.getvalue()


def panel_titles(fig: Figure) -> Sequence[str]:
    """The titles of the visible panels (for tests and the HTML alt text)."""
    return [ax.get_title() for ax in fig.axes if ax.get_visible()]
