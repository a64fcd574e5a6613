"""Success equals BFCL's own verdict, entry by entry, on every BFCL result file the tests have
(spec: BFCL-PARITY, BFCL-STEP, BFCL-STRING-TURN, BFCL-INFERENCE-ERROR).

The reference is BFCL's own runner loop around ``multi_turn_checker`` (bfcl-eval 2026.3.23, the
installed test dependency), run in this process by tests/bfcl_parity.py behind its gate (no entry
whose decoded calls BFCL's ``eval`` could resolve to anything but an API method reaches it). The
real files: tests/data/real/bfcl-gpt-oss-20b (gpt-oss-20b, SOURCE.md there) and tests/data/real/bfcl-v4
(Claude Sonnet 4.5 and DeepSeek V3.1 Terminus in FC mode, SOURCE.md there); the crafted
tests/data/bfcl/result files and a file written here cover the shapes the real ones lack.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from bfcl_parity import compare_file, result_files, unsafe_call, unsafe_text

from prefixexec.adapters import AdapterOptions, bfcl
from prefixexec.adapters.bfcl import backend
from prefixexec.cli import main

from conftest import REAL as REAL_RUNS
from conftest import REPO

REAL = REAL_RUNS / "bfcl-gpt-oss-20b"
CRAFTED = REPO / "tests" / "data" / "bfcl" / "result"
FIXTURES = REAL_RUNS / "bfcl-v4"
CLAUDE = FIXTURES / "claude-sonnet-4-5-FC" / "BFCL_v4_multi_turn_base_result.json"
DEEPSEEK = FIXTURES / "deepseek-v3.1-terminus-FC" / "BFCL_v4_multi_turn_base_result.json"
GPT_OSS = REAL / "openai_gpt-oss-20b" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tree_sitter's, at import


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.spec("BFCL-PARITY", "BFCL-SUCCESS", "BFCL-STEP")
@pytest.mark.parametrize(
    "path",
    [*result_files([str(REAL), str(FIXTURES)]), *result_files([str(CRAFTED)])],
    ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"[-40:],
)
def test_success_is_bfcls_own_verdict_on_every_entry(path: Path) -> None:
    parity = compare_file(path)
    # Every entry passes the gate (nothing BFCL's eval could run but API methods) and agrees.
    assert [r[0] for r in parity.rows if r[1].valid is None] == []
    assert parity.differences == (), parity.differences
    assert len(parity.rows) == len(_entries(path))


def test_the_parity_files_are_all_there() -> None:
    # 1 real file under tests/data, 2 under tests/data/real/bfcl-v4 (SOURCE.md files), 2 crafted ones.
    found = {p.name for p in result_files([str(REAL), str(FIXTURES), str(CRAFTED)])}
    assert len(list(result_files([str(REAL), str(FIXTURES)]))) == 3
    assert found == {"BFCL_v4_multi_turn_base_result.json", "BFCL_v4_multi_turn_miss_func_result.json"}


@pytest.mark.spec("BFCL-PARITY")
def test_bfcls_verdicts_on_the_real_files() -> None:
    # What BFCL's checker (run here) says, per file: gpt-oss-20b 2 of 15 valid; Claude both of its
    # 2 entries; DeepSeek base_1 only. (tests/data/real/bfcl-v4/SOURCE.md says base_0 fails for both models:
    # for Claude, BFCL's checker on bfcl-eval 2026.3.23's data says otherwise.)
    valid = {p.parent.name: compare_file(p).bfcl_valid for p in (GPT_OSS, CLAUDE, DEEPSEEK)}
    assert valid == {"multi_turn": 2, "claude-sonnet-4-5-FC": 2, "deepseek-v3.1-terminus-FC": 1}
    by_id = {r[0]: r[1] for r in compare_file(DEEPSEEK).rows}
    assert (by_id["multi_turn_base_0"].valid, by_id["multi_turn_base_1"].valid) == (False, True)


@pytest.mark.spec("BFCL-STEP", "BFCL-DROPPED", "BFCL-INPUT")
def test_anthropic_text_blocks_are_replies() -> None:
    # Independent count over the raw JSON: a step is an element of a turn; a text step is a list
    # whose items are all strings (Claude's text blocks); a call is a {name: arguments} item.
    entries = _entries(CLAUDE)
    steps = [step for e in entries for turn in e["result"] for step in turn]
    texts = [s for s in steps if isinstance(s, list) and s and all(isinstance(i, str) for i in s)]
    calls = [i for s in steps if isinstance(s, list) for i in s if isinstance(i, dict)]
    assert (len(steps), len(texts), len(calls)) == (28, 8, 22)  # the loop above
    read = bfcl.read_results([str(CLAUDE)], AdapterOptions())
    (summary,) = read.files
    assert (summary.steps, summary.text_steps, summary.calls, summary.mixed_steps) == (28, 8, 22, 0)
    # BFCL's inference_log records one "Error decoding the model response" per text step (its
    # decoder raises on text): the audit's comparison agrees.
    assert (summary.logged_decode_errors, summary.log_agrees) == (8, True)
    # Every call of the file is an action: T of each rollout is its number of calls.
    per_entry = [sum(isinstance(i, dict) for t in e["result"] for s in t for i in s) for e in entries]
    assert [r.outcome.T for r in read.rollouts] == per_entry == [14, 8]


@pytest.mark.spec("BFCL-DROPPED", "BFCL-AUDIT")
def test_audit_of_the_real_fc_files_agrees_with_their_logs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--adapter", "bfcl", "--category", "base", str(CLAUDE), str(DEEPSEEK)]) == 0
    out = capsys.readouterr().out
    # DeepSeek's 8 text replies are plain strings, Claude's 8 are lists of text: 8 logged each.
    assert out.count("records 8 'Error decoding the model response'") == 2 and "DIFFERS" not in out
    assert out.count("text replies in function-calling steps (BFCL's loop skips them): 8") == 2


def _written(tmp_path: Path, name: str, entries: list[dict[str, Any]]) -> Path:
    path = tmp_path / "demo" / "multi_turn" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def _gold(task_id: str) -> list[list[str]]:
    return [list(t) for t in backend.entry(task_id).gold]


@pytest.mark.spec("BFCL-STRING-TURN", "BFCL-PARITY")
def test_string_turns_are_decoded_as_steps_bfcl_runs_none_of(tmp_path: Path) -> None:
    base_0 = _gold("multi_turn_base_0")  # 4 turns: 3, 2, 1 and 4 calls (hand count of the gold)
    base_2 = _gold("multi_turn_base_2")
    entries = [
        # every turn one string: the gold calls as text
        {"id": "multi_turn_base_0", "result": ["[" + ", ".join(t) + "]" for t in base_0]},
        # the first turn a string, the others lists of one step
        {"id": "multi_turn_base_2", "result": ["[" + ", ".join(base_2[0]) + "]"]
         + [["[" + ", ".join(t) + "]"] for t in base_2[1:]]},
    ]  # fmt: skip
    path = _written(tmp_path, "BFCL_v4_multi_turn_base_result.json", entries)
    read = bfcl.read_results([str(path)], AdapterOptions())
    (summary,) = read.files
    calls = sum(len(turn) for turn in base_0) + len(base_2[0])
    assert (summary.string_turns, summary.string_turn_calls) == (5, calls)
    base0, base2 = read.rollouts
    # The calls are the model's actions (sort('final_report.pdf') of the gold's third turn is a
    # positional call, rejected in prompting output: BFCL-PARSE), but BFCL decodes nothing of a
    # string turn: turn 1 is empty for its checker.
    assert (base0.outcome.T, base0.outcome.fed, base0.success) == (10, 6, False)
    assert str(base0.meta["success_check"]).startswith("empty_turn_model_response: turn 1 ")
    assert (base2.outcome.T, base2.outcome.fully_executable, base2.success) == (8, True, False)
    parity = compare_file(path)
    assert parity.checked == 2 and parity.differences == ()


@pytest.mark.spec("BFCL-STEP", "BFCL-PARITY")
def test_a_step_mixing_text_with_calls_is_dropped_by_bfcl_not_here(tmp_path: Path) -> None:
    gold = _gold("multi_turn_base_1")  # ls(a=True); cd, mv; cd, grep; tail (hand read)

    def fc(call: str) -> dict[str, str]:
        node = ast.parse(call, mode="eval").body  # the gold's literal keyword arguments
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        return {node.func.id: json.dumps({k.arg: ast.literal_eval(k.value) for k in node.keywords})}

    turns = [[[fc(c) for c in turn]] for turn in gold]
    mixed = [list(t) for t in turns]
    mixed[1] = [[*mixed[1][0], "Moving the log now."]]  # text beside turn 2's calls
    path = _written(
        tmp_path,
        "BFCL_v4_multi_turn_base_result.json",
        [{"id": "multi_turn_base_1", "result": turns}],
    )
    other = _written(
        tmp_path / "x",
        "BFCL_v4_multi_turn_base_result.json",
        [{"id": "multi_turn_base_1", "result": mixed}],
    )
    (clean,) = bfcl.read_results([str(path)], AdapterOptions()).rollouts
    read = bfcl.read_results([str(other)], AdapterOptions())
    (rollout,) = read.rollouts
    (summary,) = read.files
    assert (summary.mixed_steps, summary.mixed_calls) == (1, 2)
    # The calls of the mixed step stay executable actions here; BFCL never runs them, so its
    # checker finds turn 2 empty: Y = 0, while the clean file succeeds.
    assert clean.success and clean.outcome.fully_executable
    assert rollout.outcome.fully_executable and not rollout.success
    assert str(rollout.meta["success_check"]).startswith("empty_turn_model_response: turn 2 ")
    assert compare_file(other).differences == () and compare_file(path).differences == ()


@pytest.mark.spec("BFCL-PARITY", "BFCL-PARSE")
def test_a_positional_call_runs_with_its_keywords_only_for_y(tmp_path: Path) -> None:
    # ls(True) in prompting output: a schema failure here (BFCL-PARSE); BFCL runs ls() and gets
    # the listing without hidden files, so its response check for turn 1 decides Y.
    gold = _gold("multi_turn_base_1")
    assert gold[0] == ["ls(a=True)"]  # hand read
    turns = [["[" + ", ".join(t) + "]"] for t in gold]
    turns[0] = ["[ls(True)]"]
    path = _written(
        tmp_path, "BFCL_v4_multi_turn_base_result.json", [{"id": "multi_turn_base_1", "result": turns}]
    )
    (rollout,) = bfcl.read_results([str(path)], AdapterOptions()).rollouts
    assert (rollout.outcome.fed, rollout.outcome.label is not None) == (1, True)
    parity = compare_file(path)
    assert parity.checked == 1 and parity.differences == ()


@pytest.mark.spec("BFCL-PARITY", "BFCL-SECURITY")
def test_the_gate_keeps_evaluable_output_from_bfcls_eval() -> None:
    methods = {"cd", "ls"}
    taken: dict[str, object] = {"open": open, "exec": exec, "__import__": __import__, "print": print}
    assert unsafe_call("cd(folder='a')", methods, taken) is None
    assert unsafe_call("cd(folder=ls(a=True))", methods, taken) is None  # a nested API call
    assert unsafe_call("nope(x=1)", methods, taken) is None  # NameError in BFCL's eval
    assert unsafe_call("echo<|channel|>x(a=1)", methods, taken) is None  # SyntaxError there
    for text in (
        "open(file='x', mode='w')",
        "cd(folder=open(file='x'))",
        "__import__(name='os')",
        "os.system(command='ls')",
        "cd(folder=x)",
        "cd(folder=[1][0])",
        "cd(folder=exec(cmd='x'))",  # inside another call: not let through
    ):
        assert unsafe_call(text, methods, taken) is not None, text
    # A builtin whose signature cannot bind the keywords raises TypeError before it runs (the
    # gpt-oss-120b files call exec(cmd=[...])): let through.
    assert unsafe_call("exec(cmd=['bash', '-lc', 'ls'])", methods, taken) is None
    assert unsafe_text("[cd(folder='a')]") is None
    assert unsafe_text("[cd(folder=1+2)]") is not None  # BFCL's decoder evaluates BinOp
    assert unsafe_text("[cd(folder=lambda: 1)]") is not None


@pytest.mark.spec("BFCL-HANDLERS", "BFCL-DROPPED")
def test_json_tool_calls_written_as_text_are_said_not_silently_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What a local model's handler writes (xLAM: [{"name", "arguments"}]; Llama 3.1: {"name",
    # "parameters"} joined by ";"); BFCL decodes them with the handler's own decoder, which the
    # folder name "demo" does not tell: read with the API rules, warned about, --bfcl-decoder named.
    steps = [
        '[{"name": "cd", "arguments": {"folder": "document"}}]',
        '{"name": "ls", "parameters": {}}; {"name": "pwd", "parameters": {}}',
        '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>',
        "I moved the file.",
        '{"name": "not a call"}',
    ]
    assert [bfcl.reader.json_call_text(s) for s in steps] == [True, True, True, False, False]
    path = _written(tmp_path, "BFCL_v4_multi_turn_base_result.json", [
        {"id": "multi_turn_base_1", "result": [steps, ["Done."], ["Done."], ["Done."]]},
    ])  # fmt: skip
    (rollout,) = bfcl.read([str(path)], AdapterOptions())
    err = capsys.readouterr().err
    assert "3 text steps hold JSON tool calls" in err and "--bfcl-decoder" in err and "BFCL-HANDLERS" in err
    assert rollout.outcome.T == 1  # read as replies: the no-tool action, as BFCL's API rules read them
    (summary,) = bfcl.read_results([str(path)], AdapterOptions()).files
    assert (summary.json_call_texts, summary.decoder) == (3, "api")
    # Named, the xLAM decoder reads its own step (the first) as a call; Llama's two objects (no
    # "arguments") and the last one are calls it raises on: schema failures, never run by BFCL; the
    # tagged text and the prose are replies. Nothing is warned about.
    (xlam,) = bfcl.read([str(path)], AdapterOptions(extra={"bfcl_decoder": "xlam"}))
    assert (xlam.outcome.T, xlam.outcome.fed, xlam.meta["action_texts"][0]) == (4, 1, "cd(folder='document')")
    assert "JSON tool calls" not in capsys.readouterr().err
