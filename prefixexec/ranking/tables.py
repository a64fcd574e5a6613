"""The leaderboard's tables: terminal, Markdown, LaTeX and CSV (spec: LB-OUTPUT).

Every writer reads the ``leaderboard --json`` document (:func:`~.core.leaderboard_document`) and
lays out the same :class:`Table` values, so the formats cannot disagree: per dataset the systems
with each metric's value and interval, their ranks with rank intervals, Kendall's tau-b against
the success ranking, and the pairs that success and another metric order differently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from prefixexec.numbers import count, half_up, number, with_interval
from prefixexec.report.tables import _csv, md_escape, tex_escape
from prefixexec.scoring import render_blocks

from .core import TITLES

#: Decimals of printed ratios, ranks and tau-b.
DIGITS = 2


@attrs.frozen(slots=True)
class Table:
    """A titled table of printed cells (the first column names the row)."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def metric_title(metric: str, k: int) -> str:
    """``pass^k`` with the leaderboard's k (``pass^4``), other metrics by their printed name."""
    return TITLES[metric].replace("^k", f"^{k}")


def _num(value: float | str | None, digits: int = DIGITS) -> str:
    return number(value, digits)


def _with_ci(value: float | str | None, ci: Sequence[float] | None, digits: int = DIGITS) -> str:
    return with_interval(value, ci, digits)


def metric_cell(cell: Mapping[str, Any]) -> str:
    """A metric's printed cell: its exact value rounded half up, with the interval ``ci`` (the
    method the signature names: RR's is Wilson, API-CONSISTENT)."""
    return with_interval(cell["exact"], cell.get("ci"))


def _rank(value: float | None) -> str:
    """A rank: whole ranks as integers, average ranks of ties and interval ends to 1 decimal."""
    if value is None:
        return "n/a"
    return str(int(value)) if float(value).is_integer() else half_up(value, 1)


def rank_with_ci(cell: Mapping[str, Any]) -> str:
    text = _rank(cell.get("rank"))
    ci = cell.get("rank_ci")
    return text if cell.get("rank") is None or ci is None else f"{text} [{_rank(ci[0])}, {_rank(ci[1])}]"


def dataset_title(ds: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """``tau-bench/airline: 9 systems on 50 tasks, k = 1, B = 10000 task resamples``."""
    tasks = ds["tasks"]
    text = f"{ds['dataset']}: {count(len(ds['systems']), 'system')} on {count(tasks['scored'], 'task')}"
    if tasks["dropped"]:
        text += f" (--shared-tasks: {tasks['dropped']} of {tasks['union']} tasks dropped: not shared by all)"
    if not tasks.get("paired", True):  # LB-UNPAIRED: said in one line
        text += (
            f" in all, {tasks['shared']} shared by every system: each system is ranked on its own tasks "
            "with unpaired intervals (--shared-tasks: paired, on the shared tasks)"
        )
    for warning in tasks.get("warnings", ()):  # LB-FEW-TASKS
        text += f"; warning: {warning}"
    text += f", pass^k and TER^k at k = {ds['k']} (trials: {settings['trials']})"
    if settings["bootstrap"]:
        text += f", {settings['bootstrap']} task resamples, level {settings['level']:g}"
    return text


def dataset_tables(ds: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Table]:
    """The four tables of one dataset (the last two only when there is something to show)."""
    k = ds["k"]
    shown, ranked = ds["shown"], ds["ranked"]
    head = dataset_title(ds, settings)
    own = not ds["tasks"].get("paired", True)  # LB-UNPAIRED: each system's own task count
    systems = [
        (
            s["system"],
            str(s["N"]),
            *((str(s["tasks"]),) if own else ()),
            *(metric_cell(s["metrics"][m]) for m in shown),
        )
        for s in ds["systems"]
    ]
    tables = [
        Table(
            f"{head}: values [interval]",
            ("system", "N", *(("tasks",) if own else ()), *(metric_title(m, k) for m in shown)),
            tuple(systems),
        ),
        Table(
            f"{ds['dataset']}: rank per metric (1 = best, ties averaged) [rank interval]",
            ("system", *(metric_title(m, k) for m in ranked)),
            tuple((s["system"], *(rank_with_ci(s["metrics"][m]) for m in ranked)) for s in ds["systems"]),
        ),
    ]
    if ds["kendall"]:
        tables.append(
            Table(
                f"{ds['dataset']}: Kendall's tau-b between the success ranking and each metric's",
                ("metric", "tau-b", "systems", "concordant", "discordant", "ties (success)", "ties (metric)"),
                tuple(
                    (
                        metric_title(t["metric"], k),
                        _with_ci(t["tau_b"], t.get("ci")),
                        str(t["systems"]),
                        str(t["concordant"]),
                        str(t["discordant"]),
                        str(t["ties_success"]),
                        str(t["ties_metric"]),
                    )
                    for t in ds["kendall"]
                ),
            )
        )
    if ds["flips"]:
        boot = bool(settings["bootstrap"])
        extra = (
            ("resamples: success first/tie/second", "metric first/tie/second", "orders differ")
            if boot
            else ()
        )
        rows = []
        for f in ds["flips"]:
            row = [
                metric_title(f["metric"], k),
                f["first"],
                f["success_order"],
                f["metric_order"],
                f["second"],
            ]
            if boot:
                r = f["resamples"]
                row += [_shares(r["success"]), _shares(r["metric"]), _num(r["differ"])]
            rows.append(tuple(row))
        total = sum(ds.get("flipped_pairs", {}).values())
        listed = f" ({len(rows)} largest of {total})" if total > len(rows) else ""
        tables.append(
            Table(
                f"{ds['dataset']}: pairs that success and another metric order differently{listed}",
                ("metric", "first", "success", "metric order", "second", *extra),
                tuple(rows),
            )
        )
    return tables


def _shares(s: Mapping[str, float]) -> str:
    return f"{_num(s['first'])}/{_num(s['tie'])}/{_num(s['second'])}"


#: The printed verdicts of the claims table.
VERDICT_WORDS = {
    "reproduced": "reproduced",
    "reproduced_best_of": "reproduced (best-of-K)",
    "differs": "DIFFERS",
    "not_checkable": "not checkable",
    "not_reported": "not reported",
}


def claims_table(claims: Mapping[str, Any]) -> tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The claims table (title, headers, rows): claimed against recomputed per submission,
    domain and metric, with the verdict and its first reason (LB-CLAIMS)."""
    rows = []
    for c in claims["claims"]:
        if c["verdict"] == "not_reported":
            continue
        why = next((r["text"] for r in c["reasons"] if r["code"] not in ("run", "precision")), "")
        if any(r["code"] == "no_trajectories" for r in c["reasons"]):
            why = "no trajectories of this domain in the submission"
        rows.append(
            (
                c["system"],
                c["dataset"],
                c["metric"],
                c["claimed"],
                c["ours_text"] or "-",
                VERDICT_WORDS[c["verdict"]],
                why[:160] + ("..." if len(why) > 160 else ""),
            )
        )
    s = claims["summary"]
    title = (
        f"claims: {s['reproduced']} reproduced, {s['reproduced_best_of']} reproduced as best-of-K, "
        f"{count(s['differs'], 'differs', 'differ')}, {s['not_checkable']} not checkable "
        f"({s['not_reported']} not reported: null)"
    )
    return title, ("system", "domain", "metric", "claimed", "recomputed", "verdict", "why"), tuple(rows)


def not_checkable_lines(claims: Mapping[str, Any], limit: int = 20) -> list[str]:
    """LB-NOT-CHECKABLE: one line per submission without trajectories (a count beyond ``limit``)."""
    absent = claims["not_checkable"]
    lines = [
        f"claims not checkable: {a['system']} ({a['submission']}): no trajectories"
        + (" (trajectories_available: false)" if a["trajectories_available"] is False else "")
        for a in absent[:limit]
    ]
    if len(absent) > limit:
        lines.append(f"claims not checkable: {len(absent) - limit} more submissions without trajectories")
    return lines


def claims_tables(document: Mapping[str, Any]) -> list[Table]:
    """LB-CLAIMS, LB-NOT-CHECKABLE: the claims table of a leaderboard of submissions, and the
    submissions whose claims cannot be checked (none without submissions)."""
    claims = document.get("claims")
    if claims is None:
        return []
    title, headers, rows = claims_table(claims)
    tables = [Table(title, headers, rows)] if rows else []
    lines = not_checkable_lines(claims)
    if lines:
        shown = f"{count(len(claims['not_checkable']), 'submission')} whose claims are not checkable"
        tables.append(Table(shown, ("not checkable",), tuple((line.split(": ", 1)[1],) for line in lines)))
    notes = [
        (s["system"], f"{name}: {why}")
        for s in document.get("submissions", ())
        for key, why in (
            ("unlisted", "in trajectories/ but not in its trajectory_files: not read"),
            ("missing", "in its trajectory_files but not in trajectories/"),
        )
        for name in s.get(key, ())
    ]
    if notes:  # LB-LISTED
        tables.append(Table("trajectory files of the submissions", ("system", "file"), tuple(notes)))
    return tables


def _all_tables(document: Mapping[str, Any]) -> list[Table]:
    found = [t for ds in document["datasets"] for t in dataset_tables(ds, document["settings"])]
    return found + claims_tables(document)


def leaderboard_text(document: Mapping[str, Any]) -> str:
    """The terminal table (OUT-TABLE's layout): every table of every dataset, then the signature."""
    blocks = [(t.title, t.headers, t.rows) for t in _all_tables(document)]
    return render_blocks(blocks, document["signature"])


def leaderboard_md(document: Mapping[str, Any]) -> str:
    """Markdown: a heading and a pipe table per table, then the signature."""
    lines: list[str] = []
    for t in _all_tables(document):
        lines += [f"### {md_escape(t.title)}", ""]
        lines.append("| " + " | ".join(md_escape(h) for h in t.headers) + " |")
        lines.append("|" + "|".join(":--" if i == 0 else "--:" for i in range(len(t.headers))) + "|")
        lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in t.rows]
        lines.append("")
    lines.append(f"signature: `{document['signature']}`")
    return "\n".join(lines) + "\n"


def leaderboard_tex(document: Mapping[str, Any]) -> str:
    """LaTeX (booktabs): one table environment per table, caption = its title."""
    out: list[str] = [f"% {document['signature']}", "% needs \\usepackage{booktabs}"]
    for t in _all_tables(document):
        spec = "l" + "r" * (len(t.headers) - 1)
        out += [
            r"\begin{table}[t]",
            r"\centering\small",
            rf"\caption{{{tex_escape(t.title)}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(tex_escape(h) for h in t.headers) + r" \\",
            r"\midrule",
            *(" & ".join(tex_escape(c) for c in row) + r" \\" for row in t.rows),
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    return "\n".join(out)


def leaderboard_csv(document: Mapping[str, Any]) -> str:
    """CSV: one row per system per dataset, full precision (the JSON has the rest).

    Per ranked metric ``X``: ``X``, ``X_exact``, ``X_lo``, ``X_hi``, ``X_rank``, ``X_rank_lo``,
    ``X_rank_hi`` (empty when undefined or without intervals); every row carries the k, the
    trial convention and the signature.
    """
    ranked = document["settings"]["metrics"]
    header = ["dataset", "system", "model", "method", "N", "tasks", "k", "trials"]
    for m in ranked:
        header += [m, f"{m}_exact", f"{m}_lo", f"{m}_hi", f"{m}_rank", f"{m}_rank_lo", f"{m}_rank_hi"]
    rows: list[list[str]] = [[*header, "signature"]]
    for ds in document["datasets"]:
        for s in ds["systems"]:
            row = [ds["dataset"], s["system"], s["model"], s["method"], str(s["N"]), str(s["tasks"])]
            row += [str(ds["k"]), document["settings"]["trials"]]
            for m in ranked:
                cell = s["metrics"][m]
                ci, rank_ci = cell.get("ci"), cell.get("rank_ci")
                row += [
                    _full(cell["value"]),
                    cell["exact"] or "",
                    _full(None if ci is None else ci[0]),
                    _full(None if ci is None else ci[1]),
                    _full(cell.get("rank")),
                    _full(None if rank_ci is None else rank_ci[0]),
                    _full(None if rank_ci is None else rank_ci[1]),
                ]
            rows.append([*row, document["signature"]])
    return _csv(rows)


def _full(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def system_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per system of each dataset (LB-API: a data frame's rows): its keys, then per shown
    metric ``M`` the value (float), ``M_exact``, the interval ``M_low``/``M_high`` (LB-CI), the
    rank and the rank interval ``M_rank_low``/``M_rank_high`` (``None`` where undefined)."""
    rows: list[dict[str, Any]] = []
    for ds in document["datasets"]:
        for s in ds["systems"]:
            row: dict[str, Any] = {
                "dataset": ds["dataset"],
                "system": s["system"],
                "model": s["model"],
                "method": s["method"],
                "N": s["N"],
                "tasks": s["tasks"],
                "k": ds["k"],
            }
            for m in ds["shown"]:
                cell = s["metrics"][m]
                ci, rank_ci = cell.get("ci"), cell.get("rank_ci")
                row[m] = cell["value"]
                row[f"{m}_exact"] = cell["exact"]
                row[f"{m}_low"], row[f"{m}_high"] = ci if ci is not None else (None, None)
                row[f"{m}_rank"] = cell.get("rank")
                row[f"{m}_rank_low"], row[f"{m}_rank_high"] = rank_ci if rank_ci is not None else (None, None)
            rows.append(row)
    return rows


#: ``--format`` -> writer.
WRITERS = {
    "text": leaderboard_text,
    "md": leaderboard_md,
    "tex": leaderboard_tex,
    "csv": leaderboard_csv,
}
