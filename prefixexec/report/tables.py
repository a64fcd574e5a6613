"""Markdown, LaTeX and CSV writers of the report's tables (spec: REP-TABLE, REP-BOLD, REP-TEX, ...).

Every writer renders the same :class:`~prefixexec.report.model.Table` cells, so a value, its
interval and its bold flag are decided once (in :mod:`prefixexec.report.model`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from fractions import Fraction

from prefixexec.adapters.text import printable
from prefixexec.kernel import LABEL_KEYS
from prefixexec.scoring import exact

from .model import (
    NA,
    Cell,
    Column,
    Report,
    Table,
    checkpoint_table,
    decomposition_row,
    fmt,
    fmt_interval,
    label_table,
    main_table,
    pec_at,
    pec_interval,
    percent,
)

# ------------------------------------------------------------------------------------ captions


def interval_caption(report: Report) -> str:
    """How the intervals were made (or that they are off)."""
    if report.bootstrap is None:
        return "No intervals (--bootstrap 0)."
    B, seed, level = report.bootstrap
    return (
        f"Brackets: {level * 100:g}% task-level percentile bootstrap intervals (B = {B}, seed {seed}); "
        f"RR: Wilson score interval on RR-Eligible."
    )


BOLD_CAPTION = (
    "Bold: the largest value of the column within the block, all ties at the printed precision "
    "included; bold is not a claim of significance."
)

MAIN_CAPTION = (
    "RR-Eligible counts the rollouts with FED <= T (no interval). Higher TER, AUC-PEC and success are "
    "better; mean FED must be read with the horizons; RR is conditional on a first failure. "
    "Printed values are rounded half up on the exact value."
)


def _note_lines_md(report: Report) -> list[str]:
    return [f"> **{md_escape(report.options.note)}**", ""] if report.options.note else []


# ------------------------------------------------------------------------------------ markdown


def md_escape(text: str) -> str:
    """Escape the characters that would break a Markdown table cell or start emphasis."""
    return (
        printable(text)
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("*", "\\*")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )


def _md_cell(cell: Cell) -> str:
    text = f"**{cell.text}**" if cell.bold else cell.text
    parts = [text, fmt_interval(cell.interval), cell.suffix]
    return " ".join(p for p in parts if p)


def _md_block(table: Table) -> list[str]:
    header = ["method", *(c.title for c in table.columns)]
    align = [":--", *("--:" if _is_count(c) else ":--" for c in table.columns)]
    lines = [
        f"### {md_escape(table.title)}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
    ]
    for method, cells in table.rows:
        lines.append("| " + " | ".join([md_escape(method), *(_md_cell(c) for c in cells)]) + " |")
    lines.append("")
    return lines


def _is_count(column: Column) -> bool:
    return column.key in ("N", "RR_eligible")


def _md_document(title: str, report: Report, tables: Iterable[Table], captions: Sequence[str]) -> str:
    lines = [f"# {title}", ""]
    lines += _note_lines_md(report)
    for table in tables:
        lines += _md_block(table)
    lines += [*captions, ""]
    lines += [f"{line}  " for line in report.harness_lines()]  # HARNESS-REPORT
    lines += [f"signature: `{report.signature}`"]
    return "\n".join(lines) + "\n"


def table_md(report: Report) -> str:
    """``table.md``: one block per dataset x model (REP-TABLE), bold per block (REP-BOLD)."""
    return _md_document(
        "Prefix-level metrics",
        report,
        (main_table(b, report) for b in report.blocks),
        [interval_caption(report), "", BOLD_CAPTION, "", MAIN_CAPTION, *_cost_caption(report)],
    )


def _cost_caption(report: Report) -> list[str]:
    if not report.cost_fields:
        return []
    return [
        "",
        "Cost columns: the mean over the rollouts that carry the field in their record's `cost`; "
        "(k/N) when only k of the N rollouts carry it. Costs are never bold.",
    ]


def checkpoints_md(report: Report) -> str:
    """``checkpoints.md``: PEC at the chosen depths with intervals (REP-CHECKPOINTS)."""
    return _md_document(
        "PEC checkpoints",
        report,
        (checkpoint_table(b, report) for b in report.blocks),
        [
            "Fixed-cohort PEC(k) = #{FED > k} / N (Eq. 4); 0 beyond a condition's longest horizon.",
            "",
            interval_caption(report).replace("; RR: Wilson score interval on RR-Eligible", ""),
            "",
            BOLD_CAPTION,
        ],
    )


def labels_md(report: Report) -> str:
    """``labels.md``: first-failure label counts and shares of RR-Eligible (REP-LABELS)."""
    return _md_document(
        "First-failure labels",
        report,
        (label_table(b) for b in report.blocks),
        [
            "Each failing rollout (FED <= T) carries the primary label of its first rejection "
            "(tie-break order schema, dependency, precondition, state consistency, information); "
            "the counts sum to RR-Eligible, the shares are of RR-Eligible.",
        ],
    )


def decomposition_md(report: Report) -> str:
    """``decomposition.md``: success = q s + (1 - q) r per condition, exactly (REP-DECOMP)."""
    lines = ["# Decomposition of final success (Eq. 12)", ""]
    lines += _note_lines_md(report)
    lines += [
        "q = TER = fully executable / N, s = successes among fully executable rollouts, "
        "r = RR = recovered / RR-Eligible; success = q s + (1 - q) r, checked exactly "
        "(a term whose weight is 0 is dropped: s is undefined only when q = 0, r only when q = 1).",
        "",
    ]
    header = [
        "method",
        "N",
        "q = TER",
        "s",
        "r = RR",
        "q s + (1 - q) r",
        "success",
        "identity",
        "uninterrupted",
        "recovered",
    ]
    for block in report.blocks:
        lines += [f"### {md_escape(block.name)}", ""]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|:--|--:|:--|:--|:--|:--|:--|:--|--:|--:|")
        sentences: list[str] = []
        for row in block.rows:
            d = decomposition_row(row)
            lines.append(
                "| "
                + " | ".join(
                    [
                        md_escape(d.method),
                        str(d.N),
                        f"{d.fully_executable}/{d.N} = {fmt(d.q)}",
                        NA if d.s is None else f"{d.uninterrupted}/{d.fully_executable} = {fmt(d.s)}",
                        NA if d.r is None else f"{d.recovered}/{d.rr_eligible} = {fmt(d.r)}",
                        _exact(d.combined),
                        f"{d.successes}/{d.N} = {fmt(d.success)}",
                        "holds" if d.holds else "FAILS",
                        str(d.uninterrupted),
                        str(d.recovered),
                    ]
                )
                + " |"
            )
            sentences.append(
                f"- {md_escape(d.method)}: {d.successes} of {d.N} rollouts succeeded; "
                f"{d.uninterrupted} without any invalid prefix and {d.recovered} after a first failure"
                + (
                    f" ({d.recovered}/{d.successes} = {percent(d.recovered, d.successes)} of the successes)."
                    if d.successes
                    else "."
                )
            )
        lines += ["", *sentences, ""]
    lines.append(f"signature: `{report.signature}`")
    return "\n".join(lines) + "\n"


def _exact(value: Fraction) -> str:
    return f"{exact(value)} = {fmt(value)}"


# ------------------------------------------------------------------------------------ CSV


def _float(value: Fraction | float | None) -> str:
    """Full precision: the shortest repr of the nearest double (empty when undefined, REP-CSV)."""
    return "" if value is None else repr(float(value))


def _exact_text(value: Fraction | int | None) -> str:
    return "" if value is None else exact(Fraction(value)) or ""


def _csv(rows: Sequence[Sequence[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()


def table_csv(report: Report) -> str:
    """``table.csv``: the main table, full precision, exact values, interval ends and bold flags.

    Ratio columns ``X`` come with ``X_exact``, ``X_lo``, ``X_hi`` (RR: Wilson) and ``X_best``
    (REP-BOLD); cost columns with ``X_mean`` and ``X_n``; every row carries the signature.
    """
    header = ["dataset", "model", "method"]
    tables = [main_table(b, report) for b in report.blocks]
    columns = tables[0].columns if tables else ()
    for c in columns:
        if _is_count(c):
            header.append(c.key)
        elif c.bolded:
            header += [c.key, f"{c.key}_exact", f"{c.key}_lo", f"{c.key}_hi", f"{c.key}_best"]
        else:
            header += [f"{c.key}_mean", f"{c.key}_n"]
    header.append("signature")
    out: list[list[str]] = [header]
    for table, block in zip(tables, report.blocks, strict=True):
        for (method, cells), row in zip(table.rows, block.rows, strict=True):
            line = [table.dataset, table.model, method]
            for c, cell in zip(columns, cells, strict=True):
                if _is_count(c):
                    line.append(cell.text)
                elif c.bolded:
                    lo, hi = cell.interval if cell.interval is not None else (None, None)
                    line += [
                        _float(cell.value),
                        _exact_text(cell.value),
                        _float(lo),
                        _float(hi),
                        str(cell.bold).lower(),
                    ]
                else:
                    cost = row.costs.get(c.key)
                    line += [_float(cost.mean if cost else None), str(cost.n if cost else 0)]
            line.append(report.signature)
            out.append(line)
    return _csv(out)


def checkpoints_csv(report: Report) -> str:
    """``checkpoints.csv``: one line per condition and depth: PEC, n_k and PEC_elig (Eq. 4-7)."""
    header = [
        "dataset",
        "model",
        "method",
        "k",
        "PEC",
        "PEC_exact",
        "PEC_lo",
        "PEC_hi",
        "PEC_best",
        "n_k",
        "PEC_elig",
        "PEC_elig_exact",
        "PEC_elig_lo",
        "PEC_elig_hi",
        "signature",
    ]
    out: list[list[str]] = [header]
    for block in report.blocks:
        table = checkpoint_table(block, report)
        for (method, cells), row in zip(table.rows, block.rows, strict=True):
            m, ivs = row.metrics, row.result.intervals
            for k, cell in zip(report.options.checkpoints, cells, strict=True):
                inside = k <= len(m.PEC)
                elig = m.PEC_elig[k - 1] if inside else None
                elig_iv = ivs.PEC_elig[k - 1] if (ivs is not None and inside) else None
                lo, hi = pec_interval(row, k) or (None, None)
                value = pec_at(m, k)
                out.append(
                    [
                        block.dataset,
                        block.model,
                        method,
                        str(k),
                        _float(value),
                        str(value),
                        _float(lo),
                        _float(hi),
                        str(cell.bold).lower(),
                        str(m.n_k[k - 1] if inside else 0),
                        _float(elig),
                        _exact_text(elig),
                        _float(elig_iv[0] if elig_iv else None),
                        _float(elig_iv[1] if elig_iv else None),
                        report.signature,
                    ]
                )
    return _csv(out)


def labels_csv(report: Report) -> str:
    """``labels.csv``: per condition, RR-Eligible and each label's count and share of it."""
    header = ["dataset", "model", "method", "RR_eligible"]
    for key in LABEL_KEYS:
        header += [key, f"{key}_share"]
    header.append("signature")
    out: list[list[str]] = [header]
    for block in report.blocks:
        for row in block.rows:
            m = row.metrics
            line = [block.dataset, block.model, row.key.method, str(m.RR_eligible)]
            for key in LABEL_KEYS:
                count = m.label_counts[key]
                share = None if m.RR_eligible == 0 else Fraction(count, m.RR_eligible)
                line += [str(count), _float(share)]
            line.append(report.signature)
            out.append(line)
    return _csv(out)


# ------------------------------------------------------------------------------------ LaTeX

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def tex_escape(text: str) -> str:
    """Escape LaTeX's special characters so that any name prints as itself."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in printable(text))


def _tex_cell(cell: Cell) -> str:
    text = tex_escape(cell.text)
    text = rf"\textbf{{{text}}}" if cell.bold else text
    if cell.interval is not None:
        text += rf" {{\scriptsize {tex_escape(fmt_interval(cell.interval))}}}"
    if cell.suffix:
        text += rf" {{\scriptsize {tex_escape(cell.suffix)}}}"
    return text


def _tex_typewriter(text: str) -> str:
    # In the typewriter font '|' is a plain glyph (\textbar would need the OMS encoding).
    return tex_escape(text).replace(r"\textbar{}", "|")


def _tex_caption(text: str) -> str:
    return tex_escape(text).replace(r"\textless{}=", r"$\leq$")


#: Short column titles of ``--tex-compact`` (REP-TEX-COMPACT).
COMPACT_TITLES = {
    "N": "$N$",
    "TER": "TER",
    "mean_FED": "FED",
    "AUC_PEC": "AUC",
    "RR_eligible": "Elig.",
    "RR": "RR",
    "success": "Succ.",
    "tokens": "Tok.",
    "latency_s": "Lat.",
}


def half_width(interval: tuple[float, float]) -> str:
    r"""``\pm`` and half the interval's width, rounded half up (REP-TEX-COMPACT)."""
    return rf"$\pm${fmt((interval[1] - interval[0]) / 2)}"


def _compact_second(cell: Cell) -> str:
    if cell.interval is not None:
        return rf"{{\scriptsize {half_width(cell.interval)}}}"
    if cell.suffix:
        return rf"{{\scriptsize {tex_escape(cell.suffix)}}}"
    return ""


def _breakable_typewriter(text: str) -> str:
    return _tex_typewriter(text).replace("|", r"|\allowbreak{}")


def _tex_value(cell: Cell) -> str:
    text = tex_escape(cell.text)
    return rf"\textbf{{{text}}}" if cell.bold else text


def _tex_end(report: Report, signature: str) -> list[str]:
    """The closing lines of ``table.tex``: rule, caption (REP-TEX) and the signature line."""
    caption = " ".join(
        p for p in [report.options.note, interval_caption(report), BOLD_CAPTION, MAIN_CAPTION] if p
    )
    return [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_tex_caption(caption)}}}",
        r"\par\smallskip",
        signature,
        r"\end{table}",
    ]


def table_tex_compact(report: Report) -> str:
    r"""``table.tex`` with ``--tex-compact``: fits one column of a two-column paper (REP-TEX-COMPACT).

    Short column titles, ``\footnotesize`` and narrow column gaps, each method's values on one
    line and, on a second line in ``\scriptsize``, the half-width of each interval (``±0.05``)
    and the cost suffixes (no interval: no second line); the same cells and bold flags as
    ``table.md``; the signature under the table, breakable at each ``|``.
    """
    tables = [main_table(b, report) for b in report.blocks]
    columns = tables[0].columns if tables else ()
    width = 1 + len(columns)
    spec = "@{}l" + "".join("r" if _is_count(c) else "c" for c in columns) + "@{}"
    out = [
        "% prefixexec report: main table, one-column layout. Needs \\usepackage{booktabs}.",
        r"\begin{table}[t]",
        r"\centering",
        r"\footnotesize",
        r"\setlength{\tabcolsep}{2pt}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(["Method", *(COMPACT_TITLES.get(c.key, tex_escape(c.title)) for c in columns)]) + r" \\",
    ]
    for table in tables:
        out.append(r"\midrule")
        out.append(rf"\multicolumn{{{width}}}{{@{{}}l}}{{\textit{{{tex_escape(table.title)}}}}} \\")
        for method, cells in table.rows:
            out.append(" & ".join([tex_escape(method), *(_tex_value(c) for c in cells)]) + r" \\")
            if any(c.interval is not None or c.suffix for c in cells):
                out.append(" & ".join(["", *(_compact_second(c) for c in cells)]) + r" \\[1pt]")
    out += _tex_end(report, rf"{{\tiny\texttt{{{_breakable_typewriter(report.signature)}}}}}")
    return "\n".join(out) + "\n"


def table_tex(report: Report) -> str:
    r"""``table.tex``: a ``table`` float with a booktabs ``tabular`` (needs ``\usepackage{booktabs}``).

    One ``\midrule``-separated block per dataset x model with an italic heading row, the same
    cells and bold flags as ``table.md``, and the signature under the table (REP-TEX). With
    ``--tex-compact``, :func:`table_tex_compact`.
    """
    if report.options.tex_compact:
        return table_tex_compact(report)
    tables = [main_table(b, report) for b in report.blocks]
    columns = tables[0].columns if tables else ()
    width = 1 + len(columns)
    spec = "l" + "".join("r" if _is_count(c) else "l" for c in columns)
    lines = [
        "% prefixexec report: main table. Needs \\usepackage{booktabs} in the preamble.",
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(["Method", *(tex_escape(c.title) for c in columns)]) + r" \\",
    ]
    for table in tables:
        lines.append(r"\midrule")
        lines.append(rf"\multicolumn{{{width}}}{{l}}{{\textit{{{tex_escape(table.title)}}}}} \\")
        for method, cells in table.rows:
            lines.append(" & ".join([tex_escape(method), *(_tex_cell(c) for c in cells)]) + r" \\")
    lines += _tex_end(report, rf"{{\footnotesize\texttt{{{_tex_typewriter(report.signature)}}}}}")
    return "\n".join(lines) + "\n"
