"""The Python API: score, metrics, bootstrap and read, for notebooks and other tools (spec: API-*).

``import prefixexec`` re-exports these names lazily. Everything here computes what the command
line computes: :func:`score` gives the ``score --json`` document byte for byte
(:meth:`Scores.to_json`), and every number is exact (``Fraction``) with its float interval.

Arrays are validated as scikit-learn's metrics validate theirs: any array-like (list, tuple,
numpy array, pandas or polars Series) is accepted; a wrong shape, a non-integer value or a value
out of range raises ``ValueError`` naming the argument.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from prefixexec.adapters import AdapterOptions
    from prefixexec.inference import ConditionResult
    from prefixexec.kernel import ConditionMetrics, Rollout
    from prefixexec.kernel.estimators import Decomposition

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Keyword options of :func:`read` and :func:`score` (the command line's adapter options).
ADAPTER_OPTIONS = (
    "model",
    "method",
    "category",
    "threshold",
    "scorer",
    "error_pattern",
    "by",
    "label_rules",
    "harness_errors",
    "inference_errors",
    "unit",
    "bfcl_decoder",
    "system_from",
)
#: Metrics with a bootstrap distribution (:func:`bootstrap`).
BOOTSTRAP_METRICS = ("TER", "AUC_PEC", "mean_FED", "success", "RR")


# ---------------------------------------------------------------------------------------------
# Validation of array-likes (API-ARRAYS)


def _column(name: str, value: object) -> npt.NDArray[Any]:
    """``value`` as a 1-D numpy array; ValueError naming ``name`` otherwise."""
    if isinstance(value, str | bytes) or value is None:
        raise ValueError(f"{name!r} must be an array-like of numbers, got {type(value).__name__}")
    to_numpy = getattr(value, "to_numpy", None)  # pandas / polars Series
    array = np.asarray(to_numpy() if callable(to_numpy) else value)
    if array.ndim != 1:
        raise ValueError(f"{name!r} must be 1-dimensional, got shape {array.shape}")
    if array.shape[0] == 0:
        raise ValueError(f"{name!r} is empty: a cohort needs at least one rollout")
    return array


def _integers(name: str, value: object, minimum: int) -> IntArray:
    array = _column(name, value)
    if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
        raise ValueError(f"{name!r} must hold integers, got dtype {array.dtype}")
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            bad = int(np.flatnonzero(~np.isfinite(array) | (array != np.round(array)))[0])
            raise ValueError(f"{name!r} must hold integers: entry {bad} is {float(array[bad])!r}")
    out = array.astype(np.int64)
    if np.any(out < minimum):
        bad = int(np.flatnonzero(out < minimum)[0])
        raise ValueError(f"{name!r} must be >= {minimum}: entry {bad} is {int(out[bad])}")
    return out


def _booleans(name: str, value: object) -> BoolArray:
    array = _column(name, value)
    if array.dtype == np.bool_:
        return array
    if array.dtype.kind not in "iuf" or not np.all((array == 0) | (array == 1)):
        raise ValueError(f"{name!r} must hold booleans (or 0/1), got {array.dtype} values")
    return array.astype(np.bool_)


def check_outcomes(
    T: object, fed: object, success: object | None = None
) -> tuple[IntArray, IntArray, BoolArray]:
    """API-ARRAYS: ``T`` (>= 1), ``fed`` (1..T+1) and ``success`` as validated numpy arrays of one length."""
    t = _integers("T", T, 1)
    f = _integers("fed", fed, 1)
    if f.shape[0] != t.shape[0]:
        raise ValueError(
            f"'fed' has {f.shape[0]} entries, 'T' has {t.shape[0]}: they must have the same length"
        )
    over = f > t + 1
    if np.any(over):
        bad = int(np.flatnonzero(over)[0])
        raise ValueError(f"'fed' must be in [1, T+1]: entry {bad} has T={int(t[bad])}, fed={int(f[bad])}")
    if success is None:
        y = np.zeros(t.shape[0], dtype=np.bool_)
    else:
        y = _booleans("success", success)
        if y.shape[0] != t.shape[0]:
            raise ValueError(f"'success' has {y.shape[0]} entries, 'T' has {t.shape[0]}")
    return t, f, y


def _cohort(T: object, fed: object, success: object | None, tasks: object | None = None) -> Any:
    from prefixexec.kernel import Cohort
    from prefixexec.kernel.cohort import CODE_NONE, CODE_UNLABELLED

    t, f, y = check_outcomes(T, fed, success)
    codes = np.where(f == t + 1, CODE_NONE, CODE_UNLABELLED)
    if tasks is None:
        ids = [str(i) for i in range(t.shape[0])]
    else:
        ids = [str(x) for x in _column("tasks", tasks).tolist()]
        if len(ids) != t.shape[0]:
            raise ValueError(f"'tasks' has {len(ids)} entries, 'T' has {t.shape[0]}")
    return Cohort(T=t, fed=f, Y=y, label_code=codes, task=ids)


def metrics(T: object, fed: object, success: object) -> ConditionMetrics:
    """API-METRICS: every point estimate of one cohort (exact Fractions and ints) from array-likes.

    ``T[i]`` is rollout i's horizon (>= 1), ``fed[i]`` its first-error depth (1..T[i]+1) and
    ``success[i]`` its final success (bool or 0/1).
    """
    from prefixexec.kernel import compute_metrics

    return compute_metrics(_cohort(T, fed, success))


# The kernel's estimators taking (T, fed[, Y]) arrays, wrapped to accept any array-like.


def ter(T: object, fed: object) -> Fraction:
    """Eq. (8): the trajectory executability rate, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import ter as kernel_ter

    t, f, _ = check_outcomes(T, fed)
    return kernel_ter(t, f)


def auc_pec(T: object, fed: object) -> Fraction:
    """Eq. (11): the horizon-normalised AUC-PEC, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import auc_pec as kernel_auc_pec

    t, f, _ = check_outcomes(T, fed)
    return kernel_auc_pec(t, f)


def auc_pec_area(T: object, fed: object) -> Fraction:
    """Eq. (10)'s area form, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import auc_pec_area as kernel_area

    t, f, _ = check_outcomes(T, fed)
    return kernel_area(t, f)


def pec_curve(T: object, fed: object) -> tuple[Fraction, ...]:
    """Eq. (4) at k = 1..max T, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import pec_curve as kernel_pec_curve

    t, f, _ = check_outcomes(T, fed)
    return kernel_pec_curve(t, f)


def pec_elig_curve(T: object, fed: object) -> tuple[Fraction | None, ...]:
    """Eq. (6) at k = 1..max T, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import pec_elig_curve as kernel_curve

    t, f, _ = check_outcomes(T, fed)
    return kernel_curve(t, f)


def rr_eligible(T: object, fed: object) -> int:
    """Eq. (9): RR-Eligible, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import rr_eligible as kernel_rr_eligible

    t, f, _ = check_outcomes(T, fed)
    return kernel_rr_eligible(t, f)


def rr(T: object, fed: object, success: object) -> Fraction | None:
    """Eq. (9): the recovery rate, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import rr as kernel_rr

    t, f, y = check_outcomes(T, fed, success)
    return kernel_rr(t, f, y)


def recovered(T: object, fed: object, success: object) -> int:
    """Eq. (9)'s numerator, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import recovered as kernel_recovered

    t, f, y = check_outcomes(T, fed, success)
    return kernel_recovered(t, f, y)


def decomposition(T: object, fed: object, success: object) -> Decomposition:
    """Eq. (12), from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import decomposition as kernel_decomposition

    t, f, y = check_outcomes(T, fed, success)
    return kernel_decomposition(t, f, y)


def _depth(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or int(k) < 1:
        raise ValueError(f"'k' must be an integer >= 1: {k!r}")
    return int(k)


def pec(fed: object, k: int) -> Fraction:
    """Eq. (4) at depth k, from any array-like (API-ARRAYS)."""
    from prefixexec.kernel import pec as kernel_pec

    return kernel_pec(_integers("fed", fed, 1), _depth(k))


def n_k(T: object, k: int) -> int:
    """Eq. (5): rollouts with T >= k, from any array-like (API-ARRAYS)."""
    from prefixexec.kernel import n_k as kernel_n_k

    return kernel_n_k(_integers("T", T, 1), _depth(k))


def pec_elig(T: object, fed: object, k: int) -> Fraction | None:
    """Eq. (6) at depth k, from any array-likes (API-ARRAYS)."""
    from prefixexec.kernel import pec_elig as kernel_pec_elig

    t, f, _ = check_outcomes(T, fed)
    return kernel_pec_elig(t, f, _depth(k))


def mean_fed(fed: object) -> Fraction:
    """The mean first-error depth, from any array-like (API-ARRAYS)."""
    from prefixexec.kernel import mean_fed as kernel_mean_fed

    return kernel_mean_fed(_integers("fed", fed, 1))


def success(success: object) -> Fraction:
    """Final success, from any array-like of booleans or 0/1 (API-ARRAYS)."""
    from prefixexec.kernel import success as kernel_success

    return kernel_success(_booleans("success", success))


#: The wrapped estimators, exported from ``prefixexec`` in place of the kernel's array-only ones.
ESTIMATORS = (
    "auc_pec",
    "auc_pec_area",
    "decomposition",
    "mean_fed",
    "n_k",
    "pec",
    "pec_curve",
    "pec_elig",
    "pec_elig_curve",
    "recovered",
    "rr",
    "rr_eligible",
    "success",
    "ter",
)


# ---------------------------------------------------------------------------------------------
# The bootstrap, shaped like scipy.stats.bootstrap's result (API-BOOTSTRAP)


@attrs.frozen(slots=True)
class ConfidenceInterval:
    """An interval's ends (``nan`` when no replicate was defined), as scipy's ``ConfidenceInterval``."""

    low: float
    high: float


@attrs.frozen(slots=True)
class BootstrapResult:
    """Shaped like ``scipy.stats._resampling.BootstrapResult``: the percentile interval, the
    standard error (sample standard deviation of the defined replicates, ``ddof=1``), and the
    replicates themselves when asked for (``nan`` where a replicate is undefined, BOOT-DROP)."""

    confidence_interval: ConfidenceInterval
    standard_error: float
    bootstrap_distribution: npt.NDArray[np.float64] | None = attrs.field(default=None, eq=False)
    #: Replicates left out because their denominator was zero (BOOT-DROP).
    dropped: int = 0


def bootstrap(
    T: object,
    fed: object,
    success: object,
    *,
    metric: str = "TER",
    tasks: object | None = None,
    B: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    distribution: bool = False,
) -> BootstrapResult:
    """API-BOOTSTRAP: the task-level percentile bootstrap of one metric of one cohort (BOOT-*).

    ``tasks[i]`` is rollout i's task id (a drawn task brings all its rollouts, BOOT-CLUSTER;
    default: every rollout its own task). The interval is the one ``score`` reports for this
    cohort scored alone; ``distribution=True`` keeps the B replicates.
    """
    from prefixexec.kernel.bootstrap import (
        BootstrapSettings,
        bootstrap_task_sums,
        percentile_interval,
        task_sums,
    )

    if metric not in BOOTSTRAP_METRICS:
        raise ValueError(f"'metric' must be one of {', '.join(BOOTSTRAP_METRICS)}: {metric!r}")
    settings = BootstrapSettings(B=B, seed=seed, level=level)
    cohort = _cohort(T, fed, success, tasks)
    ids = sorted(set(cohort.task))
    # Drawn in blocks (BOOT-BLOCK): the same replicates without the B x tasks matrix.
    reps = bootstrap_task_sums({0: ids}, lambda _, tasks: task_sums(cohort, tasks), settings)[0]
    values = np.asarray(reps.scalars[metric], dtype=np.float64)
    interval = percentile_interval(values, settings.level)
    defined = values[~np.isnan(values)]
    error = float(np.std(defined, ddof=1)) if defined.shape[0] > 1 else float("nan")
    low, high = (float("nan"), float("nan")) if interval is None else interval
    return BootstrapResult(
        ConfidenceInterval(low, high),
        error,
        values.copy() if distribution else None,
        int(values.shape[0] - defined.shape[0]),
    )


# ---------------------------------------------------------------------------------------------
# Reading (API-READ)


def _namespace(adapter: str, paths: Sequence[str], options: Mapping[str, object]) -> argparse.Namespace:
    """The command line's arguments for ``adapter`` and keyword ``options`` (unknown ones: TypeError)."""
    unknown = sorted(set(options) - set(ADAPTER_OPTIONS))
    if unknown:
        raise TypeError(
            f"unknown adapter option(s) {', '.join(unknown)}; the options are {', '.join(ADAPTER_OPTIONS)}"
        )
    values: dict[str, object] = {name: None for name in ADAPTER_OPTIONS}
    values.update(options)
    return argparse.Namespace(adapter=adapter, files=list(paths), select=None, **values)


def _paths(source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    if isinstance(source, str | os.PathLike):
        return [os.fspath(source)]
    return [os.fspath(p) for p in source]


def _resolve(adapter: str, paths: Sequence[str]) -> str:
    if adapter != "auto":
        from prefixexec.adapters import ADAPTERS, InputError

        if adapter not in ADAPTERS:
            raise InputError(
                "adapter", f"unknown adapter {adapter!r}; one of auto, {', '.join(sorted(ADAPTERS))}"
            )
        return adapter
    from prefixexec.adapters.detect import resolve

    return resolve(paths)[0]


def adapter_options(adapter: str, paths: Sequence[str], **options: object) -> AdapterOptions:
    """The adapter options of keyword ``options``, checked as the command line checks them."""
    from prefixexec.cli import adapter_options as cli_options

    return cli_options(_namespace(adapter, paths, options))


_checked_options = adapter_options


def read(
    adapter: str, paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], **options: object
) -> list[Rollout]:
    """API-READ: the rollouts of ``paths`` read with ``adapter`` (``"auto"``: detected, DETECT-*).

    ``options`` are the command line's adapter options as keywords (``model="gpt-4o"``,
    ``threshold=0.9``, ``error_pattern=...``); an option the adapter does not use is an error
    (CLI-NO-EFFECT). Bad input raises :class:`prefixexec.InputError`.
    """
    from prefixexec.adapters import ADAPTERS

    files = _paths(paths)
    name = _resolve(adapter, files)
    return ADAPTERS[name].read(files, adapter_options(name, files, **options))


def _plain(value: object) -> object:
    """A numpy scalar or array as the Python value json can write."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def from_records(records: Iterable[Mapping[str, Any]]) -> list[Rollout]:
    """API-SOURCES: rollouts from record dicts (spec/record.schema.json), validated as JSONL
    records are; a fault names ``<records>:N`` (N counts from 1)."""
    from prefixexec.adapters.records import _repeated_key, legacy_iter_lines, unique_rollouts

    lines = ((i, json.dumps(dict(r), default=_plain)) for i, r in enumerate(records, start=1))
    return unique_rollouts(
        ["<records>"], legacy_iter_lines("<records>", lines), _repeated_key, "no records found"
    )


def _is_frame(source: object) -> bool:
    module = type(source).__module__.split(".")[0]
    return module in ("pandas", "polars") and hasattr(source, "columns")


#: Columns a data frame of outcomes may leave out: no label, trial 0 (API-SOURCES).
OPTIONAL_COLUMNS = ("label", "trial")


def _success_value(value: object, row: int, name: str) -> bool:
    """A frame's ``success`` cell as a boolean: ``True``/``False`` or 0/1 of any numeric type."""
    from prefixexec.adapters.errors import InputError

    item = getattr(value, "item", None)
    plain = item() if callable(item) else value
    if isinstance(plain, bool):
        return plain
    if isinstance(plain, int | float) and plain in (0, 1):
        return bool(plain)
    raise InputError(f"{name} row {row}", f"'success' must be a boolean or 0/1, got {plain!r}")


def _frame_records(frame: Any) -> list[dict[str, Any]]:
    """The rows of a pandas or polars DataFrame of outcomes as records (:func:`_table_records`)."""
    columns = [str(c) for c in frame.columns]
    rows = frame.to_dicts() if hasattr(frame, "to_dicts") else frame.to_dict("records")
    return _table_records(rows, columns, "DataFrame")


def _outcome_rows(items: Sequence[Mapping[str, Any]]) -> bool:
    """Dicts that are rows of an outcome table (``T`` and ``fed`` at the top, as
    ``DataFrame.to_dict("records")`` gives them), not records (API-SOURCES)."""
    return all("T" in i and "fed" in i and "outcome" not in i and "actions" not in i for i in items)


def records_of(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Record dicts as they are, or rows of an outcome table as records (API-SOURCES)."""
    if items and _outcome_rows(items):
        columns = list(dict.fromkeys(k for i in items for k in i))
        return list(_table_records(list(items), columns, "<rows>"))
    return list(items)


def _table_records(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], name: str
) -> list[dict[str, Any]]:
    """The rows of an outcome table (PARQUET-FORMAT's columns; ``label`` and ``trial`` may be
    left out) as records with an outcome; ``success`` may be 0/1, a missing label is NaN, None
    or null (API-SOURCES)."""
    from prefixexec.adapters.errors import InputError
    from prefixexec.adapters.parquet import COLUMNS

    missing = [c for c in COLUMNS if c not in columns and c not in OPTIONAL_COLUMNS]
    if missing:
        raise InputError(
            name, f"missing column(s) {', '.join(missing)} (an outcome table has {', '.join(COLUMNS)})"
        )
    out = []
    for index, row in enumerate(rows):
        label = row.get("label")
        if label is not None and not isinstance(label, str):  # pandas: NaN / None for a missing label
            label = None if label != label else label
        outcome: dict[str, Any] = {"T": row["T"], "fed": row["fed"]}
        if label is not None:
            outcome["label"] = label
        out.append(
            {
                "dataset": row["dataset"],
                "model": row["model"],
                "method": row["method"],
                "task_id": str(row["task_id"]),
                "trial": row.get("trial", 0),
                "success": _success_value(row["success"], index, name),
                "outcome": outcome,
            }
        )
    return out


# ---------------------------------------------------------------------------------------------
# Scores (API-SCORE)


@attrs.frozen(slots=True)
class Interval:
    """A float interval (the ends ``score --json`` prints)."""

    low: float
    high: float


def _interval(pair: tuple[float, float] | None) -> Interval | None:
    return None if pair is None else Interval(pair[0], pair[1])


@attrs.frozen(slots=True)
class Condition:
    """One condition's scores: exact values (``Fraction``/``int``) and their intervals.

    ``ci`` maps TER, AUC_PEC, mean_FED, success and RR to an :class:`Interval` (``None`` where
    undefined or with ``bootstrap=0``): RR's is the Wilson interval, as the table prints it;
    ``RR_wilson`` is the same interval and ``RR_bootstrap`` the percentile bootstrap one (OUT-CI).
    ``PEC_ci`` and ``PEC_elig_ci`` give one per depth.
    """

    dataset: str
    model: str
    method: str
    N: int
    TER: Fraction
    AUC_PEC: Fraction
    mean_FED: Fraction
    success: Fraction
    RR: Fraction | None
    RR_eligible: int
    recovered: int
    PEC: tuple[Fraction, ...]
    PEC_elig: tuple[Fraction | None, ...]
    n_k: tuple[int, ...]
    labels: Mapping[str, int]
    decomposition: Decomposition
    ci: Mapping[str, Interval | None]
    PEC_ci: tuple[Interval | None, ...]
    PEC_elig_ci: tuple[Interval | None, ...]

    @classmethod
    def of(cls, result: ConditionResult) -> Condition:
        m, key, ivs = result.metrics, result.key, result.intervals
        ci: dict[str, Interval | None] = dict.fromkeys(
            ("TER", "AUC_PEC", "mean_FED", "success", "RR", "RR_wilson", "RR_bootstrap")
        )
        pec_ci: tuple[Interval | None, ...] = (None,) * len(m.PEC)
        elig_ci: tuple[Interval | None, ...] = (None,) * len(m.PEC_elig)
        if ivs is not None:
            for name in ("TER", "AUC_PEC", "mean_FED", "success"):
                ci[name] = _interval(ivs.scalars[name])
            ci["RR_bootstrap"] = _interval(ivs.scalars["RR"])
            ci["RR_wilson"] = ci["RR"] = _interval(ivs.RR_wilson)
            pec_ci = tuple(_interval(i) for i in ivs.PEC)
            elig_ci = tuple(_interval(i) for i in ivs.PEC_elig)
        return cls(
            key.dataset,
            key.model,
            key.method,
            m.N,
            m.TER,
            m.AUC_PEC,
            m.mean_FED,
            m.success,
            m.RR,
            m.RR_eligible,
            m.recovered,
            m.PEC,
            m.PEC_elig,
            m.n_k,
            m.label_counts,
            m.decomposition,
            ci,
            pec_ci,
            elig_ci,
        )


#: The scalar metrics of :meth:`Scores.rows`, with the interval each row shows (RR: Wilson, as the table).
_ROW_METRICS = (
    ("TER", "TER"),
    ("AUC_PEC", "AUC_PEC"),
    ("mean_FED", "mean_FED"),
    ("success", "success"),
    ("RR", "RR_wilson"),
)


def _float(value: Fraction | None) -> float:
    return float("nan") if value is None else float(value)


@attrs.frozen(slots=True)
class Scores:
    """What :func:`score` returns: the conditions, the rollouts they were computed from, and
    the ``score --json`` document (``signature``: OUT-SIGNATURE)."""

    conditions: tuple[Condition, ...]
    rollouts: tuple[Rollout, ...] = attrs.field(repr=False)
    signature: str
    document: Mapping[str, Any] = attrs.field(repr=False, eq=False)

    def to_json(self) -> str:
        """The ``score --json`` document, byte-identical to the command line's (OUT-JSON)."""
        from prefixexec.scoring import dumps

        return dumps(self.document)

    def tables(self) -> tuple[str, ...]:
        """The names of the tables of :meth:`rows` (the first is the default)."""
        return ("conditions", "pec", "rollouts")

    def rows(self, table: str = "conditions") -> list[dict[str, Any]]:
        """API-TABLES: ``"conditions"``: one row per condition (floats, with ``_low``/``_high``
        interval ends and ``_exact`` strings); ``"pec"``: one row per condition and depth k;
        ``"rollouts"``: one row per rollout (OUT-ROLLOUTS, ``failing`` spread over
        ``failing.position``, ``failing.tool``, ...)."""
        if table == "rollouts":
            from prefixexec.notebook import flatten
            from prefixexec.rollouts import rows as rollout_rows

            return [flatten(r) for r in rollout_rows(self.rollouts)]
        out: list[dict[str, Any]] = []
        for c in self.conditions:
            base: dict[str, Any] = {"dataset": c.dataset, "model": c.model, "method": c.method}
            if table == "conditions":
                row = {**base, "N": c.N}
                for name, ci_name in _ROW_METRICS:
                    value: Fraction | None = getattr(c, name)
                    interval = c.ci[ci_name]
                    row[name] = _float(value)
                    row[f"{name}_low"] = float("nan") if interval is None else interval.low
                    row[f"{name}_high"] = float("nan") if interval is None else interval.high
                    row[f"{name}_exact"] = None if value is None else str(value)
                row["RR_eligible"] = c.RR_eligible
                row["recovered"] = c.recovered
                row.update({f"label_{k}": v for k, v in c.labels.items()})
                out.append(row)
            elif table == "pec":
                for k, (p, e, n) in enumerate(zip(c.PEC, c.PEC_elig, c.n_k, strict=True), start=1):
                    pi, ei = c.PEC_ci[k - 1], c.PEC_elig_ci[k - 1]
                    out.append(
                        {
                            **base,
                            "k": k,
                            "PEC": float(p),
                            "PEC_low": float("nan") if pi is None else pi.low,
                            "PEC_high": float("nan") if pi is None else pi.high,
                            "PEC_elig": _float(e),
                            "PEC_elig_low": float("nan") if ei is None else ei.low,
                            "PEC_elig_high": float("nan") if ei is None else ei.high,
                            "n_k": n,
                        }
                    )
            else:
                raise ValueError(f"'table' must be 'conditions', 'pec' or 'rollouts': {table!r}")
        return out

    def _repr_html_(self) -> str:
        """The table ``score`` prints, as HTML (a notebook shows it; API-DISPLAY)."""
        from prefixexec.notebook import scores_html

        return scores_html(self)

    def __repr__(self) -> str:
        from prefixexec.numbers import count

        shown = f"{count(len(self.conditions), 'condition')}, {count(len(self.rollouts), 'rollout')}"
        return f"Scores({shown}, {self.signature!r})"

    def to_pandas(self, table: str = "conditions") -> Any:
        """:meth:`rows` as a pandas DataFrame (needs the ``[pandas]`` extra)."""
        from prefixexec.extras import require

        require("pandas", "Scores.to_pandas()")
        import importlib

        return importlib.import_module("pandas").DataFrame(self.rows(table))

    def to_polars(self, table: str = "conditions") -> Any:
        """:meth:`rows` as a polars DataFrame (needs the ``[polars]`` extra)."""
        from prefixexec.extras import require

        require("polars", "Scores.to_polars()")
        import importlib

        return importlib.import_module("polars").DataFrame(self.rows(table), infer_schema_length=None)


Source = (
    str
    | os.PathLike[str]
    | Iterable[str | os.PathLike[str]]
    | Iterable[Mapping[str, Any]]
    | Any  # a pandas or polars DataFrame of outcomes
)


def _rollouts_of(source: Source, adapter: str, options: Mapping[str, object]) -> tuple[str, list[Rollout]]:
    """The adapter name (for the signature) and the rollouts of ``source``."""
    from prefixexec.adapters import ADAPTERS

    if _is_frame(source):
        if adapter not in ("auto", "records") or options:
            raise TypeError("a DataFrame of outcomes is read as records: no adapter or adapter options apply")
        return "records", from_records(_frame_records(source))
    if isinstance(source, str | os.PathLike):
        items: list[Any] = [source]
    else:
        items = list(source)
    if items and all(isinstance(i, Mapping) for i in items):
        if adapter not in ("auto", "records") or options:
            raise TypeError("record dicts are read as records: no adapter or adapter options apply")
        return "records", from_records(records_of(items))
    if not all(isinstance(i, str | os.PathLike) for i in items):
        raise TypeError("'source' must be paths, record dicts, or a pandas/polars DataFrame of outcomes")
    files = [os.fspath(i) for i in items]
    name = _resolve(adapter, files)
    return name, ADAPTERS[name].read(files, adapter_options(name, files, **options))


def score(
    source: Source,
    *,
    adapter: str = "auto",
    bootstrap: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    select: Sequence[str] | str | None = None,
    unpaired: bool = False,
    **adapter_options: object,
) -> Scores:
    """API-SCORE: score ``source`` as ``prefixexec score`` does.

    ``source``: paths (read with ``adapter``, ``"auto"`` detecting it), record dicts, or a
    pandas/polars DataFrame of outcomes (columns dataset, model, method, task_id, trial, T,
    fed, label, success). ``select``: ``KEY=GLOB`` or ``KEY=@FILE`` patterns (OUT-SELECT).
    ``bootstrap=0`` turns intervals off. Bad input raises :class:`prefixexec.InputError`.
    """
    from prefixexec.cli import signature_options
    from prefixexec.inference import score_document
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.options import InputOptions, ScoreOptions
    from prefixexec.pipeline import score as run_score
    from prefixexec.signature import Signature

    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise ValueError(f"'bootstrap' must be an integer >= 0: {bootstrap!r}")
    if select is not None and not (  # API-ERRORS: b"task_id=x" is a Sequence too (of integers)
        isinstance(select, str)
        or (
            isinstance(select, Sequence)
            and not isinstance(select, bytes | bytearray)
            and all(isinstance(s, str) for s in select)
        )
    ):
        from prefixexec.adapters.errors import ArgumentError

        raise ArgumentError(
            "select",
            f"'select' must be a string or a sequence of strings (KEY=GLOB): {type(select).__name__}",
        )
    settings = None if bootstrap == 0 else BootstrapSettings(B=bootstrap, seed=seed, level=level)
    patterns = () if select is None else ((select,) if isinstance(select, str) else tuple(select))
    if isinstance(source, Iterable) and not isinstance(source, str | os.PathLike) and not _is_frame(source):
        source = list(source)  # an iterator is read once
    files = _path_list(source)
    if files is None:  # record dicts or a data frame: read here as records (API-SOURCES)
        name, given = _rollouts_of(source, adapter, adapter_options)
        source_options = InputOptions(
            adapter=name, files=(), adapter_options=_no_options(), select=patterns, given=tuple(given)
        )
    else:
        name = _resolve(adapter, files)
        checked = _checked_options(name, files, **adapter_options)
        source_options = InputOptions(
            adapter=name, files=files, adapter_options=checked, select=patterns, keep=True
        )
    signature = Signature(
        adapter=name,
        adapter_options=signature_options(_namespace(name, [], adapter_options)),
        bootstrap=bootstrap,
        seed=seed,
        level=level,
        paired=not unpaired,
    )
    options = ScoreOptions(
        input=source_options, bootstrap=settings, signature=signature, paired=not unpaired, quiet=True
    )
    scored = run_score(options)  # the pipeline `prefixexec score` runs (API-PIPELINE)
    document = score_document(scored.results, signature, scored.harness)
    rollouts = scored.rollouts or ()
    return Scores(tuple(Condition.of(r) for r in scored.results), tuple(rollouts), str(signature), document)


def _path_list(source: object) -> list[str] | None:
    """``source`` as a list of paths, or ``None`` when it is records or a data frame."""
    if _is_frame(source):
        return None
    if isinstance(source, str | os.PathLike):
        return [os.fspath(source)]
    if isinstance(source, Iterable) and not isinstance(source, Mapping):
        items = list(source)
        if items and all(isinstance(i, str | os.PathLike) for i in items):
            return [os.fspath(i) for i in items]
    return None


def _no_options() -> AdapterOptions:
    from prefixexec.adapters import AdapterOptions

    return AdapterOptions()


def _signature(name: str, options: Mapping[str, object], bootstrap: int, seed: int, level: float) -> str:
    from prefixexec.cli import signature_options
    from prefixexec.signature import Signature

    return str(
        Signature(
            adapter=name,
            adapter_options=signature_options(_namespace(name, [], options)),
            bootstrap=bootstrap,
            seed=seed,
            level=level,
            paired=True,
        )
    )


__all__ = [
    "BootstrapResult",
    "Condition",
    "ConfidenceInterval",
    "Interval",
    "Scores",
    "bootstrap",
    "from_records",
    "metrics",
    "read",
    "score",
    *ESTIMATORS,
]
