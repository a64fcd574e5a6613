"""The report page's leaderboard section: sortable tables, tau-b, flipped pairs (spec: LB-REPORT).

Each dataset's systems table sorts by any column when its header is clicked (the inline script
below; the page reads the same without it): every cell carries its sort key in ``data-sort``
(the value, or the rank), so an undefined value sorts last.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from html import escape
from typing import Any

from .tables import Table, dataset_tables, rank_with_ci

STYLE = """
table.leaderboard th.sortable { cursor: pointer; text-decoration: underline dotted; }
table.leaderboard th[data-order="asc"]::after { content: " \\25b4"; }
table.leaderboard th[data-order="desc"]::after { content: " \\25be"; }
"""

SCRIPT = """
(function () {
  Array.from(document.querySelectorAll('table.leaderboard')).forEach(function (table) {
    var body = table.tBodies[0];
    Array.from(table.tHead.querySelectorAll('th.sortable')).forEach(function (th, column) {
      th.addEventListener('click', function () {
        var numeric = th.dataset.type === 'number';
        var ascending = th.dataset.order !== 'asc';
        Array.from(table.tHead.querySelectorAll('th')).forEach(function (h) { delete h.dataset.order; });
        th.dataset.order = ascending ? 'asc' : 'desc';
        var rows = Array.from(body.rows).sort(function (a, b) {
          var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
          if (numeric) {
            if (x === '' || y === '') { return (x === '') - (y === ''); }
            var c = Number(x) - Number(y);
          } else {
            var c = x.localeCompare(y);
          }
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
"""


def _sort_key(value: object) -> str:
    return "" if value is None else repr(float(value)) if isinstance(value, int | float) else str(value)


def _board_table(ds: Mapping[str, Any], table: Table, index: int) -> str:
    """The systems table: sortable, each value cell keyed by the exact order of its value."""
    shown = ds["shown"]
    head = ['<th class="sortable" data-type="text" scope="col">system</th>']
    head.append('<th class="sortable" data-type="number" scope="col">N</th>')
    head += [
        f'<th class="sortable" data-type="number" scope="col">{escape(h)}</th>' for h in table.headers[2:]
    ]
    rank_of = {m: f"{m}-rank" for m in ds["ranked"]}
    head += [
        f'<th class="sortable" data-type="number" scope="col">rank {escape(h)}</th>'
        for m, h in zip(shown, table.headers[2:], strict=True)
        if m in rank_of
    ]
    rows = []
    for s, cells in zip(ds["systems"], table.rows, strict=True):
        tds = [f'<td data-sort="{escape(s["system"])}">{escape(cells[0])}</td>']
        tds.append(f'<td class="count" data-sort="{s["N"]}">{s["N"]}</td>')
        tds += [
            f'<td data-sort="{_sort_key(s["metrics"][m]["value"])}">{escape(text)}</td>'
            for m, text in zip(shown, cells[2:], strict=True)
        ]
        for m in (m for m in shown if m in rank_of):
            cell = s["metrics"][m]
            tds.append(f'<td data-sort="{_sort_key(cell.get("rank"))}">{escape(rank_with_ci(cell))}</td>')
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return _boxed(
        table.title,
        f"leaderboard-{index}",
        f'<table class="report leaderboard" id="leaderboard-{index}" '
        f'aria-labelledby="leaderboard-{index}-title">'
        f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
    )


def _boxed(title: str, ident: str, table: str) -> str:
    """LB-REPORT: the table's title above it, as wide as the page, and the table in a box that
    scrolls sideways on its own when it is wider than the window (a wide table's caption was cut
    and the page scrolled: issue 37)."""
    return f'<p class="table-title" id="{ident}-title">{escape(title)}</p><div class="scroll">{table}</div>'


def _plain_table(table: Table, ident: str) -> str:
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in table.rows)
    return _boxed(
        table.title,
        ident,
        f'<table class="report" id="{ident}" aria-labelledby="{ident}-title">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
    )


def leaderboard_section(board: Mapping[str, Any], png: bytes | None) -> list[str]:
    """The page's ``<h2>Leaderboard</h2>`` section (LB-REPORT); the page adds :data:`STYLE` to its
    style sheet and :data:`SCRIPT` to its one script."""
    out = ['<h2 id="leaderboard">Leaderboard: success and executability rankings</h2>']
    if not board["datasets"]:
        out.append('<p class="caption">No dataset has systems that share a task.</p>')
    for i, ds in enumerate(board["datasets"]):
        tables = dataset_tables(ds, board["settings"])
        out.append(_board_table(ds, tables[0], i))
        out += [_plain_table(t, f"leaderboard-{i}-{j}") for j, t in enumerate(tables[2:], start=2)]
    for skipped in board.get("skipped", []):
        out.append(
            f'<p class="caption">{escape(skipped["dataset"])}: not ranked, {escape(skipped["reason"])}.</p>'
        )
    out.append(
        '<p class="caption">Click a column header to sort. Ranks: 1 = best, ties averaged, '
        "[the 2.5% and 97.5% quantiles of the rank over the task resamples]; each dataset's systems "
        "are scored on the tasks they all share (leaderboard.json has everything, spec/leaderboard.md).</p>"
    )
    if png is not None and board["datasets"]:
        data = base64.b64encode(png).decode("ascii")
        out.append(
            f'<p><img class="figure" id="figure-leaderboard" alt="success against TER and against AUC-PEC, '
            f'one numbered point per system" src="data:image/png;base64,{data}"></p>'
        )
    return out
