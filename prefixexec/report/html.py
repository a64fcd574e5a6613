"""``report.html``: one self-contained page with every table and figure (spec: REP-HTML).

The figures are embedded as base64 PNG ``data:`` URIs and the style sheet and the one script
are inline, so the file opens from disk with no server and no network. The script only filters,
sorts and expands the drill-down table of non-executable rollouts (REP-DRILL); the page reads the
same without it.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from prefixexec.explain import AFTER, FAIL, OK, call_text, recovery_text, rejected_by_position, verdict
from prefixexec.kernel import Rollout
from prefixexec.kernel.actions import NoToolAction, ToolCall
from prefixexec.rollouts import rejections_json

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
       color: #222; line-height: 1.4; padding: 0 1em; overflow-wrap: break-word; }
div.scroll { overflow-x: auto; max-width: 100%; }
p.table-title { font-weight: bold; margin: 1em 0 0.3em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1em; }
table.report { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
table.report th, table.report td { padding: 0.25em 0.7em; text-align: left; white-space: nowrap; }
table.report thead th { border-top: 2px solid #222; border-bottom: 1px solid #222; }
table.report tbody tr:last-child td { border-bottom: 2px solid #222; }
td.count { text-align: right; } span.ci, span.extra { color: #666; font-size: 0.85em; }
p.note { background: #fff3cd; border: 1px solid #e0b000; padding: 0.6em 1em; font-weight: bold; }
p.caption { color: #444; font-size: 0.85em; } code { font-size: 0.85em; }
img.figure { max-width: min(100%, 60em); height: auto; border: 1px solid #ddd; }
table.drill td { white-space: normal; vertical-align: top; }
table.drill { width: 100%; }
table.drill td.reason { min-width: 16em; width: 45%; overflow-wrap: anywhere; }
table.drill td.condition span { display: inline-block; white-space: nowrap; margin-right: 0.3em; }
table.drill td.condition span.method { display: block; color: #444; }
table.drill td.condition span.where { font-size: 0.85em; color: #666; }
div.drill { overflow-x: auto; }
table.drill th.sortable { cursor: pointer; text-decoration: underline dotted; }
table.drill button.expand { font: inherit; border: 1px solid #999; background: #f4f4f4; cursor: pointer;
                            padding: 0 0.4em; margin-right: 0.4em; }
ol.trace { margin: 0.3em 0 0.6em; padding-left: 2.5em; font-family: ui-monospace, monospace;
           font-size: 0.85em; }
ol.trace li.ok { color: #1b5e20; } ol.trace li.after { color: #888; } ol.trace li.rejected { color: #b00020; }
ol.trace li.fail { color: #b00020; font-weight: bold; background: #fdecea; }
div.controls label { margin-right: 1.2em; } div.controls { margin: 0.5em 0; }
"""

#: Most rows the drill-down table holds; the rest are in ``rollouts.jsonl`` (REP-DRILL).
DRILL_LIMIT = 2000
#: Longest text of one action in a trace.
ACTION_LIMIT = 200

SCRIPT = """
(function () {
  var table = document.getElementById('drill');
  if (!table) { return; }
  var body = table.tBodies[0];
  var filters = Array.from(document.querySelectorAll('select.drill-filter'));
  var count = document.getElementById('drill-count');
  function pairs() {
    var rows = Array.from(body.querySelectorAll('tr.rollout'));
    return rows.map(function (r) { return [r, document.getElementById(r.id + '-trace')]; });
  }
  function apply() {
    var shown = 0;
    pairs().forEach(function (p) {
      var keep = filters.every(function (f) { return !f.value || p[0].dataset[f.dataset.key] === f.value; });
      p[0].hidden = !keep;
      if (!keep) { p[1].hidden = true; p[0].querySelector('button').setAttribute('aria-expanded', 'false'); }
      if (keep) { shown += 1; }
    });
    count.textContent = shown + ' shown';
  }
  filters.forEach(function (f) { f.addEventListener('change', apply); });
  body.addEventListener('click', function (event) {
    var button = event.target.closest('button.expand');
    if (!button) { return; }
    var trace = document.getElementById(button.closest('tr').id + '-trace');
    var open = trace.hidden;
    trace.hidden = !open;
    button.setAttribute('aria-expanded', open ? 'true' : 'false');
    button.textContent = open ? '\u25be' : '\u25b8';
  });
  Array.from(table.tHead.querySelectorAll('th.sortable')).forEach(function (th, column) {
    th.addEventListener('click', function () {
      var numeric = th.dataset.type === 'number';
      var ascending = th.dataset.order !== 'asc';
      th.dataset.order = ascending ? 'asc' : 'desc';
      var sorted = pairs().sort(function (a, b) {
        var x = a[0].cells[column].dataset.sort, y = b[0].cells[column].dataset.sort;
        var c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
        return ascending ? c : -c;
      });
      sorted.forEach(function (p) { body.appendChild(p[0]); body.appendChild(p[1]); });
    });
  });
  apply();
})();
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
        f'<div class="scroll"><table class="report" id="{ident}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
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
            f'<div class="scroll"><table class="report" id="decomposition-{b}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>\n<ul>{''.join(items)}</ul>"
        )
    return parts


def _options(values: Sequence[str]) -> str:
    return '<option value="">all</option>' + "".join(
        f'<option value="{escape(v)}">{escape(v)}</option>' for v in values
    )


def _trace(rollout: Rollout) -> str:
    outcome = rollout.outcome
    if not outcome.actions:
        text = f"actions not recorded; FED = {outcome.fed}: {outcome.reason or 'no reason recorded'}"
        return f'<p class="caption">{escape(text)}</p>'
    items = []
    rejected = rejected_by_position(rejections_json(rollout)) or {}  # OUT-REJECTIONS
    for k, action in enumerate(outcome.actions, start=1):
        mark = verdict(k, outcome.fed)
        text = call_text(action)
        if len(text) > ACTION_LIMIT:
            text = text[: ACTION_LIMIT - 3] + "..."
        found = rejected.get(k)
        recovery = f" ({recovery_text(found)})" if found is not None else ""
        if mark == OK:
            items.append(f'<li class="ok">ok &nbsp;{escape(text)}</li>')
        elif mark == FAIL:
            label = outcome.label.value if outcome.label else "unlabelled"
            why = f" — {outcome.reason}" if outcome.reason else ""
            shown = f"{text} [{label}]{why}{recovery}"
            items.append(f'<li class="fail">FAIL &nbsp;{escape(shown)}</li>')
        elif found is not None:  # a later rejection: shown, not counted
            label = found["label"] or "unlabelled"
            why = f" — {found['reason']}" if found["reason"] else ""
            items.append(
                f'<li class="after rejected">REJ &nbsp;{escape(text)} [{escape(label)}] [{escape(AFTER)}]'
                f"{escape(why)}{escape(recovery)}</li>"
            )
        else:
            items.append(f'<li class="after">{escape(text)} [{escape(AFTER)}]</li>')
    return f'<ol class="trace">{"".join(items)}</ol>'


def drill_down(report: Report) -> list[str]:
    """REP-DRILL: every non-executable rollout, filterable, sortable and expandable to its trace."""
    failing = [r for r in report.rollouts if not r.outcome.fully_executable]
    if not failing:
        return ['<p id="drill-none">Every rollout is fully executable: nothing to drill into.</p>']
    shown = failing[:DRILL_LIMIT]

    def condition(r: Rollout) -> str:
        c = r.condition
        return f"{c.dataset} / {c.model} / {c.method}"

    def label(r: Rollout) -> str:
        return r.outcome.label.value if r.outcome.label else "unlabelled"

    def tool(r: Rollout) -> str:
        failing_action = r.outcome.failing
        if isinstance(failing_action, ToolCall):
            return failing_action.name
        if isinstance(failing_action, NoToolAction):
            return "(no tool call)"
        return "(not recorded)"

    columns = [("condition", "text"), ("task", "text"), ("trial", "number"), ("FED", "number"),
               ("label", "text"), ("tool", "text"), ("reason", "text")]  # fmt: skip
    head = "".join(
        f'<th class="sortable" data-type="{kind}" scope="col">{escape(name)}</th>' for name, kind in columns
    )
    body = []
    for i, r in enumerate(shown):
        values = [
            condition(r),
            r.task_id,
            str(r.trial),
            str(r.outcome.fed),
            label(r),
            tool(r),
            r.outcome.reason or "",
        ]
        cells = []
        for (name, _), value in zip(columns, values, strict=True):
            inner = escape(value)
            if name == "condition":  # the method, then dataset / model, each unbroken (REP-DRILL)
                c = r.condition
                inner = (
                    f'<span class="method"><button class="expand" type="button" aria-expanded="false">'
                    f"\u25b8</button>{escape(c.method)}</span>"
                    f'<span class="where">{escape(c.dataset)} /</span> '
                    f'<span class="where">{escape(c.model)}</span>'
                )
            css = f' class="{name}"' if name in ("reason", "condition") else ""
            cells.append(f'<td{css} data-sort="{escape(value)}">{inner}</td>')
        body.append(
            f'<tr class="rollout" id="r{i}" data-condition="{escape(condition(r))}" '
            f'data-label="{escape(label(r))}" data-tool="{escape(tool(r))}">{"".join(cells)}</tr>'
            f'<tr class="trace" id="r{i}-trace" hidden><td colspan="{len(columns)}">{_trace(r)}</td></tr>'
        )
    controls = "".join(
        f'<label>{escape(title)} <select class="drill-filter" id="filter-{key}" data-key="{key}">'
        f"{_options(sorted({get(r) for r in shown}))}</select></label>"
        for title, key, get in (
            ("condition", "condition", condition),
            ("label", "label", label),
            ("tool", "tool", tool),
        )
    )
    note = (
        f"The first {DRILL_LIMIT} of {len(failing)} non-executable rollouts; all are in rollouts.jsonl."
        if len(failing) > DRILL_LIMIT
        else f"{len(failing)} non-executable rollouts; every rollout is in rollouts.jsonl."
    )
    return [
        f'<p class="caption">{escape(note)} Click a column title to sort, ▸ to see the actions: '
        "ok, the first failure (highlighted) and the ones after it (not counted; a later rejected call "
        "in red, with its label and reason).</p>",
        f'<div class="controls">{controls}<span id="drill-count"></span></div>',
        f'<div class="drill"><table class="report drill" id="drill"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>",
    ]


def report_html(
    report: Report, figures: Mapping[str, bytes], files: Sequence[str], board: Mapping[str, Any] | None = None
) -> str:
    """The page: note, signature, main table, PEC figure, checkpoints, labels, decomposition."""
    o = report.options
    style, script = STYLE, SCRIPT
    if board is not None:  # LB-REPORT: the leaderboard's sortable tables
        from prefixexec.ranking import html as board_html

        style, script = style + board_html.STYLE, script + board_html.SCRIPT
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(o.title)}</title><style>{style}</style></head><body>",
        f"<h1>{escape(o.title)}</h1>",
    ]
    if o.note:
        out.append(f'<p class="note" id="note">{escape(o.note)}</p>')
    out.append(f'<p>Signature: <code id="signature">{escape(report.signature)}</code></p>')
    lines = report.harness_lines()  # HARNESS-REPORT
    if lines:
        out.append(f'<p class="caption" id="harness-errors">{"<br>".join(escape(t) for t in lines)}</p>')
    out.append("<h2>Prefix-level metrics</h2>")
    out += [_table(main_table(b, report), f"main-{i}") for i, b in enumerate(report.blocks)]
    out += [
        f'<p class="caption">{escape(t)}</p>' for t in (interval_caption(report), BOLD_CAPTION, MAIN_CAPTION)
    ]
    out.append("<h2>Prefix executability curves</h2>")
    out.append(
        _figure(figures["pec.png"], "figure-pec", "PEC(k) against depth k, one panel per dataset and model")
    )
    out.append(
        _figure(
            figures["pec_elig.png"],
            "figure-pec-elig",
            "PEC_elig(k) with its interval and n_k below it, one panel per dataset and model",
        )
    )
    out.append("<h2>PEC checkpoints</h2>")
    out += [_table(checkpoint_table(b, report), f"checkpoints-{i}") for i, b in enumerate(report.blocks)]
    out.append("<h2>First-failure labels</h2>")
    out += [_table(label_table(b), f"labels-{i}") for i, b in enumerate(report.blocks)]
    out.append(_figure(figures["labels.png"], "figure-labels", "first-failure label counts per method"))
    out.append("<h2>Decomposition of final success (Eq. 12)</h2>")
    out += _decomposition(report)
    if board is not None:
        out += board_html.leaderboard_section(board, figures.get("leaderboard.png"))
    out.append("<h2>Where and why rollouts failed</h2>")
    out += drill_down(report)
    listed = ", ".join(f'<a href="{quote(f)}"><code>{escape(f)}</code></a>' for f in files)
    out.append(f'<p class="caption" id="files">Files of this report: {listed}.</p>')
    out.append(f"<script>{script}</script>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"

