"""One Python function per command, with the command's options and its --json result
(spec: API-COMMANDS, API-RESULT, API-REPORT, API-DISPLAY, API-ERRORS, API-SOURCES; issue 30)."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib.figure
import pandas as pd
import polars as pl
import pytest

import prefixexec
from prefixexec import calls
from prefixexec.adapters.errors import InputError
from prefixexec.cli import main

from conftest import REAL, REPO

DEMO = str(REPO / "examples" / "demo.jsonl")
TAU = str(REAL / "tau-bench-v1" / "gpt-4o-airline.json")
TABLE2 = str(REPO / "tests" / "data" / "paper_table2.csv")
#: Our own scorer as another implementation (scored in this process, CONF-RUN).
SCORER = f"{sys.executable} -m prefixexec score --json --bootstrap 0 -"


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main([*argv, "--quiet"])
    return status, capsys.readouterr().out


@pytest.mark.spec("API-COMMANDS", "API-RESULT")
@pytest.mark.parametrize(
    ("function", "args", "kwargs", "argv"),
    [
        ("compare", [DEMO], {"baseline": "react", "bootstrap": 300, "seed": 3},
         ["compare", DEMO, "--baseline", "react", "--bootstrap", "300", "--seed", "3"]),
        ("explain", [TAU], {"task": "20", "failing": True}, ["explain", TAU, "--task", "20", "--failing"]),
        ("audit", ["records", [DEMO]], {"seed": 2}, ["audit", "--adapter", "records", DEMO, "--seed", "2"]),
        ("audit_table", [TABLE2], {}, ["audit-table", TABLE2]),
        ("sample", [TAU], {"per_category": 5}, ["sample", TAU, "--per-category", "5"]),
        ("sample", [], {"benchmark": "bfcl", "size": 12}, ["sample", "--benchmark", "bfcl", "--size", "12"]),
        ("leaderboard", [DEMO], {"bootstrap": 200, "metric": ["TER", "RR"]},
         ["leaderboard", DEMO, "--bootstrap", "200", "--metric", "TER", "--metric", "RR"]),
        ("conformance", [SCORER], {"only": "edge-*"},
         ["conformance", "--command", SCORER, "--only", "edge-*"]),
    ],
)  # fmt: skip
def test_each_function_gives_the_commands_json(
    function: str,
    args: list[Any],
    kwargs: dict[str, Any],
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = getattr(prefixexec, function)(*args, **kwargs)
    status, out = cli([*argv, "--json"], capsys)
    assert isinstance(result, prefixexec.Result)
    assert result.to_json() == out and result.status == status
    assert result.rows() and result._repr_html_().startswith("<p><b>prefixexec ")


@pytest.mark.spec("API-COMMANDS", "API-RESULT", "CONVERT-JSON")
def test_crosscheck_and_convert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    theirs = tmp_path / "theirs.json"
    theirs.write_text(
        prefixexec.score(DEMO, bootstrap=0).to_json().replace('"N": 4', '"N": 5', 1), encoding="utf-8"
    )
    result = prefixexec.crosscheck(theirs, DEMO)
    status, out = cli(["crosscheck", str(theirs), DEMO, "--json"], capsys)
    assert result.to_json() == out and result.status == status == 1 and not result.ok  # N differs
    differing = [r for r in result.rows("values") if r["differs"]]
    assert [(r["metric"], r["theirs"], r["ours"]) for r in differing] == [("N", "5", 4)]
    converted = prefixexec.convert(DEMO, tmp_path / "o.csv")
    assert converted.document == {
        "output": str(tmp_path / "o.csv"),
        "format": "csv",
        "rollouts": 8,
    }  # 8 lines
    status, out = cli(["convert", DEMO, "--output", str(tmp_path / "p.csv"), "--json"], capsys)
    assert (
        json.loads(out)["rollouts"] == 8
        and (tmp_path / "o.csv").read_bytes() == (tmp_path / "p.csv").read_bytes()
    )


@pytest.mark.spec("API-COMMANDS")
def test_keywords_are_the_commands_options_checked_by_its_parser() -> None:
    assert "error_pattern" in prefixexec.command_options("compare")
    assert "json" not in prefixexec.command_options("compare")  # always on
    with pytest.raises(TypeError, match=r"compare\(\) got unknown option\(s\) bootstraps; its options: "):
        prefixexec.compare(DEMO, baseline="react", bootstraps=3)
    with pytest.raises(ValueError, match=r"'bootstrap': must be >= 0: -1"):
        prefixexec.compare(DEMO, baseline="react", bootstrap=-1)
    with pytest.raises(ValueError, match=r"'adapter' must be one of "):
        prefixexec.explain(DEMO, adapter="nope")
    with pytest.raises(TypeError, match=r"'failing' is a flag: True or False"):
        prefixexec.explain(DEMO, failing="yes")
    with pytest.raises(TypeError, match=r"conformance\(\) needs the option command|missing 1 required"):
        prefixexec.conformance()  # type: ignore[call-arg]  # the mistake under test


@pytest.mark.spec("API-ERRORS")
def test_bad_input_is_a_value_error_naming_the_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"dataset": "d"}\n', encoding="utf-8")
    assert issubclass(InputError, ValueError) and prefixexec.InputError is InputError
    with pytest.raises(ValueError, match=rf"^{bad}:1: "):
        prefixexec.explain(bad)
    with pytest.raises(InputError, match="no rollout matches"):
        prefixexec.compare(DEMO, baseline="react", select=["method=nope"])


@pytest.mark.spec("API-SOURCES", "API-COMMANDS")
def test_data_frames_and_record_dicts_are_inputs_of_every_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "demo.csv"
    prefixexec.convert(DEMO, table)
    frame = pd.read_csv(table)
    frame["success"] = frame["success"].astype(int)  # 0/1, as many frames hold it
    want = prefixexec.compare(DEMO, baseline="react", bootstrap=200).document["comparisons"]
    for source in (frame, pl.from_pandas(frame), frame.to_dict("records")):
        got = prefixexec.compare(source, baseline="react", bootstrap=200).document["comparisons"]
        assert got == want
    assert len(prefixexec.explain(frame, failing=True).rows()) == 4  # 4 of the 8 demo rollouts fail
    with pytest.raises(TypeError, match="read as records"):
        prefixexec.explain(frame, adapter="chat")


@pytest.mark.spec("API-REPORT", "API-DISPLAY")
def test_report_in_memory_is_the_folder_the_command_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = cli(["report", DEMO, "--out", str(tmp_path / "cli"), "--bootstrap", "200"], capsys)
    assert status == 0
    report = prefixexec.report(DEMO, bootstrap=200, out=tmp_path / "api")
    assert report.folder == str(tmp_path / "api")
    for name, data in report.files.items():
        assert (tmp_path / "cli" / name).read_bytes() == data == (tmp_path / "api" / name).read_bytes(), name
    assert report.summary["conditions"][0]["method"] == "dual-loop"
    for name in ("pec", "pec_elig", "labels"):
        assert isinstance(report.figure(name), matplotlib.figure.Figure)
    shown = report._repr_html_()  # the report's own page, in a frame
    assert shown.startswith('<iframe title="prefixexec report" srcdoc="') and "<script" not in shown
    assert (
        html.unescape(shown.split('srcdoc="', 1)[1].split('" style=', 1)[0])
        == report.files["report.html"].decode()
    )
    in_memory = prefixexec.report(DEMO, bootstrap=0, rollouts=tmp_path / "rows.jsonl")
    assert in_memory.folder is None and len((tmp_path / "rows.jsonl").read_text().splitlines()) == 8
    with pytest.raises(ValueError, match="'panel' must be one of 'dataset', 'model'"):
        prefixexec.report(DEMO, panel="method")
    assert list(report.to_pandas()["method"]) == ["dual-loop", "react"]


@pytest.mark.spec("API-COMMANDS")
def test_module_names_are_callable_as_their_commands() -> None:
    import prefixexec.explain as module  # the module of the same name, imported first

    assert callable(module) and module.explanation is not None  # still the module
    assert prefixexec.explain(DEMO).to_json() == calls.explain(DEMO).to_json()
    for name in ("audit_table", "conformance", "crosscheck", "demo", "explain", "report"):
        assert callable(getattr(prefixexec, name)), name


@pytest.mark.spec("API-TABLES", "API-SCORE")
def test_scores_tables_agree_with_their_docs() -> None:
    # Issue 30: to_pandas("rollouts") raised ValueError and c.ci["RR"] a KeyError.
    scores = prefixexec.score(TAU, bootstrap=300)
    (c,) = scores.conditions
    assert c.ci["RR"] == c.ci["RR_wilson"] is not None and c.ci["RR_bootstrap"] is not None
    rollouts = scores.to_pandas("rollouts")
    assert len(rollouts) == 200 and {"failing.tool", "failing.position", "label", "source"} <= set(
        rollouts.columns
    )
    assert int((~rollouts["executable"]).sum()) == c.RR_eligible == 52  # 52 non-executable rollouts (README)
    assert scores.to_polars("rollouts").height == 200
    # OUT-REJECTIONS: one column of JSON text; the first rejected call of each rollout is a_FED
    listed = [json.loads(text) for text in rollouts["rejections"]]
    assert [bool(r) for r in listed] == list(~rollouts["executable"])
    assert all(r[0]["position"] == fed for r, fed in zip(listed, rollouts["fed"], strict=True) if r)
    html = scores._repr_html_()
    assert "0.74 [0.64, 0.83]" in html and scores.signature in html
