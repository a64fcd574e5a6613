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
from typing import Any

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from prefixexec.kernel import LABEL_KEYS

from .model import LABEL_TITLES, Block, Report, Row, pec_at, pec_interval

#: Panels per figure row.
COLUMNS = 3
#: Size of one panel in inches.
PANEL = (5.0, 3.6)
#: Label colours (colour-blind safe, Okabe-Ito), in LABEL_KEYS order.
LABEL_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#999999")
#: Method colours: the Okabe-Ito palette (colour-blind safe), then the same colours dashed-dotted.
METHOD_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
#: Marker per method, so that lines stay apart in grey print too.
METHOD_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Raster resolution of the PNG files (dots per inch).
PNG_DPI = 300
#: The formats every figure is written in (REP-FIG-FILES).
FIGURE_FORMATS = ("png", "svg", "pdf")


def _grid(n: int) -> tuple[int, int]:
    cols = min(COLUMNS, max(n, 1))
    return math.ceil(max(n, 1) / cols), cols


def block_depth(block: Block, max_depth: int | None) -> int:
    """The deepest k drawn in a panel: the block's longest horizon, capped by ``--max-depth``."""
    K = max(len(row.metrics.PEC) for row in block.rows)
    return K if max_depth is None else min(K, max_depth)


def _shown(text: str) -> str:
    """A name from the input as a figure shows it: control characters escaped (HOSTILE-CONTROL)
    and ``$`` escaped, so that matplotlib neither draws a missing glyph nor reads math text."""
    from prefixexec.adapters.text import printable

    return printable(text).replace("$", r"\$")


def method_colours(report: Report) -> dict[str, str]:
    """One colour per method name, the same in every panel (Okabe-Ito, by sorted name)."""
    methods = sorted({row.key.method for row in report.rows})
    return {m: METHOD_COLOURS[i % len(METHOD_COLOURS)] for i, m in enumerate(methods)}


def method_markers(report: Report) -> dict[str, str]:
    """One marker per method name, the same in every panel."""
    methods = sorted({row.key.method for row in report.rows})
    return {m: METHOD_MARKERS[i % len(METHOD_MARKERS)] for i, m in enumerate(methods)}


def band_alpha(methods: int) -> float:
    """Opacity of the interval bands: lighter as a panel holds more methods (REP-PEC-FIG)."""
    return max(0.06, min(0.2, 0.3 / math.sqrt(max(methods, 1))))


def _titles(fig: Figure, title: str, note: str | None) -> None:
    """A short title on top; the note (e.g. simulated data) as a footnote under the panels."""
    fig.suptitle(title, fontsize=10)
    if note:
        width = max(40, int(fig.get_figwidth() * 14))
        fig.supxlabel(textwrap.fill(note, width), fontsize=7, color="#444444")


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _band(
    ax: Axes, ks: Sequence[int], bands: Sequence[tuple[float, float] | None], colour: str, alpha: float
) -> None:
    lows = [b[0] if b is not None else math.nan for b in bands]
    highs = [b[1] if b is not None else math.nan for b in bands]
    ax.fill_between(ks, lows, highs, color=colour, alpha=alpha, linewidth=0)


def _elig_values(row: Row, ks: Sequence[int]) -> list[float]:
    return [
        float(v)
        if k <= len(row.metrics.PEC_elig) and (v := row.metrics.PEC_elig[k - 1]) is not None
        else math.nan
        for k in ks
    ]


def pec_figure(report: Report) -> Figure:
    """REP-PEC-FIG: fixed-cohort PEC(k) against k, one panel per dataset x model.

    One line per method (its own colour and marker), its percentile interval as a band (lighter
    with more methods; none with ``--no-bands``), and with ``eligible`` a dashed line of
    PEC_elig(k) in the same colour (gaps where n_k = 0). Beyond a condition's longest horizon
    PEC(k) = 0 (INV-PEC-ZERO) and is drawn so.
    """
    n = len(report.blocks)
    rows, cols = _grid(n)
    fig = _figure(PANEL[0] * cols, PANEL[1] * rows + (0.8 if report.options.note else 0.3))
    axes = fig.subplots(rows, cols, squeeze=False)
    colours, markers = method_colours(report), method_markers(report)
    for index, block in enumerate(report.blocks):
        ax = axes[index // cols][index % cols]
        K = block_depth(block, report.options.max_depth)
        ks = list(range(1, K + 1))
        alpha = band_alpha(len(block.rows))
        for row in block.rows:
            colour = colours[row.key.method]
            values = [float(pec_at(row.metrics, k)) for k in ks]
            ax.plot(
                ks,
                values,
                marker=markers[row.key.method],
                markersize=3,
                color=colour,
                label=_shown(row.key.method),
            )
            if row.result.intervals is not None and report.options.bands:
                _band(ax, ks, [pec_interval(row, k) for k in ks], colour, alpha)
            if report.options.eligible:
                ax.plot(
                    ks,
                    _elig_values(row, ks),
                    linestyle="--",
                    color=colour,
                    linewidth=1,
                    label=_shown(f"{row.key.method} (PEC_elig)"),
                )
        ax.set_title(_shown(block.name), fontsize=9)
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
    _titles(fig, "Prefix executability PEC(k)", report.options.note)
    return fig


def elig_figure(report: Report) -> Figure:
    """REP-ELIG-FIG: PEC_elig(k) with its band, and below it a strip of n_k, per dataset x model.

    The upper axes of a panel draw PEC_elig(k) (Eq. 6) per method with its percentile interval
    (gaps where n_k = 0); the lower axes draw n_k (Eq. 5), the number of rollouts still at depth
    k, as steps in the same colours, so the shrinking denominator is in view.
    """
    n = len(report.blocks)
    rows, cols = _grid(n)
    fig = _figure(PANEL[0] * cols, (PANEL[1] + 1.2) * rows + (0.8 if report.options.note else 0.3))
    subfigures = fig.subfigures(rows, cols, squeeze=False)
    colours, markers = method_colours(report), method_markers(report)
    for index in range(rows * cols):
        sub = subfigures[index // cols][index % cols]
        if index >= n:
            continue
        block = report.blocks[index]
        top, strip = sub.subplots(2, 1, sharex=True, height_ratios=(3, 1))
        K = block_depth(block, report.options.max_depth)
        ks = list(range(1, K + 1))
        alpha = band_alpha(len(block.rows))
        for row in block.rows:
            colour = colours[row.key.method]
            top.plot(
                ks,
                _elig_values(row, ks),
                marker=markers[row.key.method],
                markersize=3,
                color=colour,
                label=_shown(row.key.method),
            )
            ivs = row.result.intervals
            if ivs is not None and report.options.bands:
                bands = [ivs.PEC_elig[k - 1] if k <= len(ivs.PEC_elig) else None for k in ks]
                _band(top, ks, bands, colour, alpha)
            n_k = [row.metrics.n_k[k - 1] if k <= len(row.metrics.n_k) else 0 for k in ks]
            strip.step(ks, n_k, where="mid", color=colour, linewidth=1.2, label=_shown(row.key.method))
        top.set_title(_shown(block.name), fontsize=9)
        top.set_ylabel("PEC_elig(k)")
        top.set_ylim(-0.02, 1.02)
        top.grid(True, alpha=0.3)
        top.legend(fontsize=7, loc="lower left")
        strip.set_ylabel("n_k", fontsize=8)
        strip.set_xlabel("depth k")
        strip.set_xlim(0.5, K + 0.5)
        strip.set_ylim(bottom=0)
        strip.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=3))
        strip.grid(True, alpha=0.3)
        if K <= 20:
            strip.set_xticks(ks)
    _titles(fig, "Eligible-depth curves PEC_elig(k) and n_k", report.options.note)
    return fig


def labels_figure(report: Report) -> Figure:
    """REP-LABELS-FIG: one panel per dataset x model, one stacked bar of first-failure labels per method.

    Counts are printed on the segments; labels with no rollout in the figure are left out of the
    legend; with ``label_shares`` the bars show shares of RR-Eligible instead of counts. The
    x axis leaves room for every bar, and the legend sits under the panels.
    """
    n = len(report.blocks)
    rows, cols = _grid(n)
    fig = _figure((PANEL[0] + 0.5) * cols, PANEL[1] * rows + (1.2 if report.options.note else 0.8))
    axes = fig.subplots(rows, cols, squeeze=False)
    shares = report.options.label_shares
    present = [key for key in LABEL_KEYS if any(row.metrics.label_counts[key] for row in report.rows)]
    handles: dict[str, Any] = {}
    for index, block in enumerate(report.blocks):
        ax = axes[index // cols][index % cols]
        methods = [_shown(row.key.method) for row in block.rows]
        y = list(range(len(methods)))
        left = [0.0] * len(methods)
        for key, colour in zip(LABEL_KEYS, LABEL_COLOURS, strict=True):
            counts = [row.metrics.label_counts[key] for row in block.rows]
            widths = [
                (c / row.metrics.RR_eligible if row.metrics.RR_eligible else 0.0) if shares else float(c)
                for c, row in zip(counts, block.rows, strict=True)
            ]
            bars = ax.barh(y, widths, left=left, color=colour, label=LABEL_TITLES[key], height=0.6)
            texts = [
                (f"{c}" if not shares else f"{c}/{row.metrics.RR_eligible}") if c else ""
                for c, row in zip(counts, block.rows, strict=True)
            ]
            ax.bar_label(bars, labels=texts, label_type="center", fontsize=7, color="white")
            if key in present:
                handles.setdefault(LABEL_TITLES[key], bars)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_yticks(y, methods, fontsize=8)
        ax.invert_yaxis()
        if shares:
            ax.set_xlim(0, 1.0)
            ax.set_xlabel("share of RR-Eligible")
        else:
            ax.set_xlim(0, max([1.0, *left]) * 1.05)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel("failing rollouts (RR-Eligible)")
        ax.set_title(_shown(block.name), fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    for index in range(n, rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    if handles:
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="outside lower center",
            ncol=min(len(handles), 6),
            fontsize=7,
            frameon=False,
        )
    _titles(fig, "First-failure labels", report.options.note)
    return fig


def render(fig: Figure, fmt: str) -> bytes:
    """The figure as ``png`` (300 dpi), ``svg`` or ``pdf`` bytes, reproducibly (REP-FIG-FILES).

    No date in the SVG or PDF, fixed SVG ids, no software stamp in the PNG, fonts embedded as
    paths (SVG) or subsets of matplotlib's bundled DejaVu (PDF, Type 42).
    """
    buffer = io.BytesIO()
    stamps: dict[str, dict[str, str | None]] = {
        "svg": {"Date": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Producer": None},
    }
    metadata = stamps.get(fmt, {"Software": None})
    with mpl.rc_context({"svg.hashsalt": "prefixexec", "svg.fonttype": "path", "pdf.fonttype": 42}):
        fig.savefig(buffer, format=fmt, dpi=PNG_DPI, metadata=metadata)
    return buffer.getvalue()


def render_all(fig: Figure, stem: str) -> dict[str, bytes]:
    """``{stem}.png``, ``{stem}.svg`` and ``{stem}.pdf`` of one figure."""
    return {f"{stem}.{fmt}": render(fig, fmt) for fmt in FIGURE_FORMATS}


def panel_titles(fig: Figure) -> Sequence[str]:
    """The titles of the visible panels (for tests and the HTML alt text)."""
    return [ax.get_title() for ax in fig.axes if ax.get_visible()]
