"""Rich display in notebooks: HTML tables of results and flat rows for data frames (API-DISPLAY).

Jupyter shows an object by its ``_repr_html_``; every result of the Python API has one, built
here from the same values ``--json`` gives (every name escaped). :func:`flatten` turns a nested
JSON row into one level of columns for pandas and polars.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefixexec.api import Scores

#: Row keys holding a list of objects, kept as JSON text in a data frame (``[]`` included).
LIST_COLUMNS = frozenset({"rejections"})
#: Rows shown in a notebook before "... N more rows".
MAX_ROWS = 50


def _cell(value: object) -> object:
    """A value for a data frame cell: scalars as they are, anything nested as its JSON text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list) and all(v is None or isinstance(v, bool | int | float | str) for v in value):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def flatten(row: Mapping[str, Any]) -> dict[str, Any]:
    """One level of columns: a nested object ``failing`` becomes ``failing.position``,
    ``failing.tool``, ...; deeper values (arguments, lists of objects) become JSON text."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in LIST_COLUMNS:  # OUT-REJECTIONS: one type per column, empty lists too
            out[key] = None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
        elif isinstance(value, Mapping):
            for inner, item in value.items():
                out[f"{key}.{inner}"] = _cell(item)
        else:
            out[key] = _cell(value)
    return out


def uniform(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with one kind of value per column, as a data frame needs: in a column where some
    rows hold JSON text (nested objects) and others a list (``[]``), the lists become JSON text."""
    texts = {k for r in rows for k, v in r.items() if isinstance(v, str)}
    mixed = {k for r in rows for k, v in r.items() if isinstance(v, list) and k in texts}
    if not mixed:
        return list(rows)

    def text(key: str, value: object) -> object:
        return json.dumps(value, ensure_ascii=False) if key in mixed and isinstance(value, list) else value

    return [{k: text(k, v) for k, v in r.items()} for r in rows]


def displayed(figure: Any) -> Any:
    """``figure`` (a matplotlib Figure) made to show itself in a notebook without ``%matplotlib
    inline`` (API-DISPLAY): IPython asks an object for ``_repr_png_``, which a Figure made
    outside pyplot does not have; the PNG is the report's (REP-FIG-FILES)."""
    import base64

    from prefixexec.report.figures import render

    def png() -> bytes:
        return render(figure, "png")

    def page() -> str:
        data = base64.b64encode(png()).decode("ascii")
        return f'<img alt="prefixexec figure" src="data:image/png;base64,{data}">'

    figure._repr_png_ = png
    figure._repr_html_ = page
    return figure


def _text(value: object) -> str:
    """A cell's text: a float as the ``--json`` document holds it (:func:`prefixexec.numbers.shortest`;
    a table with a printed precision of its own formats its cells first, :func:`compare_html`)."""
    from prefixexec.numbers import shortest

    if value is None:
        return ""
    if isinstance(value, float):
        return shortest(value)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def html_table(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, title: str = ""
) -> str:
    """An HTML table of ``rows`` (the first :data:`MAX_ROWS`), every value escaped."""
    names = list(columns) if columns is not None else list(dict.fromkeys(k for r in rows for k in r))
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_text(r.get(n)))}</td>" for n in names) + "</tr>"
        for r in rows[:MAX_ROWS]
    )
    more = f"<p>... {len(rows) - MAX_ROWS} more rows</p>" if len(rows) > MAX_ROWS else ""
    caption = f"<caption>{html.escape(title)}</caption>" if title else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def scores_html(scores: Scores) -> str:
    """The ``score`` table: each value with its interval (RR: Wilson), and the signature."""
    from prefixexec.report.model import fmt, fmt_interval

    titles = (
        ("TER", "TER"),
        ("mean_FED", "mean FED"),
        ("AUC_PEC", "AUC-PEC"),
        ("RR", "RR"),
        ("success", "success"),
    )
    rows = []
    for c in scores.conditions:
        row: dict[str, Any] = {"dataset": c.dataset, "model": c.model, "method": c.method, "N": c.N}
        for name, title in titles:
            if name == "RR":
                row["RR-eligible"] = c.RR_eligible
            interval = c.ci[name]
            shown = fmt_interval(None if interval is None else (interval.low, interval.high))
            row[title] = f"{fmt(getattr(c, name))} {shown}".strip()
        rows.append(row)
    return html_table(rows) + f"<p><code>{html.escape(scores.signature)}</code></p>"


def compare_html(document: Mapping[str, Any]) -> str:
    """``compare``'s tables, cell for cell as the command prints them
    (:func:`prefixexec.scoring.comparison_blocks`), its notes and the signature."""
    from prefixexec.scoring import comparison_blocks, comparison_notes

    parts = []
    for title, headers, cells in comparison_blocks(document["comparisons"]):
        rows = [dict(zip(headers, row, strict=True)) for row in cells]
        parts.append(html_table(rows, headers, title))
    notes = comparison_notes(document["comparisons"], document.get("skipped", ()))
    parts.extend(f"<p>{html.escape(note)}</p>" for note in notes)
    parts.append(f"<p><code>{html.escape(str(document.get('signature', '')))}</code></p>")
    return "".join(parts)
