"""The inspect_ai adapter on real third-party logs (spec/adapters/inspect.md; issue 13).

Logs: ``tests/data/real/inspect/`` (inspect_ai's own test logs and a tidyverse/vitals log; MIT;
sources in its SOURCE.md), and in ``tests/data/inspect/``: ``inspect_ai/`` (inspect_ai's test log
with five bash calls), ``inspect_scout/`` (a run that was offered web_search and called nothing)
and ``vitals/`` (two logs written by vitals, stored gzip-compressed); each folder has its
SOURCE.md (repository, commit, path, MIT licence). A missing fixture fails the test.

Every expected number is counted without the adapter, twice: once by hand with the Python
one-liner quoted beside the golden value, and again in the test by :func:`raw_samples` and the
``raw_*`` helpers, which read the ``.json`` documents with :mod:`json` and the ``.eval`` members with
:mod:`zipfile` (these ``.eval`` fixtures are deflated, method 8, which the standard library reads),
and walk the messages: a call is an entry of an assistant message's ``tool_calls``; it executed
when a ``tool`` message with its id as ``tool_call_id`` carries no ``error``.
"""

from __future__ import annotations

import ast
import gzip
import json
import shutil
import subprocess
import sys
import zipfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters import inspect_logs as il
from prefixexec.adapters.inspect_logs import reader
from prefixexec.adapters.inspect_logs.operators import audit as operators_audit
from prefixexec.cli import main

from conftest import REAL, REPO

FIXTURES = REAL / "inspect"
DATA = REAL
VITALS = REAL / "vitals"

POPULARITY = "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
THEORY_OF_MIND = "2025-09-23T08-09-58-04-00_theory-of-mind_bbB4eRCx2rFJLyPH42Cj9r.eval"
ARITHMETIC = "inst-logs_2025-04-07T11-00-30-05-00_arithmetic-with-tool_gKECTBvzvzgtPqQCd3cirF.json"
LOG_FORMATS = "log_formats.json"
TOOL_CALL_ERROR = "log_tool_call_error.json"
BTW_SOLVER = "2025-04-29T14-37-34-05-00_An-R-Eval_1da30c33406baede90d819.json"
GENERATE_SOLVER = "2025-04-29T14-38-09-05-00_An-R-Eval_db267f5e7251238aac6d76.json"
DEDUPLICATION = "inspect_ai/log_message_deduplication.eval"
WEBSEARCH = "inspect_scout/2025-11-07T10-59-47-05-00_websearch-addition-problem_LqPDntDnkk4h2fSqQ8i6CE.eval"


def real(name: str) -> Path:
    """A real log: ``folder/name`` in tests/data/real/, a bare name in tests/data/real/inspect/."""
    path = DATA / name if "/" in name else FIXTURES / name
    assert path.is_file(), f"missing real fixture {path} (see {path.parent / 'SOURCE.md'})"
    return path


@pytest.fixture(scope="module")
def vitals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vitals logs decompressed under their original names."""
    folder = tmp_path_factory.mktemp("vitals")
    for name in (BTW_SOLVER, GENERATE_SOLVER):
        packed = VITALS / f"{name}.gz"
        assert packed.is_file(), f"missing {packed} (see {VITALS / 'SOURCE.md'})"
        with gzip.open(packed, "rb") as source, (folder / name).open("wb") as target:
            shutil.copyfileobj(source, target)
    return folder


# ---------------------------------------------------------------------------------------------
# Independent counts (no adapter code)


def raw_samples(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".json":
        samples: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["samples"]
        return samples
    with zipfile.ZipFile(path) as archive:
        return [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]


def raw_calls(sample: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for m in sample["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]


def raw_executed(sample: dict[str, Any]) -> int:
    ids = {c["id"] for c in raw_calls(sample)}
    answers = [m for m in sample["messages"] if m["role"] == "tool" and m.get("tool_call_id") in ids]
    return sum(1 for m in answers if not m.get("error"))


def raw_model_tools(sample: dict[str, Any]) -> list[list[str]]:
    """The tool names of each model event (``events``, or ``transcript.events`` in old logs)."""
    events = sample.get("events") or (sample.get("transcript") or {}).get("events") or []
    return [[t["name"] for t in e["tools"]] for e in events if e.get("event") == "model" and "tools" in e]


def raw_value(sample: dict[str, Any], scorer: str) -> Any:
    return ((sample.get("scores") or {}).get(scorer) or {}).get("value")


def rollouts_of(*paths: Path, **options: Any) -> dict[str, Any]:
    return {r.task_id: r for r in il.read([str(p) for p in paths], AdapterOptions(**options))}


def score_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["score", "--adapter", "inspect", "--json", "--bootstrap", "0", *args]) == 0
    (condition,) = json.loads(capsys.readouterr().out)["conditions"]
    result: dict[str, Any] = condition
    return result


# ---------------------------------------------------------------------------------------------
# Every real log: rollouts, calls, executed calls, FED and success

# (file, rollouts, calls, executed calls, TER, success) per log. Counted by hand with
#   python3 -c "import json,zipfile,sys; ..."  over raw_samples(): len(samples);
#   sum(len(tool_calls)); tool messages answering a call with error null; then TER and success
#   as read off the FED and the score values (see each comment).
REAL_LOGS: list[tuple[str, int, int, int, Fraction, Fraction]] = [
    # 10 samples, no call, every model event lists tools: [] (no-tool action allowed, TER 1);
    # results.scores is [] and no sample has a score: success 0.
    (POPULARITY, 10, 0, 0, Fraction(1), Fraction(0)),
    # 100 samples, no call, all 200 model events list tools: []; 83 "C" and 17 "I".
    (THEORY_OF_MIND, 100, 0, 0, Fraction(1), Fraction(83, 100)),
    # 2 samples, one take_sum call each, both answered without error; both "C".
    (ARITHMETIC, 2, 2, 2, Fraction(1), Fraction(1)),
    # 1 sample, no call; its one model event (under transcript.events) lists tools: []; "I".
    (LOG_FORMATS, 1, 0, 0, Fraction(1), Fraction(0)),
    # 1 sample, no call but 11 tool messages from bash (tools were in use: FED 1); no score.
    (TOOL_CALL_ERROR, 1, 0, 0, Fraction(0), Fraction(0)),
    # 1 sample, 5 bash calls each answered without error (FED 6 = T + 1); closeness_log 0.0.
    (DEDUPLICATION, 1, 5, 5, Fraction(1), Fraction(0)),
    # 1 sample offered web_search (its model event), answered without a call: FED 1; "C".
    (WEBSEARCH, 1, 0, 0, Fraction(0), Fraction(1)),
]


@pytest.mark.spec("INS-FILES", "INS-CALLS", "INS-EXEC", "INS-NOTOOL", "INS-SUCCESS", "INS-UNSCORED")
@pytest.mark.parametrize(("name", "rollouts", "calls", "executed", "ter", "success"), REAL_LOGS)
def test_real_logs_against_independent_counts(
    name: str,
    rollouts: int,
    calls: int,
    executed: int,
    ter: Fraction,
    success: Fraction,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = real(name)
    samples = raw_samples(path)
    # The golden numbers agree with the in-test raw count ...
    raw = (len(samples), sum(len(raw_calls(s)) for s in samples), sum(raw_executed(s) for s in samples))
    assert raw == (rollouts, calls, executed)
    # ... and with what the adapter reads.
    items = reader.read_items([str(path)], AdapterOptions(), il.SEMANTICS)
    assert len(items) == rollouts
    assert sum(len(i.task.calls) for i in items) == calls
    assert sum(1 for i in items for c in i.task.calls if c.answered and c.error_type is None) == executed
    # T is the number of calls, or 1 (the no-tool action) for a sample without a call.
    with_calls = sum(1 for s in samples if raw_calls(s))
    assert sum(i.rollout.outcome.T for i in items) == rollouts + calls - with_calls
    assert main(["score", "--adapter", "inspect", "--json", "--bootstrap", "0", str(path)]) == 0
    captured = capsys.readouterr()
    (condition,) = json.loads(captured.out)["conditions"]
    # The popularity log and log_tool_call_error.json were never scored (no sample has a score of
    # their scorer): INS-UNSCORED warns.
    assert ("INS-UNSCORED" in captured.err) is (name in (POPULARITY, TOOL_CALL_ERROR))
    assert (condition["N"], Fraction(condition["exact"]["TER"]), Fraction(condition["exact"]["success"])) == (
        rollouts,
        ter,
        success,
    )


@pytest.mark.spec("INS-NOTOOL", "INS-SUCCESS", "INS-VALUE")
def test_theory_of_mind_samples(capsys: pytest.CaptureFixture[str]) -> None:
    path = real(THEORY_OF_MIND)
    raw = {str(s["id"]): s for s in raw_samples(path)}
    rollouts = rollouts_of(path)
    # Each of the 100 samples: no call, every model event offered no tools -> T 1, FED 2; Y is
    # its model_graded_fact value "C" (83 of them: the header's accuracy is 0.83).
    for sample_id, sample in raw.items():
        assert all(tools == [] for tools in raw_model_tools(sample)) and raw_model_tools(sample)
        outcome = rollouts[sample_id].outcome
        assert (outcome.T, outcome.fed, outcome.label) == (1, 2, None)
        assert rollouts[sample_id].success is (raw_value(sample, "model_graded_fact") == "C")
    assert sum(r.success for r in rollouts.values()) == 83


@pytest.mark.spec("INS-EXEC", "INS-CALLS", "INS-DATASET")
def test_arithmetic_with_tool_samples() -> None:
    path = real(ARITHMETIC)
    rollouts = rollouts_of(path)
    # Samples 1 and 2: one take_sum call each (71+31, 91+13), answered "102" and "104", no error:
    # T 1, FED 2; the match scorer says "C".
    for sample_id in ("1", "2"):
        rollout = rollouts[sample_id]
        assert (rollout.outcome.T, rollout.outcome.fed, rollout.success) == (1, 2, True)
        assert rollout.condition.method == "use_tools+generate"
        assert rollout.condition.model == "anthropic/claude-3-5-sonnet-latest"


@pytest.mark.spec("INS-FILES", "INS-NOTOOL")
def test_older_log_reads_its_events_under_transcript() -> None:
    # log_formats.json (inspect 0.3.41) keeps its events in sample.transcript.events; its one
    # model event lists tools: [] so the sample's answer without a call is allowed: FED 2 (the
    # issue's misfire was FED 1, "as if tools had been offered").
    (sample,) = raw_samples(real(LOG_FORMATS))
    assert "events" not in sample and raw_model_tools(sample) == [[]]
    (rollout,) = rollouts_of(real(LOG_FORMATS)).values()
    assert (rollout.outcome.T, rollout.outcome.fed) == (1, 2)
    assert rollout.meta["no_tool"] == "every model event of the sample offered no tools"
    assert (rollout.success, rollout.meta["score"]) == (False, "I")


@pytest.mark.spec("INS-EXEC", "INS-CALLS", "INS-NOTOOL")
def test_real_eval_logs_with_calls_and_with_offered_tools() -> None:
    # inspect_ai's log: five bash calls {"cmd": "ls"} (ids hardcoded_0..4), each answered by a
    # tool message without error; bash and python offered in all 6 model events: T 5, FED 6.
    (sample,) = raw_samples(real(DEDUPLICATION))
    assert [c["id"] for c in raw_calls(sample)] == [f"hardcoded_{i}" for i in range(5)]
    assert raw_executed(sample) == 5 and all(sorted(t) == ["bash", "python"] for t in raw_model_tools(sample))
    (rollout,) = rollouts_of(real(DEDUPLICATION)).values()
    assert (rollout.task_id, rollout.outcome.T, rollout.outcome.fed, rollout.success) == ("0", 5, 6, False)
    assert rollout.meta["score"] == 0.0  # closeness_log's numeric value, below the threshold 1
    # inspect_scout's log: offered web_search, no call, a correct answer: FED 1, Y 1 (INS-NOTOOL
    # rule 2: the no-tool action is allowed only when no tool was offered).
    (sample,) = raw_samples(real(WEBSEARCH))
    assert raw_calls(sample) == [] and raw_model_tools(sample) == [["web_search"]]
    (rollout,) = rollouts_of(real(WEBSEARCH)).values()
    outcome = rollout.outcome
    assert (outcome.T, outcome.fed, outcome.label, rollout.success) == (1, 1, None, True)
    assert rollout.outcome.reason == (
        "no tool call (the terminal no-tool action), not allowed: the model was offered tools (web_search)"
    )


@pytest.mark.spec("INS-SUCCESS", "INS-FILES", "INS-NOTOOL")
def test_json_log_scorer_from_results_scores() -> None:
    path = real(TOOL_CALL_ERROR)
    document = json.loads(path.read_text(encoding="utf-8"))
    # No eval.scorers; results.scores names "includes"; the one sample has no scores at all.
    assert "scorers" not in document["eval"]
    assert [s["name"] for s in document["results"]["scores"]] == ["includes"]
    (rollout,) = rollouts_of(path).values()
    assert (rollout.meta["scorer"], rollout.meta["score"], rollout.success) == ("includes", None, False)
    # Its 11 tool messages answer no recorded call (bash_1 ... bash_11): tools were in use.
    (sample,) = document["samples"]
    assert [m["role"] for m in sample["messages"]] == ["tool"] * 11 and raw_calls(sample) == []
    assert (rollout.outcome.T, rollout.outcome.fed, rollout.outcome.label) == (1, 1, None)
    assert rollout.outcome.reason == (
        "no tool call (the terminal no-tool action), not allowed: the sample has 11 tool messages "
        "(bash) although it records no call: tools were in use"
    )


# ---------------------------------------------------------------------------------------------
# vitals: partial credit (INS-VALUE) and a writer that does not log tool results (INS-NO-RESULTS)


@pytest.mark.spec("INS-VALUE", "INS-SUCCESS", "INS-NOTOOL")
def test_partial_credit_on_a_real_log(vitals: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = vitals / GENERATE_SOLVER
    document = json.loads(path.read_text(encoding="utf-8"))
    (scorer,) = [s["name"] for s in document["eval"]["scorers"]]
    values = [raw_value(s, scorer) for s in document["samples"]]
    # Hand count: 11 "C", 8 "P", 7 "I" over 26 samples.
    assert (values.count("C"), values.count("P"), values.count("I"), len(values)) == (11, 8, 7, 26)
    # inspect's convention (C 1, P 0.5, I 0) gives the mean the log itself recorded as accuracy:
    # 57.6923 = 100 * (11 + 8 * 0.5) / 26, rounded to 4 decimals.
    mean = sum(Fraction(il.value_to_float(v) or 0) for v in values) / len(values)
    assert mean == Fraction(15, 26)
    assert round(float(mean) * 100, 4) == document["results"]["scores"][0]["metrics"]["accuracy"]["value"]
    # Default threshold 1: only "C" succeeds (11/26); --threshold 0.5: "C" and "P" (19/26).
    assert Fraction(score_json([str(path)], capsys)["exact"]["success"]) == Fraction(11, 26)
    lenient = score_json([str(path), "--threshold", "0.5"], capsys)
    assert Fraction(lenient["exact"]["success"]) == Fraction(19, 26)
    # No call; the 52 model events (solver and grader) list tools: [] -> every sample FED 2.
    for sample in document["samples"]:
        assert raw_calls(sample) == [] and raw_model_tools(sample) and not any(raw_model_tools(sample))
    assert {(r.outcome.T, r.outcome.fed) for r in rollouts_of(path).values()} == {(1, 2)}


@pytest.mark.spec("INS-NO-RESULTS", "INS-ERRORS")
def test_a_real_log_without_tool_results_stops(vitals: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = vitals / BTW_SOLVER
    samples = raw_samples(path)
    # Hand count: 26 samples, 23 with one btw_tool_docs_* call each, not one "tool" message.
    assert sum(len(raw_calls(s)) for s in samples) == 23
    assert sum(1 for s in samples for m in s["messages"] if m["role"] == "tool") == 0
    assert main(["score", "--adapter", "inspect", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"prefixexec: error: {path}: the log records 23 tool calls but not one tool result (no 'tool' "
        "message in any sample): its writer does not log tool results, so whether the calls executed "
        "cannot be read (INS-NO-RESULTS)\n"
    )
    # The audit reads the log the same way and stops with the same error.
    assert main(["audit", "--adapter", "inspect", str(path)]) == 2
    assert "not one tool result" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# prefixexec audit on every real log (AUDIT-INSPECT, AUDIT-NOTHING)


@pytest.mark.spec("AUDIT-INSPECT", "AUDIT-GOLD")
@pytest.mark.parametrize(
    ("name", "trajectories", "actions"),
    [
        (ARITHMETIC, 2, 2),  # the 2 executed take_sum calls, one per sample (REAL_LOGS)
        (DEDUPLICATION, 1, 5),  # the 5 executed bash calls of its one sample (REAL_LOGS)
    ],
)
def test_audit_passes_on_the_real_logs_with_calls(
    name: str, trajectories: int, actions: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", "--adapter", "inspect", "--json", str(real(name))]) == 0
    document = json.loads(capsys.readouterr().out)
    # Gold: the accepted calls; each of the 6 operators makes one mutant per trajectory, all caught.
    assert document["status"] == "pass"
    assert (document["gold"]["trajectories"], document["gold"]["actions"]) == (trajectories, actions)
    assert [(o["made"], o["caught"]) for o in document["operators"]] == [(trajectories, trajectories)] * 6


@pytest.mark.spec("AUDIT-INSPECT", "INS-NOTOOL")
@pytest.mark.parametrize("name", [POPULARITY, THEORY_OF_MIND, LOG_FORMATS, TOOL_CALL_ERROR, WEBSEARCH])
def test_audit_says_nothing_checked_on_real_logs_without_calls(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # These logs hold no tool call (REAL_LOGS): nothing to replay or mutate, exit 2 (AUDIT-CLI).
    assert main(["audit", "--adapter", "inspect", "--json", str(real(name))]) == 2
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["status"] == "nothing-checked" and document["gold"]["trajectories"] == 0
    assert "nothing in this input could be checked" in captured.err


# ---------------------------------------------------------------------------------------------
# The package (INS-PACKAGE)

PACKAGE = REPO / "adapters" / "inspect_logs"


def package_imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports anywhere (``from .x import``, ``from . import x``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:
                found |= {a.name if a.name in modules else "__init__" for a in node.names}
            else:
                found.add(node.module.split(".")[0])
    return found


@pytest.mark.spec("INS-PACKAGE")
def test_the_package_layout_has_no_cycle() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == {"__init__", "reader", "semantics", "operators"}
    graph = {m: package_imports(PACKAGE / f"{m}.py", modules) for m in modules}
    assert graph == {
        "semantics": set(),
        "reader": {"semantics"},
        "operators": {"reader", "semantics"},
        "__init__": {"reader", "semantics", "operators"},
    }
    # __init__ only re-exports: no definitions, one assignment (__all__).
    init = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in init.body if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)]
    assigns = [n for n in init.body if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)]
    assert len(assigns) == 1 and isinstance(assigns[0], ast.Assign)
    assert [ast.unparse(t) for t in assigns[0].targets] == ["__all__"]
    assert il.audit is operators_audit and il.read is reader.read


@pytest.mark.spec("INS-PACKAGE")
@pytest.mark.parametrize("first", ["semantics", "reader", "operators"])
def test_each_module_imports_first(first: str) -> None:
    # A fresh interpreter importing one module before the package finds no partly initialised module.
    code = (
        f"import prefixexec.adapters.inspect_logs.{first}; import prefixexec.adapters.inspect_logs as p; "
        "print(callable(p.audit))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "True", "")


@pytest.mark.spec("INS-PACKAGE")
def test_the_layout_check_sees_an_import_of_the_package(tmp_path: Path) -> None:
    (tmp_path / "semantics.py").write_text("from . import read\nfrom .reader import x\n", encoding="utf-8")
    assert package_imports(tmp_path / "semantics.py", {"reader", "semantics"}) == {"__init__", "reader"}
