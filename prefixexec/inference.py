"""Intervals and paired comparisons over conditions (spec: BOOT-*, OUT-CI, CMP-*).

Groups rollouts by dataset, checks that every condition of a dataset has the same task set
(unless pairing is explicitly given up), runs the kernel's bootstrap once per dataset, and shapes
the results for the JSON document and the table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs
import numpy as np

from prefixexec.adapters import InputError
from prefixexec.kernel import (
    Cohort,
    ConditionKey,
    ConditionMetrics,
    Rollout,
    compute_metrics,
    group_by_condition,
)
from prefixexec.kernel.accumulator import Accumulator, AccumulatorSet
from prefixexec.kernel.bootstrap import (
    BootstrapSettings,
    Intervals,
    Replicates,
    TaskSums,
    bootstrap_dataset,
    bootstrap_task_sums,
    difference_interval,
    exact_difference,
    intervals,
    missing_tasks,
)

from .scoring import approx, condition_json, exact

Interval = tuple[float, float] | None


@attrs.frozen(slots=True)
class ConditionResult:
    """Point estimates of one condition, with its intervals and replicates when bootstrapped."""

    key: ConditionKey
    metrics: ConditionMetrics
    intervals: Intervals | None = None
    replicates: Replicates | None = None


def _by_dataset(cohorts: Mapping[ConditionKey, Cohort]) -> dict[str, dict[ConditionKey, Cohort]]:
    out: dict[str, dict[ConditionKey, Cohort]] = {}
    for key, cohort in cohorts.items():
        out.setdefault(key.dataset, {})[key] = cohort
    return out


def check_pairing(cohorts: Mapping[ConditionKey, Cohort]) -> None:
    """BOOT-PAIRED: raise InputError listing the task ids each condition lacks."""
    _check_missing({key: missing_tasks(group) for key, group in _by_dataset(cohorts).items()})


def check_pairing_tasks(task_ids: Mapping[ConditionKey, Sequence[str]]) -> None:
    """:func:`check_pairing` for conditions given by their (sorted, unique) task ids."""
    by_dataset: dict[str, dict[ConditionKey, Sequence[str]]] = {}
    for key, ids in task_ids.items():
        by_dataset.setdefault(key.dataset, {})[key] = ids
    missing: dict[str, dict[ConditionKey, tuple[str, ...]]] = {}
    for dataset, group in by_dataset.items():
        union = sorted({t for ids in group.values() for t in ids})
        missing[dataset] = {}
        for key, ids in group.items():
            have = set(ids)
            missing[dataset][key] = tuple(t for t in union if t not in have)
    _check_missing(missing)


def _check_missing(missing_by_dataset: Mapping[str, Mapping[ConditionKey, tuple[str, ...]]]) -> None:
    problems: list[str] = []
    for dataset, group in missing_by_dataset.items():
        for key, missing in group.items():
            if missing:
                shown = ", ".join(missing[:10]) + (
                    f", ... ({len(missing)} in all)" if len(missing) > 10 else ""
                )
                problems.append(f"{dataset} / {key.model} / {key.method} lacks task(s) {shown}")
    if problems:
        raise InputError(
            "input",
            "conditions of a dataset must share one task set for paired intervals; "
            + "; ".join(problems)
            + " (use --unpaired to give up pairing explicitly)",
        )


def evaluate(
    rollouts: Sequence[Rollout], settings: BootstrapSettings | None, paired: bool = True
) -> list[ConditionResult]:
    """Point estimates for every condition and, when ``settings`` is given, bootstrap intervals."""
    cohorts = group_by_condition(rollouts)
    if settings is None:
        return [ConditionResult(key, compute_metrics(c)) for key, c in cohorts.items()]
    if paired:
        check_pairing(cohorts)
    results: dict[ConditionKey, ConditionResult] = {}
    for group in _by_dataset(cohorts).values():
        reps = bootstrap_dataset(group, settings, paired=paired)
        for key, cohort in group.items():
            m = compute_metrics(cohort)
            ivs = intervals(reps[key], m.recovered, m.RR_eligible, settings.level)
            results[key] = ConditionResult(key, m, ivs, reps[key])
    return [results[key] for key in cohorts]


def _task_sums(
    group: Mapping[ConditionKey, Accumulator], key: ConditionKey, tasks: Sequence[str]
) -> TaskSums:
    return group[key].task_sums(tasks)


def evaluate_accumulators(
    accumulators: AccumulatorSet,
    settings: BootstrapSettings | None,
    paired: bool = True,
    on_dataset: Callable[[], None] | None = None,
) -> list[ConditionResult]:
    """:func:`evaluate` from per-condition accumulators (STREAM-SCORE): the same results.

    Point estimates come from the accumulators' counts and the bootstrap from their per-task
    sums, so the input never has to be held in memory. ``on_dataset`` is called after each
    dataset's bootstrap (PROGRESS-COUNT).
    """
    accs = accumulators.as_dict()
    if settings is None:
        return [ConditionResult(key, acc.metrics()) for key, acc in accs.items()]
    if paired:
        check_pairing_tasks({key: acc.tasks for key, acc in accs.items()})
    results: dict[ConditionKey, ConditionResult] = {}
    by_dataset: dict[str, dict[ConditionKey, Accumulator]] = {}
    for key, acc in accs.items():
        by_dataset.setdefault(key.dataset, {})[key] = acc
    for group in by_dataset.values():
        reps = bootstrap_task_sums(
            {key: acc.tasks for key, acc in group.items()},
            functools.partial(_task_sums, group),
            settings,
            paired=paired,
        )
        for key, acc in group.items():
            m = acc.metrics()
            ivs = intervals(reps[key], m.recovered, m.RR_eligible, settings.level)
            results[key] = ConditionResult(key, m, ivs, reps[key])
        if on_dataset is not None:
            on_dataset()
    return [results[key] for key in accs]


def _pair(interval: Interval) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def ci_json(ivs: Intervals) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``ci`` and ``ci_dropped`` objects of one condition (OUT-CI)."""
    ci: dict[str, Any] = {
        "TER": _pair(ivs.scalars["TER"]),
        "AUC_PEC": _pair(ivs.scalars["AUC_PEC"]),
        "mean_FED": _pair(ivs.scalars["mean_FED"]),
        "success": _pair(ivs.scalars["success"]),
        "RR_wilson": _pair(ivs.RR_wilson),
        "RR_bootstrap": _pair(ivs.scalars["RR"]),
        "PEC": [_pair(i) for i in ivs.PEC],
        "PEC_elig": [_pair(i) for i in ivs.PEC_elig],
    }
    dropped: dict[str, Any] = dict(ivs.dropped)
    dropped["PEC_elig"] = list(ivs.dropped_PEC_elig)
    return ci, dropped


def table_intervals(ivs: Intervals | None) -> dict[str, Interval] | None:
    """The intervals the readable table prints next to each value (RR: Wilson)."""
    if ivs is None:
        return None
    return {
        "TER": ivs.scalars["TER"],
        "mean_FED": ivs.scalars["mean_FED"],
        "AUC_PEC": ivs.scalars["AUC_PEC"],
        "success": ivs.scalars["success"],
        "RR_wilson": ivs.RR_wilson,
    }


# ---------------------------------------------------------------------------------------------
# Paired comparisons against a baseline method (CMP-PAIRED)

SCALARS = ("TER", "AUC_PEC", "mean_FED", "success", "RR")


def _point(m: ConditionMetrics, name: str) -> Fraction | None:
    value: Fraction | None = getattr(m, name)
    return value


def _padded(values: np.ndarray[Any, Any], K: int, fill: float) -> np.ndarray[Any, Any]:
    if values.shape[1] >= K:
        return values
    pad = np.full((values.shape[0], K - values.shape[1]), fill)
    return np.concatenate([values, pad], axis=1)


def compare(
    results: Sequence[ConditionResult], baseline: str, level: float
) -> tuple[list[dict[str, Any]], list[str]]:
    """Paired differences (method - baseline) per dataset and model, with percentile intervals.

    Returns the comparison objects and the (dataset / model) blocks that lack the baseline.
    Raises InputError when no block has the baseline method.
    """
    blocks: dict[tuple[str, str], dict[str, ConditionResult]] = {}
    for r in results:
        blocks.setdefault((r.key.dataset, r.key.model), {})[r.key.method] = r
    if not any(baseline in methods for methods in blocks.values()):
        known = sorted({m for methods in blocks.values() for m in methods})
        raise InputError("--baseline", f"no condition has method {baseline!r} (methods: {', '.join(known)})")
    out: list[dict[str, Any]] = []
    skipped: list[str] = []
    for (dataset, model), methods in blocks.items():
        if baseline not in methods:
            skipped.append(f"{dataset} / {model}")
            continue
        base = methods[baseline]
        for method, r in methods.items():
            if method == baseline:
                continue
            out.append(_comparison(dataset, model, method, baseline, r, base, level))
    return out, skipped


def _comparison(
    dataset: str,
    model: str,
    method: str,
    baseline: str,
    r: ConditionResult,
    base: ConditionResult,
    level: float,
) -> dict[str, Any]:
    diff: dict[str, Any] = {}
    diff_exact: dict[str, Any] = {}
    ci: dict[str, Any] = {}
    dropped: dict[str, Any] = {}
    for name in SCALARS:
        d = exact_difference(_point(r.metrics, name), _point(base.metrics, name))
        diff[name], diff_exact[name] = approx(d), exact(d)
        if r.replicates is not None and base.replicates is not None:
            interval, n_drop = difference_interval(
                r.replicates.scalars[name], base.replicates.scalars[name], level
            )
            ci[name], dropped[name] = _pair(interval), n_drop
    K = max(len(r.metrics.PEC), len(base.metrics.PEC))
    pec_a = list(r.metrics.PEC) + [Fraction(0)] * (K - len(r.metrics.PEC))
    pec_b = list(base.metrics.PEC) + [Fraction(0)] * (K - len(base.metrics.PEC))
    diff["PEC"] = [float(a - b) for a, b in zip(pec_a, pec_b, strict=True)]
    diff_exact["PEC"] = [str(a - b) for a, b in zip(pec_a, pec_b, strict=True)]
    if r.replicates is not None and base.replicates is not None:
        ra, rb = _padded(r.replicates.PEC, K, 0.0), _padded(base.replicates.PEC, K, 0.0)
        ci["PEC"] = [_pair(difference_interval(ra[:, k], rb[:, k], level)[0]) for k in range(K)]
    entry: dict[str, Any] = {
        "dataset": dataset,
        "model": model,
        "method": method,
        "baseline": baseline,
        "diff": diff,
        "exact": diff_exact,
    }
    if ci:
        entry["ci"] = ci
        entry["ci_dropped"] = dropped
    if r.replicates is not None and base.replicates is not None:
        tests = {
            name: paired_test(r.replicates.scalars[name], base.replicates.scalars[name]) for name in SCALARS
        }
        entry["p_value"] = {name: t[0] for name, t in tests.items()}
        entry["p_value_resamples"] = {name: t[1] for name, t in tests.items()}
    return entry


def paired_test(treatment: np.ndarray[Any, Any], baseline: np.ndarray[Any, Any]) -> tuple[float | None, int]:
    """:func:`paired_p_value` and the number B' of defined replicate differences it used."""
    d = np.asarray(treatment, dtype=float) - np.asarray(baseline, dtype=float)
    return paired_p_value(treatment, baseline), int(np.count_nonzero(~np.isnan(d)))


def paired_p_value(treatment: np.ndarray[Any, Any], baseline: np.ndarray[Any, Any]) -> float | None:
    """CMP-PVALUE: two-sided paired bootstrap p-value of ``H0: difference = 0``.

    From the same resamples as the interval: with d* the defined replicate differences
    (treatment - baseline, resamples where either is undefined left out) and B' their number,
    ``p = min(1, 2 min(#{d* <= 0}, #{d* >= 0}) / B')``: the smallest 1 - level at which the
    percentile interval of d* (BOOT-COMPARE) stops covering 0, the bootstrap test obtained by
    inverting the percentile interval (Efron & Tibshirani 1993, An Introduction to the
    Bootstrap, ch. 16). ``None`` when no replicate is defined. A p-value of 0 means that no
    replicate fell on the other side of 0: p < 2/B'.
    """
    d = np.asarray(treatment, dtype=float) - np.asarray(baseline, dtype=float)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return None
    tail = min(int(np.count_nonzero(d <= 0)), int(np.count_nonzero(d >= 0)))
    return float(min(1.0, 2.0 * tail / int(d.size)))


#: Keys a ``--baseline KEY=VALUE`` may name (CMP-BASELINE).
BASELINE_KEYS = ("dataset", "model", "method")


def parse_baseline(text: str) -> tuple[str, str]:
    """``--baseline``: ``KEY=VALUE`` (KEY dataset, model or method), or a bare METHOD."""
    key, sep, value = text.partition("=")
    if not sep:
        return "method", text
    if key not in BASELINE_KEYS or not value:
        raise InputError(
            "--baseline", f"expected METHOD or KEY=VALUE with KEY one of {', '.join(BASELINE_KEYS)}: {text!r}"
        )
    return key, value


def restrict(acc: Accumulator, tasks: Sequence[str]) -> Accumulator:
    """The accumulator of the rollouts of ``acc`` whose task is in ``tasks`` (sorted, all in acc)."""
    index = {t: i for i, t in enumerate(acc.tasks)}
    rows = np.array([index[t] for t in tasks], dtype=np.int64)
    T_hist = acc.T_hist[rows]
    used = np.flatnonzero(T_hist.sum(axis=0))
    K = int(used[-1]) + 1 if used.size else 0
    new_row = np.full(len(acc.tasks), -1, dtype=np.int64)
    new_row[rows] = np.arange(len(rows), dtype=np.int64)
    trials = acc.trials[np.isin(acc.trials[:, 0], rows)].copy()
    trials[:, 0] = new_row[trials[:, 0]]
    return Accumulator(
        tasks=tuple(tasks),
        fed_hist=acc.fed_hist[rows][:, : K + 1],
        T_hist=T_hist[:, :K],
        steps_by_T=acc.steps_by_T[rows][:, :K],
        class_y=acc.class_y[rows],
        trials=trials,
    )


def compare_conditions(
    accumulators: AccumulatorSet,
    settings: BootstrapSettings | None,
    baseline: str,
    level: float,
    on_comparison: Callable[[], None] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """CMP-BASELINE: every condition against its baseline condition, on their shared tasks.

    ``baseline`` is ``KEY=VALUE`` (or a bare method name, ``method=VALUE``). A condition whose KEY
    differs from VALUE is compared with the condition equal to it in the other two keys and with
    KEY = VALUE; both are restricted to the tasks they share, their point estimates are exact on
    those tasks and their paired replicates come from one resample draw over them (BOOT-DRAW,
    seed as given), so that the difference's interval (BOOT-COMPARE) and p-value (CMP-PVALUE) are
    paired. Returns the comparisons and what could not be compared, with why.
    """
    key_name, value = parse_baseline(baseline)
    accs = accumulators.as_dict()

    def others(k: ConditionKey) -> tuple[str, ...]:
        return tuple(getattr(k, n) for n in BASELINE_KEYS if n != key_name)

    bases = {others(k): k for k in accs if getattr(k, key_name) == value}
    if not bases:
        known = sorted({getattr(k, key_name) for k in accs})
        raise InputError(
            "--baseline", f"no condition has {key_name} {value!r} ({key_name}s: {', '.join(known)})"
        )
    out: list[dict[str, Any]] = []
    skipped: list[str] = []
    for k, acc in accs.items():
        if getattr(k, key_name) == value:
            continue
        b = bases.get(others(k))
        name = f"{k.dataset} / {k.model} / {k.method}"
        if b is None:
            skipped.append(f"{name} (no condition with {key_name} {value!r} and the same other keys)")
            continue
        shared = sorted(set(acc.tasks) & set(accs[b].tasks))
        if not shared:
            skipped.append(f"{name} (no task shared with its baseline)")
            continue
        a_sub, b_sub = restrict(acc, shared), restrict(accs[b], shared)
        ma, mb = a_sub.metrics(), b_sub.metrics()
        if settings is None:
            ra, rb = ConditionResult(k, ma), ConditionResult(b, mb)
        else:
            subs = {k: a_sub, b: b_sub}
            reps = bootstrap_task_sums(
                {k: shared, b: shared}, functools.partial(_task_sums, subs), settings, paired=True
            )
            ra = ConditionResult(k, ma, None, reps[k])
            rb = ConditionResult(b, mb, None, reps[b])
        label = getattr(k, key_name)
        entry = _comparison(k.dataset, k.model, k.method, value, ra, rb, level)
        entry["compared"] = label
        entry["baseline_key"] = key_name
        entry["baseline_condition"] = {"dataset": b.dataset, "model": b.model, "method": b.method}
        entry["shared_tasks"] = len(shared)
        entry["tasks"] = len(acc.tasks)
        entry["baseline_tasks"] = len(accs[b].tasks)
        out.append(entry)
        if on_comparison is not None:  # PROGRESS-COUNT
            on_comparison()
    return out, skipped


def score_document(results: Sequence[ConditionResult], signature: object) -> dict[str, Any]:
    """The ``score --json`` document (OUT-JSON, OUT-CI): the signature and one object per condition."""
    conditions = []
    for r in results:
        cond = condition_json(r.key, r.metrics)
        if r.intervals is not None:
            cond["ci"], cond["ci_dropped"] = ci_json(r.intervals)
        conditions.append(cond)
    return {"signature": str(signature), "conditions": conditions}
