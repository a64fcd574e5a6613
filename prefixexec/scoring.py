"""The `score` output: the JSON contract and the readable table (spec: OUT-JSON, OUT-TABLE)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from prefixexec.kernel import ConditionKey, ConditionMetrics


def exact(value: Fraction | None) -> str | None:
    """An exact ratio as a string such as ``"139/200"`` (``None`` stays ``None``)."""
    return None if value is None else str(value)


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
    """Serialise deterministically (fixed key order, no NaN), ending with a newline."""
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _fmt(value: Fraction | float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{float(value):.{digits}f}"


def _fmt_ci(value: Fraction | None, interval: Sequence[float | None] | None, digits: int = 2) -> str:
    text = _fmt(value, digits)
    if interval is None or value is None or interval[0] is None or interval[1] is None:
        return text
    return f"{text} [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def format_table(
    rows: Sequence[tuple[ConditionKey, ConditionMetrics, Mapping[str, Any] | None]],
    signature: str,
) -> str:
    """A readable table, one block per dataset x model, values with intervals as in Table 2."""
    headers = ["method", "N", "TER", "mean FED", "AUC-PEC", "RR-elig", "RR", "success"]
    lines: list[str] = []
    block: tuple[str, str] | None = None
    table: list[list[str]] = []

    def flush() -> None:
        if not table:
            return
        widths = [max(len(r[i]) for r in [headers, *table]) for i in range(len(headers))]
        lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        for r in table:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        lines.append("")
        table.clear()

    for key, m, ci in rows:
        if block != (key.dataset, key.model):
            flush()
            block = (key.dataset, key.model)
            lines.append(f"{key.dataset} / {key.model}")
        ci = ci or {}
        table.append(
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
    flush()
    lines.append(f"signature: {signature}")
    return "\n".join(lines) + "\n"


def format_comparisons(
    comparisons: Sequence[Mapping[str, Any]], skipped: Sequence[str], signature: str
) -> str:
    """A readable table of paired differences (condition - baseline) with intervals and p-values.

    One block per baseline condition; a row per compared condition with the number of tasks the
    two share, then each metric's difference, its percentile interval and its paired bootstrap
    p-value (CMP-PVALUE), when intervals are on.
    """
    names = ("TER", "mean_FED", "AUC_PEC", "RR", "success")
    lines: list[str] = []
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
        lines.append(
            f"baseline {dataset} / {model} / {method}: difference = {key} - baseline {key} "
            f"({key} {items[0]['baseline']}), paired on shared tasks"
        )
        headers = [key, "tasks", *(n.replace("_", " ") for n in names)]
        rows: list[list[str]] = []
        for c in items:
            shared = c.get("shared_tasks")
            cells = [str(c.get("compared", c["method"])), "" if shared is None else str(shared)]
            for name in names:
                value = c["diff"][name]
                interval = c.get("ci", {}).get(name)
                p = c.get("p_value", {}).get(name)
                text = "n/a" if value is None else f"{value:+.3f}"
                if value is not None and interval is not None:
                    text += f" [{interval[0]:+.3f}, {interval[1]:+.3f}]"
                if value is not None and p is not None:
                    n = c.get("p_value_resamples", {}).get(name) or 1
                    text += f" p<{2 / n:.2g}" if p == 0 else f" p={p:.3f}"
                cells.append(text)
            rows.append(cells)
        widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
        lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)
        lines.append("")
    if skipped:
        lines.append("not compared: " + "; ".join(skipped))
    lines.append(f"signature: {signature}")
    return "\n".join(lines) + "\n"
