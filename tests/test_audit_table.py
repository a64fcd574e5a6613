"""`prefixexec audit-table`: GRIM-style audit of a reported table (spec/conformance.md, AUDIT-TABLE-*)."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
import tempfile
from decimal import ROUND_HALF_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.adapters import InputError
from prefixexec.audit_table import CHECKS, Row, Verdict, audit_row, depth_bound, parse_figure, read_table
from prefixexec.cli import main
from prefixexec.kernel import compute_metrics

from conftest import REPO
from strategies import cohorts

PAPER = REPO / "tests" / "data" / "paper_table2.csv"
HEADER = ["dataset", "model", "method", "N", "TER", "mean_FED", "AUC_PEC", "RR_eligible", "RR", "success"]
FIGS = ("TER", "mean_FED", "AUC_PEC", "RR_eligible", "RR", "success")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def rows_of(*cells: dict[str, str]) -> list[Row]:
    """Rows read through the CSV reader from dicts of cells (missing cells empty)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for c in cells:
        writer.writerow([c.get(h, {"dataset": "d", "model": "m", "method": "x"}.get(h, "")) for h in HEADER])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.csv"
        path.write_text(buffer.getvalue(), encoding="utf-8")
        return read_table(str(path))


def audit_one(max_n: int = 1000, **cells: str) -> tuple[bool, str | None, Verdict]:
    (row,) = rows_of(cells)
    v = audit_row(row, max_n)
    return v.consistent, v.identity, v


# ---------------------------------------------------------------------------------------------
# Precision


@pytest.mark.spec("AUDIT-TABLE-PRECISION")
def test_printed_figures_and_their_windows() -> None:
    def window(text: str) -> tuple[Fraction, Fraction]:
        f = parse_figure(text, "TER", "here")
        assert f is not None
        return f.value - f.half_unit, f.value + f.half_unit

    assert window("0.69") == (Fraction("0.685"), Fraction("0.695"))
    assert window("61") == (Fraction("60.5"), Fraction("61.5"))
    assert window("93.2%") == (Fraction("0.9315"), Fraction("0.9325"))
    assert window("0.69 [0.63, 0.76]") == window("0.69")
    assert window(".5") == (Fraction("0.45"), Fraction("0.55"))
    assert parse_figure("  ", "TER", "here") is None
    with pytest.raises(
        InputError, match=re.escape("here: column TER: not a non-negative decimal number: '-0.1'")
    ):
        parse_figure("-0.1", "TER", "here")
    with pytest.raises(InputError, match=re.escape("not a non-negative decimal number: '1e-3'")):
        parse_figure("1e-3", "TER", "here")


@pytest.mark.spec("AUDIT-TABLE-PRECISION")
def test_window_ends_are_included() -> None:
    # F = 200 - 61 = 139 fully executable: TER = 0.695 exactly, the shared end of 0.69 and 0.70.
    assert audit_one(N="200", TER="0.69", RR_eligible="61")[0]
    assert audit_one(N="200", TER="0.70", RR_eligible="61")[0]
    assert not audit_one(N="200", TER="0.68", RR_eligible="61")[0]


# ---------------------------------------------------------------------------------------------
# Rows from real counts always pass


def _round(x: Fraction, decimals: int, how: str) -> str:
    if how == "float":
        return f"{float(x):.{decimals}f}"
    mode = {"half_up": ROUND_HALF_UP, "half_even": ROUND_HALF_EVEN, "half_down": ROUND_HALF_DOWN}[how]
    exact = Decimal(x.numerator) / Decimal(x.denominator)
    return str(exact.quantize(Decimal(1).scaleb(-decimals), rounding=mode))


@st.composite
def reported_rows(draw: st.DrawFn) -> tuple[dict[str, str], int]:
    """A row printed from the metrics of a random cohort, with random precision and blanks."""
    m = compute_metrics(draw(cohorts(min_n=1, max_n=40, max_t=12)))
    how = draw(st.sampled_from(["float", "half_up", "half_even", "half_down"]))
    values = {
        "TER": m.TER,
        "mean_FED": m.mean_FED,
        "AUC_PEC": m.AUC_PEC,
        "RR_eligible": Fraction(m.RR_eligible),
        "RR": m.RR,
        "success": m.success,
    }
    cells: dict[str, str] = {"N": str(m.N)}
    for name, value in values.items():
        if draw(st.integers(0, 5)) == 0:
            continue  # an empty cell
        if value is None:
            cells[name] = "n/a"
        elif name == "RR_eligible":
            cells[name] = str(value)
        else:
            cells[name] = _round(value, draw(st.integers(0, 4)), how)
    if draw(st.integers(0, 5)) == 0:
        cells["N"] = ""
    return cells, m.N


@pytest.mark.spec("AUDIT-TABLE-IDENTITIES", "INV-TER-AUC", "INV-RR-ELIG", "EQ-12")
@given(reported_rows())
def test_rows_built_from_real_counts_always_pass(case: tuple[dict[str, str], int]) -> None:
    cells, N = case
    consistent, identity, verdict = audit_one(max_n=60, **cells)
    assert consistent, (cells, identity)
    if not cells["N"]:
        assert N in verdict.feasible_N


# ---------------------------------------------------------------------------------------------
# A single perturbed figure is flagged exactly when no counts can produce it


def _oracle(N: int, cells: dict[str, str]) -> bool:
    """Brute force over every (F, R, U) and the sum of FED: could integer counts give the row?"""
    win = {}
    for name in FIGS:
        text = cells.get(name, "")
        if text and text != "n/a":
            decimals = len(text.split(".")[1]) if "." in text else 0
            win[name] = (Fraction(text), Fraction(1, 2 * 10**decimals))

    def inside(name: str, x: Fraction) -> bool:
        return name not in win or abs(x - win[name][0]) <= win[name][1]

    for F in range(N + 1):
        E = N - F
        if not (inside("TER", Fraction(F, N)) and inside("RR_eligible", Fraction(E))):
            continue
        for R in range(E + 1):
            if cells.get("RR") == "n/a" and E != 0:
                continue
            if "RR" in win and (E == 0 or not inside("RR", Fraction(R, E))):
                continue
            for U in range(F + 1):
                if not inside("success", Fraction(U + R, N)):
                    continue
                if "mean_FED" not in win:
                    return True
                # an integer sum of FED >= N + F (every FED >= 1, executable ones >= 2) in the window
                m, h = win["mean_FED"]
                if max(N + F, math.ceil((m - h) * N)) <= math.floor((m + h) * N):
                    return True
    return False


@st.composite
def perturbed_rows(draw: st.DrawFn) -> tuple[dict[str, str], int, str, Fraction]:
    m = compute_metrics(draw(cohorts(min_n=1, max_n=25, max_t=8)))
    decimals = draw(st.integers(1, 3))
    cells = {"N": str(m.N), "RR_eligible": str(m.RR_eligible)}
    for name, value in (("TER", m.TER), ("mean_FED", m.mean_FED), ("RR", m.RR), ("success", m.success)):
        cells[name] = "n/a" if value is None else _round(value, decimals, "float")
    name = draw(
        st.sampled_from([n for n in ("TER", "mean_FED", "RR_eligible", "RR", "success") if cells[n] != "n/a"])
    )
    unit = Decimal(1) if name == "RR_eligible" else Decimal(1).scaleb(-decimals)
    step = draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
    new = Decimal(cells[name]) + step * unit
    if new < 0 or (name in ("TER", "RR", "success") and new > 1):
        new = Decimal(cells[name]) - step * unit
    cells[name] = str(new)
    true = {"TER": m.TER, "mean_FED": m.mean_FED, "RR_eligible": Fraction(m.RR_eligible), "RR": m.RR}
    value = true.get(name, m.success)
    assert value is not None
    return cells, m.N, name, value


@pytest.mark.spec("AUDIT-TABLE-IDENTITIES", "AUDIT-TABLE-VERDICT")
@given(perturbed_rows())
def test_a_perturbed_figure_is_flagged_iff_no_counts_produce_it(
    case: tuple[dict[str, str], int, str, Fraction],
) -> None:
    cells, N, name, true = case
    (row,) = rows_of(cells)
    verdict = audit_row(row)
    assert verdict.consistent == _oracle(N, cells), cells
    if not verdict.consistent:
        # the closest counts satisfy every identity and need wider windows than printed
        assert verdict.counts is not None and verdict.widening is not None and verdict.widening > 1
        c = verdict.counts
        assert 0 <= c.recovered <= c.rr_eligible and 0 <= c.uninterrupted <= c.fully_executable <= c.N
        assert c.sum_fed is not None and c.sum_fed >= c.N + c.fully_executable
        # restoring the perturbed figure makes the row consistent, so it is a single-figure fix,
        # and its closest feasible value is no farther from the printed one than the true value
        fixes = {f.figure: f.value for f in verdict.single_fixes}
        assert name in fixes
        printed = Fraction(cells[name])
        assert abs(fixes[name] - printed) <= abs(true - printed)


# ---------------------------------------------------------------------------------------------
# The identities one by one (hand-made rows)


@pytest.mark.spec("AUDIT-TABLE-IDENTITIES")
def test_depth_bound_equals_brute_force() -> None:
    # max of sum (FED_i - 1)/T_i over E failing rollouts (1 <= FED_i <= T_i <= 9) with
    # sum (FED_i - 1) <= D, enumerated directly.
    pairs = [(fed, T) for T in range(1, 10) for fed in range(1, T + 1)]
    for E in range(4):
        for D in range(8):
            best = Fraction(0)
            for combo in itertools.combinations_with_replacement(pairs, E):
                if sum(fed - 1 for fed, _ in combo) <= D:
                    best = max(best, sum((Fraction(fed - 1, T) for fed, T in combo), Fraction(0)))
            assert depth_bound(E, D) == best, (E, D)


@pytest.mark.spec("AUDIT-TABLE-IDENTITIES", "AUDIT-TABLE-VERDICT")
def test_each_identity_is_named_when_it_fails() -> None:
    cases = [
        # 7 rollouts cannot give 0.50: 3/7 = 0.43, 4/7 = 0.57.
        ({"N": "7", "TER": "0.50"}, 0),
        ({"N": "7", "success": "0.50"}, 1),
        # sum of FED over 3 rollouts: 1.50 needs 4.5 (window [4.485, 4.515]), no integer.
        ({"N": "3", "mean_FED": "1.50"}, 2),
        # TER 0.47 of 200 gives F in 93..95, so RR-Eligible is 105..107, not 100.
        ({"N": "200", "TER": "0.47", "RR_eligible": "100"}, 3),
        # RR-Eligible 3: RR is 0, 1/3, 2/3 or 1, never 0.50.
        ({"N": "10", "RR_eligible": "3", "RR": "0.50"}, 4),
        ({"N": "10", "TER": "0.50", "RR": "n/a"}, 4),  # undefined RR needs RR-Eligible = 0
        ({"N": "10", "TER": "1.00", "RR": "0.00"}, 4),  # and RR-Eligible = 0 leaves RR undefined
        # F = 1, no recovered success: at most 1 of 10 successes, not 5.
        ({"N": "10", "TER": "0.10", "RR": "0.00", "success": "0.50"}, 5),
        ({"N": "10", "TER": "0.60", "AUC_PEC": "0.50"}, 6),  # AUC-PEC below TER
        # 5 executable rollouts have FED >= 2: sum >= 10 + 5, mean >= 1.5.
        ({"N": "10", "TER": "0.50", "mean_FED": "1.20"}, 7),
        # N = 2, one executable (FED = T + 1 >= 2), sum of FED 4: either (FED 2, T 1) and a failing
        # FED 2 <= T (area 1/T <= 1/2), or (FED 3, T 2) and a failing FED 1: AUC-PEC <= 3/4.
        ({"N": "2", "TER": "0.50", "mean_FED": "2.00", "AUC_PEC": "0.80"}, 8),
    ]
    for cells, index in cases:
        consistent, identity, _ = audit_one(**cells)
        assert not consistent and identity == CHECKS[index], (cells, identity)
    # the bounds that make the last two cases fail are attained
    assert audit_one(N="2", TER="0.50", mean_FED="2.00", AUC_PEC="0.75")[0]
    assert audit_one(N="10", TER="0.50", mean_FED="1.50")[0]
    assert audit_one(N="10", TER="1.00", RR="n/a")[0]
    # AUC-PEC printed 1.00 with failing rollouts: five failing rollouts of area 0.99 each reach 0.995
    assert audit_one(N="10", TER="0.50", AUC_PEC="1.00")[0]


@pytest.mark.spec("AUDIT-TABLE-VERDICT")
def test_closest_feasible_values() -> None:
    _, _, v = audit_one(N="7", TER="0.50")
    # nearest achievable TERs are 3/7 and 4/7, both 1/14 away: a widening of (1/14)/0.005 = 100/7.
    assert v.counts is not None and v.counts.fully_executable in (3, 4)
    assert v.widening is not None and abs(float(v.widening) - 100 / 7) < 1e-5
    _, _, v = audit_one(N="200", TER="0.47", RR_eligible="100")
    c = v.counts
    assert c is not None and c.N - c.fully_executable == c.rr_eligible


@pytest.mark.spec("AUDIT-TABLE-VERDICT")
def test_single_figure_fixes() -> None:
    # TER 0.47 of 200 with RR-Eligible 106 forces F = 94; RR 0.88 of 106 admits only R = 93
    # ([92.75, 93.81]); so successes <= 94 + 93 = 187 = 0.935 of 200, and success 0.97 (>= 193)
    # is impossible. Alone, success could be 187/200; or RR alone 99/106 (193 - 94 = 99 recovered).
    consistent, identity, v = audit_one(
        N="200", TER="0.47", mean_FED="4.11", AUC_PEC="0.54", RR_eligible="106", RR="0.88", success="0.97"
    )
    assert not consistent and identity == CHECKS[5]
    assert {f.figure: f.value for f in v.single_fixes} == {
        "RR": Fraction(99, 106),
        "success": Fraction(187, 200),
    }
    # two wrong figures: no single one can be blamed
    _, _, v = audit_one(N="10", TER="0.10", RR="0.00", success="0.50", AUC_PEC="0.05")
    assert v.single_fixes == ()


@pytest.mark.spec("AUDIT-TABLE-VERDICT", "AUDIT-TABLE-CSV")
def test_unreported_n_is_searched() -> None:
    # TER printed with one decimal (0.45..0.55) and one RR-eligible rollout: F = N - 1 and
    # (N - 1)/N <= 0.55 only for N = 2 (1/2); N = 1 gives 0.
    consistent, _, v = audit_one(TER="0.5", RR_eligible="1")
    assert consistent and v.feasible_N == (2,)
    consistent, identity, v = audit_one(max_n=50, TER="0.5", RR_eligible="30")
    assert not consistent and identity == CHECKS[3] and v.counts is None


# ---------------------------------------------------------------------------------------------
# The paper's Table 2


@pytest.mark.spec("AUDIT-TABLE-PAPER")
def test_paper_table_2_is_consistent(capsys: pytest.CaptureFixture[str]) -> None:
    rows = read_table(str(PAPER))
    assert len(rows) == 24  # 2 datasets x 3 models x 4 methods
    assert {r.N for r in rows} == {200}
    verdicts = [audit_row(r) for r in rows]
    assert [v.row.method for v in verdicts if not v.consistent] == []
    code, out, _ = run(["audit-table", str(PAPER)], capsys)
    assert code == 0 and out.endswith("24 of 24 rows consistent, 0 inconsistent\n")


@pytest.mark.spec("AUDIT-TABLE-PAPER", "AUDIT-TABLE-PRECISION")
def test_paper_table_2_ties_are_printed_as_binary_floats() -> None:
    # RR-Eligible fixes F = 200 - RR-Eligible, hence TER = F/200 exactly.
    ties = mismatch_up = mismatch_even = 0
    for row in read_table(str(PAPER)):
        assert row.figures["RR_eligible"] is not None and row.figures["TER"] is not None
        F = 200 - int(row.figures["RR_eligible"].value)
        ter, printed = Fraction(F, 200), row.figures["TER"].text.split()[0]
        assert f"{float(ter):.2f}" == printed, (row.where, F)
        if (ter * 1000) % 10 == 5:
            ties += 1
            mismatch_up += _round(ter, 2, "half_up") != printed
            mismatch_even += _round(ter, 2, "half_even") != printed
    assert (ties, mismatch_up, mismatch_even) == (12, 8, 5)  # the counts spec/conformance.md states


@pytest.mark.spec("AUDIT-TABLE-PAPER", "REG-PAPER-EXAMPLE")
def test_paper_worked_example_counts_are_the_ones_found() -> None:
    # Section 3.1: RR = 138/190 ~ 0.7263 and success 0.74 with 10 executable rollouts, all
    # successful. With RR printed to four decimals, R = 138 is the only count in its window.
    _, _, v = audit_one(N="200", TER="0.05", RR_eligible="190", RR="0.7263", success="0.74")
    c = v.counts
    assert c is not None and (c.fully_executable, c.recovered, c.uninterrupted) == (10, 138, 10)


# ---------------------------------------------------------------------------------------------
# The command


@pytest.mark.spec("AUDIT-TABLE-VERDICT")
def test_command_output_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t.csv"
    table.write_text(
        "dataset,model,method,N,TER,RR_eligible\nd,m,good,200,0.47,106\nd,m,bad,200,0.47,100\n",
        encoding="utf-8",
    )
    code, out, err = run(["audit-table", str(table)], capsys)
    assert (code, err) == (1, "")
    assert f"{table}:2 d / m / good: consistent (N=200, fully executable 94, RR-eligible 106" in out
    assert f"{table}:3 d / m / bad: INCONSISTENT\n  no integer counts satisfy: {CHECKS[3]}" in out
    assert "RR_eligible  reported 100      closest" in out and "<- outside its window" in out
    # TER 0.47 admits F = 93..95, so RR-Eligible 105..107 (one figure alone could be wrong)
    assert (
        "  one figure that alone could be wrong: TER 0.47 -> 1/2 = 0.5; RR_eligible 100 -> 105 = 105" in out
    )
    code, out, _ = run(["audit-table", str(table), "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and [r["verdict"] for r in doc["rows"]] == ["consistent", "inconsistent"]
    assert doc["rows"][0]["counts"]["fully_executable"] == 94 and doc["rows"][1]["identity"] == CHECKS[3]
    assert doc["rows"][1]["closest_values"]["TER"]["reported"] == "0.47"


@pytest.mark.spec("AUDIT-TABLE-CSV", "REC-ERRORS")
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dataset,model,method,N,TER,note\nd,m,x,10,0.5,hi\n", ":1: unknown column(s) note"),
        ("dataset,model,N,TER\nd,m,10,0.5\n", ":1: missing column(s) method"),
        ("dataset,model,method,N,TER\nd,m,x,10,half\n", ":2: column TER: not a non-negative decimal number"),
        ("dataset,model,method,N,TER\nd,m,x,10,1.2\n", ":2: column TER: a rate above 1"),
        ("dataset,model,method,N,TER\nd,m,x,10,n/a\n", ":2: column TER: only RR can be undefined"),
        ("dataset,model,method,N,TER\nd,m,x,0,0.5\n", ":2: column N: not an integer >= 1"),
        ("dataset,model,method,N,TER\nd,m,x,10\n", ":2: 4 cells, the header has 5"),
        ("dataset,model,method,N,TER\n", ": no rows after the header"),
        ("", ": empty file"),
    ],
)
def test_bad_tables_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    table = tmp_path / "t.csv"
    table.write_text(text, encoding="utf-8")
    code, out, err = run(["audit-table", str(table)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"prefixexec: error: {table}") and message in err


def test_missing_table_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["audit-table", str(tmp_path / "none.csv")], capsys)
    assert (code, out) == (2, "") and "none.csv: no such file" in err
