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
