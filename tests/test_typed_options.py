"""Typed options at the command line's boundary, and one formatting path into the notebook's
HTML (spec: API-PIPELINE, API-CONSISTENT, API-DISPLAY; issue 36)."""

from __future__ import annotations

import ast
import contextlib
import html
import io
import json
import re
from fractions import Fraction
from pathlib import Path

import attrs
import pytest

import prefixexec
from prefixexec.cli import _plugin_commands, main

from conftest import REAL, REPO

#: Commands still on the ``run(args: argparse.Namespace)`` protocol: none since issue 36's
#: leaderboard and crosscheck part. The test fails once one of them no longer needs the
#: exception, so that the list only shrinks.
NOT_YET_TYPED: frozenset[str] = frozenset()


def _namespace_uses(path: Path) -> list[str]:
    """Where a module names ``Namespace`` (``argparse.Namespace``, or imported by name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "Namespace":
            found.append(f"line {node.lineno}")
        elif isinstance(node, ast.Name) and node.id == "Namespace":
            found.append(f"line {node.lineno}")
        elif isinstance(node, ast.ImportFrom) and any(a.name == "Namespace" for a in node.names):
            found.append(f"line {node.lineno}")
    return found


@pytest.mark.spec("API-PIPELINE")
def test_no_module_but_the_command_line_takes_a_namespace() -> None:
    sources = [p for folder in ("prefixexec", "adapters", "kernel") for p in (REPO / folder).rglob("*.py")]
    assert len(sources) > 50  # the three source folders were found
    offenders = {}
    for path in sources:
        name = path.relative_to(REPO).as_posix()
        uses = _namespace_uses(path)
        if name == "prefixexec/cli.py":
            assert uses, "cli.py is where the Namespace lives: this scan would find it"
        elif name in NOT_YET_TYPED:
            assert uses, f"{name} no longer takes a Namespace: remove it from NOT_YET_TYPED"
        elif uses:
            offenders[name] = uses
    assert offenders == {}


#: A short command line of each converted command (nothing is run: only parsed and typed).
ARGV = {
    "audit": ["audit", "--adapter", "records"],
    "audit-table": ["audit-table", "table.csv"],
    "conformance": ["conformance", "--command", "prefixexec score --json -"],
    "convert": ["convert", "in.jsonl", "--output", "out.csv"],
    "crosscheck": ["crosscheck", "theirs.csv", "in.jsonl", "--map", "TER=ter", "--tolerance", "1/1000"],
    "demo": ["demo", "--out", "folder"],
    "explain": ["explain", "in.jsonl", "--task", "20"],
    "guard": ["guard", "--", "server"],
    "leaderboard": ["leaderboard", "runs", "--by", "model", "--metric", "TER,RR", "--k", "2"],
    "report": ["report", "in.jsonl", "--out", "folder"],
    "sample": ["sample", "in.jsonl", "--size", "1"],
}


@pytest.mark.spec("API-PIPELINE")
def test_every_converted_command_runs_on_frozen_typed_options() -> None:
    import inspect

    from prefixexec.cli import build_parser, typed
    from prefixexec.options import AdapterArguments

    modules = {
        m.NAME: m
        for m in _plugin_commands()
        if f"prefixexec/commands/{m.__name__.rsplit('.', 1)[1]}.py" not in NOT_YET_TYPED
    }
    assert set(modules) == set(ARGV)
    for name, module in modules.items():
        parameters = list(inspect.signature(module.run).parameters.values())
        assert [p.annotation for p in parameters] == ["Options"], name
        options = typed(module.Options, build_parser(name).parse_args(ARGV[name]))  # type: ignore[attr-defined]
        assert attrs.has(type(options)), name
        first = attrs.fields(type(options))[0].name
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(options, first, None)
        arguments = getattr(options, "arguments", None)
        assert arguments is None or isinstance(arguments, AdapterArguments), name
    assert typed(modules["explain"].Options, build_parser("explain").parse_args(ARGV["explain"])).task == "20"  # type: ignore[attr-defined]
    board = typed(modules["leaderboard"].Options, build_parser("leaderboard").parse_args(ARGV["leaderboard"]))  # type: ignore[attr-defined]
    assert (board.arguments.files, board.arguments.by) == (("runs",), "model")
    assert (board.metric, board.k) == (("TER", "RR"), 2)
    check = typed(modules["crosscheck"].Options, build_parser("crosscheck").parse_args(ARGV["crosscheck"]))  # type: ignore[attr-defined]
    assert (check.theirs, check.arguments.files, check.map) == ("theirs.csv", ("in.jsonl",), ("TER=ter",))
    assert check.tolerance == Fraction(1, 1000) and check.resampling.bootstrap == 0  # crosscheck's default


@pytest.mark.spec("API-PIPELINE", "LB-FOLDER", "CLAIM-MANY")
def test_submission_folders_are_resolved_from_the_typed_options_without_changing_them() -> None:
    from prefixexec.cli import build_parser, typed
    from prefixexec.commands import crosscheck, leaderboard

    folder = str(REAL / "tau2-submissions")
    argv = ["leaderboard", folder, "--by", "model", "--bootstrap", "0", "--quiet"]
    given = typed(leaderboard.Options, build_parser("leaderboard").parse_args(argv))
    run = leaderboard.run_options(given)
    # The folder holds six submission folders (ls tests/data/real/tau2-submissions), each one
    # submission; their trajectories are tau2 results files, detected as taubench.
    assert run.submissions is not None and len(run.submissions) == 6
    assert run.input.adapter == "taubench" and run.ranking.by == "model"
    assert run.input.adapter_options.by is None  # --by model names a system, not a ToolSandbox split
    assert (given.arguments.adapter, given.arguments.by) == ("auto", "model")
    assert given.arguments.files == (folder,)
    argv = ["crosscheck", folder, "--quiet"]
    given = typed(crosscheck.Options, build_parser("crosscheck").parse_args(argv))
    checked = crosscheck.run_options(given)
    assert checked.mode == "submissions" and len(checked.submissions) == 6
    assert set(checked.input.files) == {f for s in checked.submissions for f in s.files}
    assert checked.input.files and checked.input.adapter == "taubench"
    assert (given.arguments.adapter, given.arguments.files) == ("auto", ())


def _cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


def _html_rows(page: str) -> list[list[str]]:
    """The body rows of every table in an HTML fragment, each cell's text unescaped."""
    rows = re.findall(r"<tr>(.*?)</tr>", page)
    return [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", r)] for r in rows if "<td>" in r]


@pytest.mark.spec("API-CONSISTENT", "API-DISPLAY")
def test_compare_in_a_notebook_prints_the_cells_the_command_prints() -> None:
    from prefixexec.numbers import signed

    argv = ["compare", "examples/demo.jsonl", "--baseline", "react", "--bootstrap", "300", "--quiet"]
    with contextlib.chdir(REPO):
        code, text = _cli(argv)
        result = prefixexec.compare("examples/demo.jsonl", baseline="react", bootstrap=300)
    assert code == 0 and result.status == 0
    # The command's table rows: cells separated by two or more spaces (OUT-TABLE's layout).
    printed = [re.split(r" {2,}", line.strip()) for line in text.splitlines()]
    shown = _html_rows(result._repr_html_())
    assert shown  # the comparisons and the McNemar block
    for row in shown:
        assert row in printed, row
    # The differences, as printed: the exact difference with its sign, 3 decimals (REP-ROUND).
    for comparison in result["comparisons"]:
        for name, exact in comparison["exact"].items():
            if exact is not None and name in ("TER", "AUC_PEC"):
                cell = signed(exact)
                assert any(c.startswith(cell + " ") or c == cell for r in shown for c in r), (name, cell)


@pytest.mark.spec("API-CONSISTENT", "API-DISPLAY")
def test_a_results_html_prints_each_float_as_its_json_document_does() -> None:
    bfcl = REAL / "bfcl-v4" / "deepseek-v3.1-terminus-FC"
    results = {
        "crosscheck tau2": prefixexec.crosscheck(
            REAL / "tau2-leaderboard" / "gpt-oss-120b_openai.submission.json",
            [str(REAL / "tau2-leaderboard" / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json.zst")],
        ),
        "crosscheck bfcl": prefixexec.crosscheck(
            bfcl / "BFCL_v4_multi_turn_base_score.json", [str(bfcl / "BFCL_v4_multi_turn_base_result.json")]
        ),
        "audit-table": prefixexec.audit_table(REPO / "tests" / "data" / "paper_table2.csv"),
        "explain": prefixexec.explain(REAL / "tau-bench-v1" / "gpt-4o-airline.json", task=20),
    }
    floats_seen: list[float] = []
    for name, result in results.items():
        rows = result.rows()[:50]
        columns = list(dict.fromkeys(k for r in rows for k in r))
        shown = _html_rows(result._repr_html_())
        assert len(shown) == len(rows), name
        document_text = result.to_json()
        for row, cells in zip(rows, shown, strict=True):
            for column, cell in zip(columns, cells, strict=True):
                value = row.get(column)
                if isinstance(value, float):
                    assert cell == json.dumps(value), (name, column, cell, value)
                    assert cell in document_text, (name, column, cell)  # the characters of --json
                    floats_seen.append(value)
    # Values that 4 significant digits would have shown otherwise (the old `.4g` cells).
    assert any(f"{v:.4g}" != json.dumps(v) for v in floats_seen), floats_seen


def test_html_rows_reads_a_table() -> None:
    from prefixexec.notebook import html_table

    page = html_table([{"a": 1, "b": "<x>"}, {"a": 2.5, "b": None}])
    assert _html_rows(page) == [["1", "<x>"], ["2.5", ""]]
    assert _html_rows("<p>no table</p>") == []


@pytest.mark.spec("API-SOURCES", "API-PIPELINE")
def test_convert_takes_record_dicts_as_the_other_functions_do(tmp_path: Path) -> None:
    lines = (REPO / "examples" / "demo.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    out = tmp_path / "rollouts.jsonl"
    # Before the typed options, convert read the records' stand-in name '<records>' as a file.
    result = prefixexec.convert(records, out)
    assert result.status == 0 and result["rollouts"] == len(records)  # one rollout per record
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["task_id"], r["method"]) for r in written] == [(r["task_id"], r["method"]) for r in records]


@pytest.mark.spec("DETECT-HINT", "CLAIM-MANY")
def test_a_chosen_adapter_that_cannot_read_a_submissions_files_is_hinted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The submission's trajectories are tau2 results files (tests/data/real/tau2-submissions/
    # SOURCE.md); read with --adapter bfcl, the first one fails and the hint names taubench.
    folder = REAL / "tau2-submissions" / "gpt-oss-120b_openai_2025-11-26"
    trajectories = sorted((folder / "trajectories").iterdir())
    assert trajectories
    assert main(["crosscheck", str(folder), "--adapter", "bfcl", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("prefixexec: error: ") and line.endswith(": use --adapter taubench"), line
    assert "; " + str(folder / "trajectories") in line  # the submission's file, not the folder


@pytest.mark.spec("API-PIPELINE", "HOSTILE-OUTPUT-EARLY")
def test_the_hostile_input_wrapper_takes_typed_values_not_the_namespace() -> None:
    import inspect

    from prefixexec.adapters.limits import Guarding, guarded
    from prefixexec.cli import build_parser, guarding_of

    assert list(inspect.signature(guarded).parameters) == ["handler", "guarding"]
    argv = ["score", "a.jsonl", "--label-rules", "r.toml", "--select", "task=@ids.txt", "--output", "o.txt"]
    guarding = guarding_of(build_parser("score").parse_args(argv))
    assert isinstance(guarding, Guarding) and attrs.has(Guarding)
    assert guarding.inputs == ("a.jsonl", "r.toml", "ids.txt")
    assert ("--output", "o.txt") in guarding.outputs
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        guarding.quiet = True  # type: ignore[misc]  # frozen: the test checks it raises
