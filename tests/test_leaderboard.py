"""``prefixexec leaderboard`` and ``prefixexec.leaderboard`` (spec/leaderboard.md: LB-*; PASSK-TAU2).

Golden numbers come from counts made here from the raw real files (tau-bench's 4-trial GPT-4o
airline run, tau2-bench leaderboard submissions) by code that shares nothing with the adapters,
and the rank, tau-b and interval machinery is checked against scipy (rankdata, kendalltau) and a
recomputation from ``score``'s own replicates.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

import prefixexec
from prefixexec.adapters import AdapterOptions
from prefixexec.cli import main
from prefixexec.engine import accumulate_input
from prefixexec.inference import evaluate_accumulators
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.ranking.core import average_ranks, exact_ranks, pair_signs, tau_b

from conftest import REAL, REPO, real_text

V1 = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
BOARD = REAL / "tau2-leaderboard"
AIRLINE = [
    BOARD / "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json.zst",
    BOARD / "langchain_agent_airline_2025-11-26_00-37-06.json.zst",
    BOARD / "toolorchestra_airline_gpt-5_1trial.json.zst",
]
RETAIL_GYM = [
    BOARD / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json.zst",
    BOARD / "ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_retail_default_gpt-4.1_1trials.json.zst",
]
SCHEMA = json.loads((REPO / "spec" / "leaderboard.schema.json").read_text(encoding="utf-8"))


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["leaderboard", "--quiet", *(str(a) for a in argv)])
    out, err = capsys.readouterr()
    return code, out, err


def document(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> dict[str, Any]:
    code, out, err = run(capsys, "--json", *argv)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    return doc


def by_system(ds: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["system"]: s for s in ds["systems"]}


def record(model: str, task: str, T: int, fed: int, success: bool, trial: int = 0, dataset: str = "d") -> str:
    return json.dumps(
        {
            "dataset": dataset,
            "task_id": task,
            "trial": trial,
            "model": model,
            "method": "m",
            "success": success,
            "outcome": {"T": T, "fed": fed},
        }
    )


def write(tmp_path: Path, lines: list[str], name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------------- pass^k, real


def tau2_pass_hat_k(path: Path) -> dict[int, Fraction]:
    """tau2's pass^k as documented in src/tau2/metrics/agent_metrics.py, from the raw file.

    Success = reward within 1e-6 of 1 (``is_successful``); per task, num_trials = its rows and
    success_count = its successes; ``comb(success_count, k) / comb(num_trials, k)`` per task for
    k = 1..min num_trials, averaged over tasks (``get_tasks_pass_hat_k``, ``compute_metrics``).
    Exact fractions instead of floats, so the comparison is exact.
    """
    rows = json.loads(real_text(path))
    trials: Counter[str] = Counter()
    successes: Counter[str] = Counter()
    for r in rows:
        trials[str(r["task_id"])] += 1
        successes[str(r["task_id"])] += (1 - 1e-6) <= r["reward"] <= (1 + 1e-6)
    max_k = min(trials.values())
    return {
        k: sum((Fraction(math.comb(successes[t], k), math.comb(trials[t], k)) for t in trials), Fraction(0))
        / len(trials)
        for k in range(1, max_k + 1)
    }


@pytest.mark.spec("PASSK-TAU2", "PASSK-HAT", "PASSK-TRIALS")
def test_pass_hat_k_equals_tau2_formula_on_the_4_trial_gpt4o_run(capsys: pytest.CaptureFixture[str]) -> None:
    # Counted from the raw file: 50 tasks x 4 trials; tasks with 0..4 successes: 14, 12, 10, 4, 10.
    rows = json.loads(real_text(V1))
    per_task: Counter[str] = Counter()
    for r in rows:
        per_task[str(r["task_id"])] += r["reward"] == 1.0
    assert sorted(Counter(per_task.values()).items()) == [(0, 14), (1, 12), (2, 10), (3, 4), (4, 10)]
    expected = tau2_pass_hat_k(V1)
    assert expected == {1: Fraction(21, 50), 2: Fraction(41, 150), 3: Fraction(11, 50), 4: Fraction(1, 5)}
    for trials in ("tau2", "run"):  # every task has 4 trials: both conventions agree
        doc = document(capsys, V1, "--bootstrap", "0", "--trials", trials)
        (system,) = doc["datasets"][0]["systems"]
        got = {p["k"]: Fraction(p["exact"]) for p in system["curves"]["pass_hat_k"]}
        assert got == expected
        assert doc["datasets"][0]["k"] == 4
        assert Fraction(system["metrics"]["pass_hat_k"]["exact"]) == Fraction(1, 5)
        # pass@k from the same counts: 1 - C(4 - c, k) / C(4, k) averaged.
        at = {p["k"]: Fraction(p["exact"]) for p in system["curves"]["pass_at_k"]}
        assert at[4] == Fraction(36, 50) and at[1] == Fraction(21, 50)


@pytest.mark.spec("PASSK-TRIALS", "PASSK-BOOT")
def test_trial_conventions_differ_when_trials_are_missing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Task a: trials 0..3, all successful; task b: trials 0 and 1, one success.
    lines = [record("x", "a", 1, 2, True, trial=t) for t in range(4)]
    lines += [record("x", "b", 1, 1, True, trial=0), record("x", "b", 1, 2, False, trial=1)]
    path = write(tmp_path, lines)
    tau2 = document(capsys, path, "--bootstrap", "50")["datasets"][0]
    run_ = document(capsys, path, "--bootstrap", "50", "--trials", "run")["datasets"][0]
    # tau2: k <= min(4, 2) = 2, pass^2 = (C(4,2)/C(4,2) + C(1,2)/C(2,2)) / 2 = 1/2.
    assert tau2["k"] == 2
    assert tau2["systems"][0]["metrics"]["pass_hat_k"]["exact"] == "1/2"
    # run: n = 4 distinct trials for every task; k up to 4; pass^4 = (1 + C(1,4)/C(4,4)) / 2 = 1/2,
    # pass^2 = (1 + C(1,2)/C(4,2)) / 2 = 1/2; pass^1 = (1 + 1/4) / 2 = 5/8 (tau2: (1 + 1/2) / 2 = 3/4).
    assert run_["k"] == 4
    assert [p["exact"] for p in run_["systems"][0]["curves"]["pass_hat_k"]] == ["5/8", "1/2", "1/2", "1/2"]
    assert tau2["systems"][0]["curves"]["pass_hat_k"][0]["exact"] == "3/4"
    # TER^k: fed = 2 = T + 1 is fully executable: a 4/4, b 1/2 (the same counts as success).
    assert [p["exact"] for p in tau2["systems"][0]["curves"]["ter_hat_k"]] == ["3/4", "1/2"]
    code, _, err = run(capsys, path, "--bootstrap", "0", "--k", "3")
    assert code == 2 and "k = 3 exceeds what every system allows: 2" in err


# ---------------------------------------------------------------------------------- real runs


def tau2_counts(path: Path) -> tuple[int, int, int]:
    """(simulations, successes, fully executable) of a tau2 results file, counted from the JSON.

    Success: termination user_stop/agent_stop and reward within 1e-6 of 1. Fully executable: every
    call the assistant requested is answered by a tool message that is not an error (``error:
    true``, or, where a file has no ``error`` field, text starting with ``Error``); a simulation
    without calls is executable iff its task has no gold assistant action.
    """
    doc = json.loads(real_text(path))
    gold = {
        str(t["id"]): [
            a
            for a in ((t.get("evaluation_criteria") or {}).get("actions") or [])
            if a.get("requestor", "assistant") == "assistant"
        ]
        for t in doc.get("tasks", [])
    }
    successes = executable = 0
    for sim in doc["simulations"]:
        reward = (sim.get("reward_info") or {}).get("reward")
        successes += sim["termination_reason"] in ("user_stop", "agent_stop") and abs(reward - 1) <= 1e-6
        calls: list[str] = []
        answers: dict[str, list[bool]] = {}
        for m in sim["messages"]:
            if m["role"] == "assistant":
                calls += [
                    c["id"]
                    for c in m.get("tool_calls") or []
                    if c.get("requestor", "assistant") == "assistant"
                ]
            for tm in m.get("tool_messages") or ([m] if m["role"] == "tool" else []):
                if tm.get("requestor", "assistant") == "assistant":
                    error = tm.get("error")
                    answers.setdefault(tm["id"], []).append(
                        str(tm.get("content") or "").startswith("Error") if error is None else bool(error)
                    )
        if not calls:
            executable += not gold.get(str(sim["task_id"]))
        else:
            executable += all(answers.get(c) and not answers[c].pop(0) for c in calls)
    return len(doc["simulations"]), successes, executable


@pytest.mark.spec("LB-REAL", "LB-RANK", "LB-KENDALL", "LB-SYSTEM")
def test_three_real_airline_submissions(capsys: pytest.CaptureFixture[str]) -> None:
    counts = {p.name: tau2_counts(p) for p in AIRLINE}
    # The counts, as the independent script finds them (simulations, successes, executable).
    assert counts == {
        AIRLINE[0].name: (50, 36, 49),
        AIRLINE[1].name: (50, 19, 42),
        AIRLINE[2].name: (50, 28, 46),
    }
    ds = document(capsys, *AIRLINE, "--bootstrap", "200")["datasets"][0]
    systems = by_system(ds)
    names = {
        AIRLINE[0].name: "claude-sonnet-4-5 / llm_agent",
        AIRLINE[1].name: "openai/gpt-oss-120b / langchain_agent",
        AIRLINE[2].name: "gpt-4.1-mini-2025-04-14 / llm_agent",  # ToolOrchestra's file names this LLM
    }
    for file, (n, succ, execd) in counts.items():
        s = systems[names[file]]
        assert s["N"] == n
        assert Fraction(s["metrics"]["success"]["exact"]) == Fraction(succ, n)
        assert Fraction(s["metrics"]["TER"]["exact"]) == Fraction(execd, n)
    # Ranks: 36 > 28 > 19 successes, 49 > 46 > 42 fully executable: the same order, tau-b = 1.
    assert [s["system"] for s in ds["systems"]] == [names[AIRLINE[i].name] for i in (0, 2, 1)]
    assert [s["metrics"]["success"]["rank"] for s in ds["systems"]] == [1, 2, 3]
    assert [s["metrics"]["TER"]["rank"] for s in ds["systems"]] == [1, 2, 3]
    ter = next(t for t in ds["kendall"] if t["metric"] == "TER")
    assert (ter["tau_b"], ter["concordant"], ter["discordant"]) == (1.0, 3, 0)
    assert not [f for f in ds["flips"] if f["metric"] == "TER"]
    assert ds["ranked"] == ["success", "TER", "AUC_PEC", "mean_FED", "RR"]  # k = 1: pass^k shown only


@pytest.mark.spec("LB-REAL", "LB-FLIPS")
def test_fine_tuning_ties_success_but_not_executability(capsys: pytest.CaptureFixture[str]) -> None:
    # The issue's finding: on tau2's 40-task retail test split (feature/gym) both have 34/40
    # successes while 32/40 and 23/40 trajectories are fully executable (independent count).
    assert [tau2_counts(p) for p in RETAIL_GYM] == [(40, 34, 32), (40, 34, 23)]
    ds = document(capsys, *RETAIL_GYM, "--bootstrap", "500", "--by", "model")["datasets"][0]
    ft = "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm"
    assert {s["system"] for s in ds["systems"]} == {"gpt-4.1", ft}
    flip = next(f for f in ds["flips"] if f["metric"] == "TER")
    assert (flip["first"], flip["second"], flip["success_order"], flip["metric_order"]) == (
        "gpt-4.1",
        ft,
        "=",
        ">",
    )
    shares = flip["resamples"]
    assert shares["used"] == 500 and shares["dropped"] == 0
    for part in ("success", "metric"):
        assert math.isclose(sum(shares[part].values()), 1.0)
    # TER's order holds in most resamples (9 more executable trajectories of 40).
    assert shares["metric"]["first"] > 0.9
    assert by_system(ds)["gpt-4.1"]["metrics"]["success"]["rank"] == 1.5


@pytest.mark.spec("LB-TASKS", "LB-UNPAIRED", "LB-REAL")
def test_systems_that_do_not_share_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    # ToolOrchestra ran all 114 retail tasks; the gym runs 40 of them.
    files = [*RETAIL_GYM, BOARD / "toolorchestra_retail_gpt-5_1trial.json.zst"]
    code, out, _ = run(capsys, *files, "--bootstrap", "0", "--format", "text")
    assert code == 0
    # LB-UNPAIRED: each system on its own tasks, said in one line of the table's title
    assert (
        "tau-bench/retail: 3 systems on 114 tasks in all, 40 shared by every system: each system is ranked "
        "on its own tasks with unpaired intervals" in out
    )
    ds = document(capsys, *files, "--bootstrap", "200")["datasets"][0]
    assert ds["tasks"]["paired"] is False and (ds["tasks"]["union"], ds["tasks"]["shared"]) == (114, 40)
    assert {s["system"]: s["tasks"] for s in ds["systems"]} == {
        "gpt-4.1 / llm_agent": 40,
        "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm / llm_agent": 40,
        "gpt-4.1-mini-2025-04-14 / llm_agent": 114,
    }
    ds = document(capsys, *files, "--bootstrap", "0", "--shared-tasks")["datasets"][0]
    assert ds["tasks"] == {
        "scored": 40,
        "paired": True,
        "union": 114,
        "shared": 40,
        "dropped": 74,
        "dropped_by_system": {
            "gpt-4.1 / llm_agent": 0,
            "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm / llm_agent": 0,
            "gpt-4.1-mini-2025-04-14 / llm_agent": 74,
        },
    }
    assert all(s["N"] == 40 for s in ds["systems"])
    assert "warnings" not in ds["tasks"]  # 40 shared tasks: not fewer than 20 (LB-FEW-TASKS)
    code, out, _ = run(capsys, *files, "--bootstrap", "0", "--shared-tasks", "--format", "text")
    assert "(--shared-tasks: 74 of 114 tasks dropped: not shared by all)" in out


# ------------------------------------------------------------------------- crafted: the rules


def two_systems(tmp_path: Path) -> Path:
    # x: 3 of 4 successes, 1 of 4 fully executable; y: 1 of 4 successes, 4 of 4 executable.
    lines = [record("x", f"t{i}", 2, 3 if i == 0 else 1, i < 3) for i in range(4)]
    lines += [record("y", f"t{i}", 2, 3, i == 0) for i in range(4)]
    return write(tmp_path, lines)


@pytest.mark.spec("LB-FLIPS", "LB-RANK")
def test_a_reversed_pair(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ds = document(capsys, two_systems(tmp_path), "--bootstrap", "300", "--metric", "TER")["datasets"][0]
    assert ds["ranked"] == ["success", "TER"]
    (flip,) = ds["flips"]
    assert (flip["first"], flip["second"], flip["success_order"], flip["metric_order"]) == (
        "x / m",
        "y / m",
        ">",
        "<",
    )
    (kendall,) = ds["kendall"]
    assert (kendall["tau_b"], kendall["discordant"]) == (-1.0, 1)
    x, y = ds["systems"]
    assert (x["metrics"]["success"]["rank"], x["metrics"]["TER"]["rank"]) == (1, 2)
    assert (y["metrics"]["success"]["rank"], y["metrics"]["TER"]["rank"]) == (2, 1)
    # y is fully executable on every task: TER = 1 in every resample, never behind x.
    assert flip["resamples"]["metric"]["first"] == 0.0


@pytest.mark.spec("LB-SYSTEM")
def test_by_model_refuses_two_conditions_with_one_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = [record("x", "t0", 1, 2, True), record("y", "t0", 1, 2, True)]
    lines.append(json.dumps(json.loads(record("x", "t0", 1, 1, False)) | {"method": "other"}))
    path = write(tmp_path, lines)
    code, out, err = run(capsys, path, "--bootstrap", "0", "--by", "model")
    assert code == 2 and out == ""
    assert "d: x / m and x / other have the same model 'x'" in err
    code, _, err = run(capsys, path, "--bootstrap", "0", "--by", "method")
    assert code == 2 and "d: x / m and y / m have the same method 'm'" in err
    doc = document(capsys, path, "--bootstrap", "0", "--by", "method", "--select", "model=x")
    assert doc["settings"]["by"] == "method"
    assert [s["system"] for s in doc["datasets"][0]["systems"]] == ["m", "other"]
    code, _, err = run(capsys, path, "--bootstrap", "0", "--by", "category")
    assert code == 2 and "--by" in err  # the ToolSandbox adapter option, not a system key


@pytest.mark.spec("LB-RANK")
@given(
    st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=7), min_size=1, max_size=6).filter(
        lambda rows: len({len(r) for r in rows}) == 1
    )
)
def test_average_ranks_agree_with_scipy(rows: list[list[int]]) -> None:
    values = np.array(rows, dtype=np.float64)
    expected = scipy.stats.rankdata(-values, method="average", axis=1)
    assert np.array_equal(average_ranks(values), expected)
    assert [float(r) for r in exact_ranks([Fraction(v) for v in rows[0]])] == expected[0].tolist()


@pytest.mark.spec("LB-KENDALL")
@given(
    st.integers(2, 8).flatmap(
        lambda n: st.tuples(*(st.lists(st.integers(0, 3), min_size=n, max_size=n),) * 2)
    )
)
def test_tau_b_agrees_with_scipy(pair: tuple[list[int], list[int]]) -> None:
    x, y = (np.array([v], dtype=np.float64) for v in pair)
    got = tau_b(pair_signs(x), pair_signs(y))[0]
    expected = scipy.stats.kendalltau(pair[0], pair[1], variant="b").statistic
    assert (math.isnan(got) and math.isnan(expected)) or math.isclose(got, expected, abs_tol=1e-12)


@pytest.mark.spec("LB-RANK-CI", "BOOT-DRAW", "BOOT-PAIRED", "PASSK-BOOT", "LB-CI")
def test_intervals_and_rank_intervals_come_from_scores_resamples(capsys: pytest.CaptureFixture[str]) -> None:
    B = 400
    doc = document(capsys, *AIRLINE, "--bootstrap", str(B), "--seed", "7")
    ds = doc["datasets"][0]
    results = evaluate_accumulators(
        accumulate_input("taubench", [str(p) for p in AIRLINE], AdapterOptions()),
        BootstrapSettings(B=B, seed=7),
    )
    labels = [f"{r.key.model} / {r.key.method}" for r in results]
    systems = by_system(ds)
    for label, r in zip(labels, results, strict=True):
        assert r.intervals is not None
        for m in ("success", "TER", "AUC_PEC", "mean_FED", "RR"):
            expected = r.intervals.RR_wilson if m == "RR" else r.intervals.scalars[m]  # LB-CI
            assert systems[label]["metrics"][m]["ci"] == (None if expected is None else list(expected))
        boot = r.intervals.scalars["RR"]  # what RR's rank resamples, kept beside
        assert systems[label]["metrics"]["RR"]["ci_bootstrap"] == (None if boot is None else list(boot))
    # Rank intervals recomputed from score's TER replicates: rank per resample (scipy), then the
    # type-7 quantiles (numpy's default 'linear').
    assert all(r.replicates is not None for r in results)
    reps = np.stack([r.replicates.scalars["TER"] for r in results if r.replicates is not None], axis=1)
    ranks = scipy.stats.rankdata(-reps, method="average", axis=1)
    for j, label in enumerate(labels):
        lo, hi = np.quantile(ranks[:, j], [0.025, 0.975])
        got = systems[label]["metrics"]["TER"]["rank_ci"]
        assert math.isclose(got[0], lo) and math.isclose(got[1], hi)
    # One trial per task: pass^1's replicates are success's.
    for s in ds["systems"]:
        assert s["metrics"]["pass_hat_k"]["ci"] == s["metrics"]["success"]["ci"]


# ------------------------------------------------------------------------------ outputs, API


@pytest.mark.spec("LB-API", "LB-JSON")
def test_python_function_returns_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    doc = document(capsys, *AIRLINE, "--bootstrap", "100", "--metric", "TER,RR", "--metric", "AUC_PEC")
    assert doc["settings"]["metrics"] == ["success", "TER", "AUC_PEC", "RR"]
    same = prefixexec.leaderboard(AIRLINE, bootstrap=100, metric=["TER,RR", "AUC_PEC"])
    assert same.document == doc and same.ok and same.tables()[0] == "systems"
    assert set(doc["spec"].values()) <= {
        "LB-SYSTEM", "LB-TASKS", "LB-METRICS", "PASSK-BOOT", "LB-RANK", "LB-RANK-CI", "LB-KENDALL",
        "LB-FLIPS", "PASSK-HAT", "PASSK-AT", "PASSK-TER", "PASSK-TRIALS",
    }  # fmt: skip
    with pytest.raises(ValueError, match="'trials' must be one of 'tau2', 'run'"):
        prefixexec.leaderboard(AIRLINE, bootstrap=0, trials="v1")


@pytest.mark.spec("LB-OUTPUT", "LB-METRICS")
def test_table_formats(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = two_systems(tmp_path)
    code, text, _ = run(capsys, path, "--bootstrap", "100")
    assert code == 0
    assert "d: 2 systems on 4 tasks, pass^k and TER^k at k = 1 (trials: tau2), 100 task resamples" in text
    assert "d: rank per metric (1 = best, ties averaged) [rank interval]" in text
    assert "Kendall's tau-b" in text and "pairs that success and another metric order differently" in text
    assert text.rstrip().splitlines()[-1].startswith("signature: prefixexec:")
    code, md, _ = run(capsys, path, "--bootstrap", "100", "--format", "md")
    assert "| system | N | success | TER |" in md and "| x / m | 4 | 0.75 [" in md
    code, tex, _ = run(capsys, path, "--bootstrap", "100", "--format", "tex")
    assert tex.count(r"\begin{tabular}") == 4 and r"pass\textasciicircum{}1" in tex
    code, csv_text, _ = run(capsys, path, "--bootstrap", "100", "--format", "csv")
    lines = csv_text.splitlines()
    assert len(lines) == 3 and lines[0].startswith("dataset,system,model,method,N,tasks,k,trials,success,")
    assert lines[1].startswith("d,x / m,x,m,4,4,1,tau2,0.75,3/4,")
    out = tmp_path / "board.md"
    code, printed, _ = run(capsys, path, "--bootstrap", "100", "--format", "md", "--output", out)
    assert code == 0 and printed == "" and out.read_text(encoding="utf-8") == md
    code, _, err = run(capsys, path, "--output", path)
    assert code == 2 and "input" in err  # an input is never replaced
    assert path.read_text(encoding="utf-8").startswith("{")


@pytest.mark.spec("LB-FIGURE")
def test_figure_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from prefixexec.ranking.figure import leaderboard_figure
    from prefixexec.report.figures import panel_titles

    png, svg, pdf = tmp_path / "f.png", tmp_path / "f.svg", tmp_path / "f.pdf"
    code, _, err = run(
        capsys, *AIRLINE, "--bootstrap", "50", "--figure", png, "--figure", svg, "--figure", pdf
    )
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:400] and pdf.read_bytes()[:5] == b"%PDF-"
    doc = prefixexec.leaderboard(AIRLINE, bootstrap=50).document
    fig = leaderboard_figure(doc)
    assert panel_titles(fig) == ["tau-bench/airline: success vs TER", "tau-bench/airline: success vs AUC-PEC"]
    legend = [t.get_text() for sub in fig.subfigs for leg in sub.legends for t in leg.get_texts()]
    assert legend == [f"{i + 1}  {s['system']}" for i, s in enumerate(doc["datasets"][0]["systems"])]
    code, _, err = run(capsys, *AIRLINE, "--figure", tmp_path / "f.gif")
    assert code == 2 and "--figure must end in .png, .svg or .pdf" in err


@pytest.mark.spec("LB-METRICS", "CONV-UNDEFINED")
def test_undefined_rr_has_no_rank(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # y never fails a call: RR-Eligible = 0, RR undefined; it is not ranked on RR.
    ds = document(capsys, two_systems(tmp_path), "--bootstrap", "100", "--metric", "RR")["datasets"][0]
    x, y = ds["systems"]
    assert y["metrics"]["RR"]["value"] is None and y["metrics"]["RR"]["rank"] is None
    assert y["metrics"]["RR"]["rank_ci"] is None
    assert x["metrics"]["RR"]["rank"] == 1
    assert ds["kendall"][0]["systems"] == 1 and ds["kendall"][0]["tau_b"] is None


def test_pairs_of_itertools_match_triu_order() -> None:
    # pair_signs lists pairs in numpy.triu_indices order, which _exact_signs mirrors.
    values = np.array([[3.0, 1.0, 2.0]])
    assert pair_signs(values).tolist() == [
        [int(np.sign(a - b)) for a, b in itertools.combinations([3, 1, 2], 2)]
    ]


@pytest.mark.spec("LB-MEMORY", "BOOT-BLOCK")
def test_a_resample_matrix_that_cannot_fit_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import prefixexec.scale
    from prefixexec.ranking.core import KEEP_BYTES

    lines = [
        json.dumps({"dataset": "d", "task_id": f"t{j}", "model": m, "method": "x", "trial": 0,
                    "success": j % 2 == 0, "outcome": {"T": 2, "fed": 3}})
        for j in range(1000) for m in ("a", "b")
    ]  # fmt: skip
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # The whole matrix (2,000 resamples x 1,000 tasks x 24 bytes = 48 MB) was refused under
    # 30 MB; drawn in blocks it is never held, so the leaderboard now fits.
    monkeypatch.setattr(prefixexec.scale, "available_memory", lambda: 30_000_000)
    assert main(["leaderboard", "--bootstrap", "2000", str(path)]) == 0
    capsys.readouterr()
    # What must fit is the kept replicates: 2 systems x 7 metrics x KEEP_BYTES a resample,
    # 896 KB at 2,000 resamples; say only 600 KB are available.
    assert 2 * 7 * KEEP_BYTES * 2000 > 600_000
    monkeypatch.setattr(prefixexec.scale, "available_memory", lambda: 600_000)
    code = main(["leaderboard", "--bootstrap", "2000", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1, err
    most = int(re.search(r"use --bootstrap (\d+) or less", err)[1])  # type: ignore[index]  # asserted by the match
    assert 0 < most < 600_000 // (2 * 7 * KEEP_BYTES), err
    assert main(["leaderboard", "--bootstrap", str(most), str(path)]) == 0
    assert main(["leaderboard", "--bootstrap", str(2 * most), str(path)]) == 2
