"""`prefixexec crosscheck`: another tool's metrics next to ours (spec/conformance.md, XCHK-*)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from prefixexec.cli import main
from prefixexec.kernel import Outcome

from conftest import REPO
from strategies import records_of

DEMO = str(REPO / "examples" / "demo.jsonl")
REACT = ("demo", "example-model", "react")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def score(
    capsys: pytest.CaptureFixture[str], *extra: str, files: tuple[str, ...] = (DEMO,)
) -> dict[str, Any]:
    code, out, _ = run(["score", "--json", *extra, *files], capsys)
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    return doc


def write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def condition(doc: dict[str, Any], key: tuple[str, str, str]) -> dict[str, Any]:
    return next(c for c in doc["conditions"] if (c["dataset"], c["model"], c["method"]) == key)


def differing(out: str) -> dict[tuple[str, str], list[str]]:
    """(method, metric) -> notes of every differing value in a --json report."""
    doc = json.loads(out)
    found: dict[tuple[str, str], list[str]] = {}
    for c in doc["conditions"]:
        for v in c["values"]:
            if v["differs"]:
                found.setdefault((c["method"], v["metric"]), []).append(v["note"])
    return found


@pytest.mark.spec("XCHK-COMPARE", "OUT-SIGNATURE")
def test_our_own_report_agrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    theirs = write(tmp_path / "theirs.json", score(capsys, "--bootstrap", "0"))
    code, out, err = run(["crosscheck", theirs, DEMO], capsys)
    assert (code, err) == (0, "")
    assert "demo / example-model / react\n" in out
    assert "  PEC: 3 depths compared, all agree" in out
    assert "DIFF" not in out
    assert out.endswith(
        "2 of 2 conditions agree, 0 differ\nsignature: prefixexec:0.1.0|spec:1|adapter:records|boot:0\n"
    )


@pytest.mark.spec("XCHK-COMPARE")
def test_every_kind_of_difference_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = score(capsys, "--bootstrap", "0")
    react = condition(doc, REACT)
    dual = condition(doc, ("demo", "example-model", "dual-loop"))
    react["TER"] += 0.001  # a ratio beyond the default tolerance 1e-9
    react["exact"]["RR"] = "1/2"  # ours is 1/3 (demo, react: 1 of 3 eligible recovered)
    react["exact"]["TER"] = "2/8"  # equal to ours (1/4) as a rational: not a difference
    react["PEC"][1] = 0.5
    react["n_k"][0] = 5  # a count
    react["labels"]["dependency"] = 0
    react["decomposition"]["s"] = None  # ours is 1 (t1 executable and successful)
    react["labels"]["timeout"] = 1  # not one of our labels
    dual["PEC"].append(0.0)  # a depth beyond our longest horizon: PEC = 0 there, agrees
    dual["PEC_elig"] = dual["PEC_elig"][:-1]  # shorter than ours
    code, out, _ = run(["crosscheck", write(tmp_path / "t.json", doc), DEMO, "--json"], capsys)
    assert code == 1
    diffs = differing(out)
    assert set(diffs) == {
        ("react", "TER"),
        ("react", "exact.RR"),
        ("react", "PEC[k=2]"),
        ("react", "n_k[k=1]"),
        ("react", "labels.dependency"),
        ("react", "decomposition.s"),
        ("react", "labels.timeout"),
    }
    assert diffs[("react", "decomposition.s")] == ["undefined on one side only"]
    report = json.loads(out)
    assert report["differ"] == 2
    dual_report = next(c for c in report["conditions"] if c["method"] == "dual-loop")
    assert dual_report["length_notes"] == ["PEC_elig: 2 depths reported, ours has 3 (k = 1..max T)"]
    code, text, _ = run(["crosscheck", write(tmp_path / "t.json", doc), DEMO], capsys)
    assert code == 1
    assert "  PEC: 3 depths compared, 1 DIFF" in text and "  DIFF: PEC_elig: 2 depths reported" in text
    assert "TER " in text and "0.25 (1/4)" in text


@pytest.mark.spec("XCHK-COMPARE")
def test_tolerance_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = score(capsys, "--bootstrap", "0")
    condition(doc, REACT)["AUC_PEC"] += 1e-4
    theirs = write(tmp_path / "t.json", doc)
    assert run(["crosscheck", theirs, DEMO], capsys)[0] == 1
    assert run(["crosscheck", theirs, DEMO, "--tolerance", "0.001"], capsys)[0] == 0
    with pytest.raises(SystemExit) as info:
        main(["crosscheck", theirs, DEMO, "--tolerance", "-1"])
    assert info.value.code == 2 and "--tolerance: must be >= 0" in capsys.readouterr().err


CSV_HEADER = "Dataset,Model,Method,n,ter,Mean FED,auc,RR,RR-Eligible,Success\n"
MAP = [
    *("--map", "dataset=Dataset", "--map", "model=Model", "--map", "method=Method", "--map", "N=n"),
    *("--map", "TER=ter", "--map", "mean_FED=Mean FED", "--map", "AUC_PEC=auc"),
    *("--map", "RR_eligible=RR-Eligible", "--map", "success=Success"),
]


@pytest.mark.spec("XCHK-INPUT", "XCHK-COMPARE")
def test_csv_report_with_column_mapping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # demo by hand (test_cli_score): react TER 1/4, mean FED 7/4, AUC 3/8 = 0.375 (printed 0.38: the
    # window [0.375, 0.385] includes its end), RR 1/3, RR-Eligible 3, success 1/2; dual-loop TER
    # 3/4, mean FED 11/4, AUC 11/12, RR 0/1, success 3/4.
    rows = [
        'demo,example-model,react,4,0.25,1.75,0.38,0.33,3,"0.50 [0.25, 0.75]"\n',
        "demo,example-model,dual-loop,4,0.75,2.75,0.92,,1,75%\n",
    ]
    path = tmp_path / "theirs.csv"
    path.write_text(CSV_HEADER + "".join(rows), encoding="utf-8")
    code, out, err = run(["crosscheck", str(path), DEMO, *MAP], capsys)
    assert (code, err) == (0, ""), out
    auc_line = out.split("example-model / react")[1].splitlines()[4]
    assert auc_line.split() == ["AUC_PEC", "0.38", "0.375", "(3/8)", "0.005", "0.005"]
    code, out, _ = run(["crosscheck", str(path), DEMO, *MAP, "--tolerance", "0", "--json"], capsys)
    assert code == 1
    assert set(differing(out)) == {
        ("react", "AUC_PEC"),
        ("react", "RR"),
        ("dual-loop", "AUC_PEC"),
    }  # 0.75 = 75% exactly, 0.50 = 1/2 exactly: those agree even at tolerance 0
    path.write_text(
        CSV_HEADER + rows[0].replace(",0.38,", ",0.39,") + rows[1].replace(",,1,", ",n/a,1,"), "utf-8"
    )
    code, out, _ = run(["crosscheck", str(path), DEMO, *MAP, "--json"], capsys)
    assert code == 1
    diffs = differing(out)
    assert set(diffs) == {("react", "AUC_PEC"), ("dual-loop", "RR")}
    assert diffs[("dual-loop", "RR")] == ["undefined on one side only"]


@pytest.mark.spec("XCHK-ROLLOUTS")
def test_per_rollout_fed_and_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = score(capsys, "--bootstrap", "0")
    # demo, react, by hand: t1 (T 2, FED 3), t2 (T 3, FED 1, precondition), t3 (T 2, FED 2,
    # dependency), t4 (no-tool refused: T 1, FED 1, unlabelled).
    condition(doc, REACT)["rollouts"] = [
        {"task_id": "t1", "fed": 3, "T": 2, "label": None},
        {"task_id": "t2", "trial": 0, "fed": 1, "label": "precondition"},
        {"task_id": "t3", "fed": 2, "label": "information"},
        {"task_id": "t4", "fed": 2, "T": 1, "label": "unlabelled"},
        {"task_id": "t9", "fed": 1},
    ]
    code, out, _ = run(["crosscheck", write(tmp_path / "t.json", doc), DEMO], capsys)
    assert code == 1
    assert "  rollouts: 4 compared, 3 differ:" in out
    assert "    task t3 trial 0: label theirs information, ours dependency" in out
    assert "    task t4 trial 0: FED theirs 2, ours 1" in out
    assert "    task t9 trial 0: in theirs, not in our rollouts" in out
    # the same through --their-rollouts, with a mapped column; dual-loop t3 is (T 3, FED 3, schema)
    rollouts = tmp_path / "rollouts.csv"
    rollouts.write_text(
        "dataset,model,method,task_id,depth,label\n"
        "demo,example-model,dual-loop,t1,3,\n"
        "demo,example-model,dual-loop,t2,3,none\n"
        "demo,example-model,dual-loop,t3,3,schema\n"
        "demo,example-model,dual-loop,t4,2,\n",
        encoding="utf-8",
    )
    plain = write(tmp_path / "plain.json", score(capsys, "--bootstrap", "0"))
    args = ["crosscheck", plain, DEMO, "--their-rollouts", str(rollouts), "--map", "fed=depth"]
    code, out, _ = run(args, capsys)
    assert code == 0 and "  rollouts: 4 compared, 0 differ" in out
    rollouts.write_text(rollouts.read_text("utf-8").replace("t3,3,schema", "t3,2,dependency"), "utf-8")
    code, out, _ = run(args, capsys)
    assert (
        code == 1 and "    task t3 trial 0: FED theirs 2, ours 3; label theirs dependency, ours schema" in out
    )


@pytest.mark.spec("XCHK-COMPARE")
def test_conditions_on_one_side_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = score(capsys, "--bootstrap", "0")
    doc["conditions"] = [
        condition(doc, REACT),
        {"dataset": "demo", "model": "example-model", "method": "other"},
    ]
    code, out, _ = run(["crosscheck", write(tmp_path / "t.json", doc), DEMO], capsys)
    assert code == 1
    assert "demo / example-model / dual-loop: DIFF: in our rollouts, not in their report" in out
    assert "demo / example-model / other: DIFF: in their report, but no rollouts of this condition" in out
    assert out.count("DIFF") == 2


def _bigger_records(tmp_path: Path) -> str:
    rng = random.Random(7)  # a fixed input: 40 tasks, two methods
    records = []
    for method in ("a", "b"):
        items = []
        for _ in range(40):
            T = rng.randint(1, 6)
            fed = T + 1 if rng.random() < 0.5 else rng.randint(1, T)
            items.append((Outcome(T=T, fed=fed), rng.random() < 0.6))
        records += records_of(items, method=method)
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.mark.spec("XCHK-COMPARE", "OUT-CI")
def test_intervals_are_compared_when_ours_are_computed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _bigger_records(tmp_path)
    doc = score(capsys, "--bootstrap", "300", "--seed", "3", files=(data,))
    theirs = write(tmp_path / "t.json", doc)
    code, out, _ = run(["crosscheck", theirs, data, "--bootstrap", "300", "--seed", "3", "--json"], capsys)
    assert code == 0
    compared = [v["metric"] for c in json.loads(out)["conditions"] for v in c["values"]]
    assert "ci.TER.lo" in compared and "ci.RR_wilson.hi" in compared and "ci.PEC[k=2].hi" in compared
    assert json.loads(out)["signature"].endswith(
        "|boot:300|seed:3|level:0.95|ci:percentile|rr:wilson|paired:yes"
    )
    doc["conditions"][0]["ci"]["TER"][0] += 0.01
    theirs = write(tmp_path / "t.json", doc)
    code, out, _ = run(["crosscheck", theirs, data, "--bootstrap", "300", "--seed", "3", "--json"], capsys)
    assert code == 1 and set(differing(out)) == {("a", "ci.TER.lo")}
    code, out, _ = run(["crosscheck", theirs, data, "--json"], capsys)  # no intervals of ours: ci skipped
    assert code == 0 and not any(
        v["metric"].startswith("ci.") for c in json.loads(out)["conditions"] for v in c["values"]
    )


@pytest.mark.spec("XCHK-INPUT", "REC-ERRORS")
def test_bad_input_exits_2_naming_the_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = score(capsys, "--bootstrap", "0")
    badrollout = write(
        tmp_path / "r.json", {"conditions": [{**condition(doc, REACT), "rollouts": [{"task_id": "t1"}]}]}
    )
    condition(doc, REACT)["TER"] = "0.25"
    bad_value = write(tmp_path / "bad.json", doc)
    notjson = tmp_path / "x.json"
    notjson.write_text("{", encoding="utf-8")
    nocol = tmp_path / "t.csv"
    nocol.write_text("dataset,model,TER\nd,m,0.5\n", encoding="utf-8")
    cases = [
        ([bad_value, DEMO], f"{bad_value}: conditions[1].TER: expected a number or null"),
        ([str(notjson), DEMO], f"{notjson}: not valid JSON"),
        ([str(nocol), DEMO], f"{nocol}: no column for 'method'"),
        ([str(nocol), DEMO, "--map", "ter=TER"], "--map: unknown name 'ter'"),
        ([str(nocol), DEMO, "--map", "TER"], "--map: expected OURS=THEIRS"),
        ([str(tmp_path / "t.txt"), DEMO], "give --format json or csv"),
        ([badrollout, DEMO], "conditions[0].rollouts[0]: 'fed' must be a non-negative integer"),
        ([str(tmp_path / "missing.json"), DEMO], "missing.json: no such file"),
    ]
    for argv, message in cases:
        code, out, err = run(["crosscheck", *argv], capsys)
        assert (code, out) == (2, ""), argv
        assert message in err, (message, err)
