"""The fixed-point fast path of PASSK-BOOT's wide columns (spec/passk.md PASSK-BOOT-FIXED): the
same doubles as the exact Python-integer ratio rounded once (BOOT-REPLICATE), bit for bit, and
the exact computation taken only for the replicates the fast path cannot prove.

Every expected replicate is computed independently here: ``Fraction(sum_j w_j num_j, D L)``
rounded by ``float`` (CPython rounds an integer ratio correctly, ties to even), and the
kernel's existing object-dtype path (:func:`prefixexec.kernel.passk.replicates`). Which
replicates may need the exact computation is decided from the exact rational alone: those
within 2^-60 (relative) of a midpoint between two adjacent doubles, or below 2^-950.
"""

from __future__ import annotations

import math
import random
import tracemalloc
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from test_leaderboard_bounded import records

import prefixexec.ranking.core as core
from prefixexec.cli import main
from prefixexec.kernel import passk as pk
from prefixexec.kernel.bootstrap import resample_counts

from strategies import MIDPOINT, resample_rows, wide_columns

Column = tuple[list[int], int]


def exact(W: np.ndarray[Any, Any], nums: list[int], L: int) -> list[float]:
    """BOOT-REPLICATE from the definition: each row's rational rounded once (NaN: nothing drawn)."""
    out = []
    for row in W.tolist():
        drawn = sum(row)
        out.append(
            math.nan
            if drawn == 0
            else float(Fraction(sum(w * v for w, v in zip(row, nums, strict=True)), drawn * L))
        )
    return out


def columns_of(nums: list[int], L: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    return np.array(nums, dtype=object), np.array([L] * len(nums), dtype=object)


def bits(values: Any) -> list[int]:
    """The IEEE bit patterns (so 0.0, -0.0 and NaN compare exactly)."""
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


def exact_values(W: np.ndarray[Any, Any], nums: list[int], L: int) -> Iterator[tuple[int, Fraction]]:
    """Each row that draws a task, with its exact replicate sum_j W_j num_j / (sum_j W_j L)."""
    for b, row in enumerate(W.tolist()):
        drawn = sum(row)
        if drawn:
            yield b, Fraction(sum(w * x for w, x in zip(row, nums, strict=True)), drawn * L)


def uncertain(W: np.ndarray[Any, Any], nums: list[int], L: int) -> set[int]:
    """The rows whose exact replicate lies within 2^-60 (relative) of a midpoint between adjacent
    doubles, or below 2^-950 (near the subnormal range): the only ones the fast path may leave to
    the exact computation."""
    found = set()
    for b, v in exact_values(W, nums, L):
        if v < Fraction(2) ** -950:
            if v:
                found.add(b)
            continue
        f = float(v)
        mids = [(Fraction(f) + Fraction(np.nextafter(f, side))) / 2 for side in (0.0, math.inf)]
        if min(abs(v - m) for m in mids) <= v * Fraction(2) ** -60:
            found.add(b)
    return found


def exact_midpoints(W: np.ndarray[Any, Any], nums: list[int], L: int) -> set[int]:
    """The rows whose exact replicate is exactly halfway between two adjacent doubles."""
    found = set()
    for b, v in exact_values(W, nums, L):
        f = float(v)
        if v and any(v == (Fraction(f) + Fraction(np.nextafter(f, side))) / 2 for side in (0.0, math.inf)):
            found.add(b)
    return found


class Spy:
    """Counts the replicates PASSK-BOOT-FIXED leaves to the exact Python-integer computation."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows: list[tuple[int, ...]] = []
        real = pk._exact_replicate

        def spy(w: list[int], nums: Any, L: int) -> float:
            self.rows.append(tuple(w))
            return real(w, nums, L)

        monkeypatch.setattr(pk, "_exact_replicate", spy)

    def taken(self, W: np.ndarray[Any, Any]) -> set[int]:
        rows = W.tolist()
        return {b for b, row in enumerate(rows) if tuple(row) in self.rows}


#: One task at the midpoint 0.5 + 2^-54, and the same scaled by 3 x 2^900 (L > 2^950).
SCALED_MIDPOINT: Column = ([MIDPOINT[0] * 3 * 2**900], MIDPOINT[1] * 3 * 2**900)


@pytest.mark.spec("PASSK-BOOT-FIXED", "BOOT-REPLICATE", "BOOT-DROP")
@given(wide_columns(), st.data())
@example(column=(list(MIDPOINT[:1]), MIDPOINT[1]), data=None)
@example(column=SCALED_MIDPOINT, data=None)
@example(column=([2**53 + 1, 2**53, 2**54, 0], 2**54), data=None)  # midpoint, 1/2, 1, 0
@example(column=([1, 2**1100 - 1, 7], 2**1100), data=None)  # subnormal-small and just below 1
@example(column=([1, 3, 2**60], 2**1100), data=None)  # every replicate subnormal or zero
@example(column=([2**1000, 2**1099, 3 * 2**1098], 2**1100), data=None)  # powers of two, 3/4
def test_fast_path_equals_the_exact_ratio(column: Column, data: st.DataObject | None) -> None:
    nums, L = column
    m = len(nums)
    W = resample_counts(m, 40, 1) if data is None else data.draw(resample_rows(m))
    got = pk.prepare_columns([columns_of(nums, L)], m).replicates(W)[0]
    assert bits(got) == bits(exact(W, nums, L))


@pytest.mark.spec("PASSK-BOOT-FIXED", "PASSK-BOOT")
@given(wide_columns(), st.integers(0, 2**32 - 1))
def test_fast_path_equals_the_object_path(column: Column, seed: int) -> None:
    nums, L = column
    W = resample_counts(len(nums), 30, seed)
    cols = [columns_of(nums, L)]
    assert bits(pk.prepare_columns(cols, len(nums)).replicates(W)) == bits(pk.replicates(W, cols))


@pytest.mark.spec("PASSK-BOOT-FIXED")
@given(wide_columns(), st.data())
@example(column=([2**53 + 1, 2**53], 2**54), data=None)
@example(column=SCALED_MIDPOINT, data=None)
def test_exact_path_only_for_the_uncertain_replicates(column: Column, data: st.DataObject | None) -> None:
    nums, L = column
    m = len(nums)
    W = resample_counts(m, 40, 2) if data is None else data.draw(resample_rows(m))
    with pytest.MonkeyPatch.context() as monkeypatch:
        spy = Spy(monkeypatch)
        pk.prepare_columns([columns_of(nums, L)], m).replicates(W)
    taken = spy.taken(W)
    # Never for a replicate the fast path can prove; always for an exact midpoint (a tie).
    assert exact_midpoints(W, nums, L) <= taken <= uncertain(W, nums, L)


@pytest.mark.spec("PASSK-BOOT-FIXED")
def test_midpoint_column_goes_exact_and_a_real_curve_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    # One task at 0.5 + 2^-54 (a tie: rounds to 0.5, the even one) and one at 0.5: a replicate
    # is a midpoint exactly when the draws of the first are all of D (D = 2: both draws, or D = 1).
    nums, L = [2**53 + 1, 2**53], 2**54
    W = resample_counts(2, 64, 0)
    spy = Spy(monkeypatch)
    got = pk.prepare_columns([columns_of(nums, L)], 2).replicates(W)[0]
    ties = {b for b, row in enumerate(W.tolist()) if row == [2, 0]}
    assert ties and spy.taken(W) == ties and exact_midpoints(W, nums, L) == ties
    assert bits(got) == bits(exact(W, nums, L))
    # 50 tasks x 800 trials (successes drawn from a seeded generator), pass^k and pass@k at
    # k = 1, 100, 400, 790: C(800, k) up to 2^796, every replicate proven, none exact.
    r = random.Random(5)
    c = [r.randint(0, 800) for _ in range(50)]
    cols = [pk.task_columns([800] * 50, c, k, at) for k in (1, 100, 400, 790) for at in (False, True)]
    assert all(num.dtype == object for num, _ in cols[2:])
    W = resample_counts(50, 200, 7)
    spy.rows.clear()
    got_all = pk.prepare_columns(cols, 50).replicates(W)
    assert spy.rows == []
    assert bits(got_all) == bits(pk.replicates(W, cols))


@pytest.mark.spec("PASSK-BOOT-FIXED", "BOOT-REPLICATE")
def test_counts_too_large_for_exact_limb_sums_take_the_exact_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rows drawing 2^40 tasks: a limb sum could reach 2^40 x 2^47 > 2^53, so those replicates are
    # computed exactly (and still equal the definition); the row drawing 3 is proven.
    nums, L = [3**100, 5**40, 0], 7**60
    W = np.array([[2**40, 1, 0], [0, 2**40, 5], [1, 1, 1]], dtype=np.int64)
    spy = Spy(monkeypatch)
    got = pk.prepare_columns([columns_of(nums, L)], 3).replicates(W)[0]
    assert spy.taken(W) == {0, 1}
    assert bits(got) == bits(exact(W, nums, L))


@pytest.mark.spec("PASSK-BOOT-FIXED", "LB-MEMORY")
@given(st.integers(1, 900), st.data())
def test_limbs_stay_within_the_memory_estimate(n: int, data: st.DataObject) -> None:
    # LB-MEMORY plans fixed_limbs(bits of C(n, k) + 1) limbs per wide column: every nonzero
    # pass^k or pass@k value is at least 1 / C(n, k).
    k = data.draw(st.integers(1, n))
    c = data.draw(st.lists(st.integers(0, n), min_size=1, max_size=8))
    for at_least_one in (False, True):
        num, den = pk.task_columns([n] * len(c), c, k, at_least_one)
        column = pk.fixed_column(num, int(den[0]), 47)
        top = math.comb(n, k).bit_length()
        assert column.limbs.shape[1] <= pk.fixed_limbs(top, len(c))


@pytest.mark.spec("LB-MEMORY", "PASSK-BOOT-FIXED")
def test_leaderboard_draw_stays_within_its_planned_peak(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # One system, 12 tasks x 300 trials: C(300, k) reaches 2^296, so most curve points are wide
    # columns on the fixed-point path. The memory the draw allocates (tracemalloc, numpy's arrays
    # included), over what was held before it, stays below LB-MEMORY's planned peak.
    path = records(tmp_path / "r.jsonl", systems=1, tasks=12, trials=300, seed=9)
    planned: list[int] = []
    used: list[int] = []
    wide: list[int] = []
    real_plan, real_draw, real_prepare = core._plan, core._draw, pk.prepare_columns

    def plan_spy(*a: Any) -> Any:
        p = real_plan(*a)
        planned.append(p.peak)
        return p

    def draw_spy(*a: Any) -> Any:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = real_draw(*a)
        used.append(tracemalloc.get_traced_memory()[1] - before)
        return out

    def prepare_spy(columns: Any, n_tasks: int) -> Any:
        prepared = real_prepare(columns, n_tasks)
        wide.append(sum(len(g) for g in prepared.groups))
        return prepared

    monkeypatch.setattr(core, "_plan", plan_spy)
    monkeypatch.setattr(core, "_draw", draw_spy)
    monkeypatch.setattr(pk, "prepare_columns", prepare_spy)
    tracemalloc.start()
    try:
        assert main(["leaderboard", "--json", "--bootstrap", "400", str(path)]) == 0
    finally:
        tracemalloc.stop()
    capsys.readouterr()
    assert sum(wide) > 600 and used and planned  # 4 x 300 curve points, most of them wide
    assert max(used) <= max(planned)
