"""Intervals and paired comparisons over conditions (spec: BOOT-*, OUT-CI, CMP-*).

Groups rollouts by dataset, checks that every condition of a dataset has the same task set
(unless pairing is explicitly given up), runs the kernel's bootstrap once per dataset, and shapes
the results for the JSON document and the table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from prefixexec.adapters import InputError
from prefixexec.adapters.numbers import exact_value

if TYPE_CHECKING:
    from prefixexec.adapters.harness import HarnessLog
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
    BootstrapMemoryError,
    BootstrapSettings,
    Intervals,
    ProgressFn,
    Replicates,
    Runner,
    TaskSums,
    bootstrap_dataset,
    bootstrap_task_sums,
    difference_interval,
    exact_difference,
    intervals,
    missing_tasks,
    percentile_intervals_rows,
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
    rollouts: Sequence[Rollout],
    settings: BootstrapSettings | None,
    paired: bool = True,
    *,
    keep_replicates: bool = True,
    memory_limit: int | None = None,
) -> list[ConditionResult]:
    """Point estimates for every condition and, when ``settings`` is given, bootstrap intervals.

    ``keep_replicates=False``: the intervals alone, by the blocked bootstrap in bounded memory
    (BOOT-BLOCK; the same intervals), planned against ``memory_limit`` (BOOT-MEMORY).
    """
    cohorts = group_by_condition(rollouts)
    if settings is not None and not keep_replicates:
        found = evaluate_accumulators(
            AccumulatorSet.from_rollouts(rollouts),
            settings,
            paired,
            keep_replicates=False,
            memory_limit=memory_limit,
        )
        by_key = {r.key: r for r in found}
        return [by_key[key] for key in cohorts]
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
    *,
    keep_replicates: bool = True,
    block: int | None = None,
    memory_limit: int | None = None,
    progress: ProgressFn | None = None,
    runner: Runner | None = None,
) -> list[ConditionResult]:
    """:func:`evaluate` from per-condition accumulators (STREAM-SCORE): the same results.

    Point estimates come from the accumulators' counts and the bootstrap from their per-task
    sums, so the input never has to be held in memory. ``keep_replicates=False``: intervals only,
    from the blocked bootstrap in bounded memory (BOOT-BLOCK; ``replicates`` is then ``None``;
    the same intervals bit for bit); ``block``, ``memory_limit``, ``progress`` and ``runner``
    as :func:`prefixexec.kernel.bootstrap.bootstrap_intervals` takes them. A request that cannot
    fit ``memory_limit`` raises InputError before any resample is drawn (BOOT-MEMORY).
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
    if not keep_replicates:
        found = blocked_intervals(by_dataset, settings, paired, block, memory_limit, progress, runner)
        return [ConditionResult(key, acc.metrics(), found[key]) for key, acc in accs.items()]
    for group in by_dataset.values():
        reps = bootstrap_task_sums(
            {key: acc.tasks for key, acc in group.items()},
            functools.partial(_task_sums, group),
            settings,
            paired,
            block,
        )
        for key, acc in group.items():
            m = acc.metrics()
            ivs = intervals(reps[key], m.recovered, m.RR_eligible, settings.level)
            results[key] = ConditionResult(key, m, ivs, reps[key])
    return [results[key] for key in accs]


def blocked_intervals(
    by_dataset: Mapping[str, Mapping[ConditionKey, Accumulator]],
    settings: BootstrapSettings,
    paired: bool,
    block: int | None = None,
    memory_limit: int | None = None,
    progress: ProgressFn | None = None,
    runner: Runner | None = None,
) -> dict[ConditionKey, Intervals]:
    """The intervals of every dataset's conditions by the blocked bootstrap (BOOT-BLOCK).

    Every dataset is planned before any is drawn (BOOT-MEMORY); ``progress(done, total)``
    counts the blocks of all datasets together.
    """
    from prefixexec.kernel.bootstrap import design_intervals, designs, plan

    found = []
    for group in by_dataset.values():
        found += designs(
            {key: acc.tasks for key, acc in group.items()}, functools.partial(_task_sums, group), paired
        )
    try:  # every dataset planned first: a request that cannot fit is refused before any work
        plans = [plan(d, settings.B, block, memory_limit=memory_limit) for d in found]
    except BootstrapMemoryError as exc:
        raise memory_error(exc, block is not None) from None
    return design_intervals(found, plans, settings, progress, runner)


def memory_error(exc: BootstrapMemoryError, block_given: bool) -> InputError:
    """BOOT-MEMORY's one line: what does not fit, and the option to change."""
    if block_given and exc.block_max >= 1:
        return InputError("--bootstrap-block", f"{exc.what}; use --bootstrap-block {exc.block_max} or less")
    if exc.B_max >= 1:
        return InputError("--bootstrap", f"{exc.what}; use --bootstrap {exc.B_max} or less")
    return InputError("--bootstrap", f"{exc.what}; score fewer tasks at once or use --bootstrap 0")


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
    diff_exact["PEC"] = [exact(a - b) for a, b in zip(pec_a, pec_b, strict=True)]
    if r.replicates is not None and base.replicates is not None:
        ra, rb = _padded(r.replicates.PEC, K, 0.0), _padded(base.replicates.PEC, K, 0.0)
        # Every depth's differences in one call (each row's interval as difference_interval's).
        ci["PEC"] = [_pair(i) for i in percentile_intervals_rows(np.ascontiguousarray((ra - rb).T), level)]
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
    match: str | None = None,
    adjust: str = "holm",
    memory_limit: int | None = None,
    on_comparison: Callable[[], None] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """CMP-BASELINE: every condition against its baseline condition, on their shared tasks.

    ``baseline`` is ``KEY=VALUE`` (or a bare method name, ``method=VALUE``). A condition whose KEY
    differs from VALUE is compared with the condition equal to it in the other two keys and with
    KEY = VALUE; both are restricted to the tasks they share, their point estimates are exact on
    those tasks and their paired replicates come from one resample draw over them (BOOT-DRAW,
    seed as given), so that the difference's interval (BOOT-COMPARE) and p-value (CMP-PVALUE) are
    paired. Returns the comparisons and what could not be compared, with why.

    ``match`` (CMP-MATCH): the keys a condition must share with its baseline condition besides
    the task ids, as ``task_id[,KEY...]``; by default the two keys other than KEY. Each comparison
    also carries the exact McNemar tests of success and full executability (CMP-MCNEMAR), p-values
    adjusted over the comparisons by ``adjust`` (``holm`` or ``none``, CMP-HOLM), and a warning
    when fewer than :data:`FEW_TASKS` tasks are shared (CMP-FEW-TASKS).
    """
    key_name, value = parse_baseline(baseline)
    matched = parse_match(match, key_name)
    if adjust not in ADJUSTMENTS:
        raise InputError("--adjust", f"expected one of {', '.join(ADJUSTMENTS)}, got {adjust!r}")
    accs = accumulators.as_dict()

    def others(k: ConditionKey) -> tuple[str, ...]:
        return tuple(getattr(k, n) for n in matched)

    bases: dict[tuple[str, ...], ConditionKey] = {}
    for k in accs:
        if getattr(k, key_name) == value:
            if others(k) in bases:
                raise InputError(
                    "--match",
                    f"baseline conditions {_key_text(bases[others(k)])} and {_key_text(k)} share "
                    f"{', '.join(('task_id', *matched))}: which one is the baseline? (match more keys, "
                    "or --select one)",
                )
            bases[others(k)] = k
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
            same = "the same other keys" if match is None else f"the same {', '.join(matched)}"
            skipped.append(f"{name} (no condition with {key_name} {value!r} and {same})")
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
            _check_kept_replicates(settings, (a_sub.K, b_sub.K), memory_limit)
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
        entry["match"] = ["task_id", *matched]
        entry["mcnemar"], entry["mcnemar_note"] = mcnemar_tests(a_sub, b_sub)
        entry["warnings"] = few_tasks_warning(len(shared))
        out.append(entry)
        if on_comparison is not None:  # PROGRESS-COUNT
            on_comparison()
    adjust_p_values(out, adjust)
    return out, skipped


def _key_text(k: ConditionKey) -> str:
    return f"{k.dataset} / {k.model} / {k.method}"


#: ``--adjust`` choices (CMP-HOLM).
ADJUSTMENTS = ("holm", "none")
#: Fewer shared tasks than this draw a warning (CMP-FEW-TASKS).
FEW_TASKS = 20
#: The paired binary outcomes of the exact McNemar test (CMP-MCNEMAR).
PAIRED_BINARY = ("success", "fully_executable")


def parse_match(match: str | None, key_name: str) -> tuple[str, ...]:
    """CMP-MATCH: the condition keys (besides ``task_id``) a condition shares with its baseline."""
    if match is None:
        return tuple(n for n in BASELINE_KEYS if n != key_name)
    names = [n.strip() for n in match.split(",")]
    bad = [n for n in names if n not in ("task_id", *BASELINE_KEYS)]
    if bad or "task_id" not in names or len(set(names)) != len(names):
        raise InputError(
            "--match",
            f"expected task_id, optionally with dataset, model or method (comma-separated): {match!r}",
        )
    if key_name in names:
        raise InputError("--match", f"{key_name} is the baseline's key: it differs by definition")
    return tuple(n for n in BASELINE_KEYS if n in names)


def few_tasks_warning(shared: int) -> list[str]:
    """CMP-FEW-TASKS: the warnings of a comparison on ``shared`` tasks."""
    if shared >= FEW_TASKS:
        return []
    return [
        f"only {shared} shared task(s), fewer than {FEW_TASKS}: the bootstrap interval and p-values "
        "are unreliable this small; read the exact McNemar test and the counts"
    ]


def _binary_outcomes(acc: Accumulator) -> dict[str, np.ndarray[Any, Any]] | None:
    """Per task (in ``acc.tasks`` order): success and full executability, when each task has one
    rollout (else ``None``: trials are not paired across conditions)."""
    if np.any(acc.counts() != 1):
        return None
    y = acc.class_y
    return {
        "success": y[:, 1::2].sum(axis=1) == 1,
        "fully_executable": (y[:, 0] + y[:, 1]) == 1,
    }


def mcnemar_tests(treatment: Accumulator, baseline: Accumulator) -> tuple[dict[str, Any] | None, str | None]:
    """CMP-MCNEMAR on two accumulators restricted to the same tasks: per paired binary outcome the
    2x2 counts and the exact two-sided p-value; ``(None, why)`` when a side has several rollouts
    for a task."""
    from .significance import mcnemar_p

    a, b = _binary_outcomes(treatment), _binary_outcomes(baseline)
    if a is None or b is None:
        return None, (
            "not computed: the exact McNemar test pairs one rollout per task on each side, and "
            f"{'this condition' if a is None else 'the baseline'} has several rollouts of a task"
        )
    out: dict[str, Any] = {}
    for name in PAIRED_BINARY:
        t, s = a[name], b[name]
        only_t, only_b = int(np.count_nonzero(t & ~s)), int(np.count_nonzero(~t & s))
        p, exact_p = mcnemar_p(only_t, only_b)
        out[name] = {
            "treatment_only": only_t,
            "baseline_only": only_b,
            "both": int(np.count_nonzero(t & s)),
            "neither": int(np.count_nonzero(~t & ~s)),
            "discordant": only_t + only_b,
            "p_value": p,
            "p_value_exact": exact(exact_p),
        }
    return out, None


def adjust_p_values(comparisons: Sequence[dict[str, Any]], adjust: str) -> None:
    """CMP-HOLM: add the adjusted p-values to each comparison, in place.

    The family of each test is its metric over all comparisons: the McNemar p-values of one
    outcome (``mcnemar[name].p_adjusted``, exact when every p-value of the family is) and the
    bootstrap p-values of one metric (``p_value_adjusted``). ``none`` copies the p-values.
    """
    from .significance import holm

    def adjusted(values: list[Any]) -> list[Any]:
        return holm(values) if adjust == "holm" else list(values)

    for name in PAIRED_BINARY:
        tests = [c["mcnemar"][name] if c.get("mcnemar") else None for c in comparisons]
        exacts = [None if t is None else t["p_value_exact"] for t in tests]
        all_exact = all(e is not None for t, e in zip(tests, exacts, strict=True) if t is not None)
        values = [
            None if t is None else (exact_value(t["p_value_exact"]) if all_exact else t["p_value"])
            for t in tests
        ]
        for t, v in zip(tests, adjusted(values), strict=True):
            if t is not None:
                t["p_adjusted"] = float(v)
                t["p_adjusted_exact"] = exact(v) if all_exact else None
    for name in SCALARS:
        values = [c["p_value"][name] if "p_value" in c else None for c in comparisons]
        for c, v in zip(comparisons, adjusted(values), strict=True):
            if "p_value" in c:
                c.setdefault("p_value_adjusted", {})[name] = v


def _check_kept_replicates(
    settings: BootstrapSettings, horizons: Sequence[int], memory_limit: int | None
) -> None:
    """BOOT-MEMORY for a comparison, which keeps every replicate of both sides (B x (5 + 2K)
    doubles each, for their paired differences): refused in one line when they cannot fit."""
    if memory_limit is None:
        return
    per_resample = sum(8 * (5 + 2 * K) for K in horizons) * 2  # the replicates and a difference
    if per_resample * settings.B > memory_limit:
        most = max(1, memory_limit // per_resample)
        raise InputError(
            "--bootstrap",
            f"the paired replicates of {settings.B} resamples need about "
            f"{per_resample * settings.B / 1e9:.1f} GB, "
            f"more than the {memory_limit / 1e9:.1f} GB available; use --bootstrap {most} or less",
        )


def score_document(
    results: Sequence[ConditionResult], signature: object, harness: HarnessLog | None = None
) -> dict[str, Any]:
    """The ``score --json`` document (OUT-JSON, OUT-CI): the signature and one object per condition.

    With ``harness`` (an adapter that reads harness errors), each condition carries
    ``harness_errors`` (counted, excluded) and the document lists every harness error
    (HARNESS-REPORT).
    """
    from prefixexec.adapters import harness as harness_errors

    conditions = []
    for r in results:
        cond = condition_json(r.key, r.metrics)
        if r.intervals is not None:
            cond["ci"], cond["ci_dropped"] = ci_json(r.intervals)
        if harness is not None:
            cond["harness_errors"] = harness_errors.condition_json(harness, r.key)
        conditions.append(cond)
    document: dict[str, Any] = {"signature": str(signature), "conditions": conditions}
    if harness is not None:
        document["harness_errors"] = harness_errors.document_json(harness)
    return document
