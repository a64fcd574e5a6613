"""BFCL handlers' own decoders (spec: BFCL-DECODERS, BFCL-HANDLERS, BFCL-PARITY).

Three references, none of them our own code: (1) the expected decoding of each crafted step,
written by hand from the handler source the rule comes from (cited on each row, bfcl-eval
2026.3.23); (2) BFCL's own ``decode_execute`` of the handler classes, imported from the installed
package by tests/bfcl_parity.py (vendor SDKs stood in for at import; ``LlamaHandler_3_1``'s
``eval`` reached only behind its gate), on the same rows and on Hypothesis-generated steps; (3)
BFCL's checker, run in-process on crafted result files written in each handler family's format
under the folder name BFCL's model map gives that family, so the decoder is chosen as in a real
run. The real files these decoders were verified on (xLAM, Llama 3.1 FC, Ministral) are fetched,
not committable: their counts are in docs/bfcl-parity.md.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
from bfcl_parity import _decode, _ours, compare_file, llama_unsafe, reference, same_decoding
from hypothesis import given, settings
from hypothesis import strategies as st

import prefixexec
from prefixexec.adapters import AdapterOptions, InputError, bfcl
from prefixexec.adapters.bfcl import backend, decoders
from prefixexec.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tree_sitter's, at import

CALL = ("calls",)
ERROR = ("error",)
EMPTY = ("empty",)

# (decoder, step, expected decoding, the handler rule it follows). Expected calls are spelled as
# BFCL's decoders spell them, name(k=repr(v),...); compared in one spelling (ast.unparse).
ROWS: list[tuple[str, Any, tuple[str, ...], str]] = [
    # local_inference/salesforce_llama.py (and salesforce_qwen.py) decode_execute
    (
        "xlam",
        '[{"name": "cd", "arguments": {"folder": "a"}}]',
        (*CALL, "cd(folder='a')"),
        "json.loads: a list",
    ),
    (
        "xlam",
        '{"name": "cd", "arguments": {"folder": "a"}}',
        (*CALL, "cd(folder='a')"),
        "not a list: [value]",
    ),
    (
        "xlam",
        '{"name": "cd", "arguments": {}}; {"name": "ls", "arguments": {"a": true}}',
        (*CALL, "cd()", "ls(a=True)"),
        "JSONDecodeError: split on ; and json.loads each stripped part",
    ),
    ("xlam", '{"name": "cd", "arguments": {}};', ERROR, "an empty part after ; does not load"),
    ("xlam", "I moved the file.", ERROR, "neither loads"),
    ("xlam", "[]", EMPTY, "no item: an empty call list"),
    ("xlam", '[{"name": "cd"}]', ERROR, 'call["arguments"] raises KeyError'),
    ("xlam", '[{"name": "cd", "arguments": "{}"}]', ERROR, "arguments.items() on a string raises"),
    ("xlam", "5", ERROR, "5['name'] raises TypeError"),
    ("xlam", [{"cd": {"folder": "a"}}], ERROR, "json.loads of a list raises TypeError"),
    # local_inference/llama_3_1.py decode_execute
    (
        "llama-3.1",
        '<|python_tag|>{"name": "cd", "parameters": {"folder": "a"}}; {"name": "ls", "parameters": {}}',
        (*CALL, "cd(folder='a')", "ls()"),
        "<|python_tag|> removed; ; -> json.loads of each part",
    ),
    (
        "llama-3.1",
        '{"name": "ls", "parameters": {"a": true}}',
        ERROR,
        "no ;: eval, and JSON's true is a NameError",
    ),
    (
        "llama-3.1",
        "{'name': 'ls', 'parameters': {'a': True}}",
        (*CALL, "ls(a=True)"),
        "no ;: eval of a dict -> [dict]",
    ),
    (
        "llama-3.1",
        '{"name": "cd", "parameters": {"folder": "a"}}, {"name": "ls", "parameters": {}}',
        (*CALL, "cd(folder='a')", "ls()"),
        "no ;: eval of a tuple, iterated",
    ),
    ("llama-3.1", '  {"name": "ls", "parameters": {}}', (*CALL, "ls()"), "eval strips leading spaces"),
    ("llama-3.1", '{"name": "ls", "arguments": {}}', ERROR, 'call["parameters"] raises KeyError'),
    ("llama-3.1", '""', EMPTY, "eval gives an empty text: iterating it yields no call"),
    ("llama-3.1", "{1, 2}", ERROR, "a set: its items are not subscriptable by 'name'"),
    ("llama-3.1", "The file is moved; done.", ERROR, "; -> json.loads of prose raises"),
    # local_inference/qwen_fc.py decode_execute + _extract_tool_calls (granite_4, pelican_vl_fc, nanbeige_fc)
    (
        "tool-call-tags",
        '<tool_call>\n{"name": "cd", "arguments": {"folder": "a"}}\n</tool_call>\n<tool_call>\n'
        '{"name": "ls", "arguments": {}}\n</tool_call>',
        (*CALL, "cd(folder='a')", "ls()"),
        "every tag body",
    ),
    (
        "tool-call-tags",
        '<tool_call>\n{"name": "cd", "arguments": "{\\"folder\\": \\"a\\"}"}\n</tool_call>',
        (*CALL, "cd(folder='a')"),
        "convert_to_function_call parses string arguments",
    ),
    (
        "tool-call-tags",
        '<tool_call>\nnot json\n</tool_call>\n<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>',
        (*CALL, "ls()"),
        "a body that does not load is dropped silently",
    ),
    ("tool-call-tags", "Done, the file is moved.", EMPTY, "no tag: [] -> no call, no error"),
    (
        "tool-call-tags",
        '<tool_call>{"name": "ls", "arguments": {}}</tool_call>',
        EMPTY,
        "the tags need their newlines",
    ),
    (
        "tool-call-tags",
        "<tool_call>\n[1]\n</tool_call>",
        ERROR,
        "a loaded value that is not an object raises",
    ),
    (
        "tool-call-tags",
        '<tool_call>\n{"name": "ls"}\n</tool_call>',
        ERROR,
        'item["arguments"] raises KeyError',
    ),
    # local_inference/bitagent.py decode_execute
    (
        "json-calls",
        '[{"name": "cd", "arguments": {"folder": "a"}}]',
        (*CALL, "cd(folder='a')"),
        "json.loads, name/arguments",
    ),
    (
        "json-calls",
        '{"name": "cd", "arguments": {}}; {"name": "ls", "arguments": {}}',
        ERROR,
        "no ; fallback",
    ),
    # local_inference/hammer.py decode_execute + xlam_json_to_python_tool_calls
    (
        "hammer",
        '```[{"name": "cd", "arguments": {"folder": "a"}}]```',
        (*CALL, "cd(folder='a')"),
        "``` removed",
    ),
    (
        "hammer",
        '{"tool_calls": [{"name": "ls", "arguments": {}}]}',
        (*CALL, "ls()"),
        "an object's tool_calls",
    ),
    (
        "hammer",
        '[{"name": "ls", "arguments": {}}, 5]',
        (*CALL, "ls()"),
        "items that are no objects are skipped",
    ),
    ("hammer", "Sure, done.", EMPTY, "json.loads fails: [] (no error)"),
    ("hammer", '[{"name": "ls", "arguments": "x"}]', ERROR, "arguments.items() on a string raises"),
    # local_inference/falcon_fc.py decode_execute
    (
        "falcon",
        '<tool_call>```json\n[{"name": "cd", "arguments": {"folder": "a"}}]```</tool_call>',
        (*CALL, "cd(folder='a')"),
        "the first tag's body, fences and json removed",
    ),
    ("falcon", '[{"name": "cd", "arguments": {}}]', ERROR, "no <tool_call>: raises"),
    # local_inference/glm.py decode_execute
    ("glm", 'cd\n{"folder": "a"}', (*CALL, "cd(folder='a')"), "name line, JSON arguments line"),
    ("glm", "Done.", ERROR, "one line: convert_to_function_call of a text raises"),
    ("glm", "", EMPTY, "an empty text: no call"),
    # local_inference/mistral_fc.py decode_execute (arch, phi_fc, granite_3, api_inference/nova)
    ("fc-list", [{"cd": '{"folder": "a"}'}], (*CALL, "cd(folder='a')"), "a list: convert_to_function_call"),
    ("fc-list", {"cd": {"folder": "a"}}, ERROR, "an object, not a list: raises"),
    ("fc-list", '[cd(folder="a")]', ERROR, "a text: raises"),
    # local_inference/phi.py decode_execute
    ("phi", '```json\n[cd(folder="a")]```', (*CALL, "cd(folder='a')"), "```json removed, then prompting"),
    # api_inference/nemotron.py decode_execute
    (
        "nemotron",
        'I will.<TOOLCALL>[cd(folder="a")]</TOOLCALL>',
        (*CALL, "cd(folder='a')"),
        "the first TOOLCALL body",
    ),
    ("nemotron", "No tool needed.", EMPTY, "no TOOLCALL: []"),
    # api_inference/cohere.py decode_execute
    (
        "cohere",
        [{"tool_name": "cd", "parameters": {"folder": "a"}}],
        (*CALL, "cd(folder='a')"),
        "tool_name/parameters",
    ),
    ("cohere", "Done.", EMPTY, "not a list: []"),
    # api_inference/mining.py decode_execute
    (
        "mining",
        [{"name": "cd", "arguments": {"folder": "a"}}, "x"],
        (*CALL, "cd(folder='a')"),
        "object items only",
    ),
    ("mining", "Done.", EMPTY, "a text's characters are no objects: []"),
]

#: The Gemini handler's module imports google-genai: its rules are checked against the hand-written
#: expectations only (api_inference/gemini.py decode_execute).
GEMINI_ROWS: list[tuple[str, Any, tuple[str, ...], str]] = [
    (
        "gemini-fc",
        [{"cd": {"folder": "a"}}, {"ls": {}}],
        (*CALL, "cd(folder='a')", "ls()"),
        "items' name: arguments",
    ),
    ("gemini-fc", [{"cd": '{"folder": "a"}'}], ERROR, "string arguments are not parsed: .items() raises"),
    ("gemini-fc", "Done.", ERROR, "iterating a text's characters: .items() raises"),
    ("gemini-prompting", '```tool_code\n[cd(folder="a")]\n```', (*CALL, "cd(folder='a')"), "fences removed"),
]


def _ids(row: tuple[str, Any, tuple[str, ...], str]) -> str:
    return f"{row[0]}: {row[3]}"


@pytest.mark.spec("BFCL-DECODERS")
@pytest.mark.parametrize("row", ROWS + GEMINI_ROWS, ids=_ids)
def test_each_decoder_rule(row: tuple[str, Any, tuple[str, ...], str]) -> None:
    name, step, expected, _ = row
    ours = _ours(decoders.DECODERS[name], step, function_calling=True)
    assert same_decoding(expected, ours), ours


def _bfcl(name: str, step: Any, handler: int = 0) -> tuple[str, ...]:
    ref = reference(name, True, handler)
    assert ref is not None
    try:
        ref.decode(step)
    except Exception:
        return ERROR
    calls = _decode(step, ref)
    return (*CALL, *calls) if calls else EMPTY


@pytest.mark.spec("BFCL-DECODERS", "BFCL-PARITY")
@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_bfcls_own_handlers_decode_each_row_the_same(row: tuple[str, Any, tuple[str, ...], str]) -> None:
    name, step, expected, _ = row
    ref = reference(name, True)
    assert ref is not None and ref.gate(step) is None
    for handler in range(len(__import__("bfcl_parity").HANDLERS[name])):  # every class of the family
        assert same_decoding(_bfcl(name, step, handler), expected), (handler, _bfcl(name, step, handler))


# --- Hypothesis: generated steps, ours against BFCL's own handler ----------------------------------

_names = st.sampled_from(["cd", "ls", "mv", "grep", "echo", "", "a b", "x.y", "<|x|>"])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=6), st.floats(-2, 2))
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
_objects = st.dictionaries(st.sampled_from(["folder", "a", "x y", "1"]), _values, max_size=3)
_arguments = st.one_of(_objects, _objects, _objects, _values)  # mostly objects, as the handlers expect


@st.composite
def _items(draw: st.DrawFn, args_key: str) -> list[Any]:
    items = []
    for _ in range(draw(st.integers(0, 3))):
        item: dict[str, Any] = {}
        if draw(st.integers(0, 7)):
            item["name"] = draw(_names)
        if draw(st.integers(0, 7)):
            item[args_key] = draw(_arguments)
        items.append(item if draw(st.integers(0, 9)) else draw(_values))
    return items


@st.composite
def _texts(draw: st.DrawFn, name: str) -> str:
    """A step as the family's handler would see it: its format, sometimes bent (joined, wrapped,
    cut, prose around it)."""
    args_key = "parameters" if name == "llama-3.1" else "arguments"
    items = draw(_items(args_key))
    form = draw(st.integers(0, 5))
    if name == "tool-call-tags":
        text = "\n".join(f"<tool_call>\n{json.dumps(i)}\n</tool_call>" for i in items)
    elif name == "falcon":
        text = f"<tool_call>{json.dumps(items)}</tool_call>"
    elif name == "glm":
        text = "\n".join(
            f"{i.get('name', '')}\n{json.dumps(i.get(args_key, {}))}" for i in items if isinstance(i, dict)
        )
    elif name == "llama-3.1" and form == 1:
        text = ", ".join(repr(i) for i in items)  # Python literals, as eval reads them
    elif form in (0, 1):
        text = json.dumps(items if len(items) != 1 or form else items[0])
    elif form == 2:
        text = "; ".join(json.dumps(i) for i in items)
    elif form == 3:
        text = "```" + json.dumps(items) + "```"
    else:
        text = json.dumps(items)
    if draw(st.integers(0, 7)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    if draw(st.integers(0, 7)) == 0:
        text = draw(st.sampled_from(["Sure. ", "<|python_tag|>", " ", "\n"])) + text
    return text


_TEXT_FAMILIES = ["xlam", "llama-3.1", "tool-call-tags", "json-calls", "hammer", "falcon", "glm"]


@pytest.mark.spec("BFCL-DECODERS", "BFCL-PARITY")
@pytest.mark.parametrize("name", _TEXT_FAMILIES)
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_generated_steps_decode_as_bfcls_own_handlers_do(name: str, data: st.DataObject) -> None:
    step = data.draw(_texts(name))
    ref = reference(name, True)
    assert ref is not None
    if name == "llama-3.1" and llama_unsafe(step) is not None:
        # BFCL would eval it: ours keeps it undecoded, counted (BFCL-DIFF); never handed over.
        assert _ours(decoders.DECODERS[name], step, function_calling=True) == ("eval",)
        return
    assert same_decoding(_bfcl(name, step), _ours(decoders.DECODERS[name], step, function_calling=True))


@pytest.mark.spec("BFCL-DECODERS", "BFCL-PARITY")
def test_argument_names_that_are_blank_decode_as_bfcls_hammer_does() -> None:
    # Found by the property above: names '' and ' ' are not Python, so the call strings are
    # compared as spelled (BFCL's handler joins with ', ', ours with ','), not unparsed.
    step = json.dumps([{"name": "cd", "arguments": {"": None, " ": None}}])
    assert _bfcl("hammer", step) == ("calls", "cd(=None,  =None)")
    ours = _ours(decoders.DECODERS["hammer"], step, function_calling=True)
    assert ours == ("calls", "cd(=None, =None)")
    assert same_decoding(_bfcl("hammer", step), ours)
    assert not same_decoding(_bfcl("hammer", step), ("calls", "cd(=None,=None)"))


_NOISE = st.text(alphabet="{}[]()\"':,;<>|/ _nameprtsgu01.-+\n\\`", max_size=80)


@pytest.mark.spec("BFCL-DECODERS", "BFCL-SECURITY")
@pytest.mark.parametrize("name", sorted(decoders.DECODERS))
@settings(max_examples=200, deadline=None)
@given(
    step=st.one_of(
        st.text(max_size=200),
        _NOISE,
        st.sampled_from(["<tool_call>\n", "<TOOLCALL>"]).map(
            lambda tag: tag + '{"name": (1, 2), [3]: 4}'  # a Python-literal object with a non-JSON key
        ),
    )
)
def test_no_decoder_fails_on_any_text(name: str, step: str) -> None:
    # Fuzz: whatever the text, a decoder returns a step (calls, a reply or a refusal); never raises.
    decoded = decoders.decode(decoders.DECODERS[name], step, function_calling=True)
    assert all(isinstance(c.name, str) and isinstance(c.text, str) for c in decoded.calls)
    for refusal in ("{'name': 'x', (1, 2): 3}", "[{'name': 'x', (1,): {1, 2}}]", "{'name': {1: 2}}"):
        decoders.decode(decoders.DECODERS[name], refusal, function_calling=True)


# --- crafted result files, one per family, under the folder name BFCL's map gives it -------------


def _gold(task_id: str) -> list[list[tuple[str, dict[str, Any]]]]:
    """The ground truth's calls as (name, keyword arguments) (hand-checked: keywords only)."""
    turns = []
    for turn in backend.entry(task_id).gold:
        calls = []
        for text in turn:
            node = ast.parse(text, mode="eval").body
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args
            calls.append((node.func.id, {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}))
        turns.append(calls)
    return turns


def _python(calls: list[tuple[str, dict[str, Any]]]) -> str:
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls) + "]"


def _written(name: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """One turn's steps as the family's handler writes them: the calls, then a text reply."""
    reply = "Done: the task is complete."
    if name == "xlam":
        return [json.dumps([{"name": n, "arguments": a} for n, a in calls]), reply]
    if name == "llama-3.1":
        if len(calls) == 1:  # one call: eval reads it, so Python literals (JSON's true would not eval)
            return ["<|python_tag|>" + repr({"name": calls[0][0], "parameters": calls[0][1]}), reply]
        return ["; ".join(json.dumps({"name": n, "parameters": a}) for n, a in calls), reply]
    if name == "tool-call-tags":
        body = "\n".join(
            f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls
        )
        return [body, reply]
    if name == "json-calls":
        return [json.dumps([{"name": n, "arguments": a} for n, a in calls]), reply]
    if name == "hammer":
        return ["```\n" + json.dumps([{"name": n, "arguments": a} for n, a in calls]) + "\n```", reply]
    if name == "falcon":
        return [
            "<tool_call>\n" + json.dumps([{"name": n, "arguments": a} for n, a in calls]) + "\n</tool_call>",
            reply,
        ]
    if name == "glm":
        return [f"{n}\n{json.dumps(a)}" for n, a in calls] + [reply]
    if name == "fc-list":
        return [[{n: json.dumps(a)} for n, a in calls], reply]
    if name == "phi":
        return ["```json\n" + _python(calls) + "\n```", reply]
    if name == "nemotron":
        return ["<TOOLCALL>" + _python(calls) + "</TOOLCALL>", reply]
    if name == "cohere":
        return [[{"tool_name": n, "parameters": a} for n, a in calls], reply]
    if name == "mining":
        return [[{"name": n, "arguments": a} for n, a in calls], reply]
    if name == "gemini-fc":
        return [[{n: a} for n, a in calls], reply]
    if name == "gemini-prompting":
        return ["```tool_code\n" + _python(calls) + "\n```", reply]
    assert name == "prompting"
    return [_python(calls), reply]


#: A model folder per family, as BFCL names it (registry name, / -> _) in its model map.
FOLDERS = {
    "xlam": "Salesforce_Llama-xLAM-2-8b-fc-r",
    "llama-3.1": "meta-llama_Llama-3.1-8B-Instruct-FC",
    "tool-call-tags": "Qwen_Qwen3-8B-FC",
    "json-calls": "BitAgent_BitAgent-Bounty-8B",
    "hammer": "MadeAgents_Hammer2.1-7b",
    "falcon": "tiiuae_Falcon3-7B-Instruct-FC",
    "glm": "THUDM_glm-4-9b-chat",
    "fc-list": "mistralai_Ministral-8B-Instruct-2410",
    "phi": "microsoft_phi-4",
    "nemotron": "nvidia_llama-3.1-nemotron-ultra-253b-v1",
    "cohere": "command-a-03-2025-FC",
    "mining": "xiaoming-14B",
    "gemini-fc": "gemini-2.5-flash-FC",
    "gemini-prompting": "gemini-2.5-flash",
    "prompting": "meta-llama_Llama-3.2-3B-Instruct-FC",  # LlamaHandler: prompting, -FC or not
}


def _file(tmp_path: Path, name: str) -> Path:
    gold = _gold("multi_turn_base_1")  # 4 turns: 1, 2, 2 and 1 calls (hand count of the gold)
    good = [_written(name, turn) for turn in gold]
    bent = [list(t) for t in good]
    bent[0] = ["I cannot list the files, sorry."]  # a reply only: no family decodes a call from it
    path = tmp_path / FOLDERS[name] / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    path.parent.mkdir(parents=True)
    entries = [
        {"id": "multi_turn_base_1", "result": good},
        {"id": "multi_turn_base_2", "result": [["No."]] * 5},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    bent_path = tmp_path / "bent" / FOLDERS[name] / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    bent_path.parent.mkdir(parents=True)
    bent_path.write_text(json.dumps({"id": "multi_turn_base_1", "result": bent}) + "\n", encoding="utf-8")
    return path


@pytest.mark.spec("BFCL-HANDLERS", "BFCL-DECODERS", "BFCL-PARITY")
@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_a_family_file_is_read_with_its_handlers_decoder(tmp_path: Path, name: str) -> None:
    path = _file(tmp_path, name)
    read = bfcl.read_results([str(path)], AdapterOptions())
    (summary,) = read.files
    assert summary.decoder == name, summary.decoder_why
    good, replies = read.rollouts
    # The gold's 6 calls are the model's 6 actions, all executable; BFCL's rule gives Y = 1. The
    # other entry only replies: the no-tool action (BFCL-NOTOOL), Y = 0.
    assert (good.outcome.T, good.outcome.fully_executable, good.success) == (6, True, True)
    assert (replies.outcome.T, replies.success) == (1, False)
    bent = bfcl.read_results([str(tmp_path / "bent" / path.relative_to(tmp_path))], AdapterOptions())
    (rollout,) = bent.rollouts  # turn 1 has only a reply: BFCL's checker finds it empty
    assert not rollout.success and str(rollout.meta["success_check"]).startswith(
        "empty_turn_model_response: turn 1"
    )
    if name.startswith("gemini"):
        return  # BFCL's Gemini module imports google-genai: the expectations above are the check
    for file in (path, tmp_path / "bent" / path.relative_to(tmp_path)):
        parity = compare_file(file)
        assert parity.decoder == name and parity.checked == len(parity.rows)
        assert parity.differences == (), parity.differences


@pytest.mark.spec("BFCL-HANDLERS")
def test_the_api_rules_would_have_read_these_files_as_replies(tmp_path: Path) -> None:
    # The xLAM file under a folder name BFCL's map does not know: the API rules read its JSON
    # texts as replies (T = 1 and Y = 0 for every entry), warn, and name the option to use.
    source = _file(tmp_path, "xlam")
    path = tmp_path / "my-run" / "BFCL_v4_multi_turn_base_result.json"
    path.parent.mkdir()
    path.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    plain = bfcl.read_results([str(path)], AdapterOptions())
    assert [(r.outcome.T, r.success) for r in plain.rollouts] == [(1, False), (1, False)]
    (summary,) = plain.files
    assert (summary.decoder, summary.json_call_texts) == ("api", 4)  # the 4 turns' call steps
    named = bfcl.read_results([str(path)], AdapterOptions(extra={"bfcl_decoder": "xlam"}))
    by_handler = bfcl.read_results(
        [str(path)], AdapterOptions(extra={"bfcl_decoder": "SalesforceQwenHandler"})
    )
    for read in (named, by_handler):
        assert [(r.outcome.T, r.success) for r in read.rollouts] == [(6, True), (1, False)]
        assert read.files[0].decoder == "xlam" and read.files[0].json_call_texts == 0
    assert compare_file(path, "xlam").differences == ()
    # The Python API takes the option as the command line does (API-READ).
    api = prefixexec.read("bfcl", path, bfcl_decoder="xlam")
    assert [(r.outcome.T, r.success) for r in api] == [(6, True), (1, False)]


# --- BFCL's model map ------------------------------------------------------------------------------------


@pytest.mark.spec("BFCL-HANDLERS")
def test_bfcls_model_map_is_read_from_the_installed_package() -> None:
    found = decoders.handler_map()
    source = (Path(backend.package().__file__).parent / "constants" / "model_config.py").read_text("utf-8")
    # Independent count: one ModelConfig(...) with a model_handler= per model (2026.3.23: text search).
    assert len(found) == len(re.findall(r"model_handler=\w+", source))
    assert found["Salesforce_Llama-xLAM-2-8b-fc-r"] == decoders.MapEntry(
        "Salesforce/Llama-xLAM-2-8b-fc-r", "SalesforceLlamaHandler", True
    )
    assert found["meta-llama_Llama-3.1-8B-Instruct"].handler == "LlamaHandler"
    assert found["gemini-2.5-flash"].is_fc is False
    # Every handler the map names is mirrored or listed as not mirrored (a new one fails here).
    unknown = {e.handler for e in found.values()} - set(decoders.UNMIRRORED)
    assert {h for h in unknown if decoders.decoder_for_handler(h, True) is None} == set()


@pytest.mark.spec("BFCL-HANDLERS")
def test_every_handler_with_a_decoder_of_its_own_is_mirrored_or_named() -> None:
    # The classes of bfcl_eval/model_handler whose module defines decode_execute (a text search of
    # the installed sources), against decoders.py's families and its list of unmirrored ones.
    root = Path(backend.package().__file__).parent / "model_handler"
    own = set()
    for path in [*root.glob("api_inference/*.py"), *root.glob("local_inference/*.py")]:
        text = path.read_text("utf-8")
        if "def decode_execute" in text:
            own.update(re.findall(r"^class (\w+Handler\w*)\(", text, re.M))
    known = {h for d in decoders.DECODERS.values() for h in d.handlers} | set(decoders.UNMIRRORED)
    known |= {"OpenAICompletionsHandler", "OpenAIResponsesHandler", "GeminiHandler", "OSSHandler"}
    assert own - known == set()
    assert (
        "ThinkAgentHandler" in decoders.UNMIRRORED and "GraniteFunctionCallingHandler" in decoders.UNMIRRORED
    )


@pytest.mark.spec("BFCL-HANDLERS", "BFCL-DIFF")
def test_an_unmirrored_handlers_file_is_read_with_the_api_rules_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = (
        tmp_path
        / "ibm-granite_granite-20b-functioncalling"
        / "multi_turn"
        / "BFCL_v4_multi_turn_base_result.json"
    )
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"id": "multi_turn_base_1", "result": [["<function_call> {}"]] * 4}) + "\n")
    bfcl.read([str(path)], AdapterOptions())
    err = capsys.readouterr().err
    assert "GraniteFunctionCallingHandler, whose decoder is not mirrored" in err and "(BFCL-DIFF)" in err


# --- the option, the audit, hostile text ---------------------------------------------------------------


@pytest.mark.spec("BFCL-HANDLERS")
def test_the_bfcl_decoder_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, "tool-call-tags")
    other = tmp_path / "run" / path.name
    other.parent.mkdir()
    other.write_text(path.read_text("utf-8"), "utf-8")
    assert main(["score", "--adapter", "bfcl", "--bootstrap", "0", "--json", str(path)]) == 0
    auto = json.loads(capsys.readouterr().out)
    named_args = ["--model", "Qwen_Qwen3-8B-FC", "--bfcl-decoder", "tool-call-tags", str(other)]
    assert main(["score", "--adapter", "bfcl", "--bootstrap", "0", "--json", *named_args]) == 0
    named = json.loads(capsys.readouterr().out)
    assert "bfcl_decoder=tool-call-tags" in named["signature"] and "bfcl_decoder" not in auto["signature"]
    assert [c["success"] for c in named["conditions"]] == [c["success"] for c in auto["conditions"]]
    assert main(["score", "--adapter", "bfcl", "--bfcl-decoder", "nope", str(path)]) == 2
    assert "--bfcl-decoder: unknown decoder 'nope'" in capsys.readouterr().err
    with pytest.raises(InputError, match="unknown decoder"):
        bfcl.read_results([str(path)], AdapterOptions(extra={"bfcl_decoder": "nope"}))
    records = tmp_path / "r.jsonl"
    records.write_text("")
    assert main(["score", "--adapter", "records", "--bfcl-decoder", "xlam", str(records)]) == 2
    assert "only applies with --adapter bfcl" in capsys.readouterr().err


@pytest.mark.spec("BFCL-HANDLERS", "BFCL-AUDIT")
def test_the_audit_says_which_decoder_read_each_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, "xlam")
    assert main(["audit", "--adapter", "bfcl", "--category", "base", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "decoder xlam (BFCL-HANDLERS: BFCL's map gives Salesforce/Llama-xLAM-2-8b-fc-r (FC) to "
        "SalesforceLlamaHandler)" in out
    )
    assert main(["audit", "--adapter", "bfcl", "--category", "base", "--json", str(path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["result_files"]
    assert (row["decoder"], row["calls"], row["text_steps"]) == ("xlam", 6, 4 + 5)  # 4 replies + 5 "No."


@pytest.mark.spec("BFCL-DECODERS", "BFCL-SECURITY", "BFCL-DIFF")
def test_text_that_llamas_decoder_would_eval_is_never_run(tmp_path: Path) -> None:
    hostile = [
        '{"name": "ls", "parameters": {"a": __import__("os").system("touch PWNED")}}',
        '{"name": "echo", "parameters": {"content": "round(" + str(6000.0) + ")"}}',  # a real Llama 3.1 step
        '{"name": "cat", "parameters": {}} | {"name": "echo", "parameters": {}}',  # a real one: dict union
        "{'name': 'ls', 'parameters': {'a': result}}",  # a local of decode_execute
        "[x for x in ()]",
    ]
    for text in hostile:
        step = decoders.DECODERS["llama-3.1"].decode
        assert step is not None
        decoded = step(text)
        ((call,),) = [decoded.calls]
        assert call.fault is not None and call.fault.startswith(decoders.EVAL_FAULT) and not call.decoded
        assert llama_unsafe(text) is not None
    path = tmp_path / FOLDERS["llama-3.1"] / "BFCL_v4_multi_turn_base_result.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "multi_turn_base_1", "result": [[t] for t in hostile[:4]]}) + "\n")
    read = bfcl.read_results([str(path)], AdapterOptions())
    assert read.files[0].evaluated_steps == 4 and not Path("PWNED").exists()
    (rollout,) = read.rollouts
    assert (rollout.outcome.fed, rollout.success) == (1, False)  # a schema failure, not executed
    assert compare_file(path).checked == 0  # BFCL's checker is never handed it


@pytest.mark.spec("BFCL-DECODERS", "BFCL-LIMITS")
def test_hostile_tag_texts_are_decoded_in_bounded_work() -> None:
    # Many openings without an end: re.findall's lazy scan restarts at each one (quadratic); the
    # mirror stops at the first opening with no end after it. Same answer as BFCL's on a small case.
    text = "<tool_call>\n" * 50_000 + '{"name": "ls", "arguments": {}}'
    tags = decoders.DECODERS["tool-call-tags"].decode
    assert tags is not None and tags(text) == decoders.EMPTY_TEXT
    small = "<tool_call>\n" * 3 + '{"name": "ls", "arguments": {}}\n</tool_call>'
    assert same_decoding(
        _bfcl("tool-call-tags", small), _ours(decoders.DECODERS["tool-call-tags"], small, True)
    )
    big = '[{"name": "ls", "arguments": {}}]' + " " * 1_000_001
    assert decoders.DECODERS["xlam"].decode is not None
    assert decoders.DECODERS["xlam"].decode(big).calls[0].fault is not None  # over the parse limit
