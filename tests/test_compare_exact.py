"""compare: exact McNemar tests, Holm adjustment, few-task warnings, --match task_id
(CMP-MCNEMAR, CMP-HOLM, CMP-FEW-TASKS, CMP-MATCH, API-COMPARE).

References: scipy.stats.binomtest and statsmodels' exact mcnemar for the p-values,
statsmodels.stats.multitest.multipletests(method="holm") for the adjustment. The counts on the
real tau2 retail runs (gpt-4.1 against its fine-tuned copy, 40 shared tasks) are recounted here
from the raw JSON: a simulation is fully executable iff none of its tool messages has
``"error": true`` (TAU-EXEC; these two files flag every error), successful iff its reward is 1.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

import prefixexec
import prefixexec.significance as significance
from prefixexec.adapters import AdapterOptions, InputError
from prefixexec.cli import main
from prefixexec.engine import accumulate_input
from prefixexec.inference import FEW_TASKS, compare_conditions
from prefixexec.significance import holm, mcnemar_exact, mcnemar_p

from conftest import REAL, real_text

LEADERBOARD = REAL / "tau2-leaderboard"
GPT41 = LEADERBOARD / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json.zst"
FT = LEADERBOARD / (
    "ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_retail_default_gpt-4.1_1trials.json.zst"
)


@pytest.mark.spec("CMP-MCNEMAR")
@given(st.integers(0, 80), st.integers(0, 80))
def test_mcnemar_equals_scipy_binomtest_and_statsmodels(b: int, c: int) -> None:
    exact = mcnemar_exact(b, c)
    assert 0 < exact <= 1
    if b + c == 0:
        assert exact == 1
        return
    assert float(exact) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    table = [[5, b], [c, 7]]
    assert float(exact) == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert mcnemar_exact(c, b) == exact  # two-sided: symmetric


@pytest.mark.spec("CMP-MCNEMAR")
def test_mcnemar_by_hand_and_beyond_the_exact_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 vs 10 discordant: 2 (C(11,0) + C(11,1)) / 2^11 = 24/2048 = 3/256.
    assert mcnemar_exact(1, 10) == Fraction(3, 256)
    assert mcnemar_exact(3, 3) == 1
    # Beyond EXACT_LIMIT the float comes from log-space sums: checked against the exact rational
    # on counts where both are computed, and against scipy on large counts.
    monkeypatch.setattr(significance, "EXACT_LIMIT", 10)
    for b, c in ((4, 30), (20, 21), (0, 15), (100, 140)):
        p, exact = mcnemar_p(b, c)
        assert exact is None
        monkeypatch.setattr(significance, "EXACT_LIMIT", 10_000)
        assert p == pytest.approx(float(mcnemar_exact(b, c)), rel=1e-9)
        monkeypatch.setattr(significance, "EXACT_LIMIT", 10)
    monkeypatch.undo()
    p, exact = mcnemar_p(10_300, 10_000)
    assert exact is None and p == pytest.approx(binomtest(10_300, 20_300, 0.5).pvalue, rel=1e-6)
    with pytest.raises(ValueError, match="'b' must be an integer >= 0"):
        mcnemar_exact(-1, 2)


def _holm_by_the_book(ps: list[float]) -> list[float]:
    """Holm (1979) as written: reject in ascending order while p_(i) <= alpha / (m - i + 1); the
    adjusted p-value is the smallest alpha at which H_(i) is rejected."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(1.0, max((m - r) * ps[order[r]] for r in range(rank + 1)))
    return out


@pytest.mark.spec("CMP-HOLM")
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=12))
def test_holm_laws(ps: list[float | None]) -> None:
    adjusted = holm(ps)
    assert [a is None for a in adjusted] == [p is None for p in ps]
    defined = [(p, a) for p, a in zip(ps, adjusted, strict=True) if p is not None]
    assert [a for _, a in defined] == pytest.approx(_holm_by_the_book([p for p, _ in defined]), abs=1e-15)
    for p, a in defined:
        assert a is not None and p <= a <= 1
    order = sorted(defined, key=lambda pa: pa[0])
    assert all(x[1] <= y[1] for x, y in itertools.pairwise(order))  # monotone


@pytest.mark.spec("CMP-HOLM")
def test_holm_equals_statsmodels() -> None:
    rng = np.random.default_rng(26)
    for size in (1, 2, 3, 5, 8, 13):  # statsmodels takes ~70 ms a call here: a few fixed cases
        ps = [float(x) for x in rng.uniform(0, 0.2, size)]
        assert holm(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]), abs=1e-15)


@pytest.mark.spec("CMP-HOLM")
def test_holm_is_exact_on_fractions() -> None:
    ps = [Fraction(1, 100), Fraction(4, 100), Fraction(3, 100)]
    # sorted 1/100, 3/100, 4/100 -> 3/100, 2 * 3/100 = 6/100, max(6/100, 1 * 4/100) = 6/100
    assert holm(ps) == [Fraction(3, 100), Fraction(6, 100), Fraction(6, 100)]


def _records(path: Path, rows: dict[str, dict[str, tuple[int, int, bool]]], trials: int = 1) -> Path:
    lines = []
    for model, tasks in rows.items():
        for task, (T, fed, y) in tasks.items():
            for trial in range(trials):
                row = {"dataset": "d", "model": model, "method": "react", "task_id": task, "trial": trial}
                lines.append(json.dumps({**row, "success": y, "outcome": {"T": T, "fed": fed}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: Three models on 6 tasks; (T, FED, Y) chosen so that the 2x2 tables are easy to read off.
THREE = {
    "base": {f"t{i}": (2, 3 if i < 3 else 1, i % 2 == 0) for i in range(6)},
    "m1": {f"t{i}": (2, 3, True) for i in range(6)},
    "m2": {f"t{i}": (2, 1, False) for i in range(6)},
}


@pytest.mark.spec("CMP-MCNEMAR", "CMP-HOLM", "CMP-FEW-TASKS")
def test_compare_counts_tests_and_adjusts(tmp_path: Path) -> None:
    accs = accumulate_input("records", [str(_records(tmp_path / "r.jsonl", THREE))], AdapterOptions())
    comparisons, skipped = compare_conditions(accs, None, "model=base", 0.95)
    assert skipped == []
    by = {c["model"]: c for c in comparisons}
    # base: executable t0..t2, successful t0, t2, t4. m1: all of both; m2: none of either.
    s1, e1 = by["m1"]["mcnemar"]["success"], by["m1"]["mcnemar"]["fully_executable"]
    assert (s1["treatment_only"], s1["baseline_only"], s1["both"], s1["neither"]) == (3, 0, 3, 0)
    assert (e1["treatment_only"], e1["baseline_only"]) == (3, 0)
    s2 = by["m2"]["mcnemar"]["success"]
    assert (s2["treatment_only"], s2["baseline_only"], s2["both"], s2["neither"]) == (0, 3, 0, 3)
    # 3 vs 0 discordant: p = 2 / 8 = 1/4 for both; Holm over the two comparisons: 2 * 1/4 = 1/2.
    assert s1["p_value_exact"] == s2["p_value_exact"] == "1/4"
    assert s1["p_adjusted_exact"] == s2["p_adjusted_exact"] == "1/2" and s1["p_adjusted"] == 0.5
    none, _ = compare_conditions(accs, None, "model=base", 0.95, adjust="none")
    assert all(c["mcnemar"]["success"]["p_adjusted_exact"] == "1/4" for c in none)
    assert by["m1"]["warnings"] and f"fewer than {FEW_TASKS}" in by["m1"]["warnings"][0]
    assert by["m1"]["match"] == ["task_id", "dataset", "method"]
    with pytest.raises(InputError, match="--adjust"):
        compare_conditions(accs, None, "model=base", 0.95, adjust="bonferroni")


@pytest.mark.spec("CMP-HOLM")
def test_bootstrap_p_values_are_adjusted_too(tmp_path: Path) -> None:
    from prefixexec.kernel.bootstrap import BootstrapSettings

    accs = accumulate_input("records", [str(_records(tmp_path / "r.jsonl", THREE))], AdapterOptions())
    comparisons, _ = compare_conditions(accs, BootstrapSettings(B=200, seed=1), "model=base", 0.95)
    for name in ("TER", "success"):
        raw = [c["p_value"][name] for c in comparisons]
        assert [c["p_value_adjusted"][name] for c in comparisons] == pytest.approx(
            list(multipletests(raw, method="holm")[1])
        )


@pytest.mark.spec("CMP-MCNEMAR")
def test_mcnemar_needs_one_rollout_per_task(tmp_path: Path) -> None:
    accs = accumulate_input(
        "records", [str(_records(tmp_path / "r.jsonl", THREE, trials=2))], AdapterOptions()
    )
    comparisons, _ = compare_conditions(accs, None, "model=base", 0.95)
    assert all(c["mcnemar"] is None and "one rollout per task" in c["mcnemar_note"] for c in comparisons)


@pytest.mark.spec("CMP-MATCH", "API-COMPARE")
def test_match_task_id_compares_conditions_that_differ_in_every_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [("harness-a/airline", "gpt-4.1", "llm_agent"), ("harness-b/airline", "openai/gpt-4.1", "react")]
    lines = [json.dumps({"dataset": d, "model": m, "method": me, "task_id": f"t{i}", "success": i % 3 == 0,
                         "outcome": {"T": 3, "fed": 4 if (i + j) % 2 else 2}})
             for j, (d, m, me) in enumerate(rows) for i in range(25)]  # fmt: skip
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    accs = accumulate_input("records", [str(path)], AdapterOptions())
    (c,), skipped = compare_conditions(accs, None, "method=llm_agent", 0.95, match="task_id")
    assert skipped == [] and c["shared_tasks"] == 25 and c["warnings"] == []
    assert c["baseline_condition"] == {"dataset": rows[0][0], "model": rows[0][1], "method": rows[0][2]}
    assert (c["dataset"], c["model"], c["method"]) == rows[1]
    # executable: harness a on odd i (12 of 25), harness b on even i (13): discordant on all 25
    e = c["mcnemar"]["fully_executable"]
    assert (e["treatment_only"], e["baseline_only"], e["both"], e["neither"]) == (13, 12, 0, 0)
    # without --match the keys other than method must agree: nothing is compared
    assert compare_conditions(accs, None, "method=llm_agent", 0.95)[0] == []
    # CLI --json equals the API
    assert main(["compare", str(path), "--baseline", "method=llm_agent", "--match", "task_id",
                 "--bootstrap", "50", "--json", "--quiet"]) == 0  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert printed == prefixexec.compare(
        str(path), baseline="method=llm_agent", match="task_id", bootstrap=50, adapter="records"
    ).document


@pytest.mark.spec("CMP-MATCH")
@pytest.mark.parametrize(
    ("match", "message"),
    [
        ("dataset", "expected task_id"),
        ("task_id,colour", "expected task_id"),
        ("task_id,method", "method is the baseline's key"),
    ],
)
def test_bad_match_is_an_input_error(
    tmp_path: Path, match: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _records(tmp_path / "r.jsonl", THREE)
    code = main(["compare", str(path), "--baseline", "method=react", "--match", match, "--bootstrap", "0"])
    err = capsys.readouterr().err
    assert code == 2 and "--match" in err and message in err and "Traceback" not in err


@pytest.mark.spec("CMP-MATCH")
def test_an_ambiguous_baseline_under_match_task_id_is_refused(tmp_path: Path) -> None:
    path = _records(tmp_path / "r.jsonl", THREE)
    accs = accumulate_input("records", [str(path)], AdapterOptions())
    with pytest.raises(InputError, match="which one is the baseline"):
        # all three conditions have method react: under task_id only, none is singled out
        compare_conditions(accs, None, "method=react", 0.95, match="task_id")


def _raw_counts(path: Path) -> dict[str, tuple[bool, bool]]:
    """task id -> (fully executable, success), read from the raw tau2 JSON (module docstring)."""
    out: dict[str, tuple[bool, bool]] = {}
    for sim in json.loads(real_text(path))["simulations"]:
        errors = [m for m in sim["messages"] if m["role"] == "tool" and m.get("error") is True]
        assert all("error" in m for m in sim["messages"] if m["role"] == "tool")
        out[sim["task_id"]] = (not errors, sim["reward_info"]["reward"] == 1.0)
    return out


@pytest.mark.spec("CMP-MCNEMAR", "CMP-FEW-TASKS")
def test_real_retail_runs_against_an_independent_count(capsys: pytest.CaptureFixture[str]) -> None:
    base, ft = _raw_counts(GPT41), _raw_counts(FT)
    assert sorted(base) == sorted(ft) and len(base) == 40
    expected: dict[str, Any] = {}
    for index, name in enumerate(("fully_executable", "success")):
        b = sum(ft[t][index] and not base[t][index] for t in base)
        c = sum(base[t][index] and not ft[t][index] for t in base)
        expected[name] = (b, c, binomtest(b, b + c, 0.5).pvalue if b + c else 1.0)
    # the finding: same success (34/40), TER 23/40 against 32/40
    assert sum(v[1] for v in base.values()) == sum(v[1] for v in ft.values()) == 34
    assert (sum(v[0] for v in ft.values()), sum(v[0] for v in base.values())) == (23, 32)
    code = main(["compare", str(GPT41), str(FT), "--baseline", "model=gpt-4.1", "--bootstrap", "0",
                 "--json", "--quiet"])  # fmt: skip
    assert code == 0
    (c,) = json.loads(capsys.readouterr().out)["comparisons"]
    for name, (b, cc, p) in expected.items():
        test = c["mcnemar"][name]
        assert (test["treatment_only"], test["baseline_only"]) == (b, cc)
        assert test["p_value"] == pytest.approx(p, rel=1e-12)
        assert test["p_adjusted"] == test["p_value"]  # one comparison: Holm changes nothing
    assert c["shared_tasks"] == 40 and c["warnings"] == []
    code = main(["compare", str(GPT41), str(FT), "--baseline", "model=gpt-4.1", "--bootstrap", "0",
                 "--quiet"])  # fmt: skip
    out = capsys.readouterr().out
    b, cc, _ = expected["fully_executable"]
    assert code == 0 and "exact McNemar tests" in out and f"{b}/{cc} p=" in out
    assert np.isclose(expected["fully_executable"][2], 3 / 256)  # 1 vs 10 discordant, by hand
