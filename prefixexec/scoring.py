"""The `score` output: the JSON contract and the readable table (spec: OUT-JSON, OUT-TABLE)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from prefixexec.kernel import ConditionKey, ConditionMetrics
from prefixexec.numbers import half_up as half_up  # re-exported: the one formatting path
from prefixexec.numbers import number, p_value, signed, signed_interval, significant, with_interval


def exact(value: Fraction | None) -> str | None:
    """An exact ratio as a string such as ``"139/200"`` (``None`` stays ``None``), at any size
    (HOSTILE-BIGINT: a numerator of more than 4,300 digits is written whole, not refused)."""
    if value is None:
        return None
    if value.numerator.bit_length() < 14_000 and value.denominator.bit_length() < 14_000:
        return str(value)  # fewer than 4,300 digits each (the common case, without an import)
    from prefixexec.adapters.numbers import exact_text

    return exact_text(value)


def approx(value: Fraction | None) -> float | None:
    """The nearest double to an exact ratio, for display (``None`` stays ``None``)."""
    return None if value is None else float(value)


def condition_json(key: ConditionKey, m: ConditionMetrics) -> dict[str, Any]:
    """One condition object of ``score --json`` (keys are part of the contract: add, never rename)."""
    d = m.decomposition
    return {
        "dataset": key.dataset,
        "model": key.model,
        "method": key.method,
        "N": m.N,
        "TER": approx(m.TER),
        "AUC_PEC": approx(m.AUC_PEC),
        "mean_FED": approx(m.mean_FED),
        "success": approx(m.success),
        "RR": approx(m.RR),
        "RR_eligible": m.RR_eligible,
        "recovered": m.recovered,
        "fully_executable": d.fully_executable,
        "PEC": [approx(v) for v in m.PEC],
        "PEC_elig": [approx(v) for v in m.PEC_elig],
        "n_k": list(m.n_k),
        "labels": m.label_counts,
        "decomposition": {
            "q": approx(d.q),
            "s": approx(d.s),
            "r": approx(d.r),
            "uninterrupted": d.uninterrupted,
            "recovered": d.recovered,
        },
        "exact": {
            "TER": exact(m.TER),
            "AUC_PEC": exact(m.AUC_PEC),
            "mean_FED": exact(m.mean_FED),
            "success": exact(m.success),
            "RR": exact(m.RR),
            "PEC": [exact(v) for v in m.PEC],
            "PEC_elig": [exact(v) for v in m.PEC_elig],
            "decomposition": {"q": exact(d.q), "s": exact(d.s), "r": exact(d.r)},
        },
    }


def dumps(document: Mapping[str, Any]) -> str:
    """Serialise deterministically (fixed key order, no NaN), ending with a newline (JSON escapes
    every C0 control character, ESC included: HOSTILE-CONTROL)."""
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _fmt(value: Fraction | float | None, digits: int = 2) -> str:
    return number(value, digits)


def _fmt_ci(value: Fraction | None, interval: Sequence[float | None] | None, digits: int = 2) -> str:
    return with_interval(value, interval, digits)


Block = tuple[str, Sequence[str], Sequence[Sequence[str]]]

#: A rich markup tag (rich.markup.RE_TAGS): a cell holding one is rendered by rich.
_MARKUP_TAG = re.compile(r"\[[a-z#/@]")


def _plain(text: str) -> bool:
    """Printable ASCII without a markup tag: rich writes it as it is, one cell per character."""
    return text.isascii() and text.isprintable() and _MARKUP_TAG.search(text) is None


def render_blocks(blocks: Sequence[Block], signature: str) -> str:
    """Titled tables laid out as ``rich`` lays them out, as plain text (no colour, no width
    limit), then the signature.

    Each block is ``(title, headers, rows)``: the title on its own line, the header, a rule under
    it, one line per row, columns separated by two spaces, rows starting at the first column
    (OUT-TABLE). Tables of printable ASCII text (the usual case) are laid out here, without
    importing rich (start-up, issue 16): each column as wide as its widest cell, cells padded
    with spaces, one space of padding and one separator between columns, a rule of '-' under the
    header; tests/test_startup.py checks that this is rich's layout. Anything else (other
    characters, markup) is laid out by rich itself.
    """
    blocks = _printable_blocks(blocks)  # HOSTILE-CONTROL: names from the input, escaped
    column_widths: list[list[int]] = []
    for title, headers, rows in blocks:
        if not rows or not headers or not _plain(title):
            return render_blocks_rich(blocks, signature)
        for row in (headers, *rows):
            if len(row) != len(headers) or not all(_plain(cell) for cell in row):
                return render_blocks_rich(blocks, signature)
        widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]
        if min(widths) == 0 or sum(widths) + 2 * len(widths) >= _RICH_WIDTH:  # an empty or huge column
            return render_blocks_rich(blocks, signature)
        column_widths.append(widths)
    lines: list[str] = []
    for (title, headers, rows), widths in zip(blocks, column_widths, strict=True):
        # Each column but the last carries one space of padding on its right; columns are
        # joined by one space (the table's box draws no edges and spaces where columns meet).
        padded = [w + 1 for w in widths[:-1]] + [widths[-1]]
        lines.append(title)
        for index, row in enumerate((headers, *rows)):
            lines.append(" ".join(cell.ljust(w) for cell, w in zip(row, padded, strict=True)))
            if index == 0:
                lines.append(" ".join("-" * w for w in padded))
        lines.append("")
    lines = [line.rstrip() for line in lines]
    return "\n".join([*lines, f"signature: {signature}"]) + "\n"


def _printable_blocks(blocks: Sequence[Block]) -> list[Block]:
    """``blocks`` with every title, header and cell escaped by :func:`printable` (HOSTILE-CONTROL:
    a name holding an escape sequence or a newline is shown, not acted on)."""
    from prefixexec.adapters.text import printable

    return [
        (printable(title), [printable(h) for h in headers], [[printable(c) for c in row] for row in rows])
        for title, headers, rows in blocks
    ]


#: The console width rich lays the tables out in (no table is that wide).
_RICH_WIDTH = 100_000


def render_blocks_rich(blocks: Sequence[Block], signature: str) -> str:
    """:func:`render_blocks` laid out by ``rich`` (any text)."""
    import io

    from rich.box import Box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    blocks = _printable_blocks(blocks)
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=_RICH_WIDTH, no_color=True, force_terminal=False, highlight=False, emoji=False
    )
    for title, headers, rows in blocks:
        table = Table(
            # ASCII only: a rule of '-' under the header, a space where columns meet.
            box=Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True),
            show_edge=False,
            pad_edge=False,
            padding=(0, 1),
            collapse_padding=True,
            title=None,
        )
        for header in headers:
            table.add_column(Text(header), no_wrap=True, overflow="ignore")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row))  # text, not markup
        console.print(title, markup=False)
        console.print(table)
        console.print()
    lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
    return "\n".join([*lines, f"signature: {signature}"]) + "\n"


def format_table(
    rows: Sequence[tuple[ConditionKey, ConditionMetrics, Mapping[str, Any] | None]],
    signature: str,
    notes: Sequence[str] = (),
) -> str:
    """A readable table, one block per dataset x model, values with intervals as in Table 2;
    ``notes`` (e.g. the harness errors per condition, HARNESS-REPORT) go above the signature."""
    headers = ["method", "N", "TER", "mean FED", "AUC-PEC", "RR-elig", "RR", "success"]
    blocks: list[tuple[str, Sequence[str], list[list[str]]]] = []
    current: tuple[str, str] | None = None
    for key, m, ci in rows:
        if current != (key.dataset, key.model):
            current = (key.dataset, key.model)
            blocks.append((f"{key.dataset} / {key.model}", headers, []))
        ci = ci or {}
        blocks[-1][2].append(
            [
                key.method,
                str(m.N),
                _fmt_ci(m.TER, ci.get("TER")),
                _fmt_ci(m.mean_FED, ci.get("mean_FED")),
                _fmt_ci(m.AUC_PEC, ci.get("AUC_PEC")),
                str(m.RR_eligible),
                _fmt_ci(m.RR, ci.get("RR_wilson")),
                _fmt_ci(m.success, ci.get("success")),
            ]
        )
    return with_notes(render_blocks(blocks, signature), notes)


def with_notes(text: str, notes: Sequence[str]) -> str:
    """``text`` (ending in its ``signature:`` line) with ``notes`` inserted above the signature."""
    if not notes:
        return text
    head, _, tail = text.rpartition("signature: ")
    return head + "".join(f"{note}\n" for note in notes) + "signature: " + tail


def format_comparisons(
    comparisons: Sequence[Mapping[str, Any]], skipped: Sequence[str], signature: str
) -> str:
    """A readable table of paired differences (condition - baseline) with intervals and p-values
    (:func:`comparison_blocks`), then its warnings and what was not compared."""
    text = render_blocks(comparison_blocks(comparisons), signature)
    return with_notes(text, comparison_notes(comparisons, skipped))


def comparison_notes(comparisons: Sequence[Mapping[str, Any]], skipped: Sequence[str]) -> list[str]:
    """The lines under ``compare``'s table: each comparison's warnings, what was not compared."""
    notes = [
        f"warning: {c.get('compared', c['method'])}: {w}" for c in comparisons for w in c.get("warnings", ())
    ]
    if skipped:
        notes.append(f"not compared: {'; '.join(skipped)}")
    return notes


def comparison_blocks(comparisons: Sequence[Mapping[str, Any]]) -> list[Block]:
    """``compare``'s tables as (title, headers, rows of cells), every cell through
    :mod:`prefixexec.numbers`: the text table and the notebook's HTML print these (API-CONSISTENT).

    One block per baseline condition; a row per compared condition with the number of tasks the
    two share, then each metric's difference, its percentile interval and its paired bootstrap
    p-value (CMP-PVALUE), when intervals are on.
    """
    names = ("TER", "mean_FED", "AUC_PEC", "RR", "success")
    tables: list[Block] = []
    blocks: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for c in comparisons:
        base = c.get("baseline_condition") or {
            "dataset": c["dataset"],
            "model": c["model"],
            "method": c["baseline"],
        }
        blocks.setdefault(
            (base["dataset"], base["model"], base["method"], c.get("baseline_key", "method")), []
        ).append(c)
    for (dataset, model, method, key), items in blocks.items():
        title = (
            f"baseline {dataset} / {model} / {method}: difference = {key} - baseline {key} "
            f"({key} {items[0]['baseline']}), paired on shared tasks"
        )
        headers = [key, "tasks", *(n.replace("_", " ") for n in names)]
        rows: list[list[str]] = []
        for c in items:
            shared = c.get("shared_tasks")
            cells = [str(c.get("compared", c["method"])), "" if shared is None else str(shared)]
            for name in names:
                value = c.get("exact", {}).get(name, c["diff"][name])  # the exact difference
                interval = c.get("ci", {}).get(name)
                p = c.get("p_value", {}).get(name)
                text = signed(value)
                if value is not None and interval is not None:
                    text += f" {signed_interval(interval)}"
                if value is not None and p is not None:
                    text += f" {p_value(p, c.get('p_value_resamples', {}).get(name) or 1)}"
                cells.append(text)
            rows.append(cells)
        tables.append((title, headers, rows))
        if any("mcnemar" in c for c in items):
            tables.append(_mcnemar_block(key, items))
    return tables


def _mcnemar_block(
    key: str, items: Sequence[Mapping[str, Any]]
) -> tuple[str, Sequence[str], list[list[str]]]:
    """CMP-MCNEMAR in the table: per comparison, the tasks only it / only the baseline got right,
    the exact two-sided p-value and the adjusted one (CMP-HOLM)."""
    title = "exact McNemar tests (tasks only this / only the baseline; two-sided exact p, adjusted p)"
    headers = [key, "tasks", "success", "fully executable"]
    rows: list[list[str]] = []
    for c in items:
        cells = [str(c.get("compared", c["method"])), str(c.get("shared_tasks", ""))]
        tests = c.get("mcnemar")
        for name in ("success", "fully_executable"):
            if not tests:
                cells.append("n/a (several rollouts per task)")
                continue
            t = tests[name]
            cells.append(
                f"{t['treatment_only']}/{t['baseline_only']} p={significant(t['p_value'])} "
                f"adj={significant(t['p_adjusted'])}"
            )
        rows.append(cells)
    return title, headers, rows
