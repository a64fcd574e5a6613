"""One interface for every result, arguments as the command line takes them, --quiet, plurals
(spec: API-INTERFACE, API-ERRORS, PROGRESS-QUIET, LB-API; issue 36)."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest

import prefixexec
from prefixexec.cli import main

from conftest import REAL

AIRLINE = str(REAL / "tau-bench-v1" / "gpt-4o-airline.json")
SUBMISSION = str(REAL / "tau2-leaderboard" / "gpt-oss-120b_openai.submission.json")
RETAIL = str(REAL / "tau2-leaderboard" / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json.zst")
BFCL = REAL / "bfcl-v4" / "deepseek-v3.1-terminus-FC"
#: A tau-bench run with harness errors, and a tau2 run whose tool messages carry no error field.
HARNESS = str(REAL / "tau-bench-v1-retail" / "assertions-agent-none-0.1_range_0-100_6_18_2025.json.zst")
NOFLAG = str(REAL / "tau2-leaderboard" / "toolorchestra_airline_gpt-5_1trial.json.zst")


def _results() -> dict[str, Any]:
    return {
        "score": prefixexec.score(AIRLINE, bootstrap=100),
        "leaderboard": prefixexec.leaderboard(AIRLINE, bootstrap=100),
        "compare": prefixexec.compare("examples/demo.jsonl", baseline="react", bootstrap=100),
        "explain": prefixexec.explain(AIRLINE, task=20),
        "crosscheck tau2": prefixexec.crosscheck(SUBMISSION, [RETAIL]),
        "crosscheck bfcl": prefixexec.crosscheck(
            BFCL / "BFCL_v4_multi_turn_base_score.json", [str(BFCL / "BFCL_v4_multi_turn_base_result.json")]
        ),
        "report": prefixexec.report("examples/demo.jsonl", bootstrap=100),
    }


@pytest.mark.spec("API-INTERFACE", "API-DISPLAY")
def test_every_result_has_the_one_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import REPO

    monkeypatch.chdir(REPO)
    for name, result in _results().items():
        tables = result.tables()
        assert tables, name
        for table in tables:
            rows = result.rows(table)
            assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows), (name, table)
            assert result.to_pandas(table).shape[0] == len(rows), (name, table)
            assert result.to_polars(table).height == len(rows), (name, table)
        assert "<table" in result._repr_html_() or "<iframe" in result._repr_html_(), name
        assert repr(result) and " 1 rows" not in repr(result), name


@pytest.mark.spec("API-INTERFACE", "LB-API")
def test_leaderboard_rows_are_systems() -> None:
    board = prefixexec.leaderboard(AIRLINE, bootstrap=100)
    frame = board.to_pandas()
    # One system in this run: gpt-4o / tool-calling (tau-bench's file holds one model and agent).
    assert list(frame["system"]) == ["gpt-4o / tool-calling"] and frame.loc[0, "mean_FED_exact"] == "1201/200"
    assert "6.01 [" in board._repr_html_() and "{" not in frame.to_csv()  # no JSON blob in a cell


@pytest.mark.spec("API-INTERFACE")
def test_crosscheck_of_claims_files_has_tables() -> None:
    sub = prefixexec.crosscheck(SUBMISSION, [RETAIL])
    # The submission claims pass_1 for retail, airline and telecom (three entries in its results).
    assert sub.tables() == ("claims",) and len(sub.rows()) == 3 and "claims: 3 rows" in repr(sub)


@pytest.mark.spec("API-ERRORS")
def test_arguments_take_what_the_command_line_takes() -> None:
    by_number = prefixexec.explain(AIRLINE, task=20)
    assert by_number.document == prefixexec.explain(AIRLINE, task="20").document
    assert {r["task_id"] for r in by_number.rows()} == {"20"}
    with pytest.raises(prefixexec.InputError, match=r"^'task' must be a string, got list$") as caught:
        prefixexec.explain(AIRLINE, task=[20])
    assert isinstance(caught.value, TypeError) and caught.value.where == "task"
    with pytest.raises(prefixexec.InputError, match=r"'failing' is a flag"):
        prefixexec.explain(AIRLINE, failing="yes")


@pytest.mark.spec("API-INTERFACE", "API-DISPLAY")
def test_a_figure_shows_itself_without_matplotlib_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import REPO

    monkeypatch.chdir(REPO)
    fig = prefixexec.report("examples/demo.jsonl", bootstrap=0).figure("pec")
    assert fig._repr_png_().startswith(b"\x89PNG") and "data:image/png;base64," in fig._repr_html_()


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.spec("PROGRESS-QUIET")
def test_quiet_silences_every_notice_but_not_errors() -> None:
    for path, said in ((HARNESS, "harness error(s)"), (NOFLAG, "carry no 'error' field")):
        argv = ["score", "--adapter", "taubench", "--bootstrap", "0", "--json", path]
        code, loud_out, loud = _cli(argv)
        assert code == 0 and said in loud
        code, quiet_out, quiet = _cli([*argv, "--quiet"])
        assert code == 0 and quiet == "" and quiet_out == loud_out
    not_json = str(REAL / "tau-bench-v1-retail" / "SOURCE.md")
    code, _, err = _cli(["score", "--quiet", "--adapter", "taubench", not_json])
    assert code == 2 and err.startswith("prefixexec: error: ") and err.count("\n") == 1


@pytest.mark.spec("LB-OUTPUT")
def test_one_system_is_singular() -> None:
    code, text, _ = _cli(["leaderboard", "--quiet", "--bootstrap", "0", AIRLINE])
    # 200 rollouts of 50 tasks (tau-bench's airline split), one model and agent.
    assert code == 0 and "tau-bench/airline: 1 system on 50 tasks" in text and "1 systems" not in text


@pytest.mark.spec("API-PIPELINE")
def test_the_namespace_stays_in_the_command_line() -> None:
    from conftest import REPO

    for name in ("pipeline", "options", "scale", "ttyprogress", "engine", "api"):
        text = (REPO / "prefixexec" / f"{name}.py").read_text(encoding="utf-8")
        assert "args: argparse.Namespace" not in text and "args.quiet" not in text, name
    for name in ("pipeline", "options", "scale", "ttyprogress", "engine"):
        assert "import argparse" not in (REPO / "prefixexec" / f"{name}.py").read_text(encoding="utf-8"), name


@pytest.mark.spec("API-PIPELINE", "API-CONSISTENT")
def test_score_and_the_function_run_one_pipeline() -> None:
    from prefixexec.adapters import AdapterOptions
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.options import InputOptions, ScoreOptions
    from prefixexec.pipeline import render_score, score
    from prefixexec.signature import Signature

    argv = ["score", "--adapter", "taubench", "--bootstrap", "300", "--seed", "3", "--quiet", HARNESS]
    code, text, _ = _cli(argv)
    code_json, document, _ = _cli([*argv, "--json"])
    assert code == code_json == 0
    assert prefixexec.score(HARNESS, adapter="taubench", bootstrap=300, seed=3).to_json() == document
    options = ScoreOptions(
        input=InputOptions(adapter="taubench", files=[HARNESS], adapter_options=AdapterOptions()),
        bootstrap=BootstrapSettings(B=300, seed=3),
        signature=Signature(
            adapter="taubench", bootstrap=300, seed=3, adapter_options=(("harness-errors", "benchmark"),)
        ),
    )
    scored = score(options)
    assert render_score(scored, as_json=True) == document and render_score(scored, as_json=False) == text
