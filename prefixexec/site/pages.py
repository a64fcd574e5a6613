"""The pages of a leaderboard site (SITE-PAGES, SITE-STATIC, SITE-NUMBERS, SITE-FAILING).

Every page is one HTML file with its style sheet inline, relative links only and no script;
wide tables sit in a box that scrolls on its own, so the page itself never scrolls sideways
(SITE-LAYOUT). Text from the input is escaped (HOSTILE-CONTROL: control characters shown as
escapes, then HTML-escaped).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape

from prefixexec.adapters.text import printable, printable_lines
from prefixexec.explain import call_text, success_check
from prefixexec.kernel import Rollout
from prefixexec.numbers import count, number
from prefixexec.ranking.tables import (
    Table,
    dataset_tables,
    dataset_title,
    metric_cell,
    metric_title,
    rank_with_ci,
)

from .model import ClaimRow, DomainBoard

STYLE = """
*, *::before, *::after { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 80em;
       color: #222; line-height: 1.4; padding: 0 1em; overflow-wrap: break-word; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
nav { font-size: 0.9em; margin-bottom: 1em; } nav a { margin-right: 1em; }
div.table { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1.2em; }
table { border-collapse: collapse; font-size: 0.9em; }
p.table-title { font-weight: bold; margin: 1em 0 0.3em; }
th, td { padding: 0.25em 0.7em; text-align: left; vertical-align: top; }
table.numbers th, table.numbers td { white-space: nowrap; }
thead th { border-top: 2px solid #222; border-bottom: 1px solid #222; }
tbody tr:last-child td { border-bottom: 2px solid #222; }
td.num { text-align: right; }
table.failing th, table.failing td { white-space: nowrap; }
table.failing td.call, table.failing td.reason { white-space: pre-wrap; overflow-wrap: anywhere;
       font-family: ui-monospace, monospace; font-size: 0.85em; min-width: 12em; }
table.failing td.reason { min-width: 16em; }
p.caption { color: #444; font-size: 0.85em; }
img.figure { display: block; max-width: 100%; height: auto; border: 1px solid #ddd; }
"""


def page(title: str, body: Sequence[str], nav: Sequence[tuple[str, str]] = ()) -> bytes:
    """One self-contained page (SITE-STATIC)."""
    links = "".join(f'<a href="{escape(href)}">{escape(text)}</a>' for href, text in nav)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_text(title)}</title><style>{STYLE}</style></head><body>"
        + (f"<nav>{links}</nav>" if links else "")
        + f"<h1>{_text(title)}</h1>"
        + "\n".join(body)
        + "</body></html>\n"
    ).encode("utf-8")


def _text(value: object) -> str:
    """Text from the input, safe in HTML (HOSTILE-CONTROL)."""
    return escape(printable(str(value)))


def _lines(value: str) -> str:
    """A text of several lines (a reason), its line breaks kept (shown by ``pre-wrap``), every
    other control character escaped (HOSTILE-CONTROL)."""
    return escape(printable_lines(value.expandtabs()))


def domain_page(d: int) -> str:
    return f"domain-{d + 1}.html"


def system_page(d: int, s: int) -> str:
    return f"system-{d + 1}-{s + 1}.html"


def system_figure(d: int, s: int) -> str:
    return f"system-{d + 1}-{s + 1}.svg"


def html_table(table: Table, cls: str = "numbers", links: Mapping[str, str] | None = None) -> str:
    """A :class:`~prefixexec.ranking.tables.Table` as HTML; first-column cells named in ``links``
    link to their page."""
    head = "".join(f'<th scope="col">{_text(h)}</th>' for h in table.headers)
    rows = []
    for row in table.rows:
        first = _text(row[0])
        if links and row[0] in links:
            first = f'<a href="{escape(links[row[0]])}">{first}</a>'
        cells = [f"<td>{first}</td>", *(f'<td class="num">{_text(c)}</td>' for c in row[1:])]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<p class="table-title">{_text(table.title)}</p><div class="table"><table class="{cls}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _index(domains: Sequence[DomainBoard], claims: Sequence[ClaimRow] | None) -> bytes:
    rows = []
    for d, dom in enumerate(domains):
        systems = dom.board["systems"]
        leader = systems[0] if systems else None
        lead = (
            f'<a href="{system_page(d, 0)}">{_text(leader["system"])}</a> '
            f"({_text(metric_cell(leader['metrics']['success']))})"
            if leader is not None
            else "none"
        )
        rows.append(
            f'<tr><td><a href="{domain_page(d)}">{_text(dom.name)}</a></td>'
            f'<td class="num">{len(systems)}</td><td class="num">{dom.board["tasks"]["scored"]}</td>'
            f"<td>{lead}</td></tr>"
        )
    table = (
        '<p class="table-title">Domains</p><div class="table"><table class="numbers"><thead><tr>'
        '<th scope="col">domain</th><th scope="col">systems</th><th scope="col">tasks</th>'
        '<th scope="col">highest success [interval]</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    checked = "no claims were checked" if claims is None else count(len(claims), "claimed number")
    body = [
        '<p class="caption">Each domain ranks its systems by final success and by prefix executability '
        "(TER, AUC-PEC, mean FED, RR, pass^k, TER^k); each system page has its curves and its failing "
        "rollouts (spec/leaderboard.md, spec/site.md).</p>",
        table,
        f'<p><a href="claims.html">Claims table</a> ({checked}).</p>',
    ]
    return page("Leaderboard", body, [("claims.html", "claims")])


def _domain(d: int, dom: DomainBoard) -> bytes:
    board = dom.board
    links = {s["system"]: system_page(d, i) for i, s in enumerate(board["systems"])}
    tables = dataset_tables(board, dom.settings)
    body = [html_table(t, links=links if i < 2 else None) for i, t in enumerate(tables)]
    body.append(
        '<p class="caption">Systems best success first. Ranks: 1 = best, ties averaged, '
        "[the rank interval over the task resamples]; values [their interval].</p>"
    )
    return page(dom.name, body, [("index.html", "all domains"), ("claims.html", "claims")])


def _system(d: int, s: int, dom: DomainBoard, figure: str | None) -> bytes:
    board = dom.board
    entry = board["systems"][s]
    k = board["k"]
    rows = tuple(
        (
            metric_title(m, k),
            metric_cell(entry["metrics"][m]),
            rank_with_ci(entry["metrics"][m]) if m in board["ranked"] else "",
        )
        for m in board["shown"]
    )
    if "success" not in board["shown"]:
        success = entry["metrics"]["success"]
        rows = (("success", metric_cell(success), rank_with_ci(success)), *rows)
    ranks = Table("values and ranks", ("metric", "value [interval]", "rank [rank interval]"), rows)
    body = [f'<p class="caption">{_text(dataset_title(board, dom.settings))}</p>', html_table(ranks)]
    rollouts = dom.rollouts.get(entry["system"])
    if figure is not None:
        body.append(
            f'<p><img class="figure" src="{escape(figure)}" alt="PEC(k) of {_text(entry["system"])} '
            'over depth k, and pass^k and TER^k over k"></p>'
        )
    if rollouts is None:
        body.append(
            '<p class="caption">No rollouts were given for this system: no PEC curve, no failing list.</p>'
        )
    else:
        body.append(_failing(rollouts))
    nav = [("index.html", "all domains"), (domain_page(d), f"{dom.name}"), ("claims.html", "claims")]
    return page(f"{dom.name}: {entry['system']}", body, nav)


def _order(rollout: Rollout) -> tuple[tuple[tuple[int, int | str], ...], int]:
    """Task ids in natural order (``7`` before ``43``, ``base_9`` before ``base_10``), then trials."""
    parts = re.split(r"(\d+)", rollout.task_id)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p), rollout.trial


def _failing(rollouts: Sequence[Rollout]) -> str:
    """SITE-FAILING: every non-executable rollout, as ``explain`` shows its first failure."""
    failing = [r for r in rollouts if not r.outcome.fully_executable]
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in ("task", "trial", "FED", "T", "failed call", "label", "reason", "success")
    )
    rows = []
    for r in sorted(failing, key=_order):
        o = r.outcome
        if o.actions:
            texts = r.meta.get("action_texts")
            written = texts[o.fed - 1] if isinstance(texts, list | tuple) and len(texts) == o.T else None
            call = call_text(o.actions[o.fed - 1], written)
        else:
            call = "(actions not recorded)"
        label = o.label.value if o.label is not None else "unlabelled"
        rows.append(
            f'<tr><td>{_text(r.task_id)}</td><td class="num">{r.trial}</td><td class="num">{o.fed}</td>'
            f'<td class="num">{o.T}</td><td class="call">{_text(call)}</td><td>{_text(label)}</td>'
            f'<td class="reason">{_lines(o.reason or "")}</td><td>{"yes" if r.success else "no"}</td></tr>'
        )
    caption = (
        f"Failing rollouts: {len(failing)} of {count(len(rollouts), 'rollout')} "
        "(the first non-executable action a_FED, its label and reason, as prefixexec explain shows them)"
    )
    table = (
        f'<p class="table-title">{_text(caption)}</p><div class="table"><table class="failing">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    return table + _unsuccessful(rollouts)


def _unsuccessful(rollouts: Sequence[Rollout]) -> str:
    """SITE-FAILING: the rollouts whose every call ran but that failed the benchmark's own check,
    with its reason (OUT-EXPLAIN-SUCCESS), where the adapter ran that check."""
    found = [
        (r, check)
        for r in sorted(rollouts, key=_order)
        if r.outcome.fully_executable and (check := success_check(r)) is not None
    ]
    if not found:
        return ""
    head = "".join(f'<th scope="col">{h}</th>' for h in ("task", "trial", "T", "why not a success"))
    rows = "".join(
        f'<tr><td>{_text(r.task_id)}</td><td class="num">{r.trial}</td><td class="num">{r.outcome.T}</td>'
        f'<td class="reason">{_lines(check)}</td></tr>'
        for r, check in found
    )
    caption = (
        f"Fully executable but not a success: {len(found)} (the benchmark's own check that failed, "
        "as prefixexec explain shows it)"
    )
    return (
        f'<p class="table-title">{_text(caption)}</p><div class="table"><table class="failing unsuccessful">'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _claims(claims: Sequence[ClaimRow] | None) -> bytes:
    if claims is None:
        return page(
            "Claims",
            ['<p class="caption">No claims were checked in this run.</p>'],
            [("index.html", "all domains")],
        )
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in ("system", "domain", "metric", "claimed", "recomputed", "verdict", "note")
    )
    rows = [
        f"<tr><td>{_text(c.system)}</td><td>{_text(c.domain)}</td><td>{_text(c.metric)}</td>"
        f'<td class="num">{number(c.claimed)}</td><td class="num">{number(c.recomputed)}</td>'
        f"<td>{_text(c.verdict)}</td><td>{_text(c.note)}</td></tr>"
        for c in claims
    ]
    table = (
        '<p class="table-title">Claimed against recomputed</p><div class="table"><table class="claims">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    return page("Claims", [table], [("index.html", "all domains")])


def render_site(domains: Sequence[DomainBoard], claims: Sequence[ClaimRow] | None) -> dict[str, bytes]:
    """Every file of the site, rendered in memory (name -> bytes), ``index.html`` first."""
    from .figure import svg_bytes, system_curves

    files: dict[str, bytes] = {"index.html": _index(domains, claims), "claims.html": _claims(claims)}
    for d, dom in enumerate(domains):
        files[domain_page(d)] = _domain(d, dom)
        for s, entry in enumerate(dom.board["systems"]):
            rollouts = dom.rollouts.get(entry["system"])
            fig = system_curves(entry, dom.board["k"], rollouts)
            name = system_figure(d, s)
            files[name] = svg_bytes(fig)
            files[system_page(d, s)] = _system(d, s, dom, name)
    return files
