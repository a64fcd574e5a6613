"""Hypothesis strategies for cohorts, outcomes and verdict sequences (one module, st.composite)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from prefixexec.kernel import LABEL_ORDER, Cohort, Label, Outcome
from prefixexec.kernel.cohort import label_code

MAX_T = 25


#: A failing outcome's label or none. Built once: making it in every draw was a sizeable part of
#: the property tests' data generation.
LABELS_OR_NONE = st.none() | st.sampled_from(LABEL_ORDER)


@st.composite
def outcomes(draw: st.DrawFn, max_t: int = MAX_T) -> Outcome:
    """An outcome with T >= 1 and 1 <= FED <= T+1; failing ones maybe labelled."""
    T = draw(st.integers(1, max_t))
    fed = draw(st.integers(1, T + 1))
    label: Label | None = None
    if fed <= T:
        label = draw(LABELS_OR_NONE)
    return Outcome(T=T, fed=fed, label=label)


def triples(max_t: int = MAX_T) -> st.SearchStrategy[tuple[Outcome, bool]]:
    """(outcome, Y): the same draws as a composite of the two, without a composite's overhead."""
    return st.tuples(outcomes(max_t), st.booleans())


@st.composite
def cohorts(draw: st.DrawFn, min_n: int = 1, max_n: int = 40, max_t: int = MAX_T) -> Cohort:
    """A random cohort: N rollouts of random (T, FED, Y, label), tasks t0, t1, ..."""
    items = draw(st.lists(triples(max_t), min_size=min_n, max_size=max_n))
    return cohort_of(items)


def cohort_of(items: list[tuple[Outcome, bool]], tasks: list[str] | None = None) -> Cohort:
    """The cohort of (outcome, Y) pairs, task ids t0.. unless given."""
    names = tasks if tasks is not None else [f"t{i}" for i in range(len(items))]
    return Cohort.from_outcomes((t, o, y) for t, (o, y) in zip(names, items, strict=True))


@st.composite
def common_horizon_cohorts(draw: st.DrawFn) -> tuple[int, Cohort]:
    """(T0, cohort) where every rollout has horizon T0."""
    T0 = draw(st.integers(1, MAX_T))
    n = draw(st.integers(1, 40))
    items = [
        (Outcome(T=T0, fed=f, label=None), y)
        for f, y in draw(st.lists(st.tuples(st.integers(1, T0 + 1), st.booleans()), min_size=n, max_size=n))
    ]
    return T0, cohort_of(items)


verdict_sequences = st.lists(st.booleans(), min_size=1, max_size=MAX_T)


def records_of(items: list[tuple[Outcome, bool]], **key: Any) -> list[dict[str, Any]]:
    """JSONL records (outcome form) for (outcome, Y) pairs."""
    out = []
    for i, (o, y) in enumerate(items):
        rec: dict[str, Any] = {
            "dataset": key.get("dataset", "d"),
            "model": key.get("model", "m"),
            "method": key.get("method", "react"),
            "task_id": f"t{i}",
            "success": y,
            "outcome": {"T": o.T, "fed": o.fed},
        }
        if o.label is not None:
            rec["outcome"]["label"] = o.label.value
        out.append(rec)
    return out


__all__ = ["cohort_of", "cohorts", "common_horizon_cohorts", "label_code", "np", "outcomes", "records_of"]


@st.composite
def monitor_cuts(draw: st.DrawFn, actions: Any) -> Any:
    """A prefix of ``actions`` (a tuple) of drawn length, possibly empty (the no-tool action)."""
    return tuple(actions)[: draw(st.integers(0, len(actions)))]


@st.composite
def trial_counts(draw: st.DrawFn, max_tasks: int = 12, max_trials: int = 8) -> tuple[list[int], list[int]]:
    """Per-task (n, c) of a multi-trial run: n_j >= 1 trials, 0 <= c_j <= n_j (PASSK-*)."""
    m = draw(st.integers(1, max_tasks))
    n = draw(st.lists(st.integers(1, max_trials), min_size=m, max_size=m))
    c = [draw(st.integers(0, nj)) for nj in n]
    return n, c


@st.composite
def equal_trial_cohorts(draw: st.DrawFn, max_tasks: int = 10, max_trials: int = 5) -> tuple[int, Cohort]:
    """(n, cohort) where every task t0, t1, ... has exactly n rollouts (trials)."""
    n = draw(st.integers(1, max_trials))
    m = draw(st.integers(1, max_tasks))
    items = draw(st.lists(triples(8), min_size=n * m, max_size=n * m))
    return n, cohort_of(items, [f"t{j}" for j in range(m) for _ in range(n)])


#: Characters for provenance texts: word characters, separators, '#', and characters that
#: TAU-ENTITY-NORM's normalisation changes (a non-breaking space, an en dash, a soft hyphen, ß, ẞ).
PROVENANCE_ALPHABET = "ab1_ #-.:\u00a0\u2013\u00ad\u00dfA\u1e9e\u00e9"


@st.composite
def seen_and_identifier(draw: st.DrawFn) -> tuple[list[str], str]:
    """(texts, identifier): a few short texts and an identifier, half the time cut from one of them."""
    text = st.text(PROVENANCE_ALPHABET, max_size=14)
    texts = draw(st.lists(text, max_size=4))
    if texts and draw(st.booleans()):
        source = draw(st.sampled_from(texts))
        start = draw(st.integers(0, len(source)))
        end = draw(st.integers(start, len(source)))
        return texts, source[start:end]
    return texts, draw(st.text(PROVENANCE_ALPHABET, max_size=6))


#: 0.5 + 2^-54 = (2^53 + 1) / 2^54: the midpoint between the doubles 0.5 and 0.5 + 2^-53.
MIDPOINT = (2**53 + 1, 2**54)


@st.composite
def wide_values(draw: st.DrawFn, L: int, g: int, E: int) -> int:
    """One numerator over ``L = g 2^E`` (g odd; E >= 54): a random one in [0, L] or an adversarial
    one of PASSK-BOOT-FIXED: 0, 1 (num = L), just below 1, an exact power of two, the midpoint
    (2^53 + 1)/2^54 or its neighbour 1/2 (mixtures of the two give midpoints under some draws),
    or a subnormal-small value (a few units over an L of more than 2^1074)."""
    kind = draw(st.sampled_from(["random", "zero", "one", "below_one", "power", "midpoint", "half", "tiny"]))
    if kind == "zero":
        return 0
    if kind == "one":
        return L
    if kind == "below_one":
        return L - draw(st.integers(1, 2**20))
    if kind == "power":
        return g * 2 ** (E - draw(st.integers(0, E)))
    if kind == "midpoint":
        return g * MIDPOINT[0] * 2 ** (E - 54)
    if kind == "half":
        return g * 2 ** (E - 1)
    if kind == "tiny":
        return draw(st.integers(1, 2**30))
    return draw(st.integers(0, L))


@st.composite
def wide_columns(draw: st.DrawFn, max_tasks: int = 6) -> tuple[list[int], int]:
    """(numerators, L) of one PASSK-BOOT column with L >= 2^54 (Python integers), L = g 2^E."""
    g = 2 * draw(st.integers(0, 2**60)) + 1
    E = draw(st.integers(54, 1200))
    L = g * 2**E
    m = draw(st.integers(1, max_tasks))
    return [draw(wide_values(L, g, E)) for _ in range(m)], L


@st.composite
def resample_rows(draw: st.DrawFn, m: int, max_rows: int = 12) -> Any:
    """B x m resample counts: mostly rows of m draws (BOOT-DRAW), sometimes any small counts
    (an empty row: BOOT-DROP)."""
    rows = []
    for _ in range(draw(st.integers(1, max_rows))):
        if draw(st.integers(0, 3)):
            picks = draw(st.lists(st.integers(0, m - 1), min_size=m, max_size=m))
            rows.append([picks.count(j) for j in range(m)])
        else:
            rows.append(draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)))
    return np.array(rows, dtype=np.int64)
