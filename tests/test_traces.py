"""The trace adapters on crafted edge cases: structure faults, order, success, options, hostile
input and the Agents SDK processor (spec: spec/adapters/traces.md). Real traces are scored in
tests/test_traces_real.py; every file here is built by the test itself, and each expected number
follows from the spans the test wrote (said beside it)."""

from __future__ import annotations

import ast
import gzip
import json
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError, limits, spans
from prefixexec.adapters.otel.pyliteral import literal
from prefixexec.cli import main
from prefixexec.integrations.agents import JsonlTraceProcessor
from prefixexec.kernel import Label, Rollout

TRACE = "0af7651916cd43dd8448eb211c80319c"


def attr(key: str, value: object) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def span(
    span_id: str,
    parent: str | None,
    start: int,
    attributes: dict[str, object],
    *,
    trace: str = TRACE,
    name: str = "span",
    error: str | None = None,
    events: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent or "",
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 10),
        "attributes": [attr(k, v) for k, v in attributes.items()],
        "events": list(events),
        "status": {"code": 2, "message": error} if error else {"code": 1},
    }
    return out


def evaluation(name: str, label: str | None = None, value: float | None = None) -> dict[str, Any]:
    values: dict[str, object] = {"gen_ai.evaluation.name": name}
    if label is not None:
        values["gen_ai.evaluation.score.label"] = label
    if value is not None:
        values["gen_ai.evaluation.score.value"] = value
    return {"name": "gen_ai.evaluation.result", "attributes": [attr(k, v) for k, v in values.items()]}


def root(
    span_id: str = "r", trace: str = TRACE, success: str | None = "pass", **attributes: object
) -> dict[str, Any]:
    events = [evaluation("success", success)] if success is not None else []
    values = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "agent", **attributes}
    return span(span_id, None, 1000, values, trace=trace, events=events)


def chat(
    span_id: str, parent: str, start: int, calls: Sequence[tuple[str, str, dict[str, object]]], **kw: Any
) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
    messages = json.dumps([{"role": "assistant", "parts": parts}])
    values: dict[str, object] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.output.messages": messages,
    }
    if "tools" in kw:
        values["gen_ai.tool.definitions"] = json.dumps(kw.pop("tools"))
    return span(span_id, parent, start, values, **kw)


def tool(
    span_id: str,
    parent: str,
    start: int,
    name: str,
    call_id: str | None,
    args: object,
    result: str = "ok",
    **kw: Any,
) -> dict[str, Any]:
    values: dict[str, object] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    if call_id is not None:
        values["gen_ai.tool.call.id"] = call_id
    values["gen_ai.tool.call.arguments"] = args if isinstance(args, str) else json.dumps(args)
    values["gen_ai.tool.call.result"] = result
    return span(span_id, parent, start, values, **kw)


def write(path: Path, spans_: Sequence[dict[str, Any]], per_line: int = 1) -> str:
    lines = []
    for i in range(0, len(spans_), per_line):
        chunk = list(spans_[i : i + per_line])
        lines.append(
            json.dumps(
                {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": chunk}]}]}
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def read(path: str, adapter: str = "otel", **extra: Any) -> list[Rollout]:
    options = {
        k: extra.pop(k)
        for k in ("model", "method", "threshold", "error_pattern", "label_rules")
        if k in extra
    }
    options.setdefault("model", "m")  # for traces without a model span (the option fills in)
    return ADAPTERS[adapter].read([path], AdapterOptions(extra=extra, **options))


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The single error line of a refused input (exit 2, nothing on stdout)."""
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("prefixexec: error: "), err
    return err


# ---------------------------------------------------------------------------------------------
# Calls, order and verdicts


@pytest.mark.spec("TRACE-ORDER")
def test_parallel_calls_follow_the_models_order_not_their_start(tmp_path: Path) -> None:
    # The model asked a (ok) then b (fails); b's span started first (concurrent calls): the
    # failure is the second call, FED = 2.
    spans_ = [
        root(),
        chat("c1", "r", 1100, [("ca", "lookup", {"id": "1"}), ("cb", "lookup", {"id": "2"})]),
        tool("tb", "r", 1200, "lookup", "cb", {"id": "2"}, "Error: order 2 not found"),
        tool("ta", "r", 1201, "lookup", "ca", {"id": "1"}),
    ]
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    assert (r.outcome.T, r.outcome.fed, r.outcome.label) == (2, 2, Label.DEPENDENCY)
    assert "span tb" in (r.outcome.reason or "")


@pytest.mark.spec("TRACE-ORDER")
def test_calls_without_ids_are_matched_by_tool_and_arguments(tmp_path: Path) -> None:
    # No call ids on the tool spans: each answers the request with the same tool and arguments.
    spans_ = [
        root(),
        chat("c1", "r", 1100, [("ca", "lookup", {"id": "1"}), ("cb", "lookup", {"id": "2"})]),
        tool("t2", "r", 1200, "lookup", None, {"id": "2"}, "Error: not found"),
        tool("t1", "r", 1201, "lookup", None, {"id": "1"}),
    ]
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    assert (r.outcome.T, r.outcome.fed) == (2, 2)
    assert [a.call_id for a in r.outcome.actions] == ["ca", "cb"]


@pytest.mark.spec("TRACE-STRUCTURE", "TRACE-ORDER")
def test_clock_skew_gives_an_answer(tmp_path: Path) -> None:
    # The tool span (child) starts before its parent: tolerated; calls are ordered by their own
    # start times (no model span asked for them): t1 (start 5) then t2 (start 7) fails.
    spans_ = [
        root(),
        tool("t2", "r", 7, "a", "x2", {}, "Error: denied"),
        tool("t1", "r", 5, "a", "x1", {}),
    ]
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    assert (r.outcome.T, r.outcome.fed, r.outcome.label) == (2, 2, Label.PRECONDITION)


@pytest.mark.spec("TRACE-TOOLS", "TRACE-EXEC")
def test_offered_tools_and_their_schemas_are_checked(tmp_path: Path) -> None:
    tools = [
        {
            "type": "function",
            "name": "add",
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
        }
    ]
    spans_ = [
        root(),
        chat("c1", "r", 1100, [("c", "add", {"x": "one"})], tools=tools),
        tool("t", "r", 1200, "add", "c", {"x": "one"}, "3"),
    ]
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    assert (r.outcome.fed, r.outcome.label) == (1, Label.SCHEMA)
    assert "'one' is not of type 'integer'" in (r.outcome.reason or "")
    spans_[1] = chat("c1", "r", 1100, [("c", "mul", {"x": 1})], tools=tools)
    spans_[2] = tool("t", "r", 1200, "mul", "c", {"x": 1}, "3")
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    assert (r.outcome.fed, r.outcome.label) == (1, Label.SCHEMA)
    assert "tool 'mul' is not offered in the trace (offered: add)" in (r.outcome.reason or "")


@pytest.mark.spec("TRACE-RESULT-ERROR", "TRACE-LABELS")
def test_handled_errors_are_read_from_the_result(tmp_path: Path) -> None:
    # Status OK (the conventions do not mark handled errors) but the result says Error.
    spans_ = [root(), tool("t", "r", 1200, "book", "c", {"room": "7"}, "Error: room already booked")]
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    assert (r.outcome.fed, r.outcome.label) == (1, Label.STATE_CONSISTENCY)
    # a result that merely mentions an error later is not one; --error-pattern marks it
    spans_[1] = tool("t", "r", 1200, "book", "c", {}, "booked; no error")
    assert read(write(tmp_path / "t.jsonl", spans_))[0].outcome.fully_executable
    (r,) = read(str(tmp_path / "t.jsonl"), error_pattern="no error")
    assert r.outcome.fed == 1 and r.outcome.label is None


@pytest.mark.spec("TRACE-LABELS", "LABEL-RULES")
def test_label_rules_apply_to_traces(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('[[otel]]\npattern = "quota"\nlabel = "precondition"\n', encoding="utf-8")
    spans_ = [root(), tool("t", "r", 1200, "send", "c", {}, "ok", error="quota reached")]
    path = write(tmp_path / "t.jsonl", spans_)
    assert read(path)[0].outcome.label is None
    assert read(path, label_rules=str(rules))[0].outcome.label is Label.PRECONDITION


@pytest.mark.spec("TRACE-UNANSWERED")
def test_a_requested_call_no_span_answers_is_rejected(tmp_path: Path) -> None:
    spans_ = [root(), chat("c1", "r", 1100, [("c", "lookup", {"id": "1"})])]
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    assert (r.outcome.T, r.outcome.fed, r.outcome.label) == (1, 1, None)
    assert "no tool span answers the requested call 'c'" in (r.outcome.reason or "")


@pytest.mark.spec("TRACE-NOTOOL")
def test_a_trace_without_calls_is_one_executable_no_tool_action(tmp_path: Path) -> None:
    (r,) = read(write(tmp_path / "t.jsonl", [root(), chat("c1", "r", 1100, [])]))
    assert (r.outcome.T, r.outcome.fed) == (1, 2)


def repr_message(text: str) -> dict[str, Any]:
    """A chat span whose answer is a text part holding ``text`` (a Python repr of the message)."""
    messages = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])
    values = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.output.messages": messages,
    }
    return span("c1", "r", 1100, values)


@pytest.mark.spec("TRACE-OTEL-REPR")
def test_a_message_written_as_a_python_repr_is_read_as_literals(tmp_path: Path) -> None:
    text = repr(
        {"content": None, "tool_calls": [{"id": "c", "function": {"arguments": '{"a": 1}', "name": "f"}}]}
    )
    (r,) = read(write(tmp_path / "t.jsonl", [root(), repr_message(text)]))
    assert r.outcome.T == 1 and r.outcome.actions[0].name == "f"  # requested, never answered
    # anything but literals is not read: no call
    evil = text.replace("'id': 'c'", "'id': __import__('os').system('true')")
    (r,) = read(write(tmp_path / "t.jsonl", [root(), repr_message(evil)]))
    assert (r.outcome.T, r.outcome.fed) == (1, 2)


literals = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text() | st.integers(), children),
    max_leaves=20,
)


@pytest.mark.spec("TRACE-OTEL-REPR")
@settings(max_examples=150, deadline=None)
@given(literals)
def test_the_literal_reader_agrees_with_ast(value: object) -> None:
    text = repr(value)
    assert literal(text) == ast.literal_eval(text)


#: Literal texts built the way Python's grammar builds them, from pieces where its reading is easy
#: to get wrong: quotes (four quotes are not two strings), escapes (a backslash before a line end,
#: CR, a character beyond Latin-1, an unknown one, \N{...}), blanks Python skips and some it does
#: not, leading zeros, digits of other scripts, NUL, a lone surrogate.
_LITERAL_BLANKS = st.sampled_from(["", "", " ", "\t", "\f", "\n", "\r", "\x0b", "\xa0"])
_LITERAL_BODY = st.lists(
    st.sampled_from(
        ["a", "é", "ሴ", " ", "\\\\", "\\'", '\\"', "\\n", "\\\n", "\\\r", "\\x41", "\\N{EM DASH}", "\\ሴ",
         "\\é", "\\777", "\\8", "\\q", "\\u00e9", "\\U0001F600", "'", '"', "\x00", "\ud800", "\n", "\r", "\t"]
    ),
    max_size=4,
).map("".join)
_LITERAL_ATOMS = (
    st.builds(lambda quote, body: quote + body + quote, st.sampled_from(["'", '"']), _LITERAL_BODY)
    | st.sampled_from(
        ["0", "00", "-00", "01", "1", "-1", "-0", "1.", ".5", "1.5", "01.5", "1e5", "1E-5", "1_0", "1j", "٣",
         "1.2.3", "0x1", "None", "True", "False", "none", "Nonex", "'a' 'b'", "''''"]
    )
)


def _list_text(items: list[tuple[str, str, str]], trailing: bool) -> str:
    return "[" + ",".join(a + x + b for a, x, b in items) + ("," if trailing and items else "") + "]"


def _dict_text(items: list[tuple[str, str, str, str]]) -> str:
    return "{" + ",".join(f"{b}{k}{b}:{c}{v}{b}" for b, k, c, v in items) + "}"


def _containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Lists and dicts of ``inner`` texts, with blanks around the items and the separators."""
    blank = _LITERAL_BLANKS
    lists = st.builds(_list_text, st.lists(st.tuples(blank, inner, blank), max_size=4), st.booleans())
    dicts = st.builds(_dict_text, st.lists(st.tuples(blank, _LITERAL_ATOMS, blank, inner), max_size=3))
    return lists | dicts


_LITERAL_TEXTS = st.builds(
    lambda before, text, after: before + text + after,
    _LITERAL_BLANKS,
    st.recursive(_LITERAL_ATOMS, _containers, max_leaves=8),
    _LITERAL_BLANKS,
)


@pytest.mark.spec("TRACE-OTEL-REPR")
@settings(max_examples=1500, deadline=None)
@given(_LITERAL_TEXTS)
@example("[1, {'a': None}, -0.5e3, 00, 01.5, 'x\\ny',]")
@example("'\\ሴ'")
def test_what_the_literal_reader_reads_is_what_ast_reads(text: str) -> None:
    # a subset: whatever the reader gives a value for, ast.literal_eval gives the same value for
    # (the same type too: repr tells 1, 1.0, True and -0.0 apart)
    try:
        ours = literal(text)
    except ValueError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Python warns of an unknown escape such as \ሴ
        theirs = ast.literal_eval(text)
    assert repr(ours) == repr(theirs)


@pytest.mark.spec("TRACE-OTEL-REPR")
def test_a_backslash_before_a_character_beyond_latin_1_stays() -> None:
    # Python keeps the backslash of an unknown escape; the codec alone would read '\u1234'
    assert literal("'\\ሴ'") == "\\ሴ" and literal("'\\\\ሴ'") == "\\ሴ" and literal("'\\é'") == "\\é"


@pytest.mark.spec("TRACE-OTEL-REPR")
@pytest.mark.parametrize(
    "text",
    [
        "(1, 2)", "{1, 2}", "b'x'", "1 + 2", "f(x)", "[1,", "{'a' 1}", "[" * 200 + "]" * 200,
        # Python refuses these, or reads them otherwise than as a value of the subset
        "01", "-01", "''''", "'a' 'b'", "[1,\x0b2]", "'a\x00'", "'\ud800'", "1\xa0", "\u0663",
        "'a\nb'", "'a\rb'",
        # Python reads these; the subset does not
        "1_000", "1j", "'a\\\rb'", "- 1", "# x\n1",
        # not literals at all
        "[,]", "{,}", "{'a':}", "{'a'}", "[1 2]", "", "  ", "1x", "1.2.3", "Nonex", "[1]]", "{[1]: 2}",
        ":", "'", "'abc", ".e5", "1e", "1e+", "[1,,]", "--1", "[1]\n[2]",
    ],
)
def test_the_literal_reader_refuses_everything_else(text: str) -> None:
    with pytest.raises(ValueError):
        literal(text)


@pytest.mark.spec("TRACE-OTEL-REPR", "HOSTILE-REGEX")
def test_the_literal_reader_is_linear_on_hostile_text() -> None:
    # each would cost quadratic time in a tokenizer that searches again after every failed token
    texts = ["1" * 400_000 + "x", "[" + "'a'," * 100_000 + "x", "'" + "a" * 400_000]
    texts.append("1." + "1" * 400_000 + "e")
    start = time.perf_counter()
    for text in texts:
        with pytest.raises(ValueError):
            literal(text)
    assert time.perf_counter() - start < 5  # about 0.02 s here; quadratic: hours


# ---------------------------------------------------------------------------------------------
# Task, trial, model, method, success


@pytest.mark.spec("TRACE-KEYS")
def test_traces_of_one_conversation_are_trials_in_start_order(tmp_path: Path) -> None:
    later = root("r2", trace="b" * 32, **{"gen_ai.conversation.id": "conv"})
    later["startTimeUnixNano"] = "5000"
    spans_ = [
        later,
        root("r1", trace="a" * 32, **{"gen_ai.conversation.id": "conv"}),
        root("r3", trace="c" * 32),
    ]
    rollouts = read(write(tmp_path / "t.jsonl", spans_))
    assert [(r.task_id, r.trial, r.meta["trace_id"]) for r in rollouts] == [
        ("conv", 0, "a" * 32),
        ("c" * 32, 0, "c" * 32),  # no conversation id: its own task
        ("conv", 1, "b" * 32),
    ]
    assert {
        (r.condition.model, r.condition.method)
        for r in read(str(tmp_path / "t.jsonl"), model="x", method="y")
    } == {("x", "agent")}


@pytest.mark.spec("TRACE-SUCCESS")
def test_success_from_evaluations_attributes_and_root_status(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    # the last evaluation named 'success' wins (here: fail after pass)
    r0 = root(success="pass")
    r0["events"].append({**evaluation("success", "fail"), "timeUnixNano": "9999"})
    assert read(write(path, [r0]))[0].success is False
    # a score value (0/1, or compared with --threshold)
    r1 = root(success=None)
    r1["events"] = [evaluation("quality", value=0.7)]
    with pytest.raises(InputError, match="neither 0 nor 1: give --threshold"):
        read(write(path, [r1]), success_attr="quality")
    assert read(str(path), success_attr="quality", threshold=0.5)[0].success is True
    # an attribute
    assert (
        read(write(path, [root(success=None, **{"app.ok": "false"})]), success_attr="app.ok")[0].success
        is False
    )
    # none: one error naming the trace and the options; @ok: the root's status
    with pytest.raises(InputError, match="no success: no evaluation or attribute 'success'") as caught:
        read(write(path, [root(success=None)]))
    assert TRACE in caught.value.what and "--success-attr" in caught.value.what
    assert read(str(path), success_attr="@ok")[0].success is True
    failed_root = root(success=None)
    failed_root["status"] = {"code": 2}
    assert read(write(path, [failed_root]), success_attr="@ok")[0].success is False


# ---------------------------------------------------------------------------------------------
# Bad input: one error line or a bounded answer


@pytest.mark.spec("TRACE-OTLP", "REC-ERRORS")
def test_a_truncated_line_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    write(path, [root(), tool("t", "r", 1200, "a", "c", {})])
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) - 40], encoding="utf-8")  # the last line cut off
    err = one_error(["score", "--adapter", "otel", str(path)], capsys)
    assert f"{path}:2: not valid JSON" in err and "truncated" in err


@pytest.mark.spec("TRACE-GZIP")
def test_a_truncated_gzip_file_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "t.jsonl"
    write(plain, [root(), tool("t", "r", 1200, "a", "c", {})] * 1)
    data = gzip.compress(plain.read_bytes() * 50)
    packed = tmp_path / "t.jsonl.gz"
    packed.write_bytes(data[: len(data) // 2])
    err = one_error(["score", "--adapter", "otel", str(packed)], capsys)
    assert f"{packed}: the gzip stream ends early" in err or "not valid JSON" in err


@pytest.mark.spec("TRACE-STRUCTURE")
def test_structure_faults_are_one_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    no_trace = root()
    no_trace["traceId"] = ""
    write(path, [no_trace])
    assert "has no traceId (TRACE-STRUCTURE)" in one_error(["score", "--adapter", "otel", str(path)], capsys)
    write(path, [root("a"), span("b", "c", 1, {}), span("c", "b", 2, {})])
    assert "the parent ids form a cycle (b -> c -> b)" in one_error(
        ["score", "--adapter", "otel", str(path)], capsys
    )
    write(path, [root("a"), span("a", None, 1, {})])
    assert f"span id a appears twice in trace {TRACE}" in one_error(
        ["score", "--adapter", "otel", str(path)], capsys
    )
    path.write_text('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": 7}]}]}]}\n', encoding="utf-8")
    assert "not an OTLP span document" in one_error(["score", "--adapter", "otel", str(path)], capsys)


@pytest.mark.spec("TRACE-OTLP", "HOSTILE-LINE")
def test_lines_end_at_newline_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    write(path, [root(), root("r2", trace="b" * 32)])
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_bytes(("\r".join(lines) + "\n").encode())  # a carriage return does not end a line
    assert f"{path}:1: not valid JSON" in one_error(["score", "--adapter", "otel", str(path)], capsys)


@pytest.mark.spec("TRACE-STRUCTURE", "HOSTILE-HORIZON")
def test_huge_traces_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    many = [root()] + [tool(f"t{i}", "r", 2000 + i, "a", f"c{i}", {}) for i in range(300)]
    write(path, many, per_line=100)
    monkeypatch.setattr(spans, "MAX_TRACE_SPANS", 200)
    err = one_error(["score", "--adapter", "otel", "--model", "m", str(path)], capsys)
    assert "holds more than 200 spans (TRACE-STRUCTURE)" in err
    monkeypatch.setattr(spans, "MAX_TRACE_SPANS", 1 << 21)
    monkeypatch.setattr(limits, "MAX_HORIZON", 250)
    err = one_error(["score", "--adapter", "otel", "--model", "m", str(path)], capsys)
    assert "'T' = 300 exceeds the horizon limit 250 (HOSTILE-HORIZON)" in err


@pytest.mark.spec("TRACE-STRUCTURE")
@pytest.mark.slow
def test_a_trace_of_many_spans_is_read_in_linear_time(tmp_path: Path) -> None:
    # 20,000 spans in one trace (a deep chain of parents: each span the child of the one
    # before), 2,000 of them tool calls: one rollout, T = 2,000.
    n = 20_000
    spans_ = [root()] + [
        tool(f"t{i}", f"s{i - 1}" if i else "r", 2000 + i, "a", f"c{i}", {})
        if i % 10 == 9
        else span(
            f"s{i}",
            f"s{i - 1}" if i else "r",
            2000 + i,
            {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
        )
        for i in range(n)
    ]
    for i in range(n):  # the chain runs through the tool spans too
        if i % 10 == 0 and i:
            spans_[i + 1]["parentSpanId"] = f"t{i - 1}"
    (r,) = read(write(tmp_path / "t.jsonl", spans_, per_line=5000))
    assert (r.outcome.T, r.outcome.fed) == (n // 10, n // 10 + 1)


@pytest.mark.spec("TRACE-OTLP", "HOSTILE-FUZZ")
@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=80),
            st.builds(
                json.dumps,
                st.dictionaries(
                    st.sampled_from(["resourceSpans", "scopeSpans", "spans", "traceId", "x"]),
                    st.recursive(
                        st.none() | st.integers() | st.text(max_size=5),
                        lambda c: (
                            st.lists(c, max_size=3)
                            | st.dictionaries(
                                st.sampled_from(
                                    ["spans", "traceId", "spanId", "attributes", "key", "value", "scopeSpans"]
                                ),
                                c,
                                max_size=3,
                            )
                        ),
                        max_leaves=8,
                    ),
                ),
            ),
        ),
        max_size=5,
    )
)
def test_any_input_is_rollouts_or_one_input_error(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str]
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "t.jsonl"
    path.write_text(
        "\n".join(line.replace("\n", " ") for line in lines) + "\n", encoding="utf-8", errors="surrogatepass"
    )
    for adapter in ("otel", "openinference", "agents", "langsmith"):
        try:
            rollouts = read(str(path), adapter, success_attr="@ok", model="m")
        except InputError:
            continue
        assert all(r.outcome.T >= 1 for r in rollouts)


# ---------------------------------------------------------------------------------------------
# Command line: options, wrong adapters, evaluations


@pytest.mark.spec("DETECT-HINT", "DETECT-TRACES")
def test_wrong_adapters_name_the_right_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "t.jsonl", [root(), tool("t", "r", 1200, "a", "c", {})])
    err = one_error(["score", "--adapter", "records", path], capsys)
    assert "looks like OpenTelemetry GenAI traces (OTLP JSON Lines, JSON or protobuf)" in err
    assert "use --adapter otel" in err
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        json.dumps({"task_id": 1, "success": True, "messages": [], "tools": []}) + "\n", encoding="utf-8"
    )
    err = one_error(["score", "--adapter", "otel", str(chat)], capsys)
    assert "expected an OTLP JSON object with 'resourceSpans'" in err and "use --adapter chat" in err
    code, _, err = run(["score", "--bootstrap", "0", "--model", "m", path], capsys)
    assert code == 0 and "reading" in err and "as otel (detected" in err


@pytest.mark.spec("CLI-NO-EFFECT", "TRACE-KEYS")
def test_trace_options_with_other_adapters_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        json.dumps({"task_id": 1, "success": True, "messages": [], "tools": []}) + "\n", encoding="utf-8"
    )
    err = one_error(["score", "--adapter", "chat", "--task-attr", "x", str(chat)], capsys)
    assert "--task-attr: has no effect with --adapter chat" in err
    err = one_error(
        ["score", "--adapter", "chat", "--emit-evaluations", str(tmp_path / "e.jsonl"), str(chat)], capsys
    )
    assert "--emit-evaluations: only trace adapters" in err
    assert not (tmp_path / "e.jsonl").exists()


@pytest.mark.spec("TRACE-EVALUATIONS", "HOSTILE-OUTPUT-INPUT")
def test_evaluations_never_replace_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "t.jsonl", [root()])
    before = Path(path).read_bytes()
    err = one_error(["score", "--adapter", "otel", "--emit-evaluations", path, path], capsys)
    assert "refusing to overwrite an input" in err and Path(path).read_bytes() == before


# ---------------------------------------------------------------------------------------------
# The other formats on crafted input


@pytest.mark.spec("TRACE-LANGSMITH")
def test_a_json_list_of_langsmith_runs(tmp_path: Path) -> None:
    runs = [
        {
            "id": "r",
            "trace_id": "r",
            "parent_run_id": None,
            "run_type": "chain",
            "name": "graph",
            "start_time": "2026-01-01T00:00:00Z",
            "extra": {"metadata": {"success": True}},
        },
        {
            "id": "l",
            "trace_id": "r",
            "parent_run_id": "r",
            "run_type": "llm",
            "name": "m",
            "start_time": "2026-01-01T00:00:01Z",
            "end_time": "2026-01-01T00:00:02Z",
            "extra": {"invocation_params": {"model": "gpt"}},
            "outputs": {
                "generations": [
                    [{"message": {"kwargs": {"tool_calls": [{"name": "f", "args": {}, "id": "c"}]}}}]
                ]
            },
        },
        {
            "id": "t",
            "trace_id": "r",
            "parent_run_id": "r",
            "run_type": "tool",
            "name": "f",
            "start_time": "2026-01-01T00:00:03Z",
            "inputs": {},
            "error": "KeyError: 'x' not found",
            "extra": {"tool_call_id": "c"},
        },
    ]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs), encoding="utf-8")
    (r,) = read(str(path), "langsmith")
    assert (r.condition.model, r.condition.method, r.outcome.fed, r.outcome.label) == (
        "gpt",
        "graph",
        1,
        Label.DEPENDENCY,
    )
    assert r.success is True


@pytest.mark.spec("TRACE-AGENTS", "TRACE-AGENTS-FILE")
def test_the_processor_writes_what_the_agents_reader_reads(tmp_path: Path) -> None:
    class Item:
        def __init__(self, payload: dict[str, Any] | None) -> None:
            self.payload = payload

        def export(self) -> dict[str, Any] | None:
            return self.payload

    path = tmp_path / "sdk.jsonl"
    processor = JsonlTraceProcessor(path)
    trace_id = "trace_1"

    def function(i: int) -> Item:
        return Item(
            {
                "object": "trace.span",
                "id": f"span_{i}",
                "trace_id": trace_id,
                "parent_id": "span_agent",
                "started_at": f"2026-01-01T00:00:{10 + i:02d}+00:00",
                "ended_at": None,
                "span_data": {"type": "function", "name": "f", "input": json.dumps({"i": i}), "output": "ok"},
                "error": {"message": "Error running tool", "data": {"error": "denied"}} if i == 7 else None,
            }
        )

    threads = [threading.Thread(target=processor.on_span_end, args=(function(i),)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    processor.on_span_end(Item(None))  # a disabled span exports nothing
    agent = {"type": "agent", "name": "bot", "tools": ["f"]}
    processor.on_span_end(
        Item(
            {
                "object": "trace.span",
                "id": "span_agent",
                "trace_id": trace_id,
                "parent_id": None,
                "started_at": "2026-01-01T00:00:01+00:00",
                "ended_at": None,
                "span_data": agent,
                "error": None,
            }
        )
    )
    processor.on_span_end(
        Item(
            {
                "object": "trace.span",
                "id": "span_gen",
                "trace_id": trace_id,
                "parent_id": "span_agent",
                "started_at": "2026-01-01T00:00:02+00:00",
                "ended_at": None,
                "span_data": {"type": "generation", "model": "gpt", "output": []},
                "error": None,
            }
        )
    )
    processor.on_trace_end(
        Item(
            {
                "object": "trace",
                "id": trace_id,
                "workflow_name": "w",
                "group_id": "g",
                "metadata": {"success": "true"},
            }
        )
    )
    processor.shutdown()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 23 and all(json.loads(line) for line in lines)
    (r,) = read(str(path), "agents")
    # calls in start order: span_0..span_19; span_7 failed (denied: precondition)
    assert (r.task_id, r.condition.method, r.outcome.T, r.outcome.fed, r.outcome.label) == (
        "g",
        "bot",
        20,
        8,
        Label.PRECONDITION,
    )
    assert r.success is True


@pytest.mark.spec("TRACE-EXEC", "HOSTILE-TEXT")
def test_control_characters_of_a_trace_are_escaped_in_reasons(tmp_path: Path) -> None:
    spans_ = [root(), tool("t", "r", 1200, "a", "c", {}, "ok", error="denied \x1b[2J\x07 now")]
    (r,) = read(write(tmp_path / "t.jsonl", spans_))
    reason = r.outcome.reason or ""
    assert "\x1b" not in reason and "\x07" not in reason
    assert "denied \\x1b[2J\\x07 now" in reason and r.outcome.label is Label.PRECONDITION
