"""The paper's task sampler (section 2.6; spec: spec/sampling.md, SAMPLE-*).

Tasks carry labels (strata): a BFCL task its category, a tau-bench task its domain, any other
task its dataset, and a ToolSandbox scenario its scenario categories (several labels). The
sampler orders the tasks by a seeded hash (SAMPLE-ORDER) and then picks greedily:

* ``per_category=N`` (SAMPLE-PER-CATEGORY): until every label has ``min(N, tasks with it)``
  picked tasks, pick the task that helps the most labels still short of N. With one label per
  task this is a uniform sample of N tasks per label.
* ``size=N`` (SAMPLE-SIZE): N tasks in all; each label's target is its share of the tasks,
  ``N * n(label) / n``; pick the task whose labels are furthest below their targets (summed).
  With one label per task every label gets its target rounded down or up.

Ties go to the task earlier in the hash order, so the result depends only on the tasks, their
labels and the seed, not on the order they were read in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import attrs


def order_key(seed: int, task_id: str) -> str:
    """SAMPLE-ORDER: ``sha256("<seed>:<task_id>")`` in hex; tasks are taken in increasing order."""
    return hashlib.sha256(f"{seed}:{task_id}".encode()).hexdigest()


@attrs.frozen(slots=True)
class Sample:
    """The picked task ids (sorted) and, per label, how many tasks it has and how many were picked."""

    tasks: tuple[str, ...]
    available: Mapping[str, int]
    picked: Mapping[str, int]


def _counts(labels: Mapping[str, frozenset[str]], tasks: Iterable[str]) -> dict[str, int]:
    out = {label: 0 for ls in labels.values() for label in ls}
    for task in tasks:
        for label in labels[task]:
            out[label] += 1
    return dict(sorted(out.items()))


def sample(
    labels: Mapping[str, Iterable[str]],
    *,
    seed: int = 0,
    per_category: int | None = None,
    size: int | None = None,
) -> Sample:
    """Pick tasks from ``labels`` (task id -> its labels) by ``per_category`` or by ``size``."""
    if (per_category is None) == (size is None):
        raise ValueError("give exactly one of per_category and size")
    sets = {task: frozenset(ls) for task, ls in labels.items()}
    if any(not ls for ls in sets.values()):
        raise ValueError("every task needs at least one label")
    order = sorted(sets, key=lambda t: (order_key(seed, t), t))
    available = _counts(sets, sets)
    if per_category is not None:
        if per_category < 1:
            raise ValueError(f"per_category must be >= 1: {per_category}")
        chosen = _per_category(sets, order, {c: min(per_category, n) for c, n in available.items()})
    else:
        assert size is not None
        if size < 1:
            raise ValueError(f"size must be >= 1: {size}")
        chosen = _size(sets, order, available, min(size, len(order)))
    return Sample(tuple(sorted(chosen)), available, _counts(sets, chosen))


def _per_category(
    sets: Mapping[str, frozenset[str]], order: Sequence[str], need: dict[str, int]
) -> list[str]:
    """SAMPLE-PER-CATEGORY: greedy coverage until every label has its quota."""
    chosen: list[str] = []
    left = list(order)
    while any(n > 0 for n in need.values()):
        best, best_gain = -1, 0
        for i, task in enumerate(left):
            gain = sum(1 for c in sets[task] if need[c] > 0)
            if gain > best_gain:  # strictly more: ties keep the earlier task in the hash order
                best, best_gain = i, gain
        task = left.pop(best)
        chosen.append(task)
        for c in sets[task]:
            need[c] -= 1
    return chosen


def _size(
    sets: Mapping[str, frozenset[str]], order: Sequence[str], available: Mapping[str, int], size: int
) -> list[str]:
    """SAMPLE-SIZE: greedy proportional stratification to ``size`` tasks."""
    n = len(order)
    target = {c: Fraction(size * k, n) for c, k in available.items()}
    picked = dict.fromkeys(available, 0)
    chosen: list[str] = []
    left = list(order)
    while len(chosen) < size:
        best, best_gain = 0, Fraction(-1)
        for i, task in enumerate(left):
            gain = sum((max(Fraction(0), target[c] - picked[c]) for c in sets[task]), Fraction(0))
            if gain > best_gain:
                best, best_gain = i, gain
        task = left.pop(best)
        chosen.append(task)
        for c in sets[task]:
            picked[c] += 1
    return chosen
