"""The report's figures: PEC curves and first-failure labels (spec: REP-PEC-FIG, REP-LABELS-FIG,
REP-PANEL, REP-FIG-SIZE).

Figures are built as :class:`matplotlib.figure.Figure` objects without pyplot (no global state,
no display needed) and rendered to bytes with :func:`render`. They are sized for a page: the
width of one column of a two-column paper (``single``, 3.4 in) or of the text (``double``, 7 in),
with fonts of 6.5 to 9 pt at that size. One panel shows one dataset, its models' lines on one
axis (``--panel model``: one panel per dataset and model); the legend is one, above the panels,
and a note (the demo's simulated-data warning) is a footnote under them, so no text lies on
another (a test measures every text's extent). Output is reproducible: the SVG carries no date
and a fixed id salt, the PNG no software stamp, and the fonts are matplotlib's bundled DejaVu.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from prefixexec.kernel import LABEL_KEYS

from .model import LABEL_TITLES, Block, Report, Row, pec_at, pec_interval

#: Figure widths in inches (REP-FIG-SIZE): a column of a two-column paper, a page's text width.
WIDTHS = {"single": 3.4, "double": 7.0}
#: Panels per figure row at each width.
COLUMNS = {"single": 1, "double": 2}
#: Height of a curve panel over its width.
ASPECT = 0.62
#: Font sizes in points at the figure's size.
FONT: dict[str, int] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "figure.titlesize": 9,
}
NOTE_FONT = 6.5
#: Approximate width of a character at 7 pt (DejaVu Sans), in inches, for laying out legends and notes.
CHAR_IN = 0.058
#: Label colours (colour-blind safe, Okabe-Ito), in LABEL_KEYS order.
LABEL_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#999999")
#: Method colours: the Okabe-Ito palette (colour-blind safe), then the same colours dashed-dotted.
METHOD_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
#: Marker per method, so that lines stay apart in grey print too.
METHOD_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Line style per model when a panel holds several models ("--" is PEC_elig's, REP-PEC-FIG).
MODEL_STYLES: tuple[Any, ...] = ("-", "-.", ":", (0, (3, 1, 1, 1, 1, 1)))
#: Raster resolution of the PNG files (dots per inch).
PNG_DPI = 300
#: The formats every figure is written in (REP-FIG-FILES).
FIGURE_FORMATS = ("png", "svg", "pdf")


@attrs.frozen(slots=True)
class Panel:
    """One panel: its title and the conditions drawn in it (REP-PANEL)."""

    title: str
    rows: tuple[Row, ...]


def panels(report: Report) -> list[Panel]:
    """One panel per dataset (its models together), or per dataset x model (``--panel model``)."""
    if report.options.panel == "model":
        return [Panel(b.name, b.rows) for b in report.blocks]
    grouped: dict[str, list[Row]] = {}
    for block in report.blocks:
        grouped.setdefault(block.dataset, []).extend(block.rows)
    return [Panel(dataset, tuple(rows)) for dataset, rows in grouped.items()]


def _several_models(report: Report) -> bool:
    return report.options.panel == "dataset" and len({r.key.model for r in report.rows}) > 1


def row_label(report: Report, row: Row, sep: str = " · ") -> str:
    """A condition's name in a panel: its method, and its model when a panel holds several (each
    escaped, :func:`_shown`)."""
    method, model = _shown(row.key.method), _shown(row.key.model)
    return f"{method}{sep}{model}" if _several_models(report) else method


def panel_title(title: str, width: float) -> str:
    """A panel's title, on two lines (after ``dataset /``) or wrapped when it is wider than
    ``width`` inches (a title wider than its panel would run off the figure)."""
    limit = max(12, int(width / CHAR_IN * 7 / FONT["axes.titlesize"]))
    if len(title) <= limit:
        return title
    head, sep, tail = title.partition(" / ")
    if sep and len(head) + 2 <= limit and len(tail) <= limit:
        return f"{head} /\n{tail}"
    cut = title.rfind("/", 0, limit)  # a dataset name without spaces: after one of its slashes
    if " " not in title[:limit] and cut > 0:
        return f"{title[: cut + 1]}\n{panel_title(title[cut + 1 :], width)}"
    return textwrap.fill(title, limit)


def model_styles(report: Report) -> dict[str, Any]:
    """One line style per model name, the same in every panel."""
    models = sorted({row.key.model for row in report.rows})
    if not _several_models(report):
        return dict.fromkeys(models, "-")
    return {m: MODEL_STYLES[i % len(MODEL_STYLES)] for i, m in enumerate(models)}


def _grid(n: int, report: Report) -> tuple[int, int]:
    cols = min(COLUMNS[report.options.figure_size], max(n, 1))
    return math.ceil(max(n, 1) / cols), cols


def panel_depth(rows: Sequence[Row], max_depth: int | None) -> int:
    """The deepest k drawn in a panel: its longest horizon, capped by ``--max-depth``."""
    K = max(len(row.metrics.PEC) for row in rows)
    return K if max_depth is None else min(K, max_depth)


#: REP-FIG-POINTS: the most depths a curve, band or n_k strip is drawn at.
MAX_DRAWN_DEPTHS = 400


def drawn_depths(K: int) -> list[int]:
    """REP-FIG-POINTS: the depths 1..K a panel draws: all of them up to
    :data:`MAX_DRAWN_DEPTHS`, else that many evenly spaced from 1 to K (both ends included), so
    a figure's cost is bounded whatever the horizon (HOSTILE-HORIZON allows 100,000: 12,000
    depths took minutes of drawing); every value is in the tables and JSON."""
    if K <= MAX_DRAWN_DEPTHS:
        return list(range(1, K + 1))
    last = MAX_DRAWN_DEPTHS - 1
    return sorted({1 + (i * (K - 1)) // last for i in range(MAX_DRAWN_DEPTHS)})


def _shown(text: str) -> str:
    """A name from the input as a figure shows it: control characters escaped (HOSTILE-CONTROL)
    and ``$`` escaped, so that matplotlib neither draws a missing glyph nor reads math text."""
    from prefixexec.adapters.text import printable

    return printable(text).replace("$", r"\$")


def block_depth(block: Block, max_depth: int | None) -> int:
    """The deepest k drawn for a block (:func:`panel_depth` of its rows)."""
    return panel_depth(block.rows, max_depth)


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


@contextmanager
def _style() -> Iterator[None]:
    with mpl.rc_context(dict(FONT)):  # type: ignore[arg-type]  # rc keys typed as literals; these exist
        yield


def _legend_shape(labels: Sequence[str], width: float) -> tuple[int, int]:
    """Columns and rows of a legend of ``labels`` across ``width`` inches."""
    entry = CHAR_IN * max((len(t) for t in labels), default=1) + 0.45
    cols = max(1, min(len(labels), int(width // entry)))
    return cols, math.ceil(len(labels) / cols) if labels else 0


def _note_text(report: Report, width: float) -> str | None:
    note = report.options.note
    return None if not note else textwrap.fill(note, max(30, int(width / (CHAR_IN * NOTE_FONT / 7))))


@attrs.frozen(slots=True)
class Frame:
    """A figure of the report's width in three rows: the header (title, then the legend), the
    body (the panels, laid out by matplotlib's constrained layout) and the footer (the note).
    Each row has its own height, so the title, the legend, the panels' texts and the note never
    lie on each other (REP-FIG-SIZE)."""

    figure: Figure
    header: Any
    body: Any
    footer: Any | None
    legend_rows: int


def _figure(report: Report, body: float, legend_labels: Sequence[str]) -> Frame:
    """A :class:`Frame` whose body is ``body`` inches high."""
    width = WIDTHS[report.options.figure_size]
    _, legend_rows = _legend_shape(legend_labels, width)
    note = _note_text(report, width)
    head = 0.28 + (0.15 * legend_rows + 0.06 if legend_rows else 0)
    foot = 0.115 * (note.count("\n") + 1) + 0.1 if note else 0.0
    heights = [head, body] + ([foot] if note else [])
    fig = Figure(figsize=(width, sum(heights)), layout="constrained")
    FigureCanvasAgg(fig)  # a renderer for measuring texts (draw_without_rendering)
    rows = fig.subfigures(len(heights), 1, height_ratios=heights, hspace=0, squeeze=False)
    return Frame(fig, rows[0][0], rows[1][0], rows[2][0] if note else None, legend_rows)


def _finish(frame: Frame, report: Report, title: str, handles: dict[str, Any]) -> Figure:
    """The title and the legend in the header, the note in the footer; bar counts that do not
    fit their segment are hidden (REP-LABELS-FIG)."""
    fig = frame.figure
    width = WIDTHS[report.options.figure_size]
    frame.header.text(0.5, 0.98, title, ha="center", va="top", fontsize=FONT["figure.titlesize"])
    for ax in fig.axes:  # tick labels are made when drawn: their size is set here, not by rc
        ax.tick_params(labelsize=FONT["xtick.labelsize"])
    if handles:
        cols, _ = _legend_shape(list(handles), width)
        frame.header.legend(
            list(handles.values()),
            list(handles),
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=cols,
            frameon=False,
            fontsize=FONT["legend.fontsize"],
            borderaxespad=0.1,
        )
    note = _note_text(report, width)
    if note and frame.footer is not None:
        frame.footer.text(0.5, 0.5, note, ha="center", va="center", fontsize=NOTE_FONT, color="#444444")
    fig.draw_without_rendering()  # runs the constrained layout once ...
    fig.set_layout_engine("none")  # ... and keeps it: every format gets the same, reproducible layout
    _hide_unfit_counts(fig)
    return fig


def title_of(fig: Figure) -> str:
    """A figure's title (the header's first text)."""
    return str(fig.subfigs[0].texts[0].get_text())


def legend_of(fig: Figure) -> Any:
    """A figure's legend (in its header), or ``None``."""
    legends = fig.subfigs[0].legends
    return legends[0] if legends else None


def note_of(fig: Figure) -> str | None:
    """A figure's footnote, or ``None``."""
    return str(fig.subfigs[2].texts[0].get_text()) if len(fig.subfigs) > 2 else None


def _hide_unfit_counts(fig: Figure) -> None:
    """Hide a count printed on a bar segment narrower than the count (no text over a neighbour)."""
    labelled = [(ax, t) for ax in fig.axes for t in ax.texts if getattr(t, "_segment", None) is not None]
    if not labelled:
        return
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # FigureCanvasAgg has it
    for _, text in labelled:
        segment = text._segment  # type: ignore[attr-defined]  # set by _count_labels
        if text.get_window_extent(renderer).width + 2 > segment.get_window_extent(renderer).width:
            text.set_visible(False)


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


def _depth_axis(ax: Axes, K: int) -> None:
    ax.set_xlim(0.5, K + 0.5)
    if K <= 12:
        ax.set_xticks(list(range(1, K + 1)))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))


def _legend_labels(report: Report) -> list[str]:
    return list(dict.fromkeys(row_label(report, r) for p in panels(report) for r in p.rows))


def _curve(ax: Axes, report: Report, row: Row, ks: Sequence[int], values: Sequence[float]) -> Line2D:
    colours, markers, styles = method_colours(report), method_markers(report), model_styles(report)
    (line,) = ax.plot(
        ks,
        values,
        marker=markers[row.key.method],
        markersize=2.5,
        linewidth=1.2,
        linestyle=styles[row.key.model],
        color=colours[row.key.method],
        label=row_label(report, row),
    )
    return line


def pec_figure(report: Report) -> Figure:
    """REP-PEC-FIG: fixed-cohort PEC(k) against k, one panel per dataset (REP-PANEL).

    One line per condition (colour and marker: method; line style: model, when a panel holds
    several), its percentile interval as a band (lighter with more lines; none with
    ``--no-bands``), and with ``eligible`` a dashed line of PEC_elig(k) in the same colour
    (gaps where n_k = 0). Beyond a condition's longest horizon PEC(k) = 0 (INV-PEC-ZERO) and is
    drawn so.
    """
    with _style():
        shown = panels(report)
        rows, cols = _grid(len(shown), report)
        width = WIDTHS[report.options.figure_size]
        frame = _figure(report, rows * width / cols * ASPECT, _legend_labels(report))
        axes = frame.body.subplots(rows, cols, squeeze=False)
        handles: dict[str, Any] = {}
        for index, panel in enumerate(shown):
            ax = axes[index // cols][index % cols]
            K = panel_depth(panel.rows, report.options.max_depth)
            ks = drawn_depths(K)
            alpha = band_alpha(len(panel.rows))
            for row in panel.rows:
                line = _curve(ax, report, row, ks, [float(pec_at(row.metrics, k)) for k in ks])
                handles.setdefault(row_label(report, row), line)
                if row.result.intervals is not None and report.options.bands:
                    _band(ax, ks, [pec_interval(row, k) for k in ks], str(line.get_color()), alpha)
                if report.options.eligible:
                    ax.plot(
                        ks,
                        _elig_values(row, ks),
                        linestyle="--",
                        color=line.get_color(),
                        linewidth=0.9,
                        label=f"{row_label(report, row)} (PEC_elig)",
                    )
            ax.set_title(panel_title(_shown(panel.title), width / cols - 0.5))
            ax.set_xlabel("depth k")
            ax.set_ylabel("PEC(k)")
            ax.set_ylim(-0.02, 1.02)
            _depth_axis(ax, K)
            ax.grid(True, alpha=0.3)
        for index in range(len(shown), rows * cols):
            axes[index // cols][index % cols].set_visible(False)
        if report.options.eligible:
            handles["PEC_elig(k)"] = Line2D([], [], linestyle="--", color="#555555", linewidth=0.9)
        return _finish(frame, report, "Prefix executability PEC(k)", handles)


def strip_offsets(n: int) -> list[float]:
    """Horizontal offsets of each condition's n_k markers at a depth, so that conditions with
    equal n_k stand side by side instead of hiding each other (REP-ELIG-FIG)."""
    step = min(0.12, 0.6 / max(n, 1))
    return [(i - (n - 1) / 2) * step for i in range(n)]


def elig_figure(report: Report) -> Figure:
    """REP-ELIG-FIG: PEC_elig(k) with its band, and below it a strip of n_k, per panel.

    The upper axes of a panel draw PEC_elig(k) (Eq. 6) per condition with its percentile interval
    (gaps where n_k = 0); the lower axes draw n_k (Eq. 5), the number of rollouts still at depth
    k, as thin steps in the same colours and styles, with each condition's markers set a little
    apart at each depth (:func:`strip_offsets`), so that conditions with equal n_k stay visible.
    """
    with _style():
        shown = panels(report)
        rows, cols = _grid(len(shown), report)
        width = WIDTHS[report.options.figure_size]
        panel_h = width / cols * (ASPECT + 0.3)
        frame = _figure(report, rows * panel_h, _legend_labels(report))
        # Two grid rows a panel: the curves, then the n_k strip sharing its depth axis.
        grid = frame.body.add_gridspec(2 * rows, cols, height_ratios=[3, 1.2] * rows)
        colours, styles = method_colours(report), model_styles(report)
        handles: dict[str, Any] = {}
        for index, panel in enumerate(shown):
            r, c = divmod(index, cols)
            top = frame.body.add_subplot(grid[2 * r, c])
            strip = frame.body.add_subplot(grid[2 * r + 1, c], sharex=top)
            top.tick_params(labelbottom=False)
            K = panel_depth(panel.rows, report.options.max_depth)
            ks = drawn_depths(K)
            alpha = band_alpha(len(panel.rows))
            markers = method_markers(report)
            for row, dodge in zip(panel.rows, strip_offsets(len(panel.rows)), strict=True):
                line = _curve(top, report, row, ks, _elig_values(row, ks))
                handles.setdefault(row_label(report, row), line)
                ivs = row.result.intervals
                if ivs is not None and report.options.bands:
                    bands = [ivs.PEC_elig[k - 1] if k <= len(ivs.PEC_elig) else None for k in ks]
                    _band(top, ks, bands, colours[row.key.method], alpha)
                n_k = [row.metrics.n_k[k - 1] if k <= len(row.metrics.n_k) else 0 for k in ks]
                strip.step(
                    ks,
                    n_k,
                    where="mid",
                    color=colours[row.key.method],
                    linestyle=styles[row.key.model],
                    linewidth=0.8,
                    alpha=0.8,
                    label=row_label(report, row),
                )
                strip.plot(
                    [k + dodge for k in ks],
                    n_k,
                    linestyle="none",
                    marker=markers[row.key.method],
                    markersize=2.0,
                    color=colours[row.key.method],
                )
            top.set_title(panel_title(_shown(panel.title), width / cols - 0.5))
            top.set_ylabel("PEC_elig(k)")
            top.set_ylim(-0.02, 1.02)
            top.grid(True, alpha=0.3)
            strip.set_ylabel("n_k")
            strip.set_xlabel("depth k")
            strip.set_ylim(bottom=0)
            strip.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=3))
            strip.grid(True, alpha=0.3)
            _depth_axis(strip, K)
        return _finish(frame, report, "Eligible-depth curves PEC_elig(k) and n_k", handles)


def _count_labels(ax: Axes, bars: Any, texts: Sequence[str]) -> None:
    """Counts printed on their segments (hidden later when they do not fit, :func:`_finish`)."""
    for patch, text in zip(bars.patches, texts, strict=True):
        if not text:
            continue
        label = ax.text(
            patch.get_x() + patch.get_width() / 2,
            patch.get_y() + patch.get_height() / 2,
            text,
            ha="center",
            va="center",
            fontsize=6.5,
            color="white",
        )
        label._segment = patch  # type: ignore[attr-defined]  # read by _hide_unfit_counts


def labels_figure(report: Report) -> Figure:
    """REP-LABELS-FIG: one panel per dataset (REP-PANEL), one stacked bar of first-failure labels
    per condition.

    Counts are printed on the segments they fit in; labels with no rollout in the figure are left
    out of the legend; with ``label_shares`` the bars show shares of RR-Eligible instead of
    counts. The x axis leaves room for every bar; the legend sits above the panels, the note
    under them.
    """
    with _style():
        shown = panels(report)
        names = [row_label(report, r) for p in shown for r in p.rows]
        width = WIDTHS[report.options.figure_size]
        rows, cols = _grid(len(shown), report)
        longest = max(len(line) for n in names for line in n.split(" · "))
        if cols > 1 and CHAR_IN * longest > width / cols - 1.6:
            rows, cols = len(shown), 1  # long names: one panel a row leaves the bars their room
        tallest = max(len(p.rows) for p in shown)
        per_bar = 0.36 if _several_models(report) else 0.24  # two-line names: method, model
        panel_h = 0.7 + per_bar * tallest
        present = [key for key in LABEL_KEYS if any(row.metrics.label_counts[key] for row in report.rows)]
        frame = _figure(report, rows * panel_h, [LABEL_TITLES[k] for k in present])
        axes = frame.body.subplots(rows, cols, squeeze=False)
        shares = report.options.label_shares
        handles: dict[str, Any] = {}
        for index, panel in enumerate(shown):
            ax = axes[index // cols][index % cols]
            y = list(range(len(panel.rows)))
            left = [0.0] * len(panel.rows)
            for key, colour in zip(LABEL_KEYS, LABEL_COLOURS, strict=True):
                counts = [row.metrics.label_counts[key] for row in panel.rows]
                widths = [
                    (c / row.metrics.RR_eligible if row.metrics.RR_eligible else 0.0) if shares else float(c)
                    for c, row in zip(counts, panel.rows, strict=True)
                ]
                bars = ax.barh(y, widths, left=left, color=colour, label=LABEL_TITLES[key], height=0.6)
                texts = [
                    (f"{c}" if not shares else f"{c}/{row.metrics.RR_eligible}") if c else ""
                    for c, row in zip(counts, panel.rows, strict=True)
                ]
                _count_labels(ax, bars, texts)
                if key in present:
                    handles.setdefault(LABEL_TITLES[key], bars)
                left = [a + b for a, b in zip(left, widths, strict=True)]
            ax.set_yticks(y, [row_label(report, r, "\n") for r in panel.rows])
            ax.set_ylim(len(panel.rows) - 0.5, -0.5)  # first condition on top
            if shares:
                ax.set_xlim(0, 1.0)
                ax.set_xlabel("share of RR-Eligible")
            else:
                ax.set_xlim(0, max([1.0, *left]) * 1.05)
                ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins="auto"))
                ax.set_xlabel("failing rollouts (RR-Eligible)")
            # Right-aligned over the bars, the title may run over the names' column too.
            ax.set_title(panel_title(_shown(panel.title), width / cols - 0.3), loc="right")
            ax.grid(True, axis="x", alpha=0.3)
        for index in range(len(shown), rows * cols):
            axes[index // cols][index % cols].set_visible(False)
        return _finish(frame, report, "First-failure labels", handles)


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
    return [
        t for ax in fig.axes if ax.get_visible() and (t := ax.get_title() or ax.get_title(loc="right"))
    ]
