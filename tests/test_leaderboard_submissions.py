"""``leaderboard`` and ``crosscheck`` over submission folders as maintainers keep them (LB-FOLDER ...).

The real folder is ``tests/data/real/tau2-submissions/`` (six submissions of tau2-bench's
leaderboard in tau2's own layout; its SOURCE.md). Every golden number below is counted by
:func:`raw_counts` from the raw JSON with the standard library (``conftest.real_text``), not with
prefixexec's readers: per trajectory file its simulations and successes (termination
``user_stop``/``agent_stop`` and a reward within 1e-6 of 1, tau2's ``is_successful``), its domain
(a results file's ``info.environment_info.domain_name``; a bare list's from the word of its file
name), and per submission the claims as its ``submission.json`` writes them.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.cli import main

from conftest import REAL, real_text

SUBMISSIONS = REAL / "tau2-submissions"
GLYPHH = REAL / "bfcl-glyphh-ada"
BFCL_V4 = REAL / "bfcl-v4"
GYM = REAL / "tau2-leaderboard"
DOMAINS = ("airline", "retail", "telecom", "banking_knowledge", "medical")


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def document(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> dict[str, Any]:
    code, out, err = run(capsys, "leaderboard", *argv, "--json", "--quiet")
    assert code == 0, err
    loaded: dict[str, Any] = json.loads(out)
    return loaded


def file_counts(path: Path) -> tuple[str, int, int]:
    """(domain, simulations, successes) of one trajectory file, from its raw JSON."""
    doc = json.loads(real_text(path))
    if isinstance(doc, dict):
        sims, domain = doc["simulations"], doc["info"]["environment_info"]["domain_name"]
    else:  # a bare list: the domain is the word of the file name
        sims = doc
        domain = next(d for d in DOMAINS if f"_{d}_" in path.name)
    wins = sum(
        s["termination_reason"] in ("user_stop", "agent_stop")
        and abs((s.get("reward_info") or {}).get("reward", 0) - 1) <= 1e-6
        for s in sims
    )
    return domain, len(sims), wins


def raw_counts() -> dict[str, dict[str, Any]]:
    """Per submission folder: its system name, its listed files' counts per domain, its claims."""
    out: dict[str, dict[str, Any]] = {}
    for folder in sorted(p for p in SUBMISSIONS.iterdir() if p.is_dir()):
        doc = json.loads((folder / "submission.json").read_text(encoding="utf-8"))
        org = doc.get("model_organization") or doc.get("submitting_organization")
        parts = [p for p in (org, doc.get("submission_type"), doc.get("submission_date")) if p]
        listed = set(doc["trajectory_files"].values()) if "trajectory_files" in doc else None
        per_domain: dict[str, tuple[int, int]] = {}
        for f in sorted((folder / "trajectories").glob("*.json.zst")):
            if listed is not None and f.name.removesuffix(".zst") not in listed:
                continue
            domain, n, wins = file_counts(f)
            per_domain[domain] = (n, wins)
        claims = {d: r.get("pass_1") for d, r in doc["results"].items()}
        nulls = sum(v is None for r in doc["results"].values() for k, v in r.items() if k.startswith("pass_"))
        out[folder.name] = {
            "system": f"{doc['model_name']} ({', '.join(parts)})",
            "counts": per_domain,
            "claims": claims,
            "nulls": nulls,
            "available": doc.get("trajectories_available"),
        }
    return out


def _within(claimed: float, n: int, wins: int) -> bool:
    """A pass_1 claim matches c / n to half a unit of its last written digit (CLAIM-TAU2)."""
    exponent = Decimal(repr(claimed)).as_tuple().exponent
    assert isinstance(exponent, int)
    return abs(Fraction(repr(claimed)) / 100 - Fraction(wins, n)) <= Fraction(10) ** exponent / 200


# ------------------------------------------------------------------------------ the real folder


@pytest.mark.spec("LB-FOLDER", "LB-SYSTEM-FROM", "LB-SUBMISSIONS-REAL", "LB-RANK")
def test_the_real_submissions_folder_is_ranked_per_domain(capsys: pytest.CaptureFixture[str]) -> None:
    raw = raw_counts()
    doc = document(capsys, SUBMISSIONS, "--bootstrap", "200")
    assert doc["settings"]["system_from"] == "submission"
    with_files = {name: r for name, r in raw.items() if r["counts"]}
    assert len(raw) == 6 and len(with_files) == 5  # as the raw folder holds them
    domains = sorted({f"tau-bench/{d}" for r in with_files.values() for d in r["counts"]})
    assert [ds["dataset"] for ds in doc["datasets"]] == domains == ["tau-bench/airline", "tau-bench/retail"]
    for ds in doc["datasets"]:
        domain = ds["dataset"].removeprefix("tau-bench/")
        expected = {r["system"]: r["counts"][domain] for r in with_files.values() if domain in r["counts"]}
        got = {s["system"]: s for s in ds["systems"]}
        assert sorted(got) == sorted(expected)
        for system, (n, wins) in expected.items():
            assert got[system]["N"] == n and got[system]["tasks"] == n  # one trial per task
            assert Fraction(got[system]["metrics"]["success"]["exact"]) == Fraction(wins, n)
        # one table per domain, sorted by success, with ranks and intervals
        rates = [Fraction(s["metrics"]["success"]["exact"]) for s in ds["systems"]]
        assert rates == sorted(rates, reverse=True)
        assert [s["metrics"]["success"]["rank"] for s in ds["systems"]] == list(range(1, len(rates) + 1))
        assert all(s["metrics"]["success"]["ci"] is not None for s in ds["systems"])
    airline = doc["datasets"][0]
    assert airline["tasks"]["paired"] is True and len(airline["systems"]) == 5


@pytest.mark.spec("LB-CLAIMS", "LB-SUBMISSIONS-REAL", "LB-NOT-CHECKABLE")
def test_every_claim_of_the_real_folder_is_checked_in_the_same_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    raw = raw_counts()
    claims = document(capsys, SUBMISSIONS, "--bootstrap", "0")["claims"]
    rows = {(c["submission"], c["dataset"].removeprefix("tau-bench/")): c for c in claims["claims"]
            if c["metric"] == "pass_1"}  # fmt: skip
    expected_summary = dict.fromkeys(("reproduced", "differs", "not_checkable", "not_reported"), 0)
    for name, r in raw.items():
        if not r["counts"]:
            continue
        expected_summary["not_reported"] += r["nulls"]
        for domain, claimed in r["claims"].items():
            row = rows[(name, domain)]
            assert row["system"] == r["system"] and row["claimed"] == repr(claimed)
            if domain not in r["counts"]:
                assert row["verdict"] == "not_checkable"
                expected_summary["not_checkable"] += 1
                continue
            n, wins = r["counts"][domain]
            assert Fraction(row["ours_exact"]) == Fraction(wins, n)
            verdict = "reproduced" if _within(claimed, n, wins) else "differs"
            assert row["verdict"] == verdict
            expected_summary[verdict] += 1
    assert {k: claims["summary"][k] for k in expected_summary} == expected_summary
    # the raw counts: 4 claims reproduced (Button 38/50, claude-sonnet 36/50, gpt-oss 19/50,
    # Nemotron 28/50 and 96/114: 5), AdaptiveAgent's airline 70.0 against 49/50 differs
    assert (expected_summary["reproduced"], expected_summary["differs"]) == (5, 1)
    # the submission without trajectories: one line, not a row per claim
    absent = [n for n, r in raw.items() if not r["counts"]]
    assert [a["submission"] for a in claims["not_checkable"]] == absent == ["kimi-k2_moonshot-ai_2025-07-11"]
    assert claims["not_checkable"][0]["trajectories_available"] is False
    code, out, _ = run(capsys, "leaderboard", SUBMISSIONS, "--bootstrap", "0", "--quiet")
    assert code == 0
    assert "1 submission whose claims are not checkable" in out
    assert "Kimi-k2 (Moonshot AI, 2025-07-28) (kimi-k2_moonshot-ai_2025-07-11): no trajectories " in out
    assert "claims: 5 reproduced, 0 reproduced as best-of-K, 1 differs" in out


@pytest.mark.spec("LB-LISTED")
def test_only_the_listed_trajectory_files_are_read(capsys: pytest.CaptureFixture[str]) -> None:
    folder = SUBMISSIONS / "adaptive-agent_ironshell-ui_2026-03-22"
    listed = set(json.loads((folder / "submission.json").read_text())["trajectory_files"].values())
    present = {p.name.removesuffix(".zst") for p in (folder / "trajectories").iterdir()}
    doc = document(capsys, folder, "--bootstrap", "0")
    (entry,) = doc["submissions"]
    assert (
        entry["unlisted"]
        == sorted(present - listed)
        == ["adaptive-agent_medical_claude-opus-4-6_1trial.json"]
    )
    assert entry["missing"] == sorted(listed - present) and len(entry["missing"]) == 3
    assert [ds["dataset"] for ds in doc["datasets"]] == ["tau-bench/airline"]


@pytest.mark.spec("LB-SYSTEM-FROM")
@pytest.mark.parametrize("choice", ["folder", "file", "model"])
def test_what_a_system_is(choice: str, capsys: pytest.CaptureFixture[str]) -> None:
    doc = document(capsys, SUBMISSIONS, "--bootstrap", "0", "--system-from", choice)
    names = sorted(s["system"] for s in doc["datasets"][0]["systems"])
    folders = sorted(p.name for p in SUBMISSIONS.iterdir() if (p / "trajectories").is_dir())
    if choice == "folder":
        assert names == folders
    elif choice == "file":
        assert all(n.endswith(".json") for n in names) and len(names) == 5
    else:  # the model / agent each trajectory file names (ToolOrchestra's names its LLM)
        assert "gpt-4.1-mini-2025-04-14 / llm_agent" in names and "claude-sonnet-4-5 / llm_agent" in names


@pytest.mark.spec("LB-SYSTEM-FROM")
def test_two_submissions_of_the_same_model_and_agent_are_two_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = SUBMISSIONS / "claude-sonnet-4-5_aide-platform_2025-10-31"
    shutil.copytree(one, tmp_path / "a_run")
    shutil.copytree(one, tmp_path / "b_run")
    ds = document(capsys, tmp_path, "--bootstrap", "0")["datasets"][0]
    assert sorted(s["system"] for s in ds["systems"]) == [
        "claude-sonnet-4-5 (2025-10-31) [a_run]",
        "claude-sonnet-4-5 (2025-10-31) [b_run]",
    ]
    # --system-from model: the same model / agent twice is refused, naming the default
    code, out, err = run(capsys, "leaderboard", tmp_path, "--system-from", "model", "--bootstrap", "0")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--system-from submission" in err


@pytest.mark.spec("LB-TRIALS", "LB-CLAIMS")
def test_a_best_of_k_submission_is_one_system_with_k_trials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two real runs of the same 40 retail tasks (feature/gym) as one submission's trajectories.
    runs = sorted(GYM.glob("*retail_*_1trials.json.zst"))
    assert len(runs) == 2
    per_task: dict[str, bool] = {}
    for path in runs:
        for s in json.loads(real_text(path))["simulations"]:
            ok = (
                s["termination_reason"] in ("user_stop", "agent_stop")
                and abs(s["reward_info"]["reward"] - 1) <= 1e-6
            )
            per_task[str(s["task_id"])] = per_task.get(str(s["task_id"]), False) or ok
    best = Fraction(sum(per_task.values()), len(per_task))
    folder = tmp_path / "best-of-2_test_2026-01-01"
    (folder / "trajectories").mkdir(parents=True)
    for path in runs:
        shutil.copy(path, folder / "trajectories" / path.name)
    claim = {"model_name": "best of two", "results": {"retail": {"pass_1": round(float(best) * 100, 1)}}}
    (folder / "submission.json").write_text(json.dumps(claim), encoding="utf-8")
    doc = document(capsys, folder, "--bootstrap", "0")
    (system,) = doc["datasets"][0]["systems"]
    assert system["system"] == "best of two" and system["N"] == 2 * len(per_task)
    assert system["trials"]["min"] == system["trials"]["max"] == 2
    (row,) = doc["claims"]["claims"]
    assert row["verdict"] == "reproduced_best_of" and Fraction(row["ours_exact"]) == best


# ------------------------------------------------------------------------------ crosscheck


@pytest.mark.spec("CLAIM-MANY")
def test_crosscheck_takes_every_submission_json_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    raw = raw_counts()
    files = sorted(SUBMISSIONS.glob("*/submission.json"))
    code, out, err = run(capsys, "crosscheck", *files, "--json", "--quiet")
    assert code == 1, err  # AdaptiveAgent's airline claim differs
    doc = json.loads(out)
    assert len(doc["submissions"]) == 6 and doc["differ"] == 1
    results = [json.loads((SUBMISSIONS / n / "submission.json").read_text())["results"] for n in raw]
    total = sum(1 for r in results for domain in r.values() for k in domain if k.startswith("pass_"))
    assert sum(doc["summary"].values()) == total
    kimi = next(d for d in doc["submissions"] if "kimi" in d["claims_file"])
    assert {c["verdict"] for c in kimi["claims"]} == {"not_checkable", "not_reported"}
    # the folder of folders gives the same checks
    code, folder_out, _ = run(capsys, "crosscheck", SUBMISSIONS, "--json", "--quiet")
    assert code == 1 and json.loads(folder_out)["summary"] == doc["summary"]
    code, text, _ = run(capsys, "crosscheck", *files, "--quiet")
    assert "6 submissions, " in text and " 1 differs, " in text


@pytest.mark.spec("CLAIM-MANY")
def test_crosscheck_of_a_claims_file_without_rollouts_says_what_is_needed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "crosscheck", GYM / "toolorchestra_nvidia.submission.json")
    assert code == 2 and out == "" and err.count("\n") == 1 and "required: the rollouts" in err


# ------------------------------------------------------------------------------ BFCL


@pytest.mark.spec("LB-FOLDER", "BFCL-MODEL", "LB-CLAIMS")
def test_bfcl_result_and_score_layout(capsys: pytest.CaptureFixture[str]) -> None:
    scores = sorted((GLYPHH / "score").rglob("*_score.json.zst"))
    heads = [json.loads(real_text(p).split("\n", 1)[0]) for p in scores]
    model = json.loads(real_text(scores[0]).split("\n")[1])["model_name"]
    doc = document(capsys, GLYPHH, "--bootstrap", "0")
    assert [s["system"] for ds in doc["datasets"] for s in ds["systems"]] == [model] * len(scores)
    for ds, head in zip(doc["datasets"], heads, strict=True):
        (s,) = ds["systems"]
        assert s["N"] == head["total_count"]
    verdicts = [c["verdict"] for c in doc["claims"]["claims"]]
    assert verdicts == ["reproduced"] * len(scores)
    counts = [(h["correct_count"], h["total_count"]) for h in heads]
    assert [Fraction(c["ours_exact"]) for c in doc["claims"]["claims"]] == [Fraction(c, n) for c, n in counts]


@pytest.mark.spec("BFCL-MODEL")
def test_bfcl_model_comes_from_the_score_file_not_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = BFCL_V4 / "deepseek-v3.1-terminus-FC"
    score = source / "BFCL_v4_multi_turn_base_score.json"
    named = json.loads(score.read_text().split("\n")[1])["model_name"]
    result = tmp_path / "result" / "result_deepseek_small" / "multi_turn"
    result.mkdir(parents=True)
    shutil.copy(source / "BFCL_v4_multi_turn_base_result.json", result)
    # without a score file: the folder's name, with a warning naming --model
    code, out, err = run(
        capsys, "score", result / "BFCL_v4_multi_turn_base_result.json", "--json", "--bootstrap", "0"
    )
    assert code == 0 and json.loads(out)["conditions"][0]["model"] == "result_deepseek_small"
    assert "the model 'result_deepseek_small' is the name of the file's folder" in err and "--model" in err
    code, out, err = run(
        capsys, "crosscheck", score, result / "BFCL_v4_multi_turn_base_result.json", "--quiet"
    )
    assert f"give --model {named}" in out
    # with BFCL's score/ beside result/: the score file's model_name
    (tmp_path / "score" / "result_deepseek_small" / "multi_turn").mkdir(parents=True)
    shutil.copy(score, tmp_path / "score" / "result_deepseek_small" / "multi_turn")
    code, out, err = run(
        capsys, "score", result / "BFCL_v4_multi_turn_base_result.json", "--json", "--bootstrap", "0"
    )
    assert code == 0 and json.loads(out)["conditions"][0]["model"] == named and "warning: " not in err
    doc = document(capsys, tmp_path, "--bootstrap", "0")
    assert doc["claims"]["claims"][0]["verdict"] == "reproduced"


# ------------------------------------------------------------------------------ task sets


@pytest.mark.spec("LB-FEW-TASKS", "LB-TASKS")
def test_few_shared_tasks_draw_compares_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # x has tasks a..e, y has c..g: 3 shared (fewer than 20)
    lines = []
    for model, tasks in (("x", "abcde"), ("y", "cdefg")):
        for t in tasks:
            record = {"dataset": "d", "model": model, "method": "m", "task_id": t, "trial": 0,
                      "outcome": {"T": 2, "fed": 3}, "success": t < "d"}  # fmt: skip
            lines.append(json.dumps(record))
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = document(capsys, path, "--bootstrap", "100", "--shared-tasks")
    (ds,) = doc["datasets"]
    assert ds["tasks"]["shared"] == 3 and "only 3 shared task(s), fewer than 20" in ds["tasks"]["warnings"][0]
    unpaired = document(capsys, path, "--bootstrap", "100")["datasets"][0]
    assert unpaired["tasks"]["paired"] is False and [s["tasks"] for s in unpaired["systems"]] == [5, 5]


# ------------------------------------------------------------------------------ bad input, API


@pytest.mark.spec("LB-FOLDER")
def test_a_folder_of_nothing_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    code, out, err = run(capsys, "leaderboard", tmp_path / "empty")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no submission.json, no submission folders" in err
    # a folder of ToolSandbox runs: the runs are named; a run folder itself is read as before
    runs = REAL.parent / "toolsandbox-real"
    code, out, err = run(capsys, "leaderboard", runs)
    assert code == 2 and out == "" and "is a folder of runs, not of submissions" in err
    one = sorted(p for p in runs.iterdir() if (p / "result_summary.json").is_file())[0]
    assert document(capsys, one, "--bootstrap", "0")["datasets"]


@pytest.mark.spec("LB-FOLDER")
@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a tau2 submission"),
        ('{"results": 3}', "results"),
    ],
)
def test_a_bad_submission_json_is_one_error_line_naming_it(
    text: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bad_org_2026-01-01"
    shutil.copytree(SUBMISSIONS / "claude-sonnet-4-5_aide-platform_2025-10-31", folder)
    (folder / "submission.json").write_text(text, encoding="utf-8")
    for command in ("leaderboard", "crosscheck"):
        code, out, err = run(capsys, command, tmp_path, "--bootstrap", "0")
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert str(folder / "submission.json") in err and why in err


@pytest.mark.spec("LB-FOLDER", "LB-SITE-HOOK")
def test_the_python_functions_take_folders() -> None:
    import prefixexec

    result = prefixexec.leaderboard(SUBMISSIONS, bootstrap=0)
    assert result.status == 0 and result.document["claims"]["summary"]["differs"] == 1
    assert [ds["dataset"] for ds in result.document["datasets"]] == ["tau-bench/airline", "tau-bench/retail"]
    checked = prefixexec.crosscheck(SUBMISSIONS)
    assert checked.status == 1 and len(checked.document["submissions"]) == 6
