"""Leaderboards: every system of a dataset ranked by success and by prefix executability
(spec: spec/leaderboard.md, LB-*; pass^k: spec/passk.md, PASSK-*).

:func:`leaderboard_document` turns per-condition accumulators into the ``leaderboard --json``
document: per dataset, one entry per system with its point estimates (exact), intervals, rank
and rank interval per metric; Kendall's tau-b between the success ranking and each other
metric's; and the pairs of systems that success and another metric order differently, with the
share of resamples in which each order holds. Every replicate comes from one resample matrix
per dataset, drawn by the kernel's :func:`~prefixexec.kernel.bootstrap.resample_counts` exactly
as ``score`` draws it (BOOT-DRAW; :func:`resamples` is the one place), so the intervals equal
``score``'s (RR's is ``score``'s Wilson interval, its bootstrap one ``ci_bootstrap``: LB-CI) and
every rank, tau-b and order share is paired.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from prefixexec.adapters import InputError
from prefixexec.inference import restrict
from prefixexec.kernel import ConditionKey, ConditionMetrics
from prefixexec.kernel import passk as pk
from prefixexec.kernel.accumulator import Accumulator, AccumulatorSet
from prefixexec.kernel.bootstrap import (
    BootstrapSettings,
    IntArray,
    percentile_intervals_rows,
    resample_counts,
    weighted_sums,
    wilson_interval,
)
from prefixexec.kernel.bootstrap import _replicates_from as replicates_from
from prefixexec.scoring import approx, exact

FloatArray = npt.NDArray[np.float64]

#: JSON format name and version (LB-JSON).
JSON_FORMAT = "prefixexec-leaderboard"
JSON_VERSION = 1

#: The ranked metrics, in table order (LB-METRICS); every one is "higher is better".
METRICS: tuple[str, ...] = ("success", "TER", "AUC_PEC", "mean_FED", "RR", "pass_hat_k", "ter_hat_k")
#: The metrics compared with the success ranking (LB-KENDALL, LB-FLIPS).
PREFIX_METRICS: tuple[str, ...] = METRICS[1:]
#: Printed names; ``k`` is replaced by the leaderboard's k.
TITLES: Mapping[str, str] = {
    "success": "success",
    "TER": "TER",
    "AUC_PEC": "AUC-PEC",
    "mean_FED": "mean FED",
    "RR": "RR",
    "pass_hat_k": "pass^k",
    "ter_hat_k": "TER^k",
}
#: What a system is (LB-SYSTEM): the condition, or one of its keys.
BY: tuple[str, ...] = ("condition", "model", "method")
#: The scalar metrics whose replicates the kernel's bootstrap gives (Replicates.scalars).
_SCALARS = ("success", "TER", "AUC_PEC", "mean_FED", "RR")

#: The spec ID of every part of the document (LB-JSON: ``spec``).
SPEC_IDS: Mapping[str, str] = {
    "systems": "LB-SYSTEM",
    "tasks": "LB-TASKS",
    "metrics": "LB-METRICS",
    "ci": "PASSK-BOOT",
    "rank": "LB-RANK",
    "rank_ci": "LB-RANK-CI",
    "kendall": "LB-KENDALL",
    "flips": "LB-FLIPS",
    "pass_hat_k": "PASSK-HAT",
    "pass_at_k": "PASSK-AT",
    "ter_hat_k": "PASSK-TER",
    "ter_at_k": "PASSK-TER",
    "trials": "PASSK-TRIALS",
}


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class LeaderboardOptions:
    """What the leaderboard ranks and how (LB-*): ``by`` names a system, ``metrics`` are ranked
    beside success, ``k`` of pass^k / TER^k (None: the largest every system allows), ``trials``
    the PASSK-TRIALS convention, ``shared_tasks`` scores systems on the tasks all share."""

    by: str = attrs.field(default="condition")
    metrics: tuple[str, ...] = attrs.field(default=PREFIX_METRICS, converter=_names)
    k: int | None = attrs.field(default=None)
    trials: pk.Convention = attrs.field(default="tau2")
    shared_tasks: bool = False

    @by.validator
    def _check_by(self, attribute: attrs.Attribute[str], value: str) -> None:
        if value not in BY:
            raise ValueError(f"'by' must be one of {', '.join(BY)}: {value!r}")

    @metrics.validator
    def _check_metrics(self, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
        unknown = [m for m in value if m not in PREFIX_METRICS]
        if unknown:
            raise ValueError(f"'metrics' must be among {', '.join(PREFIX_METRICS)}: {', '.join(unknown)}")

    @k.validator
    def _check_k(self, attribute: attrs.Attribute[int | None], value: int | None) -> None:
        if value is not None and (isinstance(value, bool) or value < 1):
            raise ValueError(f"'k' must be an integer >= 1: {value!r}")

    @trials.validator
    def _check_trials(self, attribute: attrs.Attribute[str], value: str) -> None:
        if value not in pk.CONVENTIONS:
            raise ValueError(f"'trials' must be one of {', '.join(pk.CONVENTIONS)}: {value!r}")

    @property
    def ranked(self) -> tuple[str, ...]:
        """Success, then the chosen metrics in table order."""
        return ("success", *(m for m in PREFIX_METRICS if m in self.metrics))


def resamples(n_tasks: int, settings: BootstrapSettings) -> IntArray:
    """The dataset's resample counts W (B x tasks), drawn as ``score`` draws them (BOOT-DRAW,
    BOOT-PAIRED): the one place the leaderboard draws resamples.

    The leaderboard keeps the whole matrix (every system's ranks are taken per resample): a
    matrix that cannot fit in memory is refused before it is drawn, in one line (LB-MEMORY)."""
    from prefixexec.adapters import InputError
    from prefixexec.scale import available_memory

    limit = available_memory()
    need = _DRAW_BYTES * settings.B * max(n_tasks, 1)
    if limit is not None and need > limit:
        most = max(1, limit // (_DRAW_BYTES * max(n_tasks, 1)))
        raise InputError(
            "--bootstrap",
            f"the leaderboard keeps all {settings.B} resamples of {n_tasks} tasks, about "
            f"{need / 1e9:.1f} GB, more than the {limit / 1e9:.1f} GB available; use --bootstrap {most} "
            "or less (score and compare draw in bounded blocks: BOOT-BLOCK)",
        )
    return resample_counts(n_tasks, settings.B, settings.seed)


#: Bytes per resample and task while the matrix is drawn: the index matrix, its offsets and the
#: counts, int64 each (kernel.bootstrap.resample_counts).
_DRAW_BYTES = 24


@attrs.frozen(slots=True)
class _System:
    """One system of a dataset: its label, condition, accumulator and trial counts per task."""

    label: str
    key: ConditionKey
    acc: Accumulator
    metrics: ConditionMetrics
    n: tuple[int, ...]
    c: tuple[int, ...]
    e: tuple[int, ...]
    run_trials: int

    @property
    def cap(self) -> int:
        return pk.max_k(self.n)


def system_label(key: ConditionKey, by: str) -> str:
    """LB-SYSTEM: ``model / method`` for ``condition``, else that key's value."""
    return f"{key.model} / {key.method}" if by == "condition" else str(getattr(key, by))


def _labelled(
    dataset: str, items: Sequence[tuple[ConditionKey, Accumulator]], by: str
) -> dict[str, tuple[ConditionKey, Accumulator]]:
    out: dict[str, tuple[ConditionKey, Accumulator]] = {}
    for key, acc in items:
        label = system_label(key, by)
        if label in out:
            other = out[label][0]
            raise InputError(
                "--by",
                f"{dataset}: {other.model} / {other.method} and {key.model} / {key.method} have the same "
                f"{by} {label!r}, so they cannot be one system each; use --by condition, or --select one",
            )
        out[label] = (key, acc)
    return out


def _shown(tasks: Sequence[str]) -> str:
    return ", ".join(tasks[:10]) + (f", ... ({len(tasks)} in all)" if len(tasks) > 10 else "")


def _common_tasks(
    dataset: str, systems: Mapping[str, tuple[ConditionKey, Accumulator]], shared_tasks: bool
) -> tuple[tuple[str, ...] | None, dict[str, Any]]:
    """LB-TASKS: the task list every system is scored on, and what was dropped to get it;
    ``None`` when the systems do not share one task set and ``shared_tasks`` is off: each system
    is then scored on its own tasks (LB-UNPAIRED)."""
    sets = {label: set(acc.tasks) for label, (_, acc) in systems.items()}
    union = sorted(set().union(*sets.values()))
    shared = sorted(set.intersection(*sets.values()))
    lacking = {label: [t for t in union if t not in have] for label, have in sets.items()}
    info: dict[str, Any] = {"union": len(union), "shared": len(shared), "dropped": len(union) - len(shared)}
    if len(shared) == len(union):
        info["dropped_by_system"] = {label: 0 for label in systems}
        return tuple(union), info
    if not shared_tasks:
        # LB-UNPAIRED: each system on its own tasks, its interval from its own resamples
        info["dropped"] = 0
        info["dropped_by_system"] = {label: 0 for label in systems}
        info["paired"] = False
        info["lacking_by_system"] = {label: len(ts) for label, ts in lacking.items()}
        return None, info
    if not shared:
        raise InputError("--shared-tasks", f"{dataset}: no task is shared by every system")
    info["dropped_by_system"] = {label: len(sets[label]) - len(shared) for label in systems}
    from prefixexec.inference import few_tasks_warning

    warnings = few_tasks_warning(len(shared))  # LB-FEW-TASKS: as compare warns (CMP-FEW-TASKS)
    if warnings:
        info["warnings"] = warnings
    return tuple(shared), info


def _systems(
    dataset: str, items: Sequence[tuple[ConditionKey, Accumulator]], options: LeaderboardOptions
) -> tuple[list[_System], tuple[str, ...] | None, dict[str, Any]]:
    labelled = _labelled(dataset, items, options.by)
    tasks, info = _common_tasks(dataset, labelled, options.shared_tasks)
    out: list[_System] = []
    for label, (key, acc) in labelled.items():
        run_trials = acc.distinct_trials()  # of the whole condition, before any task is dropped
        if tasks is not None and acc.tasks != tasks:
            acc = restrict(acc, tasks)
        counts, executable, successes = acc.trial_counts()
        n = pk.trials_per_task(counts.tolist(), run_trials, options.trials)
        out.append(
            _System(
                label=label,
                key=key,
                acc=acc,
                metrics=acc.metrics(),
                n=n,
                c=tuple(int(x) for x in successes),
                e=tuple(int(x) for x in executable),
                run_trials=run_trials,
            )
        )
    return out, tasks, info


def _point(s: _System, metric: str, k: int, curves: Mapping[str, Sequence[Fraction]]) -> Fraction | None:
    if metric in curves:
        return curves[metric][k - 1]
    value: Fraction | None = getattr(s.metrics, metric)
    return value


# ------------------------------------------------------------------------------------- ranks


def average_ranks(values: FloatArray) -> FloatArray:
    """LB-RANK: rank of each column in every row of ``values`` (rows x systems), 1 = largest,
    ties by the average of the ranks they span: ``1 + #{greater} + (#{equal} - 1) / 2``."""
    rows, S = values.shape
    out = np.empty((rows, S), dtype=np.float64)
    step = max(1, (1 << 22) // max(S * S, 1))  # bounded memory: step x S x S comparisons
    for start in range(0, rows, step):
        block = values[start : start + step]
        greater = (block[:, None, :] > block[:, :, None]).sum(axis=2)
        equal = (block[:, None, :] == block[:, :, None]).sum(axis=2)
        out[start : start + step] = 1 + greater + (equal - 1) / 2
    return out


def exact_ranks(values: Sequence[Fraction]) -> list[Fraction]:
    """:func:`average_ranks` of exact point values."""
    return [
        1 + sum(1 for w in values if w > v) + Fraction(sum(1 for w in values if w == v) - 1, 2)
        for v in values
    ]


def pair_signs(values: FloatArray) -> npt.NDArray[np.int8]:
    """sign(v_i - v_j) for every pair i < j of the columns (rows x pairs, numpy.triu_indices order)."""
    i, j = np.triu_indices(values.shape[1], 1)
    signs: npt.NDArray[np.int8] = np.sign(values[:, i] - values[:, j]).astype(np.int8)
    return signs


def tau_b(x: npt.NDArray[Any], y: npt.NDArray[Any]) -> FloatArray:
    """LB-KENDALL: Kendall's tau-b of each row's two rankings, from their pair signs:
    ``(n_c - n_d) / sqrt((n_0 - n_1)(n_0 - n_2))``; NaN when either ranking is all ties."""
    num = (x.astype(np.float64) * y).sum(axis=1)  # integers, exact in float64
    den = np.sqrt(np.count_nonzero(x, axis=1).astype(np.float64) * np.count_nonzero(y, axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = num / den
    out[den == 0] = np.nan
    return out


def _sign(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


# ---------------------------------------------------------------------------------- datasets


@attrs.frozen(slots=True)
class _Boot:
    """Every replicate of one dataset: metric -> (systems x B), plus pass^k's per k."""

    scalars: Mapping[str, FloatArray]
    curves: Mapping[str, FloatArray]  # kind -> (systems x cap_max x B), NaN beyond a system's cap


def _bootstrap(systems: Sequence[_System], tasks: Sequence[str], settings: BootstrapSettings) -> _Boot:
    """Every replicate from the one resample matrix (BOOT-DRAW) in one weighted product: each
    system's per-task sums (BOOT-CLUSTER, the kernel's ``task_sums``) and pass^k's task columns
    (PASSK-BOOT) side by side, as ``score`` lays its conditions side by side."""
    W = resamples(len(tasks), settings)
    sums = [s.acc.task_sums(tasks) for s in systems]
    columns: list[tuple[Any, Any]] = []
    for s in systems:
        for k in range(1, s.cap + 1):
            columns += [
                pk.task_columns(s.n, s.c, k, False),
                pk.task_columns(s.n, s.c, k, True),
                pk.task_columns(s.n, s.e, k, False),
                pk.task_columns(s.n, s.e, k, True),
            ]
    X = np.concatenate([x.X for x in sums], axis=1)
    pass_X = np.column_stack([num for num, _ in columns])
    if pass_X.dtype == X.dtype:  # one product (binomials beyond int64 take their own, exact one)
        Z = weighted_sums(W, np.concatenate([X, pass_X], axis=1))
        Z_sums, Z_pass = Z[: X.shape[1]], Z[X.shape[1] :]
    else:
        Z_sums, Z_pass = weighted_sums(W, X), weighted_sums(W, pass_X)
    scalars: dict[str, list[FloatArray]] = {m: [] for m in _SCALARS}
    start = 0
    for x in sums:
        width = x.X.shape[1]
        reps = replicates_from(Z_sums[start : start + width], x)
        start += width
        for m in _SCALARS:
            scalars[m].append(reps.scalars[m])
    flat = pk.replicates(W, columns, Z_pass)
    cap = max(s.cap for s in systems)
    curves = {kind: np.full((len(systems), cap, settings.B), np.nan) for kind in pk.KINDS}
    row = 0
    for i, s in enumerate(systems):
        for k in range(s.cap):
            for kind in pk.KINDS:
                curves[kind][i, k] = flat[row]
                row += 1
    return _Boot(scalars={m: np.stack(v) for m, v in scalars.items()}, curves=curves)


def _boot_of(systems: Sequence[_System], tasks: Sequence[str] | None, settings: BootstrapSettings) -> _Boot:
    """The replicates of a dataset: paired (one draw over ``tasks``, :func:`_bootstrap`), or with
    ``tasks`` ``None`` unpaired: each system's own draw over its own sorted tasks from the same
    seed, as ``score --unpaired`` draws (LB-UNPAIRED, BOOT-PAIRED); the ranks of a resample then
    compare independent replicates."""
    if tasks is not None:
        return _bootstrap(systems, tasks, settings)
    own = [_bootstrap([s], s.acc.tasks, settings) for s in systems]
    cap = max(s.cap for s in systems)
    curves = {kind: np.full((len(systems), cap, settings.B), np.nan) for kind in pk.KINDS}
    for i, (s, boot) in enumerate(zip(systems, own, strict=True)):
        for kind in pk.KINDS:
            curves[kind][i, : s.cap] = boot.curves[kind][0, : s.cap]
    scalars = {m: np.concatenate([b.scalars[m] for b in own]) for m in _SCALARS}
    return _Boot(scalars=scalars, curves=curves)


def _curve_values(s: _System) -> dict[str, list[Fraction]]:
    ks = range(1, s.cap + 1)
    return {
        "pass_hat_k": [pk.pass_hat_k(s.n, s.c, k) for k in ks],
        "pass_at_k": [pk.pass_at_k(s.n, s.c, k) for k in ks],
        "ter_hat_k": [pk.ter_hat_k(s.n, s.e, k) for k in ks],
        "ter_at_k": [pk.ter_at_k(s.n, s.e, k) for k in ks],
    }


def _metric_rows(boot: _Boot, metric: str, k: int) -> FloatArray:
    """(systems x B) replicates of one ranked metric."""
    if metric in boot.scalars:
        return boot.scalars[metric]
    return boot.curves[metric][:, k - 1]


def _dataset(
    dataset: str,
    items: Sequence[tuple[ConditionKey, Accumulator]],
    settings: BootstrapSettings | None,
    options: LeaderboardOptions,
) -> dict[str, Any]:
    systems, tasks, task_info = _systems(dataset, items, options)
    caps = {s.label: s.cap for s in systems}
    common = min(caps.values())
    k = common if options.k is None else options.k
    if k > common:
        least = min(caps, key=lambda label: caps[label])
        raise InputError(
            "--k",
            f"{dataset}: k = {k} exceeds what every system allows: {common} ({least} has "
            f"{'a task with' if options.trials == 'tau2' else 'a run of'} {common} trial(s); PASSK-TRIALS)",
        )
    curves = [_curve_values(s) for s in systems]
    points = {m: [_point(s, m, k, c) for s, c in zip(systems, curves, strict=True)] for m in METRICS}
    boot = None if settings is None else _boot_of(systems, tasks, settings)
    entries = [
        _entry(s, points, curves[i], i, len(s.acc.tasks) if tasks is None else len(tasks), settings)
        for i, s in enumerate(systems)
    ]
    if boot is not None and settings is not None:
        _intervals(entries, systems, boot, k, settings.level)
    level = 0.95 if settings is None else settings.level
    # At k = 1, pass^k and TER^k are the task-weighted success and TER (PASSK-K1): shown, not ranked.
    ranked = tuple(m for m in options.ranked if k > 1 or m not in ("pass_hat_k", "ter_hat_k"))
    rows = {m: None if boot is None else _metric_rows(boot, m, k) for m in ranked}
    for m in ranked:
        _ranks(entries, m, points[m], rows[m], level)
    success_rows = rows["success"]
    success_pairs = None if success_rows is None else _Pairs.of(success_rows)
    kendall: list[dict[str, Any]] = []
    flips: list[dict[str, Any]] = []
    flipped_pairs: dict[str, int] = {}
    for m in ranked[1:]:  # one metric's pair signs at a time (B x pairs each)
        tau, (total, flipped) = _compared(m, systems, points, rows, level, success_pairs)
        kendall.append(tau)
        flips += flipped
        flipped_pairs[m] = total
    order = sorted(range(len(systems)), key=lambda i: (-(points["success"][i] or 0), systems[i].label))
    return {
        "dataset": dataset,
        "k": k,
        "max_k": common,
        "tasks": {
            "scored": len(set().union(*(s.acc.tasks for s in systems))) if tasks is None else len(tasks),
            "paired": tasks is not None,
            **task_info,
        },
        "shown": list(options.ranked),
        "ranked": list(ranked),
        "systems": [entries[i] for i in order],
        "kendall": kendall,
        "flips": flips,
        "flipped_pairs": flipped_pairs,
    }


def _entry(
    s: _System,
    points: Mapping[str, Sequence[Fraction | None]],
    curves: Mapping[str, Sequence[Fraction]],
    i: int,
    tasks: int,
    settings: BootstrapSettings | None,
) -> dict[str, Any]:
    """One system's object (LB-JSON) with its point estimates; intervals and ranks come later."""
    metrics: dict[str, Any] = {
        m: {"value": approx(points[m][i]), "exact": exact(points[m][i])} for m in METRICS
    }
    if settings is not None:
        metrics["RR"]["ci_wilson"] = _pair(
            wilson_interval(s.metrics.recovered, s.metrics.RR_eligible, settings.level)
        )
    return {
        "system": s.label,
        "model": s.key.model,
        "method": s.key.method,
        "N": s.metrics.N,
        "tasks": tasks,
        "trials": {"min": min(s.n), "max": max(s.n), "run": s.run_trials, "max_k": s.cap},
        "RR_eligible": s.metrics.RR_eligible,
        "recovered": s.metrics.recovered,
        "metrics": metrics,
        "curves": {
            kind: [{"k": j + 1, "value": approx(v), "exact": exact(v)} for j, v in enumerate(values)]
            for kind, values in curves.items()
        },
    }


def _intervals(
    entries: list[dict[str, Any]], systems: Sequence[_System], boot: _Boot, k: int, level: float
) -> None:
    """PASSK-BOOT, BOOT-PERCENTILE: every metric's interval and its left-out count, in place."""
    for i, (entry, s) in enumerate(zip(entries, systems, strict=True)):
        rows = np.concatenate(
            [np.stack([boot.scalars[m][i] for m in _SCALARS])]
            + [boot.curves[kind][i, : s.cap] for kind in pk.KINDS]
        )
        nan = np.isnan(rows)
        dropped = np.count_nonzero(nan, axis=1).tolist()
        found = percentile_intervals_rows(rows, level, nan, overwrite=True)  # rows is a new array
        for j, m in enumerate(_SCALARS):
            entry["metrics"][m]["ci"] = _pair(found[j])
            entry["metrics"][m]["ci_dropped"] = int(dropped[j])
        # LB-CI: RR's interval is the signature's rr:wilson, as score's (a percentile interval of
        # a proportion of a few rollouts can be [0, 0]); the bootstrap's, which the ranks
        # resample, is kept as ci_bootstrap (ci_dropped counts its left-out resamples).
        rr = entry["metrics"]["RR"]
        rr["ci_bootstrap"], rr["ci"] = rr["ci"], rr["ci_wilson"]
        at = len(_SCALARS)
        for kind in pk.KINDS:
            for point in entry["curves"][kind]:
                point["ci"], point["ci_dropped"] = _pair(found[at]), int(dropped[at])
                at += 1
        for m in ("pass_hat_k", "ter_hat_k"):
            entry["metrics"][m]["ci"] = entry["curves"][m][k - 1]["ci"]
            entry["metrics"][m]["ci_dropped"] = entry["curves"][m][k - 1]["ci_dropped"]


def _defined(values: Sequence[Fraction | None]) -> tuple[list[int], list[Fraction]]:
    """The systems whose point value is defined (CONV-UNDEFINED: RR without eligible rollouts)."""
    index = [i for i, v in enumerate(values) if v is not None]
    return index, [v for v in values if v is not None]


def _kept(rows: FloatArray, index: Sequence[int]) -> tuple[FloatArray, int]:
    """The resamples (B' x systems) in which every system of ``index`` is defined, and how many
    were left out (LB-RANK-CI, BOOT-DROP)."""
    block = rows[list(index)].T
    keep = ~np.isnan(block).any(axis=1)
    return block[keep], int(np.count_nonzero(~keep))


def _ranks(
    entries: list[dict[str, Any]],
    metric: str,
    values: Sequence[Fraction | None],
    rows: FloatArray | None,
    level: float,
) -> None:
    """LB-RANK and LB-RANK-CI for one metric, written into ``entries``."""
    index, defined = _defined(values)
    for entry in entries:
        entry["metrics"][metric]["rank"] = None
    for i, r in zip(index, exact_ranks(defined), strict=True):
        entries[i]["metrics"][metric]["rank"] = float(r)
    if rows is None:
        return
    for entry in entries:
        entry["metrics"][metric]["rank_ci"] = None
    if not index:
        return
    block, dropped = _kept(rows, index)
    found: list[tuple[float, float] | None] = [None] * len(index)
    if block.shape[0]:
        found = percentile_intervals_rows(np.ascontiguousarray(average_ranks(block).T), level)
    for col, i in enumerate(index):
        entries[i]["metrics"][metric]["rank_ci"] = _pair(found[col])
        entries[i]["metrics"][metric]["rank_ci_dropped"] = dropped


def _both(
    points: Mapping[str, Sequence[Fraction | None]], metric: str
) -> tuple[list[int], list[Fraction], list[Fraction]]:
    """The systems for which both success and ``metric`` are defined, with both values."""
    index = [
        i
        for i, (a, b) in enumerate(zip(points["success"], points[metric], strict=True))
        if a is not None and b is not None
    ]
    xs = [points["success"][i] for i in index]
    ys = [points[metric][i] for i in index]
    return index, [x for x in xs if x is not None], [y for y in ys if y is not None]


def _exact_signs(values: Sequence[Fraction]) -> list[int]:
    """:func:`pair_signs` of exact values (numpy.triu_indices order)."""
    return [_sign(values[i], values[j]) for i in range(len(values)) for j in range(i + 1, len(values))]


@attrs.frozen(slots=True)
class _Pairs:
    """Replicate pair signs of one metric: sign(v_i - v_j) for every pair i < j of the dataset's
    systems in every resample (B x pairs, float32: -1, 0, 1, NaN where a replicate is undefined),
    and each pair's column."""

    signs: npt.NDArray[np.float32]
    column: Mapping[tuple[int, int], int]

    @classmethod
    def of(cls, rows: FloatArray) -> _Pairs:
        S = rows.shape[0]
        i, j = np.triu_indices(S, 1)
        values = rows.T.astype(np.float64, copy=False)
        signs = np.sign(values[:, i] - values[:, j]).astype(np.float32)
        return cls(signs, {(int(a), int(b)): c for c, (a, b) in enumerate(zip(i, j, strict=True))})

    def oriented(self, first: int, second: int) -> npt.NDArray[np.float32]:
        """sign(v_first - v_second) in every resample."""
        if first < second:
            return self.signs[:, self.column[(first, second)]]
        out: npt.NDArray[np.float32] = -self.signs[:, self.column[(second, first)]]
        return out


def _compared(
    metric: str,
    systems: Sequence[_System],
    points: Mapping[str, Sequence[Fraction | None]],
    rows: Mapping[str, FloatArray | None],
    level: float,
    success_pairs: _Pairs | None,
) -> tuple[dict[str, Any], tuple[int, list[dict[str, Any]]]]:
    """LB-KENDALL and LB-FLIPS of one metric against success, from one set of pair signs."""
    metric_rows = rows[metric]
    pairs = None if metric_rows is None or success_pairs is None else _Pairs.of(metric_rows)
    both = None if pairs is None or success_pairs is None else (success_pairs, pairs)
    return _kendall(metric, points, level, both), _flips(metric, systems, points, both)


def _kendall(
    metric: str,
    points: Mapping[str, Sequence[Fraction | None]],
    level: float,
    pairs: tuple[_Pairs, _Pairs] | None,
) -> dict[str, Any]:
    """LB-KENDALL: tau-b between the success ranking and ``metric``'s, with its interval."""
    index, xs, ys = _both(points, metric)
    sx, sy = _exact_signs(xs), _exact_signs(ys)
    concordant = sum(1 for a, b in zip(sx, sy, strict=True) if a * b > 0)
    discordant = sum(1 for a, b in zip(sx, sy, strict=True) if a * b < 0)
    ties_x, ties_y = sx.count(0), sy.count(0)
    n_pairs = len(sx)
    den = (n_pairs - ties_x) * (n_pairs - ties_y)
    value = None if den == 0 else (concordant - discordant) / float(np.sqrt(float(den)))
    out: dict[str, Any] = {
        "metric": metric,
        "systems": len(index),
        "pairs": n_pairs,
        "concordant": concordant,
        "discordant": discordant,
        "ties_success": ties_x,
        "ties_metric": ties_y,
        "tau_b": value,
    }
    if pairs is None:
        return out
    s, m = pairs
    columns = [s.column[(index[a], index[b])] for a in range(len(index)) for b in range(a + 1, len(index))]
    x, y = s.signs[:, columns], m.signs[:, columns]
    keep = ~(np.isnan(x).any(axis=1) | np.isnan(y).any(axis=1))  # every system defined (BOOT-DROP)
    taus = tau_b(x[keep], y[keep])
    out["ci"] = _pair(percentile_intervals_rows(taus.reshape(1, -1), level)[0]) if taus.size else None
    out["ci_dropped"] = int(np.count_nonzero(~keep)) + int(np.count_nonzero(np.isnan(taus)))
    return out


def _shares(signs: npt.NDArray[np.float32]) -> dict[str, float]:
    """The share of resamples in which the first system is ahead, tied, the second ahead."""
    n = max(int(signs.shape[0]), 1)
    return {
        "first": int(np.count_nonzero(signs > 0)) / n,
        "tie": int(np.count_nonzero(signs == 0)) / n,
        "second": int(np.count_nonzero(signs < 0)) / n,
    }


_ORDER = {1: ">", 0: "=", -1: "<"}


#: LB-FLIPS: at most this many flipped pairs are listed per metric (all are counted).
MAX_FLIPS = 20


def _flips(
    metric: str,
    systems: Sequence[_System],
    points: Mapping[str, Sequence[Fraction | None]],
    pairs: tuple[_Pairs, _Pairs] | None,
) -> tuple[int, list[dict[str, Any]]]:
    """LB-FLIPS: the pairs that success and ``metric`` order differently at the point estimates:
    their number, and the :data:`MAX_FLIPS` largest of them (HOSTILE-COUNT-COST: every pair of
    300 systems was 5.1 MB of text; the largest are those whose two differences sum highest)."""
    index, xs, ys = _both(points, metric)
    candidates: list[tuple[Fraction, int, int, int, int]] = []
    total = 0
    for a in range(len(index)):
        for b in range(a + 1, len(index)):
            sx, sy = _sign(xs[a], xs[b]), _sign(ys[a], ys[b])
            if sx == sy:
                continue
            total += 1
            size = abs(xs[a] - xs[b]) + abs(ys[a] - ys[b])
            candidates.append((-size, a, b, sx, sy))
            if len(candidates) > 4 * MAX_FLIPS:  # keep memory bounded: the largest so far
                candidates = heapq.nsmallest(MAX_FLIPS, candidates)
    found: list[dict[str, Any]] = []
    # the largest, listed in the order of the pairs (as every pair was before)
    for _, a, b, sx, sy in sorted(heapq.nsmallest(MAX_FLIPS, candidates), key=lambda c: (c[1], c[2])):
        # The first system is the one success puts ahead (on a success tie, the one the
        # metric puts ahead), so "first > second" reads as the success order.
        first, second = (a, b) if (sx > 0 or (sx == 0 and sy > 0)) else (b, a)
        flip = 1 if first == a else -1
        entry: dict[str, Any] = {
            "metric": metric,
            "first": systems[index[first]].label,
            "second": systems[index[second]].label,
            "success_order": _ORDER[sx * flip],
            "metric_order": _ORDER[sy * flip],
        }
        if pairs is not None:
            s_all = pairs[0].oriented(index[first], index[second])
            m_all = pairs[1].oriented(index[first], index[second])
            keep = ~(np.isnan(s_all) | np.isnan(m_all))  # all four replicates defined
            s_sign, m_sign = s_all[keep], m_all[keep]
            n = max(int(s_sign.shape[0]), 1)
            entry["resamples"] = {
                "success": _shares(s_sign),
                "metric": _shares(m_sign),
                "differ": int(np.count_nonzero(s_sign != m_sign)) / n,
                "used": int(s_sign.shape[0]),
                "dropped": int(np.count_nonzero(~keep)),
            }
        found.append(entry)
    return total, found


# ---------------------------------------------------------------------------------- document


def leaderboard_document(
    accumulators: AccumulatorSet,
    settings: BootstrapSettings | None,
    options: LeaderboardOptions,
    signature: str,
    skip_unshared: bool = False,
) -> dict[str, Any]:
    """The ``leaderboard --json`` document (LB-JSON): one leaderboard per dataset, in order.

    ``skip_unshared`` (the report's leaderboard, LB-REPORT): a dataset whose systems share no
    task is listed under ``skipped`` with the reason instead of being an error.
    """
    by_dataset: dict[str, list[tuple[ConditionKey, Accumulator]]] = {}
    for key, acc in accumulators.items:
        by_dataset.setdefault(key.dataset, []).append((key, acc))
    if not by_dataset:
        raise InputError("input", "no rollouts to rank")
    datasets: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for name, items in sorted(by_dataset.items()):
        if skip_unshared and not set.intersection(*(set(acc.tasks) for _, acc in items)):
            skipped.append({"dataset": name, "reason": "its systems share no task"})
            continue
        datasets.append(_dataset(name, items, settings, options))
    return {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "signature": signature,
        "spec": dict(SPEC_IDS),
        "settings": {
            "by": options.by,
            "metrics": list(options.ranked),
            "k": options.k,
            "trials": options.trials,
            "shared_tasks": options.shared_tasks,
            "bootstrap": 0 if settings is None else settings.B,
            "seed": None if settings is None else settings.seed,
            "level": None if settings is None else settings.level,
        },
        "datasets": datasets,
        **({"skipped": skipped} if skip_unshared else {}),
    }
