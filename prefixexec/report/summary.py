"""``summary.json``: everything in the report, machine-readable (spec: REP-SUMMARY).

Each condition is the ``score --json`` condition object (OUT-JSON, OUT-CI: the same keys and
values) with the report's additions: ``bold`` (the columns where it is the block's best at the
printed precision), ``checkpoints``, ``label_shares``, ``success_after_failure`` and, when the
records carry them, ``cost``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from prefixexec.inference import score_document
from prefixexec.kernel import LABEL_KEYS
from prefixexec.scoring import exact
from prefixexec.signature import SPEC_VERSION, Signature

from .model import (
    Report,
    checkpoint_table,
    decomposition_row,
    main_table,
    pec_at,
    pec_interval,
)

#: Version of the summary.json layout (keys may be added, never renamed or removed).
SUMMARY_VERSION = 1


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def summary_document(report: Report, files: Sequence[str]) -> dict[str, Any]:
    """The summary document of ``report``; ``files`` lists every file of the report folder."""
    # The condition objects of `score --json` (its signature field is not used: ours is below).
    base = score_document([row.result for row in report.rows], Signature(), report.harness)
    conditions: list[dict[str, Any]] = []
    by_key = {(c["dataset"], c["model"], c["method"]): c for c in base["conditions"]}
    for block in report.blocks:
        main = main_table(block, report)
        marks = checkpoint_table(block, report)
        for (method, cells), (_, cp_cells), row in zip(main.rows, marks.rows, block.rows, strict=True):
            cond = dict(by_key[(block.dataset, block.model, method)])
            m = row.metrics
            cond["bold"] = [c.key for c, cell in zip(main.columns, cells, strict=True) if cell.bold]
            cond["checkpoints"] = [
                {
                    "k": k,
                    "PEC": float(pec_at(m, k)),
                    "exact": exact(pec_at(m, k)),
                    "ci": _pair(pec_interval(row, k)),
                    "best": cell.bold,
                }
                for k, cell in zip(report.options.checkpoints, cp_cells, strict=True)
            ]
            cond["label_shares"] = {
                key: (None if m.RR_eligible == 0 else float(Fraction(m.label_counts[key], m.RR_eligible)))
                for key in LABEL_KEYS
            }
            d = decomposition_row(row)
            cond["success_after_failure"] = {
                "successes": d.successes,
                "after_failure": d.recovered,
                "share": None if d.after_failure is None else float(d.after_failure),
                "exact": exact(d.after_failure),
                "identity_holds": d.holds,
            }
            if report.cost_fields:
                cond["cost"] = {
                    name: (
                        None
                        if (cost := row.costs.get(name)) is None
                        else {"mean": float(cost.mean), "exact": exact(cost.mean), "n": cost.n}
                    )
                    for name in report.cost_fields
                }
            conditions.append(cond)
    o = report.options
    return {
        "summary_version": SUMMARY_VERSION,
        "spec": SPEC_VERSION,
        "signature": report.signature,
        "title": o.title,
        "note": o.note,
        "settings": {
            "checkpoints": list(o.checkpoints),
            "max_depth": o.max_depth,
            "eligible": o.eligible,
            "intervals": report.intervals,
            "panel": o.panel,
            "figure_size": o.figure_size,
        },
        "blocks": [
            {"dataset": b.dataset, "model": b.model, "methods": [r.key.method for r in b.rows]}
            for b in report.blocks
        ],
        "files": list(files),
        "conditions": conditions,
        **({"harness_errors": base["harness_errors"]} if "harness_errors" in base else {}),
    }
