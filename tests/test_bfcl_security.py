"""Hostile model outputs: rejected as schema failures, nothing executed, no crash, bounded time.

Spec: BFCL-SECURITY, BFCL-LIMITS. Each output is fed through all three entry points (a
prompting result file, a function-calling result file, and ``replay_calls``) in a fresh working
directory; the test checks the verdict, that no file appeared anywhere under that directory or
the system's temporary directory marker names, and that each case finishes within a bound.
"""

from __future__ import annotations

import ast
import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixexec.adapters import AdapterOptions, bfcl
from prefixexec.adapters.bfcl.execute import MAX_POWER_BITS
from prefixexec.adapters.bfcl.parse import MAX_STEP_CHARS, decode_prompting, parse_call_string
from prefixexec.kernel import Label

from conftest import REPO

#: Wall-clock bound for deciding one hostile rollout (generous for a shared 2-core machine).
BOUND_S = 10.0
MARKER = "PWNED_BY_MODEL_OUTPUT"

HOSTILE = [
    f"ls(a=__import__('os').system('touch {MARKER}'))",
    f"__import__('os').system('touch {MARKER}')",
    f"getattr(__import__('os'), 'system')('touch {MARKER}')",
    "getattr(ls, '__globals__')",
    f"os.system('touch {MARKER}')",
    f"ls.__class__.__init__.__globals__['os'].system('touch {MARKER}')",
    f"ls(a=(lambda: __import__('os').system('touch {MARKER}'))())",
    f"ls(a=lambda: open('{MARKER}', 'w'))",
    f"ls(a=[open('{MARKER}', 'w') for _ in range(1)])",
    f"ls(a={{k: open('{MARKER}', 'w') for k in 'a'}})",
    f"ls(*[open('{MARKER}', 'w')])",
    f"ls(**{{'a': open('{MARKER}', 'w')}})",
    f"cd(folder=open('{MARKER}', 'w').name)",
    "cd(folder=cd(folder='..'))",
    "__builtins__(x=1)",
    "__class__(x=1)",
    f'exec(source=\'open("{MARKER}", "w")\')',
    f'eval(source=\'open("{MARKER}", "w")\')',
    f'ls(a=f\'{{open("{MARKER}", "w")}}\')',
    "ls(a=" + "[" * 150 + "]" * 150 + ")",
    "ls(a=" + "[" * 100_000 + "]" * 100_000 + ")",
    "ls(a=" + "{'k': " * 150 + "1" + "}" * 150 + ")",
    "power(base=10, exponent=" + "9" * 5000 + ")",
    "power(base=7, exponent=99999999999)",
    "square_root(number=2, precision=1000000000)",
    "logarithm(value=2, base=3, precision=1000000000)",
    "echo(content='" + "A" * (MAX_STEP_CHARS + 10) + "')",
]


def _hostile_entries(text: str) -> tuple[list[object], list[object]]:
    """The same hostile call as a prompting step and as a function-calling step."""
    prompting = [[text, "done"], [], [], []]
    try:
        node = ast.parse(text, mode="eval").body
        name = ast.unparse(node.func) if isinstance(node, ast.Call) else "x"
        arguments: dict[str, object] = {}
        if isinstance(node, ast.Call):
            # Function-calling arguments are JSON data: the hostile source travels as strings.
            arguments = {k.arg or "kwargs": ast.unparse(k.value) for k in node.keywords}
            if node.args:
                arguments["args"] = [ast.unparse(a) for a in node.args]
    except (SyntaxError, RecursionError, ValueError, MemoryError):
        name, arguments = "ls", {"a": text[:1000]}  # unparsable: sent as a string argument
    function_calling = [[[{name: json.dumps(arguments)}], "done"], [], [], []]
    return prompting, function_calling


def _files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.mark.spec("BFCL-SECURITY", "BFCL-LIMITS")
@pytest.mark.parametrize("text", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_output_is_rejected_and_nothing_runs(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    prompting, function_calling = _hostile_entries(text)
    files = {
        "m": [{"id": "multi_turn_base_1", "result": prompting}],
        "m-FC": [{"id": "multi_turn_base_1", "result": function_calling}],
    }
    paths = []
    for model, lines in files.items():
        path = tmp_path / "result" / model / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
        paths.append(str(path))
    before = _files_under(tmp_path)
    start = time.perf_counter()
    rollouts = bfcl.read_results(paths, AdapterOptions()).rollouts
    direct = bfcl.replay_calls("multi_turn_base_1", [[text], [], [], []])
    elapsed = time.perf_counter() - start
    assert elapsed < BOUND_S
    assert _files_under(tmp_path) == before
    assert not (work / MARKER).exists() and not (REPO / MARKER).exists()
    by_model = {r.condition.model: r.outcome for r in rollouts}
    # Prompting text: a schema failure at the first (and only) call, or, for text that BFCL
    # cannot decode as calls at all, a reply, leaving no tool call (T = 1, FED = 1, unlabelled).
    prompting_outcome = by_model["m"]
    assert prompting_outcome.fed == 1
    assert prompting_outcome.label is Label.SCHEMA or (
        prompting_outcome.T == 1 and prompting_outcome.label is None
    )
    # Function-calling arguments are JSON data: the hostile source arrives as a string value,
    # which no function accepts here (rejected at the first call, whatever the label).
    assert by_model["m-FC"].fed == 1
    assert direct.outcome.fed == 1 and direct.outcome.label is Label.SCHEMA
    assert not any(r.executed for r in direct.records)


@pytest.mark.spec("BFCL-LIMITS")
def test_the_limits_keep_legitimate_values_and_refuse_huge_ones() -> None:
    task_id = next(
        t
        for t in (f"multi_turn_base_{i}" for i in range(200))
        if "MathAPI" in bfcl.task(t).entry.involved_classes
    )
    ok = bfcl.replay_calls(
        task_id, [["power(base=2, exponent=1000)", "square_root(number=2, precision=50)"]], success=False
    )
    assert ok.outcome.fully_executable
    assert ok.records[0].result == json.dumps({"result": 2**1000})
    too_big = bfcl.replay_calls(task_id, [[f"power(base=2, exponent={MAX_POWER_BITS + 1})"]], success=False)
    assert too_big.outcome.label is Label.SCHEMA and not too_big.records[0].executed
    assert "bits" in str(too_big.outcome.reason)


@pytest.mark.spec("BFCL-SECURITY")
def test_no_eval_exec_or_compile_in_the_adapter() -> None:
    # The reference module imports BFCL's eval-based executor for trusted inputs only; it has
    # no eval/exec/compile of its own either.
    paths = sorted((REPO / "adapters" / "bfcl").glob("*.py"))
    # The package's modules (the check must not pass vacuously on an empty glob).
    assert {p.name for p in paths} >= {"__init__.py", "parse.py", "execute.py", "semantics.py", "reader.py"}
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert not calls & {"eval", "exec", "compile", "__import__"}, path.name
        imports = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert "execute_multi_turn_func_call" not in imports, path.name


@pytest.mark.spec("BFCL-SECURITY")
@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_arbitrary_text_never_crashes_the_decoder(text: str) -> None:
    step = decode_prompting(text)
    for call in step.calls:
        assert call.fault is not None or call.name.isidentifier()
    parse_call_string(text)


@pytest.mark.spec("BFCL-SECURITY")
@settings(max_examples=100, deadline=None)
@given(text=st.from_regex(r"\[?[a-z_]{1,8}\((([a-z]{1,3}=)?[^()]{0,20}(, )?){0,3}\)\]?", fullmatch=True))
def test_call_shaped_text_is_decided_without_running_anything(
    text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("fuzz")
    here = os.getcwd()
    os.chdir(work)
    try:
        evaluation = bfcl.replay_calls("multi_turn_base_1", [[text], [], [], []], success=False)
    finally:
        os.chdir(here)
    assert evaluation.outcome.T == 1 and 1 <= evaluation.outcome.fed <= 2
    assert list(work.iterdir()) == []
