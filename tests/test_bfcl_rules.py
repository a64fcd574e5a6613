"""BFCL rules added for issue 13 (spec/adapters/bfcl.md): inference errors, the withheld parameter
of miss_param, reasons, the dropped-step counts of the audit, and the package's import graph.

Expected values are read by hand in bfcl-eval 2026.3.23's data (BFCL_v4_multi_turn_*.json and
possible_answer/) or in tests/data/bfcl/ (its README), as each comment says.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, InputError, bfcl, harness
from prefixexec.adapters.bfcl.operators import run_audit
from prefixexec.cli import main
from prefixexec.kernel import Label

from conftest import REPO

PACKAGE = REPO / "adapters" / "bfcl"
ABSOLUTE = "prefixexec.adapters.bfcl"
FC_FILE = REPO / "tests" / "data" / "bfcl" / "result" / "demo-model-FC" / "multi_turn"
FC_FILE = FC_FILE / "BFCL_v4_multi_turn_base_result.json"
REASON = re.compile(
    r"^call (?P<position>\d+) \(turn (?P<turn>\d+)\) (?P<call>.+) "
    r"\[(?P<label>schema|dependency|precondition|state_consistency|information)\]: (?P<why>.+)$",
    re.S,
)


def gold(task_id: str) -> list[list[str]]:
    return [list(turn) for turn in bfcl.gold_turns(task_id)]


def write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    return path


def fc_turns(turns: list[list[str]]) -> list[list[Any]]:
    """Gold call strings as a function-calling result: one step per call, then a text reply."""
    out: list[list[Any]] = []
    for turn in turns:
        steps: list[Any] = []
        for call in turn:
            node = ast.parse(call, mode="eval").body
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args
            arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            steps.append([{node.func.id: json.dumps(arguments)}])
        out.append([*steps, "Done."])
    return out


# --- BFCL-INFERENCE-ERROR ----------------------------------------------------------------------------


@pytest.mark.spec("BFCL-INFERENCE-ERROR", "BFCL-REASON", "HARNESS-COUNT")
def test_inference_errors_are_failed_rollouts_by_default(tmp_path: Path) -> None:
    message = "Error code: 500 - " + "x" * 300
    path = write(
        tmp_path / "m" / "BFCL_v4_multi_turn_base_result.json",
        [
            {"id": "multi_turn_base_1", "result": fc_turns(gold("multi_turn_base_1"))},
            {"id": "multi_turn_base_2", "result": f"Error during inference: {message}"},
        ],
    )
    result = bfcl.read_results([str(path)], AdapterOptions())
    by_id = {r.task_id: r for r in result.rollouts}
    crashed = by_id["multi_turn_base_2"]
    outcome = crashed.outcome
    assert (outcome.T, outcome.fed, outcome.label, crashed.success) == (1, 1, None, False)
    # A harness error: the reason keeps the first 200 characters of the message after BFCL's prefix.
    assert crashed.outcome.reason == "harness error: Error during inference: " + message[:200]
    assert isinstance(crashed.outcome.actions[0], harness.HarnessFault)  # not the no-tool action's text
    assert str(crashed.meta["success_check"]).startswith("inference_error: Error during inference: Error")
    # The leaderboard's accuracy: 1 of 2 entries (the gold replay succeeds), not 1 of 1.
    assert sum(r.success for r in result.rollouts) == 1 and len(result.rollouts) == 2
    left_out = bfcl.read_results([str(path)], AdapterOptions(inference_errors="exclude"))
    assert [r.task_id for r in left_out.rollouts] == ["multi_turn_base_1"]
    assert [e.task_id for e in left_out.excluded] == ["multi_turn_base_2"]


@pytest.mark.spec("BFCL-INFERENCE-ERROR")
def test_a_file_of_inference_errors_only(tmp_path: Path) -> None:
    path = write(
        tmp_path / "m" / "BFCL_v4_multi_turn_base_result.json",
        [{"id": "multi_turn_base_1", "result": "Error during inference: boom"}],
    )
    (rollout,) = bfcl.read_results([str(path)], AdapterOptions()).rollouts
    assert rollout.outcome.reason == "harness error: Error during inference: boom" and not rollout.success
    with pytest.raises(InputError, match="all 1 rollouts are harness errors, left out"):
        bfcl.read_results([str(path)], AdapterOptions(inference_errors="exclude"))
    with pytest.raises(InputError, match="expected one of failure, exclude"):
        bfcl.read_results([str(path)], AdapterOptions(inference_errors="drop"))
    with pytest.raises(InputError, match="expected one of failure, exclude"):
        bfcl.read_results([str(path)], AdapterOptions(harness_errors="drop"))


@pytest.mark.spec("BFCL-INFERENCE-ERROR")
def test_inference_errors_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # tests/data/bfcl/README.md: 5 entries, one inference error (base_3), 2 successes.
    assert main(["score", "--adapter", "bfcl", "--json", "--bootstrap", "0", str(FC_FILE)]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    (condition,) = document["conditions"]
    assert (condition["N"], condition["exact"]["success"]) == (5, "2/5")
    assert "harness-errors=failure" in document["signature"]
    assert "count as failed rollouts" in err
    # HARNESS-REPORT: per condition in the JSON, and listed with its reason
    assert condition["harness_errors"] == {"counted": 1, "excluded": 0}
    (lost,) = document["harness_errors"]
    assert (lost["task_id"], lost["counted"]) == ("multi_turn_base_3", True)
    argv = ["score", "--adapter", "bfcl", "--json", "--bootstrap", "0", "--inference-errors", "exclude"]
    assert main([*argv, str(FC_FILE)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["conditions"][0]["N"], document["conditions"][0]["exact"]["success"]) == (4, "1/2")
    assert "harness-errors=exclude" in document["signature"]
    assert document["conditions"][0]["harness_errors"] == {"counted": 0, "excluded": 1}
    # --harness-errors is the same option; the alias and it must not disagree
    argv[-2] = "--harness-errors"
    assert main([*argv, str(FC_FILE)]) == 0
    assert "harness-errors=exclude" in json.loads(capsys.readouterr().out)["signature"]
    assert main([*argv, "--inference-errors", "failure", str(FC_FILE)]) == 2
    assert "give one of them" in capsys.readouterr().err


# --- BFCL-MISS-PARAM ---------------------------------------------------------------------------------


@pytest.mark.spec("BFCL-MISS-PARAM")
def test_the_withheld_parameter_is_found_in_the_data() -> None:
    # Hand read in BFCL_v4_multi_turn_miss_param.json: miss_param_9 turn 1 asks to copy into "a
    # directory inside the 'Documentation' folder"; turn 2's user message ("The directory is the
    # 'Archives'.") first names it, and turn 2's gold passes 'Archives' to cp(destination=) and
    # cd(folder=). miss_param_2 turn 1 ("The document name should be 'TeamNotes.txt'.") first names
    # touch's file_name; its gold's cd(folder='documents') is named in neither message (turn 0 says
    # "document folder"), so cd withholds nothing.
    assert dict(bfcl.task("multi_turn_miss_param_9").withheld) == {
        1: frozenset({("cp", "destination"), ("cd", "folder")})
    }
    assert dict(bfcl.task("multi_turn_miss_param_2").withheld) == {0: frozenset({("touch", "file_name")})}
    # Outside miss_param nothing is withheld.
    assert dict(bfcl.task("multi_turn_base_2").withheld) == {}


@pytest.mark.spec("BFCL-MISS-PARAM", "BFCL-REASON")
def test_only_calls_that_need_the_withheld_parameter_are_information_failures() -> None:
    # miss_param_2: turn 0 withholds touch's file_name; turn 1's gold is cd(folder='documents'),
    # touch(file_name='TeamNotes.txt'). Going to the folder in turn 0 needs nothing withheld: it is
    # executable (the old rule labelled it `information` because turn 1's gold also calls cd).
    turns = [["cd(folder='documents')", "touch(file_name='draft.txt')"], [], [], [], []]
    evaluation = bfcl.replay_calls("multi_turn_miss_param_2", turns, success=False)
    first, second = evaluation.records
    assert first.accepted and first.executed
    assert (evaluation.outcome.fed, evaluation.outcome.label) == (2, Label.INFORMATION)
    assert second.executed  # executed, as BFCL would
    match = REASON.match(str(evaluation.outcome.reason))
    assert match is not None and match["label"] == "information" and match["position"] == "2"
    assert "file_name='draft.txt' before the user gives `file_name`" in match["why"]


@pytest.mark.spec("BFCL-MISS-PARAM")
def test_values_without_information_or_already_given_are_not_information_failures() -> None:
    # miss_param_9: turn 1 withholds cd's folder ('Archives'); turn 0's gold enters Documentation.
    prefix = gold("multi_turn_miss_param_9")[0]
    task_id = "multi_turn_miss_param_9"
    up = bfcl.replay_calls(task_id, [prefix, ["cd(folder='..')"], [], []], success=False)
    assert up.outcome.fully_executable  # '..' names nothing the user withholds
    guess = bfcl.replay_calls(task_id, [prefix, ["cd(folder='Backup')"], [], []], success=False)
    assert guess.outcome.label is Label.INFORMATION and guess.outcome.fed == 2
    # Turn 0 of miss_param_9 says 'Documentation': going back there in turn 1 uses a given value.
    back = bfcl.replay_calls(
        "multi_turn_miss_param_9", [prefix, ["cd(folder='..')", "cd(folder='Documentation')"], [], []]
    )
    assert back.outcome.fully_executable
    # Leaving the withheld parameter out: miss_param_1 turn 3 withholds tail's `lines` (default 10).
    turns = gold("multi_turn_miss_param_1")
    omitted = bfcl.replay_calls(
        "multi_turn_miss_param_1", [*turns[:3], ["tail(file_name='log.txt')"], turns[4]], success=False
    )
    assert omitted.outcome.label is Label.INFORMATION
    assert "called without `lines`" in str(omitted.outcome.reason)


# --- BFCL-REASON and BFCL-NOTOOL ---------------------------------------------------------------------


@pytest.mark.spec("BFCL-REASON", "BFCL-NOTOOL")
def test_every_non_executable_rollout_says_which_call_failed_with_label_and_why() -> None:
    # The fixture files (tests/data/bfcl/README.md) and a no-tool rollout.
    prompt = FC_FILE.parent.parent.parent / "demo-model" / "multi_turn"
    result = bfcl.read_results(
        [str(FC_FILE), str(prompt / "BFCL_v4_multi_turn_miss_func_result.json")], AdapterOptions()
    )
    failing = [r for r in result.rollouts if not r.outcome.fully_executable]
    assert len(failing) == 5  # base_1, base_2, base_3, miss_func_0, miss_func_2 (README)
    for rollout in failing:
        reason = str(rollout.outcome.reason)
        if rollout.outcome.label is None:
            assert rollout.task_id == "multi_turn_base_3" and reason.startswith("harness error: ")
            continue
        match = REASON.match(reason)
        assert match is not None, reason
        assert match["label"] == rollout.outcome.label.value and int(match["position"]) == rollout.outcome.fed
    base_1 = next(r for r in failing if r.task_id == "multi_turn_base_1")
    assert base_1.outcome.reason == (
        "call 2 (turn 2) cd(folder='workspac') [dependency]: cd: 'workspac': No such file or directory"
    )
    empty = bfcl.replay_calls("multi_turn_base_1", [[], [], [], []])
    assert empty.outcome.reason == (
        "no tool call at all (the terminal no-tool action, unlabelled): "
        "every BFCL multi-turn task needs tool calls"
    )


# --- BFCL-DROPPED ------------------------------------------------------------------------------------


@pytest.mark.spec("BFCL-DROPPED", "BFCL-STEP")
def test_result_files_are_counted() -> None:
    (summary,) = bfcl.read_results([str(FC_FILE)], AdapterOptions()).files
    # Hand count of the fixture (README): 5 entries, 1 inference error; steps 14 + 11 + 13 + 3 = 41,
    # of which 10 + 7 + 8 + 2 = 27 are call steps of one call each; base_2's echo arguments are not
    # JSON: one step BFCL's loop drops, one call that does not decode. No inference_log.
    assert (summary.entries, summary.inference_errors, summary.steps) == (5, 1, 41)
    assert (summary.call_steps, summary.calls, summary.decodable_calls) == (27, 27, 26)
    assert (summary.dropped_steps, summary.dropped_calls, summary.bad_name_steps) == (1, 1, 0)
    assert summary.log_agrees is None


def _logged_entry(task_id: str, decode_errors: int) -> dict[str, Any]:
    turns = fc_turns(gold(task_id))
    turns[0].insert(0, [{"ls": "{a: true}"}])  # arguments that are not JSON: BFCL drops the step
    turns[1].insert(0, [{"cd<|channel|>commentary": json.dumps({"folder": "x"})}])  # a template token
    dropped = {"role": "handler_log", "content": "Error decoding the model response. Proceed to next turn."}
    # BFCL's loop logs a decoding error for the dropped step and for each text reply ("Done." ends
    # every turn of fc_turns): BFCL's convert_to_function_call raises on text.
    texts = sum(1 for turn in turns for step in turn if isinstance(step, str))
    log = [
        [{"role": "handler_log", "content": "Successfully decoded model response."}],
        {f"step_{i}": [dropped] for i in range(decode_errors + texts)},
    ]
    return {"id": task_id, "result": turns, "inference_log": log}


@pytest.mark.spec("BFCL-DROPPED", "BFCL-AUDIT", "AUDIT-CLI")
def test_audit_lists_the_steps_bfcls_loop_drops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "BFCL_v4_multi_turn_base_result.json"
    path = write(tmp_path / "m" / name, [_logged_entry("multi_turn_base_1", 1)])
    report = run_audit(AdapterOptions(category="base", extra={"seed": 0}), [str(path)])
    (summary,) = report.files
    # 1 dropped step and 4 text replies (base_1 has 4 turns): 5 logged decoding errors.
    assert (summary.dropped_steps, summary.bad_name_steps, summary.logged_decode_errors) == (1, 1, 5)
    assert (summary.text_steps, summary.undecodable_in_logged) == (4, 5)
    assert summary.log_agrees is True and report.passed
    assert main(["audit", "--adapter", "bfcl", "--category", "base", "--json", str(path)]) == 0
    document = json.loads(capsys.readouterr().out)
    (listed,) = document["result_files"]
    assert (listed["dropped_steps"], listed["log_agrees"], listed["entries"]) == (1, True, 1)
    assert main(["audit", "--adapter", "bfcl", "--category", "base", str(path)]) == 0
    out = capsys.readouterr().out
    assert "BFCL's loop drops (undecodable: invalid JSON, arguments not an object, ...): 1 (1 calls)" in out
    assert "chat-template tokens), executed by BFCL as errors: 1" in out and "agrees" in out
    # A log that records no decode error while a step cannot be decoded: the audit fails (exit 1).
    bad = write(tmp_path / "n" / name, [_logged_entry("multi_turn_base_1", 0)])
    assert main(["audit", "--adapter", "bfcl", "--category", "base", str(bad)]) == 1
    assert "DIFFERS" in capsys.readouterr().out


# --- BFCL-PACKAGE: the package's import graph --------------------------------------------------------


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Package modules ``path`` imports, at module or function level (``TYPE_CHECKING`` blocks aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            guarded.update(id(child) for child in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:
                found.update(a.name if a.name in modules else "__init__" for a in node.names)
            else:
                found.add(node.module.split(".")[0] if node.module.split(".")[0] in modules else "__init__")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ABSOLUTE):
            rest = str(node.module).removeprefix(ABSOLUTE).lstrip(".")
            found.add(rest.split(".")[0] if rest else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(ABSOLUTE):
                    rest = alias.name.removeprefix(ABSOLUTE).lstrip(".")
                    found.add(rest.split(".")[0] if rest else "__init__")
    return found


@pytest.mark.spec("BFCL-PACKAGE")
def test_the_package_has_no_import_cycle_and_init_only_reexports() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules >= {"__init__", "backend", "parse", "execute", "semantics", "reader", "reference"}
    assert "operators" in modules
    graph = {m: _imports(PACKAGE / f"{m}.py", modules) - {m} for m in modules}
    # No submodule imports the package itself (that would close a cycle through __init__).
    assert not {m for m, deps in graph.items() if m != "__init__" and "__init__" in deps}, graph
    # Depth-first search for a cycle among the submodules.
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            assert state.get(nxt) != 1, f"import cycle: {' -> '.join([*path, node, nxt])}"
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    # The reader, the semantics and the audit are separate; the semantics reads no files.
    assert "reader" not in graph["semantics"] and "operators" not in graph["semantics"]
    assert "operators" not in graph["reader"]
    # __init__ defines nothing, it re-exports; `audit` stays a package attribute for the CLI.
    init = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in init.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    assigns = [n for n in init.body if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)]
    assigned = [ast.unparse(n.targets[0] if isinstance(n, ast.Assign) else n.target) for n in assigns]
    assert assigned == ["__all__"]
    from prefixexec.commands.audit import find_audit

    assert callable(bfcl.audit) and find_audit("bfcl") is not None


@pytest.mark.spec("BFCL-PACKAGE")
def test_the_cycle_check_notices_a_cycle(tmp_path: Path) -> None:
    # The checker itself: a module importing the package (`from . import x`) is found.
    (tmp_path / "a.py").write_text("from . import evaluate\nfrom .b import y\n", encoding="utf-8")
    assert _imports(tmp_path / "a.py", {"a", "b"}) == {"__init__", "b"}
    (tmp_path / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import y\n"
        "def f():\n    from .a import z\n",
        encoding="utf-8",
    )
    assert _imports(tmp_path / "c.py", {"a", "b", "c"}) == {"a"}
