"""Auditing a reported table: could integer counts have produced its rounded figures?

(spec: AUDIT-TABLE-CSV, AUDIT-TABLE-PRECISION, AUDIT-TABLE-IDENTITIES, AUDIT-TABLE-VERDICT)

Like the GRIM test for means, every figure a paper prints with ``d`` decimals admits every true
value within half a unit of its last digit, ends included (so any rounding convention passes).
For each row of N, TER, mean FED, AUC-PEC, RR-Eligible, RR and success, :func:`audit_row`
searches the integer counts of one condition,

* ``F`` fully executable rollouts (TER = F / N), ``E = N - F`` RR-eligible ones,
* ``R`` recovered successes (RR = R / E), ``U`` uninterrupted successes (success = (U + R) / N),
* ``SF`` the sum of FED (mean FED = SF / N) and ``A = N x AUC-PEC`` (a rational, since the
  horizons are not reported),

for one that puts every reported figure inside its window and satisfies the exact identities
of :data:`CHECKS`, in that order. A row is ``consistent`` when such counts exist; otherwise the
verdict names the first identity that no count can satisfy together with the ones before it,
and gives the closest feasible values: the counts whose figures need the smallest widening of
all windows (the same factor for every figure) to fit.

The horizons are not reported, so AUC-PEC is checked against bounds that hold for every choice
of horizons (``TER <= AUC-PEC <= 1`` and the depth bound of :func:`depth_bound`); a row that
passes them may still be impossible for some very small N with particular horizons.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs

from prefixexec.adapters import InputError
from prefixexec.adapters.inputs import open_text, reading
from prefixexec.adapters.numbers import ascii_digits
from prefixexec.scoring import exact

#: The CSV columns, in the order the issue and the spec give them.
COLUMNS = ("dataset", "model", "method", "N", "TER", "mean_FED", "AUC_PEC", "RR_eligible", "RR", "success")
#: The figures (columns with numbers) other than N.
FIGURES = ("TER", "mean_FED", "AUC_PEC", "RR_eligible", "RR", "success")
#: Cell texts that report a figure as undefined (only RR may be undefined: RR-Eligible = 0).
UNDEFINED = frozenset({"n/a", "na", "null", "none", "undefined", "-", "—", "–"})

#: The identities, checked cumulatively in this order (AUDIT-TABLE-IDENTITIES).
CHECKS: tuple[str, ...] = (
    "TER = (fully executable) / N, an integer count",
    "success = (successes) / N, an integer count",
    "mean FED = (sum of FED) / N, an integer sum >= N",
    "RR-Eligible = N (1 - TER)",
    "RR = recovered / RR-Eligible with an integer recovered count (RR undefined iff RR-Eligible = 0)",
    "successes = uninterrupted + recovered, 0 <= uninterrupted <= fully executable",
    "TER <= AUC-PEC <= 1 (AUC-PEC = 1 only when TER = 1)",
    "mean FED >= 1 + TER (a fully executable rollout has FED = T + 1 >= 2)",
    "AUC-PEC - TER <= depth bound (a failing rollout adds at most d/(d+1) for FED = d + 1 <= T)",
)

_NUMBER = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)$", re.ASCII)  # HOSTILE-DIGITS: 0-9 only

#: AUDIT-TABLE-LIMIT: the most digits of a number in the table (N or a figure): a printed table's
#: numbers have a few; thousands of digits would overflow Python's conversions.
MAX_DIGITS = 30
#: AUDIT-TABLE-LIMIT: the most candidate counts (values of the fully executable count, over every
#: N searched and every identity) examined to decide one row; a row that needs more is refused
#: with one line. The search examines about one candidate per unit of N in the TER window (all
#: of 0..N without TER), so the cost of a row follows its N, not only its bytes.
MAX_CANDIDATES = 100_000
#: AUDIT-TABLE-LIMIT: the most candidates examined to explain an inconsistent row (its closest
#: counts and the single figures that could be wrong; each candidate costs more there, as every
#: identity is checked); beyond it the verdict is reported without them.
MAX_CLOSEST_CANDIDATES = 10_000


def without_interval(text: str) -> str:
    r"""``text`` without a trailing interval such as `` [0.63, 0.76]`` or ``(0.55-0.68)``.

    What ``re.sub(r"\s*[\[(][^\])]*[\])]\s*$", "", text)`` does, in one pass over the text
    (HOSTILE-COUNT-COST: that pattern, tried from every position of a cell, took quadratic time:
    45 s for a 100 KB cell of brackets). The interval opens at the first ``[`` or ``(`` after
    the last closing bracket before the final one; white space around it goes with it.
    """
    body = text.rstrip()
    if not body.endswith(("]", ")")):
        return text
    inner = body[:-1]
    after = max(inner.rfind("]"), inner.rfind(")")) + 1
    opens = [i for i in (inner.find("[", after), inner.find("(", after)) if i >= 0]
    if not opens:
        return text
    return text[: min(opens)].rstrip()


@attrs.frozen(slots=True)
class Figure:
    """A reported figure: its text, its exact value and half a unit of its last printed digit."""

    text: str
    value: Fraction
    half_unit: Fraction

    def low(self, scale: Fraction) -> Fraction:
        return self.value - scale * self.half_unit

    def high(self, scale: Fraction) -> Fraction:
        return self.value + scale * self.half_unit


@attrs.frozen(slots=True)
class Row:
    """One row of the table. A figure that is ``None`` was not reported (empty cell)."""

    where: str
    dataset: str
    model: str
    method: str
    N: int | None
    figures: Mapping[str, Figure | None]
    #: The RR cell says the value is undefined ("n/a"): RR-Eligible must then be 0.
    rr_undefined: bool = False


@attrs.frozen(slots=True)
class Counts:
    """Integer counts of one condition (and A = N x AUC-PEC) that reproduce a row."""

    N: int
    fully_executable: int
    recovered: int
    uninterrupted: int
    sum_fed: int | None
    area: Fraction | None

    @property
    def rr_eligible(self) -> int:
        return self.N - self.fully_executable

    def value(self, name: str) -> Fraction | None:
        """The exact value of figure ``name`` these counts give (None where undefined or free)."""
        n = self.N
        if name == "TER":
            return Fraction(self.fully_executable, n)
        if name == "success":
            return Fraction(self.uninterrupted + self.recovered, n)
        if name == "RR_eligible":
            return Fraction(self.rr_eligible)
        if name == "RR":
            return None if self.rr_eligible == 0 else Fraction(self.recovered, self.rr_eligible)
        if name == "mean_FED":
            return None if self.sum_fed is None else Fraction(self.sum_fed, n)
        if name == "AUC_PEC":
            return None if self.area is None else self.area / n
        raise KeyError(name)


@attrs.frozen(slots=True)
class SingleFix:
    """A figure that alone can be changed to make a row consistent, and its closest feasible value."""

    figure: str
    value: Fraction
    counts: Counts


@attrs.frozen(slots=True)
class Verdict:
    """The audit of one row."""

    row: Row
    consistent: bool
    #: Index into :data:`CHECKS` of the first identity no count satisfies (None if consistent).
    failed: int | None
    #: Counts that reproduce the row (consistent), or the closest feasible counts (inconsistent).
    counts: Counts | None
    #: For the closest counts: the factor by which every window must widen for them to fit.
    widening: Fraction | None
    #: N values that work when N is not reported, else empty.
    feasible_N: tuple[int, ...] = ()
    #: Inconsistent rows: each figure that alone can be changed to make the row consistent,
    #: with its closest feasible value (the other figures as printed).
    single_fixes: tuple[SingleFix, ...] = ()
    #: False when the closest counts were not searched: more than MAX_CANDIDATES candidates.
    closest_searched: bool = True

    @property
    def identity(self) -> str | None:
        return None if self.failed is None else CHECKS[self.failed]


# ---------------------------------------------------------------------------------------------
# Reading the CSV (AUDIT-TABLE-CSV, AUDIT-TABLE-PRECISION)


def parse_figure(text: str, column: str, where: str) -> Figure | None:
    """A reported figure; ``None`` for an empty cell. A trailing interval ``[lo, hi]`` is ignored.

    ``0.69`` admits [0.685, 0.695]; ``61`` admits [60.5, 61.5]; ``93.2%`` admits [0.9315, 0.9325].
    """
    cell = without_interval(text.strip()).strip()
    if not cell:
        return None
    percent = cell.endswith("%")
    if percent:
        cell = cell[:-1].strip()
    if not _NUMBER.match(cell):
        raise InputError(where, f"column {column}: not a non-negative decimal number: {_shown(text)}")
    if len(cell) > MAX_DIGITS + 1:
        what = f"column {column}: a number of more than {MAX_DIGITS} digits (AUDIT-TABLE-LIMIT)"
        raise InputError(where, what)
    decimals = len(cell.split(".", 1)[1]) if "." in cell else 0
    value = Fraction(cell)
    half = Fraction(1, 2 * 10**decimals)
    if percent:
        value, half = value / 100, half / 100
    return Figure(text.strip(), value, half)


def read_table(path: str) -> list[Row]:
    """Read and validate every row of a table CSV (header row with the :data:`COLUMNS` names)."""
    try:
        with reading(path, "a CSV file"), open_text(path, "a CSV file", newline="") as handle:
            rows = list(_read_rows(path, csv.reader(handle)))
    except csv.Error as exc:
        raise InputError(path, f"not valid CSV: {exc}") from None
    if not rows:
        raise InputError(path, "no rows after the header")
    return rows


def _read_rows(path: str, reader: Iterator[list[str]]) -> Iterator[Row]:
    header: list[str] | None = None
    for number, cells in enumerate(reader, start=1):
        where = f"{path}:{number}"
        if not cells or all(not c.strip() for c in cells):
            continue
        if header is None:
            header = [c.strip() for c in cells]
            _check_header(header, where)
            continue
        if len(cells) != len(header):
            raise InputError(where, f"{len(cells)} cells, the header has {len(header)}")
        yield _row(dict(zip(header, cells, strict=True)), where)
    if header is None:
        raise InputError(path, "empty file: expected a header row " + ",".join(COLUMNS))


def _shown(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _check_header(header: list[str], where: str) -> None:
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise InputError(where, f"unknown column(s) {', '.join(unknown)} (expected: {', '.join(COLUMNS)})")
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise InputError(where, f"column(s) {', '.join(repeated)} appear twice")
    missing = [c for c in ("dataset", "model", "method") if c not in header]
    if missing:
        raise InputError(where, f"missing column(s) {', '.join(missing)}")


def _row(cells: Mapping[str, str], where: str) -> Row:
    n_text = cells.get("N", "").strip()
    N: int | None = None
    if n_text:
        if not ascii_digits(n_text) or len(n_text) > MAX_DIGITS or int(n_text) < 1:
            what = f"column N: not an integer >= 1 of at most {MAX_DIGITS} digits: {_shown(n_text)}"
            raise InputError(where, what)
        N = int(n_text)
    figures: dict[str, Figure | None] = {}
    rr_undefined = False
    for name in FIGURES:
        text = cells.get(name, "")
        if text.strip().lower() in UNDEFINED:
            if name != "RR":
                raise InputError(where, f"column {name}: only RR can be undefined, got {text.strip()!r}")
            rr_undefined = True
            figures[name] = None
            continue
        figures[name] = parse_figure(text, name, where)
    for name in ("TER", "AUC_PEC", "RR", "success"):
        f = figures[name]
        if f is not None and f.value > 1:
            raise InputError(where, f"column {name}: a rate above 1: {f.text!r}")
    return Row(
        where,
        cells["dataset"].strip(),
        cells["model"].strip(),
        cells["method"].strip(),
        N,
        figures,
        rr_undefined,
    )


# ---------------------------------------------------------------------------------------------
# The search (AUDIT-TABLE-IDENTITIES)


def depth_bound(E: int, D: int) -> Fraction:
    """The largest area ``sum (FED_i - 1) / T_i`` that E failing rollouts can have.

    A failing rollout has ``FED <= T``, so with ``d = FED - 1`` its term ``d / T`` is at most
    ``d / (d + 1)``; the ``d`` add up to at most ``D = sum FED - N - F`` (every rollout has
    FED >= 1, a fully executable one FED >= 2). Splitting a ``d >= 2`` into ``d - 1`` and ``1``
    raises the sum (``(d-1)/d + 1/2 > d/(d+1)``), so the maximum uses ``m = min(E, D)`` rollouts
    with the ``d`` as equal as possible: ``m - r/(q+2) - (m-r)/(q+1)`` for ``D = q m + r``.
    """
    m = min(E, D)
    if m <= 0:
        return Fraction(0)
    q, r = divmod(D, m)
    return m - Fraction(r, q + 2) - Fraction(m - r, q + 1)


def _ceil(x: Fraction) -> int:
    return math.ceil(x)


def _floor(x: Fraction) -> int:
    return math.floor(x)


def _count_range(fig: Figure | None, den: int, lo: int, hi: int, scale: Fraction) -> tuple[int, int]:
    """Integers c in [lo, hi] with c / den inside the figure's window (all of [lo, hi] if absent)."""
    if fig is None:
        return lo, hi
    return max(lo, _ceil(fig.low(scale) * den)), min(hi, _floor(fig.high(scale) * den))


def _nearest(target: Fraction, lo: int, hi: int) -> int:
    return min(max(round(target), lo), hi)


@attrs.frozen(slots=True)
class _Found:
    counts: Counts
    deviation: Fraction


def _deviation(row: Row, counts: Counts) -> Fraction:
    """max over reported figures of |value - reported| / half unit (<= 1: inside every window)."""
    worst = Fraction(0)
    for name in FIGURES:
        fig = row.figures[name]
        value = counts.value(name)
        if fig is None or value is None:
            continue
        worst = max(worst, abs(value - fig.value) / fig.half_unit)
    return worst


def _sum_fed_for(E: int, N: int, F: int, need: Fraction, lo: int, hi: int | None) -> int | None:
    """The least SF in [lo, hi] whose depth bound reaches ``need`` (None if none does)."""

    def ok(sf: int) -> bool:
        return depth_bound(E, sf - N - F) >= need

    if need <= 0:
        return lo if hi is None or lo <= hi else None
    if hi is not None:
        if lo > hi or not ok(hi):
            return None
    else:
        if need >= E:  # the bound tends to E but never reaches it
            return None
        hi = max(lo, 1)
        while not ok(hi):
            hi *= 2
    if ok(lo):
        return lo
    while hi - lo > 1:  # invariant: not ok(lo), ok(hi)
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


Scales = Mapping[str, Fraction]


def _uniform(scale: Fraction) -> dict[str, Fraction]:
    return dict.fromkeys(FIGURES, scale)


class _OverBudget(Exception):
    """The search of a row would examine more than :data:`MAX_CANDIDATES` candidates."""


class _Budget:
    def __init__(self, limit: int = MAX_CANDIDATES) -> None:
        self.left = limit

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise _OverBudget


def _search_n(row: Row, N: int, scales: Scales, level: int, budget: _Budget | None = None) -> _Found | None:
    """The best counts for N satisfying CHECKS[0..level], each window widened by its scale."""
    fig = row.figures
    F_lo, F_hi = _count_range(fig["TER"], N, 0, N, scales["TER"])
    S_lo, S_hi = _count_range(fig["success"], N, 0, N, scales["success"])
    if level >= 1 and S_lo > S_hi:
        return None
    mf, auc = fig["mean_FED"], fig["AUC_PEC"]
    SF_lo = N if mf is None else max(N, _ceil(mf.low(scales["mean_FED"]) * N))
    SF_hi = None if mf is None else _floor(mf.high(scales["mean_FED"]) * N)
    if level >= 2 and SF_hi is not None and SF_lo > SF_hi:
        return None
    best: _Found | None = None
    if budget is not None:
        budget.spend(max(0, F_hi - F_lo + 1))
    for F in range(F_lo, F_hi + 1):
        E = N - F
        if level >= 3 and fig["RR_eligible"] is not None:  # RR-Eligible = N (1 - TER)
            e_lo, e_hi = _count_range(fig["RR_eligible"], 1, 0, N, scales["RR_eligible"])
            if not e_lo <= E <= e_hi:
                continue
        R_lo, R_hi = 0, E
        if level >= 4:  # RR = recovered / RR-Eligible, undefined iff RR-Eligible = 0
            if row.rr_undefined and E != 0:
                continue
            if fig["RR"] is not None:
                if E == 0:
                    continue
                R_lo, R_hi = _count_range(fig["RR"], E, 0, E, scales["RR"])
                if R_lo > R_hi:
                    continue
        if level >= 5:  # successes = uninterrupted + recovered, 0 <= uninterrupted <= F
            R_lo, R_hi = max(R_lo, S_lo - F), min(R_hi, S_hi)
            if R_lo > R_hi:
                continue
        A_lo = A_hi = None
        if level >= 6:  # TER <= AUC-PEC <= 1, and AUC-PEC < 1 unless every rollout is executable
            A_lo, A_hi = Fraction(F), Fraction(N)
            if auc is not None:
                a = scales["AUC_PEC"]
                A_lo, A_hi = max(A_lo, auc.low(a) * N), min(A_hi, auc.high(a) * N)
            if A_lo > A_hi or (E > 0 and A_lo >= N):
                continue
        sf_lo = max(SF_lo, N + F) if level >= 7 else SF_lo  # mean FED >= 1 + TER
        if level >= 7 and SF_hi is not None and sf_lo > SF_hi:
            continue
        if level >= 8 and A_lo is not None:  # AUC-PEC - TER <= depth bound
            least = _sum_fed_for(E, N, F, A_lo - F, sf_lo, SF_hi)
            if least is None:
                continue
            sf_lo = least
        sum_fed = None if mf is None else _nearest(mf.value * N, sf_lo, max(sf_lo, SF_hi or sf_lo))
        R = R_lo if fig["RR"] is None else _nearest(fig["RR"].value * E, R_lo, R_hi)
        S_target = Fraction(R) if fig["success"] is None else fig["success"].value * N
        S = _nearest(S_target, max(S_lo, R) if level >= 5 else R, min(S_hi, R + F) if level >= 5 else R + F)
        area: Fraction | None = None
        if A_lo is not None and A_hi is not None:
            if level >= 8 and sum_fed is not None:
                A_hi = min(A_hi, F + depth_bound(E, sum_fed - N - F))
            area = A_lo if auc is None else min(max(auc.value * N, A_lo), A_hi)
            if E > 0 and area >= N:  # only reachable when mean FED is free: any value below N
                area = (A_lo + N) / 2
        counts = Counts(N, F, R, S - R, sum_fed, area)
        dev = _deviation(row, counts)
        if best is None or dev < best.deviation:
            best = _Found(counts, dev)
    return best


def _n_values(row: Row, max_n: int) -> range:
    return range(row.N, row.N + 1) if row.N is not None else range(1, max_n + 1)


def _feasible(
    row: Row, level: int, scales: Scales, max_n: int, budget: _Budget | None = None
) -> list[_Found]:
    found = []
    for N in _n_values(row, max_n):
        f = _search_n(row, N, scales, level, budget)
        if f is not None:
            found.append(f)
    return found


def _closest(row: Row, free: str | None = None, budget: _Budget | None = None) -> _Found | None:
    """Counts satisfying every identity whose figures need the least widening (N known).

    ``free=None`` widens every window by one common factor; ``free=name`` widens only that
    figure's window, keeping the others as printed (None if no widening of it alone suffices).
    """
    assert row.N is not None
    reported = [f for f in row.figures.values() if f is not None]
    if not reported:
        return None

    def scales(factor: Fraction) -> dict[str, Fraction]:
        return _uniform(factor) if free is None else {**_uniform(Fraction(1)), free: factor}

    spread = max(f.value for f in reported) + 2 + row.N
    hi = spread / min(f.half_unit for f in reported)
    last = len(CHECKS) - 1
    top = _search_n(row, row.N, scales(hi), last, budget)
    if top is None:
        return None
    lo = Fraction(1)
    for _ in range(48):  # bisection on the widening factor; 2^-20 steps are exact enough to report
        mid = (lo + hi) / 2
        mid = Fraction(mid.numerator * 2**20 // mid.denominator, 2**20) or mid
        found = _search_n(row, row.N, scales(mid), last, budget)
        if found is None:
            lo = mid
        else:
            hi, top = mid, found
    return top


def audit_row(row: Row, max_n: int = 1000) -> Verdict:
    """Audit one row: the first identity of :data:`CHECKS` that no count satisfies, or consistent."""
    one = _uniform(Fraction(1))
    budget = _Budget()
    try:
        found = _feasible(row, len(CHECKS) - 1, one, max_n, budget)
        failed = None
        if not found:  # the first identity that fails (the last one does: the checks are cumulative)
            failed = next(
                level for level in range(len(CHECKS)) if not _feasible(row, level, one, max_n, budget)
            )
    except _OverBudget:
        n = f"N = {row.N}" if row.N is not None else f"N up to --max-n {max_n}"
        raise InputError(
            row.where,
            f"column N: deciding this row would examine more than {MAX_CANDIDATES} candidate counts "
            f"({n}); the limit bounds the audit's time (AUDIT-TABLE-LIMIT)",
        ) from None
    if failed is not None:
        if row.N is None:
            return Verdict(row, False, failed, None, None)
        try:
            budget = _Budget(MAX_CLOSEST_CANDIDATES)
            closest = _closest(row, budget=budget)
            single = []
            for name in FIGURES:
                if row.figures[name] is not None:
                    alone = _closest(row, name, budget)
                    if alone is not None:
                        value = alone.counts.value(name)
                        assert value is not None
                        single.append(SingleFix(name, value, alone.counts))
        except _OverBudget:  # the verdict stands; its explanation is left out (AUDIT-TABLE-LIMIT)
            return Verdict(row, False, failed, None, None, closest_searched=False)
        return Verdict(
            row,
            False,
            failed,
            None if closest is None else closest.counts,
            None if closest is None else closest.deviation,
            single_fixes=tuple(single),
        )
    best = min(found, key=lambda f: (f.deviation, f.counts.N))
    feasible_N = tuple(f.counts.N for f in found) if row.N is None else ()
    return Verdict(row, True, None, best.counts, best.deviation, feasible_N)


def audit(rows: Sequence[Row], max_n: int = 1000) -> list[Verdict]:
    return [audit_row(r, max_n) for r in rows]


# ---------------------------------------------------------------------------------------------
# Output (AUDIT-TABLE-VERDICT)


def _counts_json(c: Counts | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "N": c.N,
        "fully_executable": c.fully_executable,
        "RR_eligible": c.rr_eligible,
        "recovered": c.recovered,
        "uninterrupted": c.uninterrupted,
        "successes": c.uninterrupted + c.recovered,
        "sum_FED": c.sum_fed,
        "N_x_AUC_PEC": None if c.area is None else str(c.area),
    }


def _values_json(v: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in FIGURES:
        fig = v.row.figures[name]
        value = None if v.counts is None else v.counts.value(name)
        if fig is None and not (name == "RR" and v.row.rr_undefined):
            continue
        out[name] = {
            "reported": "n/a" if fig is None else fig.text,
            "exact": exact(value),
            "value": None if value is None else float(value),
            "inside_window": (value is None)
            if fig is None
            else (value is not None and abs(value - fig.value) <= fig.half_unit),
        }
    return out


def verdict_json(v: Verdict) -> dict[str, Any]:
    """One verdict of ``audit-table --json``."""
    r = v.row
    return {
        "where": r.where,
        "dataset": r.dataset,
        "model": r.model,
        "method": r.method,
        "N": r.N,
        "verdict": "consistent" if v.consistent else "inconsistent",
        "identity": v.identity,
        "counts" if v.consistent else "closest_counts": _counts_json(v.counts),
        "values" if v.consistent else "closest_values": _values_json(v),
        "widening": None if v.consistent or v.widening is None else float(v.widening),
        "single_figure_fixes": [
            {"figure": f.figure, "closest": str(f.value), "value": float(f.value)} for f in v.single_fixes
        ],
        "closest_searched": v.closest_searched,
        "feasible_N": list(v.feasible_N[:20]),
        "feasible_N_count": len(v.feasible_N),
    }


def format_verdicts(verdicts: Sequence[Verdict]) -> str:
    """The readable report: one line per consistent row, a short block per inconsistent one."""
    lines: list[str] = []
    for v in verdicts:
        r = v.row
        head = f"{r.where} {r.dataset} / {r.model} / {r.method}"
        if v.consistent:
            c = v.counts
            assert c is not None
            n_note = f"N={c.N}" if r.N is not None else f"N in {_n_summary(v.feasible_N)}, e.g. N={c.N}"
            detail = (
                f"{n_note}, fully executable {c.fully_executable}, RR-eligible {c.rr_eligible}, "
                f"recovered {c.recovered}, uninterrupted {c.uninterrupted}"
            )
            if c.sum_fed is not None:
                detail += f", sum FED {c.sum_fed}"
            lines.append(f"{head}: consistent ({detail})")
            continue
        lines.append(f"{head}: INCONSISTENT")
        lines.append(f"  no integer counts satisfy: {v.identity}")
        if not v.closest_searched:
            lines.append(
                f"  closest feasible values: not searched (more than {MAX_CLOSEST_CANDIDATES} candidates; "
                "AUDIT-TABLE-LIMIT)"
            )
            continue
        if r.N is not None:
            fixes = "; ".join(
                f"{f.figure} {_figure_text(r, f.figure)} -> {f.value} = {float(f.value):.6g}"
                for f in v.single_fixes
            )
            lines.append(f"  one figure that alone could be wrong: {fixes or 'none (at least two are)'}")
        if v.counts is None:
            lines.append(
                "  closest feasible values: not searched (N not reported)"
                if r.N is None
                else "  closest feasible values: none"
            )
            continue
        assert v.widening is not None
        lines.append(
            f"  closest feasible values (every window widened {float(v.widening):.2f}x; "
            f"N={v.counts.N}, fully executable {v.counts.fully_executable}, recovered "
            f"{v.counts.recovered}, uninterrupted {v.counts.uninterrupted}):"
        )
        for name, entry in _values_json(v).items():
            mark = "" if entry["inside_window"] else "   <- outside its window"
            shown = "n/a" if entry["exact"] is None else f"{entry['exact']} = {entry['value']:.6g}"
            lines.append(f"    {name:<12} reported {entry['reported']:<8} closest {shown}{mark}")
    bad = sum(1 for v in verdicts if not v.consistent)
    lines.append(f"{len(verdicts) - bad} of {len(verdicts)} rows consistent, {bad} inconsistent")
    return "\n".join(lines) + "\n"


def _figure_text(row: Row, name: str) -> str:
    fig = row.figures[name]
    return "n/a" if fig is None else fig.text


def _n_summary(values: Sequence[int]) -> str:
    if len(values) <= 6:
        return "{" + ", ".join(map(str, values)) + "}"
    return "{" + ", ".join(map(str, values[:5])) + f", ... ({len(values)} values)" + "}"


from prefixexec._callable import make_callable  # noqa: E402  # API-COMMANDS: prefixexec.audit_table(...) runs the command

make_callable(__name__)
