"""Mergeable sufficient statistics of a condition, for streaming and sharded scoring.

Spec: ACC-STATE, ACC-MERGE, ACC-JSON, ACC-BATCH (spec/streaming.md), INV-ADDITIVE.

An :class:`Accumulator` holds, for every task of one condition, integer counts from which every
point estimate of Eq. (3)-(12) and every per-task sum of the bootstrap follow exactly:

* ``fed_hist[j, f - 1]``: rollouts of task j with FED = f, for f = 1..K+1;
* ``T_hist[j, t - 1]``: rollouts of task j with horizon T = t, for t = 1..K;
* ``steps_by_T[j, t - 1]``: the sum of FED - 1 over the rollouts of task j with T = t
  (AUC-PEC's numerator is sum_t steps_by_T[., t - 1] / t);
* ``class_y[j, 2 c + y]``: rollouts of task j of outcome class c with Y = y, where class 0 is
  "fully executable" and classes 1..6 are the first-failure labels in tie-break order and
  ``unlabelled`` (so the first-failure label counts and the (fully executable, Y) table);
* ``trials``: the trial numbers seen, per task, as sorted half-open ranges
  ``(task row, first, last + 1)``, so that a (task, trial) seen twice is found while the
  state stays small when trial numbers are contiguous.

K is the longest horizon of the condition. Every count adds under concatenation of rollouts
(INV-ADDITIVE, proven as ``counts_additive``), so :meth:`Accumulator.merge` adds them, and the
state is canonical (sorted task ids, K exactly the longest horizon, coalesced trial ranges):
equal sets of rollouts give equal accumulators however they were split and merged.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from .actions import LABEL_KEYS, LABEL_ORDER
from .bootstrap import TaskSums, task_sum_columns
from .cohort import ConditionKey, Rollout
from .estimators import Decomposition
from .metrics import ConditionMetrics

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Outcome classes of ``class_y``: fully executable, then each label and ``unlabelled``.
CLASSES: tuple[str, ...] = ("executable", *LABEL_KEYS)
N_CLASSES = len(CLASSES)
#: ``label`` input value of a rollout without a first-failure label.
NO_LABEL = -1
#: JSON format name and version (ACC-JSON).
JSON_FORMAT = "prefixexec-accumulators"
JSON_VERSION = 1

_INT64_SAFE = 2**62


class RowError(ValueError):
    """Row ``row`` of a batch is not a valid rollout (``what`` says why)."""

    def __init__(self, row: int, what: str) -> None:
        super().__init__(f"row {row}: {what}")
        self.row = row
        self.what = what

    def __reduce__(self) -> tuple[type[RowError], tuple[int, str]]:
        return (type(self), (self.row, self.what))


class DuplicateRollout(ValueError):
    """A (condition, task, trial) occurs twice; ``row`` is the repeat's batch row when known."""

    def __init__(self, condition: ConditionKey | None, task: str, trial: int, row: int | None = None) -> None:
        where = "" if condition is None else f"{condition.dataset} / {condition.model} / {condition.method}: "
        super().__init__(f"{where}task {task!r}, trial {trial} occurs twice")
        self.condition = condition
        self.task = task
        self.trial = trial
        self.row = row

    def __reduce__(
        self,
    ) -> tuple[type[DuplicateRollout], tuple[ConditionKey | None, str, int, int | None]]:
        return (type(self), (self.condition, self.task, self.trial, self.row))

    def with_condition(self, condition: ConditionKey) -> DuplicateRollout:
        return DuplicateRollout(condition, self.task, self.trial, self.row)


def _matrix(value: npt.ArrayLike) -> IntArray:
    array = np.array(value, dtype=np.int64, copy=True)
    if array.ndim != 2:
        raise ValueError(f"expected a 2-d array, got shape {array.shape}")
    array.flags.writeable = False
    return array


_ARRAY_EQ = attrs.cmp_using(eq=np.array_equal)


def _tasks(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class Accumulator:
    """The sufficient statistics of one condition (see the module docstring); immutable."""

    tasks: tuple[str, ...] = attrs.field(converter=_tasks)
    fed_hist: IntArray = attrs.field(converter=_matrix, eq=_ARRAY_EQ)
    T_hist: IntArray = attrs.field(converter=_matrix, eq=_ARRAY_EQ)
    steps_by_T: IntArray = attrs.field(converter=_matrix, eq=_ARRAY_EQ)
    class_y: IntArray = attrs.field(converter=_matrix, eq=_ARRAY_EQ)
    trials: IntArray = attrs.field(converter=_matrix, eq=_ARRAY_EQ)

    def __attrs_post_init__(self) -> None:
        _check_state(self)

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def _built(
        cls,
        tasks: Iterable[str],
        fed_hist: npt.ArrayLike,
        T_hist: npt.ArrayLike,
        steps_by_T: npt.ArrayLike,
        class_y: npt.ArrayLike,
        trials: npt.ArrayLike,
    ) -> Accumulator:
        """An accumulator of arrays that :meth:`merge` and :func:`accumulate` computed from valid
        states and checked rows: the same read-only int64 copies as the constructor makes, without
        re-checking ACC-STATE, which these hold by construction (the check of the growing merged
        state cost about a tenth of scoring records, #16). Every built state is checked against
        ACC-STATE by the property tests (tests/test_accumulator.py rebuilds it with the checking
        constructor); a state from outside (the constructor, ``from_dict``) is always checked.
        """
        acc = object.__new__(cls)
        object.__setattr__(acc, "tasks", _tasks(tasks))
        object.__setattr__(acc, "fed_hist", _matrix(fed_hist))
        object.__setattr__(acc, "T_hist", _matrix(T_hist))
        object.__setattr__(acc, "steps_by_T", _matrix(steps_by_T))
        object.__setattr__(acc, "class_y", _matrix(class_y))
        object.__setattr__(acc, "trials", _matrix(trials))
        return acc

    @classmethod
    def empty(cls) -> Accumulator:
        """The accumulator of no rollouts (the identity of :meth:`merge`)."""
        return cls(
            (), np.zeros((0, 1)), np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 14)), np.zeros((0, 3))
        )

    @property
    def K(self) -> int:
        """The longest horizon (0 when empty)."""
        return int(self.T_hist.shape[1])

    @property
    def N(self) -> int:
        """The number of rollouts."""
        return int(self.T_hist.sum())

    def counts(self) -> IntArray:
        """Rollouts per task, in the order of :attr:`tasks`."""
        out: IntArray = self.T_hist.sum(axis=1)
        return out

    def trial_counts(self) -> tuple[IntArray, IntArray, IntArray]:
        """Per task, in the order of :attr:`tasks`: its trials, its fully executable trials and
        its successful trials (the n_j, e_j and c_j of pass^k, spec/passk.md)."""
        executable: IntArray = self.class_y[:, 0] + self.class_y[:, 1]
        successes: IntArray = self.class_y[:, 1::2].sum(axis=1)
        return self.counts(), executable, successes

    def distinct_trials(self) -> int:
        """The number of distinct trial numbers over every task (tau-bench v1's n, PASSK-TRIALS)."""
        total, end = 0, -1
        for lo, hi in sorted((int(lo), int(hi)) for _, lo, hi in self.trials.tolist()):
            if hi > end:
                total += hi - max(lo, end)
                end = hi
        return total

    # -- merging -------------------------------------------------------------------------------

    def merge(self, other: Accumulator) -> Accumulator:
        """The accumulator of both parts' rollouts (ACC-MERGE).

        Associative and commutative, with :meth:`empty` as identity; raises
        :class:`DuplicateRollout` when a (task, trial) is in both parts.
        """
        if not other.tasks:
            return self
        if not self.tasks:
            return other
        if self.tasks == other.tasks:
            tasks = self.tasks
            rows_a = rows_b = np.arange(len(tasks), dtype=np.int64)
        else:
            tasks = tuple(sorted(set(self.tasks) | set(other.tasks)))
            position = {t: j for j, t in enumerate(tasks)}
            rows_a = np.array([position[t] for t in self.tasks], dtype=np.int64)
            rows_b = np.array([position[t] for t in other.tasks], dtype=np.int64)
        K = max(self.K, other.K)
        n = len(tasks)

        def add(a: IntArray, b: IntArray, width: int) -> IntArray:
            out = np.zeros((n, width), dtype=np.int64)
            out[rows_a, : a.shape[1]] += a
            out[rows_b, : b.shape[1]] += b
            return out

        ta = self.trials.copy()
        ta[:, 0] = rows_a[ta[:, 0]]
        tb = other.trials.copy()
        tb[:, 0] = rows_b[tb[:, 0]]
        return Accumulator._built(
            tasks,
            add(self.fed_hist, other.fed_hist, K + 1),
            add(self.T_hist, other.T_hist, K),
            add(self.steps_by_T, other.steps_by_T, K),
            add(self.class_y, other.class_y, 2 * N_CLASSES),
            _union_ranges(np.concatenate([ta, tb]), tasks),
        )

    def contains(
        self, tasks: Sequence[str], task: npt.NDArray[np.integer[Any]], trial: IntArray
    ) -> BoolArray:
        """For each (tasks[task[i]], trial[i]): whether this accumulator has seen it."""
        position = {t: j for j, t in enumerate(self.tasks)}
        row_of = np.array([position.get(t, -1) for t in tasks], dtype=np.int64)
        rows = row_of[task] if len(tasks) else np.zeros(0, dtype=np.int64)
        found = np.zeros(task.shape[0], dtype=np.bool_)
        known = rows >= 0
        if not known.any() or self.trials.shape[0] == 0:
            return found
        span = max(int(self.trials[:, 2].max()), int(trial.max(initial=0)) + 1) + 1
        if len(self.tasks) * span >= _INT64_SAFE:  # keys would overflow: search task by task
            los: dict[int, list[int]] = {}
            his: dict[int, list[int]] = {}
            for row, lo, hi in self.trials.tolist():
                los.setdefault(row, []).append(lo)
                his.setdefault(row, []).append(hi)
            for i in np.flatnonzero(known).tolist():
                row, t = int(rows[i]), int(trial[i])
                pos = bisect.bisect_right(los.get(row, []), t) - 1
                found[i] = pos >= 0 and t < his[row][pos]
            return found
        starts = self.trials[:, 0] * span + self.trials[:, 1]
        ends = self.trials[:, 0] * span + self.trials[:, 2]
        key = rows[known] * span + trial[known]
        at = np.searchsorted(starts, key, side="right") - 1
        hit = (at >= 0) & (key < ends[np.maximum(at, 0)])
        found[np.flatnonzero(known)] = hit
        return found

    # -- what follows from the counts ----------------------------------------------------------

    def metrics(self) -> ConditionMetrics:
        """Every point estimate of Eq. (3)-(12), equal to ``compute_metrics`` of the cohort."""
        N = self.N
        if N == 0:
            raise ValueError("an accumulator without rollouts has no metrics (N >= 1)")
        K = self.K
        # Python integers (tolist) and itertools rather than numpy on these short rows: metrics()
        # runs once per condition, and 200,000 conditions are a usual leaderboard input (#27).
        fed_counts: list[int] = self.fed_hist.sum(axis=0).tolist()
        T_counts: list[int] = self.T_hist.sum(axis=0).tolist()
        steps: list[int] = self.steps_by_T.sum(axis=0).tolist()
        cy: list[int] = self.class_y.sum(axis=0).tolist()
        executable = cy[0] + cy[1]
        successes = sum(cy[1::2])
        uninterrupted = cy[1]
        recovered = successes - uninterrupted
        eligible = N - executable
        # survivors[k-1] = #{FED > k} = #{FED >= k+1};  n_k[k-1] = #{T >= k}, k = 1..K.
        tail_fed = list(itertools.accumulate(reversed(fed_counts)))[::-1]
        survivors = tail_fed[1 : K + 1]
        n_k = list(itertools.accumulate(reversed(T_counts)))[::-1]
        # AUC-PEC's numerator sum_t steps_t / t over one common denominator (one Fraction).
        L = math.lcm(*(t for t, c in enumerate(T_counts, start=1) if c))
        auc = Fraction(sum(s * (L // t) for t, s in enumerate(steps, start=1) if T_counts[t - 1]), L)
        ter = Fraction(executable, N)
        rr = None if eligible == 0 else Fraction(recovered, eligible)
        return ConditionMetrics(
            N=N,
            TER=ter,
            AUC_PEC=auc / N,
            mean_FED=Fraction(sum(f * c for f, c in enumerate(fed_counts, start=1)), N),
            success=Fraction(successes, N),
            RR=rr,
            RR_eligible=eligible,
            recovered=recovered,
            PEC=tuple(Fraction(s, N) for s in survivors),
            PEC_elig=tuple(None if m == 0 else Fraction(s, m) for s, m in zip(survivors, n_k, strict=True)),
            n_k=tuple(n_k),
            labels=tuple(
                zip(LABEL_KEYS, (cy[2 * c] + cy[2 * c + 1] for c in range(1, N_CLASSES)), strict=True)
            ),
            decomposition=Decomposition(
                q=ter,
                s=None if executable == 0 else Fraction(uninterrupted, executable),
                r=rr,
                uninterrupted=uninterrupted,
                recovered=recovered,
                fully_executable=executable,
                rr_eligible=eligible,
            ),
        )

    def task_sums(self, tasks: Sequence[str]) -> TaskSums:
        """The bootstrap's per-task sums over ``tasks`` (BOOT-CLUSTER), equal to ``task_sums``.

        ``tasks`` must hold every task of this accumulator; tasks it lacks get zero rows.
        """
        if self.N == 0:
            raise ValueError("an accumulator without rollouts has no task sums")
        position = {t: j for j, t in enumerate(tasks)}
        missing = [t for t in self.tasks if t not in position]
        if missing:
            raise ValueError(f"task(s) {missing[:5]!r} are not in the task list")
        rows = np.array([position[t] for t in self.tasks], dtype=np.int64)
        K = self.K
        T_counts = self.T_hist.sum(axis=0)
        L = math.lcm(*(int(t) + 1 for t in np.flatnonzero(T_counts)))
        count = self.counts()
        executable = self.class_y[:, 0] + self.class_y[:, 1]
        success = self.class_y[:, 1::2].sum(axis=1)
        # auc_num = sum_t steps_by_T[., t-1] * (L / t) <= L * count: exact in int64 below 2^62.
        if L * int(count.max()) < _INT64_SAFE:
            scale = np.array([L // t for t in range(1, K + 1)], dtype=np.int64)
            auc_num: npt.NDArray[Any] = self.steps_by_T @ scale
            dtype: type = np.int64
        else:  # too large for int64: exact Python integers (weighted_sums handles them)
            scale_obj = np.array([L // t for t in range(1, K + 1)], dtype=object)
            auc_num = self.steps_by_T.astype(object) @ scale_obj
            dtype = object
        surv = np.cumsum(self.fed_hist[:, ::-1], axis=1)[:, ::-1][:, 1 : K + 1]
        nk = np.cumsum(self.T_hist[:, ::-1], axis=1)[:, ::-1]
        own = np.column_stack(
            [
                count.astype(dtype),
                executable.astype(dtype),
                auc_num,
                count.astype(dtype) * L,
                (self.fed_hist @ np.arange(1, K + 2, dtype=np.int64)).astype(dtype),
                success.astype(dtype),
                (count - executable).astype(dtype),
                (success - self.class_y[:, 1]).astype(dtype),
                surv.astype(dtype),
                nk.astype(dtype),
            ]
        )
        X: IntArray = np.zeros((len(tasks), own.shape[1]), dtype=dtype)  # object dtype past int64
        X[rows] = own
        return TaskSums(X=X, columns=task_sum_columns(K), L=L, K=K)

    # -- JSON ----------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready object (ACC-JSON); :meth:`from_json` gives back an equal accumulator."""
        return {
            "tasks": list(self.tasks),
            "K": self.K,
            "fed_hist": self.fed_hist.tolist(),
            "T_hist": self.T_hist.tolist(),
            "steps_by_T": self.steps_by_T.tolist(),
            "class_y": self.class_y.tolist(),
            "trials": self.trials.tolist(),
        }

    @classmethod
    def from_json(cls, value: object) -> Accumulator:
        """Parse :meth:`to_json`'s object; raises ``ValueError`` naming what is wrong."""
        if not isinstance(value, dict):
            raise ValueError(f"an accumulator must be a JSON object, got {type(value).__name__}")
        fields = ("tasks", "K", "fed_hist", "T_hist", "steps_by_T", "class_y", "trials")
        unknown = sorted(set(value) - set(fields))
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}")
        missing = [f for f in fields if f not in value]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        tasks = value["tasks"]
        if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
            raise ValueError("'tasks' must be a list of strings")
        K = value["K"]
        if not _is_int(K) or K < 0:
            raise ValueError(f"'K' must be an integer >= 0: {K!r}")
        n = len(tasks)
        shapes = {"fed_hist": K + 1, "T_hist": K, "steps_by_T": K, "class_y": 2 * N_CLASSES}
        arrays = {name: _int_rows(value[name], name, n, width) for name, width in shapes.items()}
        trials = value["trials"]
        if not isinstance(trials, list):
            raise ValueError("'trials' must be a list of [task row, first, last + 1]")
        return cls(
            tasks,
            arrays["fed_hist"],
            arrays["T_hist"],
            arrays["steps_by_T"],
            arrays["class_y"],
            _int_rows(trials, "trials", len(trials), 3),
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_rows(value: object, name: str, rows: int, width: int) -> IntArray:
    if not isinstance(value, list) or len(value) != rows:
        raise ValueError(f"'{name}' must be a list of {rows} rows")
    for i, row in enumerate(value):
        if not isinstance(row, list) or len(row) != width:
            raise ValueError(f"'{name}'[{i}] must be a list of {width} integers")
        for x in row:
            if not _is_int(x) or not 0 <= x < 2**63:
                raise ValueError(f"'{name}'[{i}] holds {x!r}, not an integer in [0, 2^63)")
    return np.array(value, dtype=np.int64).reshape(rows, width)


def _check_state(a: Accumulator) -> None:
    """Shapes, canonical form and the consistency conditions of ACC-STATE."""
    n = len(a.tasks)
    K = a.T_hist.shape[1]
    expected = {"fed_hist": (n, K + 1), "T_hist": (n, K), "steps_by_T": (n, K), "class_y": (n, 2 * N_CLASSES)}
    for name, shape in expected.items():
        if getattr(a, name).shape != shape:
            raise ValueError(f"'{name}' has shape {getattr(a, name).shape}, expected {shape}")
    if a.trials.shape[1] != 3:
        raise ValueError(f"'trials' has shape {a.trials.shape}, expected (m, 3)")
    if any(x >= y for x, y in itertools.pairwise(a.tasks)):
        raise ValueError("'tasks' must be sorted and unique")
    for name in ("fed_hist", "T_hist", "steps_by_T", "class_y", "trials"):
        if np.any(getattr(a, name) < 0):
            raise ValueError(f"'{name}' holds a negative number")
    if n == 0:
        if K != 0 or a.trials.shape[0] != 0:
            raise ValueError("an accumulator without tasks must have K = 0 and no trials")
        return
    count = a.T_hist.sum(axis=1)
    if np.any(count == 0):
        raise ValueError("every task must have at least one rollout")
    if K == 0 or a.T_hist[:, K - 1].sum() == 0:
        raise ValueError("'K' must be the longest horizon")
    if not (np.array_equal(a.fed_hist.sum(axis=1), count) and np.array_equal(a.class_y.sum(axis=1), count)):
        raise ValueError("'fed_hist', 'T_hist' and 'class_y' must count the same rollouts per task")
    # FED > k implies T >= k: survivors at k never exceed n_k.
    surv = np.cumsum(a.fed_hist[:, ::-1], axis=1)[:, ::-1][:, 1:]
    nk = np.cumsum(a.T_hist[:, ::-1], axis=1)[:, ::-1]
    if np.any(surv > nk):
        raise ValueError("more rollouts with FED > k than with T >= k")
    if np.any(a.steps_by_T > a.T_hist * np.arange(1, K + 1, dtype=np.int64)):
        raise ValueError("'steps_by_T' exceeds T per rollout")
    # Every fully executable rollout has FED = T + 1 > 1; a rollout with FED = 1 fails.
    if np.any(a.class_y[:, 0] + a.class_y[:, 1] > count - a.fed_hist[:, 0]):
        raise ValueError("more fully executable rollouts than rollouts with FED > 1")
    t = a.trials
    if np.any(t[:, 0] >= n) or np.any(t[:, 1] >= t[:, 2]):
        raise ValueError("'trials' must be ranges [first, last + 1) of existing task rows")
    if t.shape[0] > 1:
        same = t[1:, 0] == t[:-1, 0]
        if np.any(t[1:, 0] < t[:-1, 0]) or np.any(same & (t[1:, 1] <= t[:-1, 2])):
            raise ValueError("'trials' must be sorted, disjoint and coalesced")
    trial_counts = np.zeros(n, dtype=np.int64)
    np.add.at(trial_counts, t[:, 0], t[:, 2] - t[:, 1])
    if not np.array_equal(trial_counts, count):
        raise ValueError("every rollout must have exactly one trial number")


def _union_ranges(t: IntArray, tasks: Sequence[str]) -> IntArray:
    """Sort, check disjointness of and coalesce ranges (task row, first, last + 1)."""
    if t.shape[0] == 0:
        return t
    t = t[np.lexsort((t[:, 1], t[:, 0]))]
    same = t[1:, 0] == t[:-1, 0]
    overlap = same & (t[1:, 1] < t[:-1, 2])
    if overlap.any():
        i = int(np.flatnonzero(overlap)[0]) + 1
        raise DuplicateRollout(None, tasks[int(t[i, 0])], int(t[i, 1]))
    start = np.concatenate([[True], ~(same & (t[1:, 1] == t[:-1, 2]))])
    end = np.concatenate([start[1:], [True]])
    out: IntArray = np.column_stack([t[start, 0], t[start, 1], t[end, 2]])
    return out


# ---------------------------------------------------------------------------------------------
# Many rollouts at once


IndexArray = npt.NDArray[np.integer[Any]]


def _readonly(value: npt.ArrayLike, dtype: type, kinds: str) -> npt.NDArray[Any]:
    """A read-only 1-d array: ``value`` itself when it already is one of a fitting dtype
    (``kinds``: the accepted dtype kinds; such as Arrow's zero-copy views), else a copy."""
    if (
        isinstance(value, np.ndarray)
        and value.ndim == 1
        and not value.flags.writeable
        and (value.dtype == dtype or value.dtype.kind in kinds)
    ):
        return value
    array: npt.NDArray[Any] = np.array(value, dtype=dtype, copy=True).reshape(-1)
    array.flags.writeable = False
    return array


def _int_vector(value: npt.ArrayLike) -> IntArray:
    out: IntArray = _readonly(value, np.int64, "")
    return out


def _index_vector(value: npt.ArrayLike) -> IndexArray:
    out: IndexArray = _readonly(value, np.int64, "iu")
    return out


def _bool_vector(value: npt.ArrayLike) -> BoolArray:
    out: BoolArray = _readonly(value, np.bool_, "")
    return out


def _conditions(value: Iterable[ConditionKey]) -> tuple[ConditionKey, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class RolloutArrays:
    """A batch of rollouts as columns (ACC-BATCH): row i is one rollout.

    ``condition[i]`` indexes ``conditions`` and ``task[i]`` indexes ``tasks`` (repeated names
    are allowed and mean the same condition or task); ``label[i]`` is -1 (no label) or the
    label's rank in tie-break order.
    """

    conditions: tuple[ConditionKey, ...] = attrs.field(converter=_conditions)
    condition: IndexArray = attrs.field(converter=_index_vector, eq=_ARRAY_EQ)
    tasks: tuple[str, ...] = attrs.field(converter=_tasks)
    task: IndexArray = attrs.field(converter=_index_vector, eq=_ARRAY_EQ)
    trial: IntArray = attrs.field(converter=_int_vector, eq=_ARRAY_EQ)
    T: IntArray = attrs.field(converter=_int_vector, eq=_ARRAY_EQ)
    fed: IntArray = attrs.field(converter=_int_vector, eq=_ARRAY_EQ)
    Y: BoolArray = attrs.field(converter=_bool_vector, eq=_ARRAY_EQ)
    label: IndexArray = attrs.field(converter=_index_vector, eq=_ARRAY_EQ)

    def __attrs_post_init__(self) -> None:
        n = self.condition.shape[0]
        for name in ("task", "trial", "T", "fed", "Y", "label"):
            if getattr(self, name).shape[0] != n:
                raise ValueError(f"'{name}' has {getattr(self, name).shape[0]} entries, 'condition' has {n}")
        if n and (int(self.condition.min()) < 0 or int(self.condition.max()) >= len(self.conditions)):
            raise ValueError("'condition' must index 'conditions'")
        if n and (int(self.task.min()) < 0 or int(self.task.max()) >= len(self.tasks)):
            raise ValueError("'task' must index 'tasks'")

    def __len__(self) -> int:
        return int(self.condition.shape[0])

    def head(self, stop: int) -> RolloutArrays:
        """The first ``stop`` rows."""
        return RolloutArrays(
            self.conditions,
            self.condition[:stop],
            self.tasks,
            self.task[:stop],
            self.trial[:stop],
            self.T[:stop],
            self.fed[:stop],
            self.Y[:stop],
            self.label[:stop],
        )

    def key(self, row: int) -> tuple[ConditionKey, str, int]:
        """(condition, task id, trial) of one row."""
        return (
            self.conditions[int(self.condition[row])],
            self.tasks[int(self.task[row])],
            int(self.trial[row]),
        )

    @classmethod
    def from_rollouts(cls, rollouts: Sequence[Rollout]) -> RolloutArrays:
        """The columns of kernel rollouts (their outcomes are valid by construction)."""
        conditions: dict[ConditionKey, int] = {}
        tasks: dict[str, int] = {}
        return cls(
            conditions=conditions,
            condition=[conditions.setdefault(r.condition, len(conditions)) for r in rollouts],
            tasks=tasks,
            task=[tasks.setdefault(r.task_id, len(tasks)) for r in rollouts],
            trial=[r.trial for r in rollouts],
            T=[r.outcome.T for r in rollouts],
            fed=[r.outcome.fed for r in rollouts],
            Y=[r.success for r in rollouts],
            label=[NO_LABEL if r.outcome.label is None else r.outcome.label.rank for r in rollouts],
        )


def first_invalid_row(batch: RolloutArrays, gap: IntArray | None = None) -> tuple[int, str] | None:
    """The first row that is not a valid rollout, and what is wrong with it (or ``None``).

    ``gap`` may pass ``batch.fed - batch.T`` if the caller has it already.
    """
    T, fed, label, trial = batch.T, batch.fed, batch.label, batch.trial
    if len(batch) == 0:
        return None
    gap = fed - T if gap is None else gap
    # Reductions first (no per-row masks on the common, valid path).
    if (
        int(trial.min()) >= 0
        and int(T.min()) >= 1
        and int(fed.min()) >= 1
        and int(gap.max()) <= 1
        and int(label.min()) >= NO_LABEL
        and int(label.max()) < len(LABEL_ORDER)
        and not np.any((label != NO_LABEL) & (gap == 1))
    ):
        return None
    bad = (trial < 0) | (T < 1) | (fed < 1) | (fed > T + 1) | (label < NO_LABEL) | (label >= len(LABEL_ORDER))
    bad |= (fed == T + 1) & (label != NO_LABEL)
    row = int(np.argmax(bad))
    t, f, lab, tr = int(T[row]), int(fed[row]), int(label[row]), int(trial[row])
    if tr < 0:
        return row, f"'trial' must be >= 0: {tr}"
    if t < 1:
        return row, f"'T' must be an integer >= 1: {t}"
    if not 1 <= f <= t + 1:
        return row, f"'fed' must be in [1, T+1] = [1, {t + 1}]: {f}"
    if not NO_LABEL <= lab < len(LABEL_ORDER):
        return row, f"label code must be -1..{len(LABEL_ORDER) - 1}: {lab}"
    return row, f"'label' given for a fully executable rollout (fed = T+1): {LABEL_ORDER[lab].value}"


def _first_repeat(cell: IntArray, trial: IntArray) -> int:
    """The first row whose (cell, trial) occurred in an earlier row (there must be one)."""
    order = np.lexsort((np.arange(cell.shape[0]), trial, cell))
    c, t = cell[order], trial[order]
    repeats = np.flatnonzero((c[1:] == c[:-1]) & (t[1:] == t[:-1])) + 1
    return int(order[repeats].min())


def _trial_runs(cell: IntArray, trial: IntArray) -> tuple[IntArray, IntArray, IntArray] | None:
    """Runs of consecutive trials per cell, as (cell, first, last + 1) sorted by cell and first;
    ``None`` when a (cell, trial) occurs twice."""
    if cell.shape[0] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    # span > max trial + 1, so that consecutive keys never cross from one cell to the next.
    span = int(trial.max()) + 2
    top = (int(cell.max()) + 1) * span
    if int(trial.min()) >= 0 and top <= 64 * cell.shape[0] + (1 << 16):
        # One flag per (cell, trial) slot, at most 64 bytes a row (memory bounded by the batch), no sort.
        key = cell * span
        key += trial
        present = np.zeros(top + 1, dtype=np.bool_)
        present[key] = True
        if np.count_nonzero(present) != cell.shape[0]:
            return None
        edges = np.flatnonzero(present[1:] != present[:-1]) + 1
        if present[0]:
            edges = np.concatenate([[0], edges])
        starts, ends = edges[0::2], edges[1::2]
        run_cell = starts // span
        return run_cell, starts - run_cell * span, ends - run_cell * span
    if top < _INT64_SAFE:
        key = cell * span
        key += trial
        if top < 2**31:  # int32 keys sort several times faster (SIMD sorts)
            key = key.astype(np.int32)
        key.sort()
        step = np.diff(key)
        if not step.all():
            return None
        start = np.flatnonzero(step != 1) + 1
        first_keys = key[np.concatenate([[0], start])].astype(np.int64)
        last_keys = key[np.concatenate([start - 1, [key.shape[0] - 1]])].astype(np.int64)
        run_cell = first_keys // span
        return run_cell, first_keys - run_cell * span, last_keys - run_cell * span + 1
    order = np.lexsort((trial, cell))
    c, t = cell[order], trial[order]
    same = c[1:] == c[:-1]
    if np.any(same & (t[1:] == t[:-1])):
        return None
    start = np.concatenate([[True], ~same | (t[1:] != t[:-1] + 1)])
    end = np.concatenate([start[1:], [True]])
    return c[start], t[start], t[end] + 1


def _order(key: Any) -> Any:
    """A sort key ordering as ``key`` itself does: ConditionKey's fields as a tuple (the order
    attrs gives it, compared in C instead of attrs' generated Python methods: sorting 200,000
    conditions took most of scoring them, #27), anything else as it is."""
    if isinstance(key, ConditionKey):
        return (key.dataset, key.model, key.method)
    return key


def _ranks(names: Sequence[object]) -> tuple[list[Any], IntArray | None]:
    """Sorted distinct names and each input name's rank (``None`` when already sorted and distinct)."""
    ordered = sorted(set(names), key=_order)
    if len(ordered) == len(names) and all(a == b for a, b in zip(ordered, names, strict=True)):
        return ordered, None
    rank = {x: i for i, x in enumerate(ordered)}
    return ordered, np.array([rank[x] for x in names], dtype=np.int64)


def accumulate(batch: RolloutArrays) -> AccumulatorSet:
    """The accumulators of a batch of rollouts, one per condition, in one vectorised pass.

    Raises :class:`RowError` for the first invalid row or :class:`DuplicateRollout` for the first
    row that repeats an earlier row's (condition, task, trial), whichever comes first.
    """
    n = len(batch)
    if n == 0:
        return AccumulatorSet.empty()
    gap = batch.fed - batch.T
    invalid = first_invalid_row(batch, gap)
    stop = n if invalid is None else invalid[0]
    # Cells: (condition, task) pairs in sorted order of condition key, then task id.
    cond_keys, cond_rank = _ranks(batch.conditions)
    names, task_rank = _ranks(batch.tasks)
    nt = len(names)
    task = batch.task.astype(np.int64) if task_rank is None else task_rank[batch.task]
    if len(cond_keys) == 1:
        cell = task
    else:
        condition = batch.condition if cond_rank is None else cond_rank[batch.condition]
        cell = condition * nt + task
    n_cells = len(cond_keys) * nt
    if n_cells > max(n, 1 << 16):
        used, inverse = np.unique(cell, return_inverse=True)
        cell = inverse.reshape(-1).astype(np.int64)
    else:
        used = np.arange(n_cells, dtype=np.int64)
    n_cells = int(used.shape[0])
    runs = _trial_runs(cell[:stop], batch.trial[:stop])
    if runs is None:
        repeat = _first_repeat(cell[:stop], batch.trial[:stop])
        c, t, tr = batch.key(repeat)
        raise DuplicateRollout(c, t, tr, repeat)
    if invalid is not None:
        raise RowError(*invalid)
    run_cell, run_lo, run_hi = runs

    T, fed, Y = batch.T, batch.fed, batch.Y
    K = int(T.max())
    fed_hist = np.bincount(cell * (K + 1) + (fed - 1), minlength=n_cells * (K + 1)).reshape(n_cells, K + 1)
    t_index = cell * K + (T - 1)
    T_hist = np.bincount(t_index, minlength=n_cells * K).reshape(n_cells, K)
    steps = np.zeros(n_cells * K, dtype=np.int64)
    np.add.at(steps, t_index, fed - 1)
    steps_by_T = steps.reshape(n_cells, K)
    width = 2 * N_CLASSES
    # Column 2 class + Y: class 0 when fully executable (FED = T + 1, no label), label rank + 1
    # for a labelled failure, 6 for an unlabelled one. (label + 1) * 2 + Y is already the column
    # except for unlabelled failures, which move up by 2 * 6.
    label = batch.label.astype(np.int8, copy=False)
    code = label * np.int8(2)
    code += np.int8(2)
    code += Y
    code += np.int8(12) * ((label == NO_LABEL) & (gap != 1))
    class_y = np.bincount(cell * width + code, minlength=n_cells * width).reshape(n_cells, width)

    count = T_hist.sum(axis=1)
    present = np.flatnonzero(count)
    cell_cond = used[present] // nt
    cell_task = used[present] % nt
    bounds = np.flatnonzero(np.concatenate([[True], cell_cond[1:] != cell_cond[:-1], [True]]))
    out: list[tuple[ConditionKey, Accumulator]] = []
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        rows = present[a:b]
        Tc = T_hist[rows]
        Kc = int(np.flatnonzero(Tc.any(axis=0)).max()) + 1
        first = int(np.searchsorted(run_cell, rows[0], side="left"))
        last = int(np.searchsorted(run_cell, rows[-1], side="right"))
        local = np.searchsorted(rows, run_cell[first:last])
        out.append(
            (
                cond_keys[int(cell_cond[a])],
                Accumulator._built(
                    [names[int(j)] for j in cell_task[a:b]],
                    fed_hist[rows, : Kc + 1],
                    Tc[:, :Kc],
                    steps_by_T[rows, :Kc],
                    class_y[rows],
                    np.column_stack([local, run_lo[first:last], run_hi[first:last]]),
                ),
            )
        )
    return AccumulatorSet(out)


# ---------------------------------------------------------------------------------------------
# Accumulators of every condition


def _items(value: Iterable[tuple[ConditionKey, Accumulator]]) -> tuple[tuple[ConditionKey, Accumulator], ...]:
    items = tuple(sorted(value, key=lambda kv: _order(kv[0])))
    for key, acc in items:
        if not isinstance(key, ConditionKey) or not isinstance(acc, Accumulator):
            raise ValueError("items must be (ConditionKey, Accumulator) pairs")
        if not acc.tasks:  # ACC-STATE: every task has a rollout, so no tasks means no rollouts
            raise ValueError(f"condition {key} has no rollouts")
    for (a, _), (b, _) in itertools.pairwise(items):
        if _order(a) == _order(b):
            raise ValueError(f"condition {a} appears twice")
    return items


@attrs.frozen(slots=True)
class AccumulatorSet:
    """One accumulator per condition, sorted by (dataset, model, method); immutable."""

    items: tuple[tuple[ConditionKey, Accumulator], ...] = attrs.field(converter=_items)

    @classmethod
    def empty(cls) -> AccumulatorSet:
        return cls(())

    @classmethod
    def from_rollouts(cls, rollouts: Sequence[Rollout]) -> AccumulatorSet:
        """The accumulators of kernel rollouts (raises :class:`DuplicateRollout` on a repeat)."""
        return accumulate(RolloutArrays.from_rollouts(rollouts))

    @property
    def N(self) -> int:
        """Rollouts over all conditions."""
        return sum(acc.N for _, acc in self.items)

    def keys(self) -> list[ConditionKey]:
        return [key for key, _ in self.items]

    def as_dict(self) -> dict[ConditionKey, Accumulator]:
        """A new dict condition -> accumulator, in sorted order."""
        return dict(self.items)

    def get(self, key: ConditionKey) -> Accumulator | None:
        for k, acc in self.items:
            if k == key:
                return acc
        return None

    def merge(self, other: AccumulatorSet) -> AccumulatorSet:
        """Merge condition by condition (ACC-MERGE); :class:`DuplicateRollout` names the condition."""
        if not other.items:
            return self
        if not self.items:
            return other
        merged = self.as_dict()
        for key, acc in other.items:
            mine = merged.get(key)
            if mine is None:
                merged[key] = acc
                continue
            try:
                merged[key] = mine.merge(acc)
            except DuplicateRollout as exc:
                raise exc.with_condition(key) from None
        return AccumulatorSet(merged.items())

    def first_repeat(self, batch: RolloutArrays, stop: int | None = None) -> int | None:
        """The first row of ``batch[:stop]`` whose (condition, task, trial) is already here."""
        stop = len(batch) if stop is None else stop
        if stop == 0 or not self.items:
            return None
        rows = batch.head(stop)
        found = np.zeros(stop, dtype=np.bool_)
        mine = self.as_dict()
        for index, key in enumerate(rows.conditions):
            acc = mine.get(key)
            if acc is None:
                continue
            select = np.flatnonzero(rows.condition == index)
            if select.shape[0]:
                found[select] |= acc.contains(rows.tasks, rows.task[select], rows.trial[select])
        return int(np.argmax(found)) if found.any() else None

    def to_json(self) -> dict[str, Any]:
        """The JSON document of every condition's accumulator (ACC-JSON)."""
        return {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "conditions": [
                {"dataset": k.dataset, "model": k.model, "method": k.method, **acc.to_json()}
                for k, acc in self.items
            ],
        }

    @classmethod
    def from_json(cls, value: object) -> AccumulatorSet:
        """Parse :meth:`to_json`'s document; raises ``ValueError`` naming what is wrong."""
        if not isinstance(value, dict):
            raise ValueError("expected a JSON object")
        if value.get("format") != JSON_FORMAT or value.get("version") != JSON_VERSION:
            raise ValueError(f"not a {JSON_FORMAT} document of version {JSON_VERSION}")
        if set(value) != {"format", "version", "conditions"}:
            raise ValueError("expected exactly the keys format, version, conditions")
        conditions = value["conditions"]
        if not isinstance(conditions, list):
            raise ValueError("'conditions' must be a list")
        items: list[tuple[ConditionKey, Accumulator]] = []
        for i, entry in enumerate(conditions):
            if not isinstance(entry, dict):
                raise ValueError(f"conditions[{i}] must be an object")
            names = ("dataset", "model", "method")
            if not all(isinstance(entry.get(n), str) for n in names):
                raise ValueError(f"conditions[{i}] needs string 'dataset', 'model' and 'method'")
            key = ConditionKey(entry["dataset"], entry["model"], entry["method"])
            try:
                acc = Accumulator.from_json({k: v for k, v in entry.items() if k not in names})
            except ValueError as exc:
                raise ValueError(f"conditions[{i}]: {exc}") from None
            items.append((key, acc))
        return cls(items)


def merge_all(parts: Iterable[AccumulatorSet]) -> AccumulatorSet:
    """Merge any number of parts, left to right."""
    out = AccumulatorSet.empty()
    for part in parts:
        out = out.merge(part)
    return out


__all__ = [
    "CLASSES",
    "NO_LABEL",
    "Accumulator",
    "AccumulatorSet",
    "DuplicateRollout",
    "RolloutArrays",
    "RowError",
    "accumulate",
    "first_invalid_row",
    "merge_all",
]
