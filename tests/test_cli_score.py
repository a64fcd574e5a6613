"""The record format and the `score` command: output contract, determinism, bad input."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixexec.cli import main
from prefixexec.scoring import condition_json

from conftest import REPO
from strategies import records_of, triples

EXAMPLE = REPO / "examples" / "demo.jsonl"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


BASE: dict[str, Any] = {"dataset": "d", "task_id": "t1", "model": "m", "method": "react", "success": True}


@pytest.mark.spec("OUT-JSON", "CONV-EXACT", "REC-FORMAT")
def test_json_shape_and_exact_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["score", "--json", str(EXAMPLE)], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert set(doc) == {"signature", "conditions"}
    required = {
        "dataset", "model", "method", "N", "TER", "AUC_PEC", "mean_FED", "success", "RR",
        "RR_eligible", "PEC", "PEC_elig", "n_k", "labels", "decomposition", "exact",
    }  # fmt: skip
    for cond in doc["conditions"]:
        assert required <= set(cond)
        assert set(cond["decomposition"]) >= {"q", "s", "r"}
        assert len(cond["PEC"]) == len(cond["PEC_elig"]) == len(cond["n_k"])
    react = next(c for c in doc["conditions"] if c["method"] == "react")
    # examples/demo.jsonl, react, by hand: t1 (T2, FED3, Y1), t2 (T3, FED1, Y1, precondition),
    # t3 (T2, FED2, Y0, labels information+dependency -> dependency), t4 no-tool refused (T1, FED1, Y0).
    assert react["exact"]["TER"] == "1/4"
    assert react["exact"]["AUC_PEC"] == "3/8"  # ((3-1)/2 + 0/3 + (2-1)/2 + 0/1) / 4
    assert react["exact"]["mean_FED"] == "7/4"
    assert (react["RR_eligible"], react["exact"]["RR"]) == (3, "1/3")
    assert react["labels"]["dependency"] == 1 and react["labels"]["precondition"] == 1
    assert react["labels"]["unlabelled"] == 1
    assert react["n_k"] == [4, 3, 1]
    assert react["TER"] == 0.25


@pytest.mark.spec("OUT-JSON", "CONV-PEC-RANGE")
def test_conditions_sorted_and_curves_cover_max_T(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["score", "--json", str(EXAMPLE)], capsys)
    conds = json.loads(out)["conditions"]
    keys = [(c["dataset"], c["model"], c["method"]) for c in conds]
    assert keys == sorted(keys) and len(keys) == 2
    assert [len(c["PEC"]) for c in conds] == [3, 3]


@pytest.mark.spec("OUT-TABLE", "OUT-SIGNATURE")
def test_readable_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["score", "--bootstrap", "0", str(EXAMPLE)], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "demo / example-model"
    assert lines[1].split() == ["method", "N", "TER", "mean", "FED", "AUC-PEC", "RR-elig", "RR", "success"]
    react = next(line for line in lines if line.startswith("react"))
    assert react.split() == ["react", "4", "0.25", "1.75", "0.38", "3", "0.33", "0.50"]
    assert lines[-1].startswith("signature: prefixexec:0.1.0|spec:1|adapter:records")


@pytest.mark.spec("OUT-SIGNATURE")
def test_signature_pins_version_spec_and_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["score", "--json", str(EXAMPLE)], capsys)
    from prefixexec import __version__
    from prefixexec.signature import SPEC_VERSION

    sig = json.loads(out)["signature"].split("|")
    assert sig[:3] == [f"prefixexec:{__version__}", f"spec:{SPEC_VERSION}", "adapter:records"]


@pytest.mark.spec("INV-PERM", "OUT-JSON", "REC-UNIQUE")
@settings(max_examples=25)
@given(
    items=st.lists(triples(), min_size=1, max_size=30),
    rnd=st.randoms(use_true_random=False),
    parts=st.integers(1, 4),
)
def test_byte_identical_for_any_order_and_split(
    items: list[Any], rnd: random.Random, parts: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    records = records_of(items) + records_of(items, method="dual-loop")
    tmp = tmp_path_factory.mktemp("split")
    whole = write_jsonl(tmp / "whole.jsonl", records)
    shuffled = records[:]
    rnd.shuffle(shuffled)
    files = [write_jsonl(tmp / f"part{i}.jsonl", shuffled[i::parts]) for i in range(parts)]
    rnd.shuffle(files)
    out_a, out_b = tmp / "a.json", tmp / "b.json"
    assert main(["score", "--json", "--output", str(out_a), str(whole)]) == 0
    assert main(["score", "--json", "--output", str(out_b), *map(str, files)]) == 0
    assert out_a.read_bytes() == out_b.read_bytes()


@pytest.mark.spec("REC-OUTCOME", "REC-FORMAT")
def test_actions_and_outcome_forms_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    actions = [
        {"tool": "a", "executable": True},
        {"tool": "b", "arguments": {"x": 1}, "executable": False, "label": ["information", "schema"]},
        {"tool": "c", "executable": False, "label": "dependency"},
    ]
    a = write_jsonl(tmp_path / "a.jsonl", [{**BASE, "actions": actions}])
    b = write_jsonl(tmp_path / "b.jsonl", [{**BASE, "outcome": {"T": 3, "fed": 2, "label": "schema"}}])
    _, out_a, _ = run(["score", "--json", str(a)], capsys)
    _, out_b, _ = run(["score", "--json", str(b)], capsys)
    assert json.loads(out_a) == json.loads(out_b)
    assert json.loads(out_a)["conditions"][0]["labels"]["schema"] == 1


@pytest.mark.spec("CONV-NOTOOL", "REC-FORMAT")
def test_no_tool_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = [
        {**BASE, "task_id": "a", "actions": [], "no_tool_allowed": True},
        {**BASE, "task_id": "b", "actions": []},
    ]
    _, out, _ = run(["score", "--json", str(write_jsonl(tmp_path / "n.jsonl", recs))], capsys)
    cond = json.loads(out)["conditions"][0]
    # a: T=1, FED=2 (allowed); b: T=1, FED=1 (tools required, unlabelled).
    assert (cond["exact"]["TER"], cond["exact"]["mean_FED"], cond["labels"]["unlabelled"]) == (
        "1/2",
        "3/2",
        1,
    )


BAD_LINES: list[tuple[str, str]] = [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({**BASE, "outcome": {"T": 2, "fed": 1}, "actions": []}), "not both"),
    (json.dumps(BASE), "missing field"),
    (json.dumps({k: v for k, v in BASE.items() if k != "model"} | {"actions": []}), "'model' is a required"),
    (json.dumps({**BASE, "success": "yes", "actions": []}), "at success: 'yes' is not of type 'boolean'"),
    (json.dumps({**BASE, "trial": 1.5, "actions": []}), "at trial"),
    (json.dumps({**BASE, "sucess": True, "actions": []}), "'sucess' was unexpected"),
    (json.dumps({**BASE, "outcome": {"T": 2, "fed": 4}}), "outcome.fed must be in [1, T+1] = [1, 3]: 4"),
    (json.dumps({**BASE, "outcome": {"T": 0, "fed": 1}}), "at outcome.T"),
    (json.dumps({**BASE, "outcome": {"T": 2, "fed": 3, "label": "schema"}}), "fully executable"),
    (json.dumps({**BASE, "outcome": {"T": 2, "fed": 1, "label": "typo"}}), "at outcome.label"),
    (
        json.dumps({**BASE, "actions": [{"tool": "a", "executable": True, "label": "schema"}]}),
        "actions[0]: label/reason given for an executable action",
    ),
    (json.dumps({**BASE, "actions": [{"tool": "a"}]}), "'executable' is a required property"),
    ('{"dataset": "d", "dataset": "e"}', "key 'dataset' appears twice"),
    (json.dumps({**BASE, "actions": []}).replace("true", "NaN"), "NaN is not valid JSON"),
]


@pytest.mark.spec("REC-ERRORS")
@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_bad_record_exits_2_with_file_line_and_no_output(
    line: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.dumps({**BASE, "task_id": "ok", "actions": []})
    path = tmp_path / "in.jsonl"
    path.write_text(good + "\n\n" + line + "\n", encoding="utf-8")
    out_path = tmp_path / "out.json"
    code, out, err = run(["score", "--json", "--output", str(out_path), str(path)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"prefixexec: error: {path}:3: ")
    assert message in err
    assert not out_path.exists()
    assert "Traceback" not in err


@pytest.mark.spec("REC-UNIQUE", "REC-ERRORS")
def test_duplicate_rollout_key_across_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [{**BASE, "actions": []}])
    b = write_jsonl(tmp_path / "b.jsonl", [{**BASE, "task_id": "t2", "actions": []}, {**BASE, "actions": []}])
    code, out, err = run(["score", str(a), str(b)], capsys)
    assert code == 2 and out == ""
    assert f"{b}:2: repeats the key" in err and f"first seen at {a}:1" in err


@pytest.mark.spec("REC-ERRORS")
@pytest.mark.parametrize("content", ["", "\n\n"])
def test_empty_input_is_an_error(content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content, encoding="utf-8")
    code, _, err = run(["score", str(path)], capsys)
    assert code == 2 and "no records found" in err


@pytest.mark.spec("REC-ERRORS")
def test_missing_file_and_bad_output_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["score", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and "nope.jsonl: no such file" in err
    code, _, err = run(["score", "--output", str(tmp_path / "no" / "dir.json"), str(EXAMPLE)], capsys)
    assert code == 2 and "does not exist" in err


@pytest.mark.spec("REC-FORMAT")
def test_stdin_and_console_entry_points(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    via_module = subprocess.run(
        [sys.executable, "-m", "prefixexec", "score", "--json", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    via_file = subprocess.run(
        [sys.executable, "-m", "prefixexec", "score", "--json", str(EXAMPLE)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert via_module.stdout == via_file.stdout


@pytest.mark.spec("REC-FORMAT")
def test_schema_file_in_spec_is_the_shipped_one() -> None:
    from prefixexec.adapters.records import record_schema

    spec_schema = json.loads((REPO / "spec" / "record.schema.json").read_text(encoding="utf-8"))
    assert spec_schema == record_schema()


@pytest.mark.spec("OUT-JSON")
def test_condition_json_has_no_float_only_values() -> None:
    # Every float metric at the top level of a condition has an exact twin under `exact`.
    from prefixexec.kernel import ConditionKey, Outcome, compute_metrics

    from strategies import cohort_of

    m = compute_metrics(cohort_of([(Outcome(2, 1), True), (Outcome(1, 2), False)]))
    cond = condition_json(ConditionKey("d", "m", "x"), m)
    floats = {k for k, v in cond.items() if isinstance(v, float)}
    assert floats <= set(cond["exact"])


TOOLSANDBOX_RUN = (
    REPO
    / "tests"
    / "data"
    / "toolsandbox"
    / "agent_gpt-4o-2024-05-13_user_gpt-4o-2024-05-13_12_02_2026_10_00_00"
)


@pytest.mark.spec("OUT-SIGNATURE")
def test_signature_pins_adapter_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib
    import importlib.metadata

    assert main(["score", "--json", "--bootstrap", "0", "--adapter", "toolsandbox", "--threshold", "0.5",
                 str(TOOLSANDBOX_RUN)]) == 0  # fmt: skip
    assert (
        json.loads(capsys.readouterr().out)["signature"].split("|")[2]
        == "adapter:toolsandbox[threshold=0.5,harness-errors=failure]"  # HARNESS-SIGNATURE: the default
    )
    chat = REPO / "tests" / "data" / "chat" / "transcripts.jsonl"
    assert (
        main(
            [
                "score",
                "--json",
                "--bootstrap",
                "0",
                "--adapter",
                "chat",
                "--error-pattern",
                "^Err|x",
                str(chat),
            ]
        )
        == 0
    )
    digest = hashlib.sha256(b"^Err|x").hexdigest()[:12]
    sig = json.loads(capsys.readouterr().out)["signature"]
    assert f"adapter:chat[error-pattern=sha256:{digest},harness-errors=failure]" in sig.split("|")
    version = importlib.metadata.version("bfcl-eval")
    from prefixexec.cli import build_parser, signature_of

    args = build_parser().parse_args(["score", "--adapter", "bfcl", "--category", "multi_turn_base", "f"])
    assert (
        str(signature_of(args)).split("|")[2]
        == f"adapter:bfcl[bfcl-eval={version},category=multi_turn_base,harness-errors=failure]"
    )
    args = build_parser().parse_args(["score", "--adapter", "bfcl", "--inference-errors", "exclude", "f"])
    expected = f"adapter:bfcl[bfcl-eval={version},harness-errors=exclude]"
    assert str(signature_of(args)).split("|")[2] == expected


@pytest.mark.spec("OUT-SIGNATURE", "REC-ERRORS")
def test_by_category_only_for_toolsandbox(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["score", "--json", "--bootstrap", "0", "--by", "category", str(EXAMPLE)], capsys)
    assert code == 2 and out == "" and "--by: only the toolsandbox adapter splits by category" in err
    code, out, _ = run(
        [
            "score",
            "--json",
            "--bootstrap",
            "0",
            "--adapter",
            "toolsandbox",
            "--by",
            "category",
            str(TOOLSANDBOX_RUN),
        ],
        capsys,
    )
    doc = json.loads(out)
    assert code == 0
    assert doc["signature"].split("|")[2] == "adapter:toolsandbox[by=category,harness-errors=failure]"
    datasets = {c["dataset"] for c in doc["conditions"]}
    assert len(datasets) > 1 and all(d.startswith("toolsandbox/") for d in datasets)


@pytest.mark.spec("REC-ERRORS")
def test_output_file_has_the_usual_mode(tmp_path: Path) -> None:
    import os

    umask = os.umask(0o022)
    try:
        target = tmp_path / "out.json"
        assert main(["score", "--json", "--bootstrap", "0", "--output", str(target), str(EXAMPLE)]) == 0
        assert target.stat().st_mode & 0o777 == 0o644
        table = tmp_path / "out.parquet"  # convert writes through the same atomic writer
        assert main(["convert", str(EXAMPLE), "--output", str(table)]) == 0
        assert table.stat().st_mode & 0o777 == 0o644
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "out.parquet"]  # no temporaries
    finally:
        os.umask(umask)
