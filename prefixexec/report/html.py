"""``report.html``: one self-contained page with every table and figure (spec: REP-HTML).

The figures are embedded as base64 PNG ``data:`` URIs and the style sheet is inline, so the file
opens from disk with no server and no network; the page has no script.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape

from .model import (
    Cell,
    Report,
    Table,
    checkpoint_table,
    decomposition_row,
    fmt,
    fmt_interval,
    label_table,
    main_table,
    percent,
)
from .tables import BOLD_CAPTION, MAIN_CAPTION, interval_caption

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 80em;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1em; }
table.report { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
table.report th, table.report td { padding: 0.25em 0.7em; text-align: left; white-space: nowrap; }
table.report thead th { border-top: 2px solid #222; border-bottom: 1px solid #222; }
table.report tbody tr:last-child td { border-bottom: 2px solid #222; }
td.count { text-align: right; } span.ci, span.extra { color: #666; font-size: 0.85em; }
p.note { background: #fff3cd; border: 1px solid #e0b000; padding: 0.6em 1em; font-weight: bold; }
p.caption { color: #444; font-size: 0.85em; } code { font-size: 0.85em; }
img.figure { max-width: 100%; height: auto; border: 1px solid #ddd; }
"""


def _cell(cell: Cell, count: bool) -> str:
    text = escape(cell.text)
    body = f"<strong>{text}</strong>" if cell.bold else text
    if cell.interval is not None:
        body += f' <span class="ci">{escape(fmt_interval(cell.interval))}</span>'
    if cell.suffix:
        body += f' <span class="extra">{escape(cell.suffix)}</span>'
    return f'<td class="count">{body}</td>' if count else f"<td>{body}</td>"


def _table(table: Table, ident: str) -> str:
    head = "".join(f"<th>{escape(t)}</th>" for t in ["method", *(c.title for c in table.columns)])
    rows = []
    for method, cells in table.rows:
        tds = "".join(
            _cell(c, col.key in ("N", "RR_eligible")) for c, col in zip(cells, table.columns, strict=True)
        )
        rows.append(f'<tr><th scope="row">{escape(method)}</th>{tds}</tr>')
    return (
        f"<h3>{escape(table.title)}</h3>\n"
        f'<table class="report" id="{ident}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _figure(png: bytes, ident: str, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<p><img class="figure" id="{ident}" alt="{escape(alt)}" src="data:image/png;base64,{data}"></p>'


def _decomposition(report: Report) -> list[str]:
    parts: list[str] = []
    header = ["method", "N", "q = TER", "s", "r = RR", "q s + (1 − q) r", "success", "identity"]
    for b, block in enumerate(report.blocks):
        rows = []
        items = []
        for row in block.rows:
            d = decomposition_row(row)
            cells = [
                str(d.N),
                f"{d.fully_executable}/{d.N} = {fmt(d.q)}",
                "n/a" if d.s is None else f"{d.uninterrupted}/{d.fully_executable} = {fmt(d.s)}",
                "n/a" if d.r is None else f"{d.recovered}/{d.rr_eligible} = {fmt(d.r)}",
                fmt(d.combined),
                f"{d.successes}/{d.N} = {fmt(d.success)}",
                "holds" if d.holds else "FAILS",
            ]
            tds = "".join(f"<td>{escape(c)}</td>" for c in cells)
            rows.append(f'<tr><th scope="row">{escape(d.method)}</th>{tds}</tr>')
            share = (
                f" ({d.recovered}/{d.successes} = {percent(d.recovered, d.successes)} of the successes)"
                if d.successes
                else ""
            )
            items.append(
                f"<li>{escape(d.method)}: {d.successes} of {d.N} succeeded; {d.uninterrupted} without any "
                f"invalid prefix, {d.recovered} after a first failure{escape(share)}.</li>"
            )
        head = "".join(f"<th>{escape(h)}</th>" for h in header)
        parts.append(
            f"<h3>{escape(block.name)}</h3>\n"
            f'<table class="report" id="decomposition-{b}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>\n<ul>{''.join(items)}</ul>"
        )
    return parts


def report_html(report: Report, figures: Mapping[str, bytes], files: Sequence[str]) -> str:
    """The page: note, signature, main table, PEC figure, checkpoints, labels, decomposition."""
    o = report.options
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(o.title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(o.title)}</h1>",
    ]
    if o.note:
        out.append(f'<p class="note" id="note">{escape(o.note)}</p>')
    out.append(f'<p>Signature: <code id="signature">{escape(report.signature)}</code></p>')
    out.append("<h2>Prefix-level metrics</h2>")
    out += [_table(main_table(b, report), f"main-{i}") for i, b in enumerate(report.blocks)]
    out += [
        f'<p class="caption">{escape(t)}</p>' for t in (interval_caption(report), BOLD_CAPTION, MAIN_CAPTION)
    ]
    out.append("<h2>Prefix executability curves</h2>")
    out.append(
        _figure(figures["pec.png"], "figure-pec", "PEC(k) against depth k, one panel per dataset and model")
    )
    out.append("<h2>PEC checkpoints</h2>")
    out += [_table(checkpoint_table(b, report), f"checkpoints-{i}") for i, b in enumerate(report.blocks)]
    out.append("<h2>First-failure labels</h2>")
    out += [_table(label_table(b), f"labels-{i}") for i, b in enumerate(report.blocks)]
    out.append(_figure(figures["labels.png"], "figure-labels", "first-failure label counts per method"))
    out.append("<h2>Decomposition of final success (Eq. 12)</h2>")
    out += _decomposition(report)
    listed = ", ".join(f"<code>{escape(f)}</code>" for f in files)
    out.append(f'<p class="caption">Files of this report: {listed}.</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"
