"""Tests that kill surviving mutants of the adapters' semantics modules (issue 19).

Report: tests/mutation-adapters.md (every survivor of ``bash tests/mutation.sh`` run on
adapters/<name>/semantics.py, with its verdict). Each test states a rule of the adapter's spec
or docstring that no test pinned before; the mutants it kills are listed in
tests/mutation_report.py (``VERDICTS``), which checks them with mutmut's switch (``--confirm``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, InputError, bfcl, chat, taubench
from prefixexec.adapters import inspect_logs as il
from prefixexec.adapters import toolsandbox as tsb
from prefixexec.adapters.bfcl import semantics as bfcl_semantics
from prefixexec.adapters.bfcl.parse import REPLY, DecodedStep, ParsedCall, parse_call_string
from prefixexec.adapters.bfcl.semantics import CallRecord
from prefixexec.adapters.inspect_logs.semantics import InspectCall, InspectSemantics, NoToolRule, no_tool_rule
from prefixexec.adapters.labels import MASK, file_digest, load_label_rules, mask_arguments
from prefixexec.adapters.taubench.semantics import shorten, string_leaves
from prefixexec.adapters.toolsandbox.semantics import INCOMPLETE_CODE
from prefixexec.kernel import Label, PrefixMonitor, Rejected, Rollout, ToolCall

# --- chat (spec/adapters/chat.md) --------------------------------------------------------------

GET = {"name": "get", "parameters": {"type": "object"}}


def chat_line(
    calls: list[tuple[str, dict[str, Any]]],
    results: list[tuple[str, bool]],
    tools: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One transcript: OpenAI tool calls ``(name, arguments)``, then their results ``(text, is_error)``."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    if calls:
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": f"c{i}", "function": {"name": name, "arguments": json.dumps(args)}}
                    for i, (name, args) in enumerate(calls, 1)
                ],
            }
        )
    for i, (text, flagged) in enumerate(results, 1):
        message: dict[str, Any] = {"role": "tool", "tool_call_id": f"c{i}", "content": text}
        if flagged:
            message["is_error"] = True
        messages.append(message)
    return {
        "task_id": "t",
        "model": "m",
        "method": "react",
        "success": False,
        "messages": messages,
        "tools": [GET] if tools is None else tools,
        **extra,
    }


def chat_rollout(tmp_path: Path, line: dict[str, Any], **options: Any) -> Rollout:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (rollout,) = chat.read([str(path)], AdapterOptions(**options))
    return rollout


@pytest.mark.spec("CHAT-TOOLS")
def test_compile_schema_names_the_type() -> None:
    # The error names what was given instead of a schema object.
    with pytest.raises(ValueError, match=r"^the parameter schema must be an object, got list$"):
        chat.compile_schema([1])
    with pytest.raises(ValueError, match=r"got str$"):
        chat.compile_schema("object")


@pytest.mark.spec("CHAT-EXEC")
def test_schema_path_indexes_array_items(tmp_path: Path) -> None:
    # "the reason gives the best-matching error and its path": an array item is [i], a key .k.
    tool = {
        "name": "get",
        "parameters": {
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
        },
    }
    line = chat_line([("get", {"ids": ["a", 7]})], [("ok", False)], tools=[tool])
    rollout = chat_rollout(tmp_path, line)
    assert (rollout.outcome.fed, rollout.outcome.label) == (1, Label.SCHEMA)
    assert rollout.outcome.reason == (
        "arguments violate the schema of 'get' at arguments.ids[1]: 7 is not of type 'string'"
    )


@pytest.mark.spec("CHAT-EXEC")
@pytest.mark.parametrize("size", [chat.REASON_EXCERPT - 1, chat.REASON_EXCERPT, chat.REASON_EXCERPT + 1, 500])
def test_excerpt_of_a_long_result(tmp_path: Path, size: int) -> None:
    # REASON_EXCERPT is the longest excerpt quoted: a result up to that length is quoted whole,
    # a longer one is cut to REASON_EXCERPT characters ending in "...".
    text = "".join("abcdefghij"[i % 10] for i in range(size))
    rollout = chat_rollout(tmp_path, chat_line([("get", {})], [(text, True)]))
    reason = rollout.outcome.reason
    assert reason is not None and reason.startswith("tool result is an error: ")
    excerpt = reason.removeprefix("tool result is an error: ")
    if size <= chat.REASON_EXCERPT:
        assert excerpt == text
    else:
        assert excerpt == text[: chat.REASON_EXCERPT - 3] + "..."
        assert len(excerpt) == chat.REASON_EXCERPT


@pytest.mark.spec("CHAT-NOTOOL")
@pytest.mark.parametrize(("tools", "words"), [(1, "1 tool and"), (2, "2 tools and")])
def test_chat_notool_reason_counts_tools(tmp_path: Path, tools: int, words: str) -> None:
    offered = [{"name": f"t{i}", "parameters": {"type": "object"}} for i in range(tools)]
    rollout = chat_rollout(tmp_path, chat_line([], [], tools=offered))
    assert rollout.outcome.reason == (
        f"the rollout made no tool call, but the task offers {words} the line does not set "
        "no_tool_allowed: a task that offers tools needs at least one call (CHAT-NOTOOL)"
    )


@pytest.mark.spec("CHAT-PATTERN", "CHAT-LABELS", "LABEL-MASK")
def test_chat_error_pattern_masks_arguments(tmp_path: Path) -> None:
    # A result marked by --error-pattern is labelled with the call's own argument values masked:
    # "Forbidden City" is the argument, not a precondition; "not found" is the dependency family.
    line = chat_line([("get", {"place": "Forbidden City"})], [("ERR Forbidden City not found", False)])
    rollout = chat_rollout(tmp_path, line, error_pattern="^ERR")
    assert (rollout.outcome.fed, rollout.outcome.label) == (1, Label.DEPENDENCY)
    line = chat_line([("get", {"place": "Forbidden City"})], [("ERR Forbidden City", False)])
    rollout = chat_rollout(tmp_path, line, error_pattern="^ERR")
    assert (rollout.outcome.fed, rollout.outcome.label) == (1, None)


@pytest.mark.spec("CHAT-PATTERN", "LABEL-RULES")
def test_chat_error_pattern_label_rules(tmp_path: Path) -> None:
    # A --label-rules rule decides the label of a result marked by --error-pattern too.
    rules = tmp_path / "rules.toml"
    rules.write_text('[[chat]]\npattern = "no existe"\nlabel = "dependency"\n', encoding="utf-8")
    line = chat_line([("get", {})], [("ERR el usuario no existe", False)])
    assert chat_rollout(tmp_path, line, error_pattern="^ERR").outcome.label is None
    rollout = chat_rollout(tmp_path, line, error_pattern="^ERR", label_rules=str(rules))
    assert (rollout.outcome.fed, rollout.outcome.label) == (1, Label.DEPENDENCY)


@pytest.mark.spec("CHAT-CALLS", "CHAT-EXEC")
def test_chat_calls_are_checked_in_order(tmp_path: Path) -> None:
    # Three calls, the second one's result flagged: FED = 2, whatever follows.
    line = chat_line(
        [("get", {"n": 1}), ("get", {"n": 2}), ("get", {"n": 3})],
        [("one", False), ("Permission denied", True), ("three", False)],
    )
    outcome = chat_rollout(tmp_path, line).outcome
    assert (outcome.T, outcome.fed, outcome.label) == (3, 2, Label.PRECONDITION)
    line = chat_line(
        [("get", {"n": 1}), ("get", {"n": 2}), ("get", {"n": 3}), ("get", {"n": 4})],
        [("one", False), ("two", False), ("Permission denied", True), ("four", False)],
    )
    outcome = chat_rollout(tmp_path, line).outcome
    assert (outcome.T, outcome.fed, outcome.label) == (4, 3, Label.PRECONDITION)


@pytest.mark.spec("MON-CHECK", "CHAT-EXEC")
def test_chat_monitor_observation(tmp_path: Path) -> None:
    # The monitor's observation is what an accepted step returned: for a transcript, the
    # recorded tool result of the call.
    line = chat_line([("get", {"n": 1}), ("get", {"n": 2})], [("18 C", False), ("19 C", False)])
    calls = chat.read_calls(line["messages"], "w")
    task = chat.ChatTask(tuple(calls), chat.read_tools(line["tools"], "w"), False)
    monitor = PrefixMonitor(chat.SEMANTICS, task)
    first = monitor.commit(calls[0].action)
    second = monitor.commit(calls[1].action)
    assert (first.executable, first.observation) == (True, "18 C")
    assert (second.executable, second.observation) == (True, "19 C")


# --- toolsandbox (spec/adapters/toolsandbox.md) ------------------------------------------------


@pytest.mark.spec("TSB-FALLBACK", "TSB-LABELS")
@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("NoDataError", ("NoDataError", "")),  # a type without a message
        ("polars.exceptions.NoDataError: gone", ("polars.exceptions.NoDataError", "gone")),
        ("printed\nValueError: bad\n\n", ("ValueError", "bad")),  # the last non-empty line
        ("not an exception line!", ("", "not an exception line!")),  # another shape: type ""
        ("", ("", "")),
        (" \n \n", ("", "")),
    ],
)
def test_split_exception(text: str, split: tuple[str, str]) -> None:
    assert tsb.split_exception(text) == split


@pytest.mark.spec("TSB-LABELS", "LABEL-RULES")
def test_masked_exception_is_the_exception_line(tmp_path: Path) -> None:
    # The text --label-rules patterns see: "Type: masked message", the type alone when there is
    # no message, the masked text alone when the reply has no exception line (incomplete code,
    # another shape).
    assert tsb.masked_exception("NoDataError") == "NoDataError"
    assert tsb.masked_exception("KeyError: 'x'", {"k": "x"}) == "KeyError: '\u2039arg\u203a'"
    incomplete = INCOMPLETE_CODE + " near x"
    assert tsb.masked_exception(incomplete, {"k": "x"}) == INCOMPLETE_CODE + " near \u2039arg\u203a"
    assert tsb.masked_exception("odd reply!") == "odd reply!"
    # A rule anchored on the whole line decides only when the line is exactly that text.
    path = tmp_path / "rules.toml"
    anchored = [("^NoDataError$", "NoDataError"), ("^Error: The given", incomplete), ("^odd", "odd reply!")]
    for pattern, text in anchored:
        path.write_text(f'[[toolsandbox]]\npattern = "{pattern}"\nlabel = "precondition"\n', encoding="utf-8")
        rules = load_label_rules(str(path), "toolsandbox")
        assert tsb.exception_labels(text, {}, rules) == (Label.PRECONDITION,)


@pytest.mark.spec("MON-CHECK", "TSB-EXEC")
def test_toolsandbox_monitor_observation() -> None:
    # The observation of an accepted call is the execution environment's recorded reply.
    calls = (
        tsb.SandboxCall(ToolCall("a", {}, "c1"), True, None, "'ok 1'"),
        tsb.SandboxCall(ToolCall("b", {}, "c2"), True, None, "'ok 2'"),
    )
    monitor = PrefixMonitor(tsb.SEMANTICS, tsb.Scenario("s", calls, False))
    first, second = monitor.commit(calls[0].action), monitor.commit(calls[1].action)
    assert (first.executable, first.observation, second.executable, second.observation) == (
        True,
        "'ok 1'",
        True,
        "'ok 2'",
    )


# --- taubench (spec/adapters/taubench.md) ------------------------------------------------------


@pytest.mark.spec("TAU-ENTITY")
def test_string_leaves_keep_their_key() -> None:
    # "(key, string) for every string inside an argument value (list items keep their key)".
    assert list(string_leaves("x")) == [("", "x")]
    value = {"order_ids": ["#W1", "#W2"], "address": {"city": "Paris", "zip": 75001}, "note": None}
    assert list(string_leaves(value)) == [("order_ids", "#W1"), ("order_ids", "#W2"), ("city", "Paris")]
    # Through TAU-ENTITY: the list's key shares "order" with the message, the other key does not.
    args = {"order_ids": ["#W1", "#W2"], "reason": "late"}
    assert taubench.missing_entity_ids("Error: order not found", args) == ("#W1", "#W2")


@pytest.mark.spec("TAU-ENTITY")
@pytest.mark.parametrize(
    ("message", "arguments", "ids"),
    [
        # An upper-case token of two letters looks like an identifier; one letter does not.
        ("Error: cabin AB not found", {"cabin_id": "x"}, ("AB",)),
        ("Error: cabin B not found", {"cabin_id": "x"}, ("x",)),
        # A message without the "Error:" prefix.
        ("Order #W1 not found", {}, ("#W1",)),
        ("Order not found", {"order_id": "#W1", "reason": "late"}, ("#W1",)),
        # "Error:" is dropped whatever its case; the words before "not found" are then none.
        ("ERROR: not found", {"order_id": "#W1"}, ("#W1",)),
        # Only the first ":" ends the prefix: a quoted identifier may hold one.
        ("Error: flight 'HAT:001' not found", {}, ("HAT:001",)),
        # A quoted string just before "not found", in single or double quotes, spaces kept.
        ("Error: reservation 'ABC 123' not found", {}, ("ABC 123",)),
        ('Error: user "john doe" not found', {"user_id": "x"}, ("john doe",)),
        # Punctuation around the token is not part of the identifier.
        ("Error: order (#W1), not found", {}, ("#W1",)),
        # The words "id" / "ids" of a key do not relate it to the message.
        ("Error: id not found", {"user_id": "u1", "name": "bob"}, ("u1", "bob")),
        ("Error: ids not found", {"order_ids": ["o1"], "name": "bob"}, ("o1", "bob")),
    ],
)
def test_missing_entity_ids_rules(message: str, arguments: dict[str, Any], ids: tuple[str, ...]) -> None:
    assert taubench.missing_entity_ids(message, arguments) == ids


@pytest.mark.spec("TAU-ENTITY")
@pytest.mark.parametrize("word", ["error", "of", "the", "a", "an", "number", "new"])
def test_missing_entity_ids_ignores_filler_words(word: str) -> None:
    # The words TAU-ENTITY leaves out when it relates a key to the message (they name no entity).
    arguments = {f"{word}_code": "v1", "payment_id": "v2"}
    assert taubench.missing_entity_ids(f"{word} payment not found", arguments) == ("v2",)


@pytest.mark.spec("TAU-ENTITY-NORM")
def test_occurs_with_domain_prefixes() -> None:
    # An identifier that is only the prefix keeps it: "W" is the token "W", not an empty id.
    assert taubench.occurs("W", ["user W said"], ("#W",))
    assert taubench.occurs("#W", ["user W said"], ("#W",))
    # Each of several prefixes is optional on either side.
    for prefixes in [("#W",), ("#W", "#A"), ("#A", "#W")]:
        assert taubench.occurs("9502126", ["order #W9502126"], prefixes)
        assert taubench.occurs("#W9502126", ["order 9502126"], prefixes)
    assert taubench.occurs("A17", ["order 17"], ("#W", "#A"))
    assert not taubench.occurs("9502126", ["order #W9502126"], ())


@pytest.mark.spec("TAU-LABELS")
def test_reason_cut_at_the_limit() -> None:
    # "the message itself (cut at 300 characters)": 300 characters are kept whole.
    limit = taubench.REASON_LIMIT
    assert shorten("a" * limit) == "a" * limit
    assert shorten("a" * (limit + 1)) == "a" * (limit - 3) + "..."


@pytest.mark.spec("MON-CHECK", "TAU-EXEC")
def test_taubench_monitor_observation() -> None:
    # The observation of an accepted call is the environment's recorded tool message.
    exchanges = (
        taubench.Exchange(ToolCall("a", {}, "c1"), True, True, "first", ("hi",)),
        taubench.Exchange(ToolCall("b", {}, "c2"), True, True, "second", ()),
    )
    monitor = PrefixMonitor(taubench.TAU, taubench.TauTask(exchanges, False, "no tool call"))
    first, second = monitor.commit(exchanges[0].call), monitor.commit(exchanges[1].call)
    assert (first.executable, first.observation, second.executable, second.observation) == (
        True,
        "first",
        True,
        "second",
    )


# --- inspect_logs (spec/adapters/inspect.md) ---------------------------------------------------


@pytest.mark.spec("INS-NOTOOL", "INS-NOTOOL-UNKNOWN")
def test_no_tool_rule_verdicts_and_what_decided() -> None:
    # Each source of INS-NOTOOL, in order, with the text that says what decided (a bool verdict).
    assert no_tool_rule(True, None, (), None) == NoToolRule(
        True, "the sample's metadata.no_tool_allowed is true"
    )
    assert no_tool_rule(False, frozenset(), (), None) == NoToolRule(
        False, "the sample's metadata.no_tool_allowed is false"
    )
    assert no_tool_rule(None, frozenset({"b", "a"}), ("x",), ()) == NoToolRule(
        False, "the model was offered tools (a, b)"
    )
    assert no_tool_rule(None, frozenset(), ("x",), ()) == NoToolRule(
        True, "every model event of the sample offered no tools"
    )
    assert no_tool_rule(None, None, ("f", "g"), ()) == NoToolRule(
        False, "the sample has 2 tool messages (f, g) although it records no call: tools were in use"
    )
    # A use_tools step with tools whose names the log does not record.
    assert no_tool_rule(None, None, (), ()) == NoToolRule(
        False, "the plan's use_tools step gives the model tools (names not recorded)"
    )
    assert no_tool_rule(None, None, (), ("bash",)) == NoToolRule(
        False, "the plan's use_tools step gives the model tools (bash)"
    )
    assert no_tool_rule(None, None, (), None).unknown


def inspect_call(error_type: str | None, message: str | None, parse_error: str | None = None) -> InspectCall:
    return InspectCall(ToolCall("f", {"path": "a.txt"}, "c1"), parse_error, None, True, error_type, message)


@pytest.mark.spec("INS-EXEC")
def test_inspect_reason_of_an_error_without_message() -> None:
    # The text of a tool error is "<type>: <message>"; an empty message leaves "<type>:".
    verdict = InspectSemantics().step(
        (il.InspectSample((inspect_call("timeout", None),), NoToolRule(False, "")), 0), ToolCall("f")
    )
    assert verdict == Rejected((Label.STATE_CONSISTENCY,), "call 1 f (id c1): timeout:")


@pytest.mark.spec("INS-EXEC", "INS-LABELS")
def test_inspect_parsing_error_is_said_once() -> None:
    # inspect records a call whose arguments did not parse twice: as its parse_error and as a
    # "parsing" tool error with the same message. The reason says it once; a different message,
    # or another error type, is a second text.
    sample = il.InspectSample((inspect_call("parsing", "bad json", "bad json"),), NoToolRule(False, ""))
    assert InspectSemantics().step((sample, 0), ToolCall("f")) == Rejected(
        (Label.SCHEMA, Label.SCHEMA), "call 1 f (id c1): parse_error: bad json"
    )
    sample = il.InspectSample((inspect_call("parsing", "other", "bad json"),), NoToolRule(False, ""))
    assert InspectSemantics().step((sample, 0), ToolCall("f")) == Rejected(
        (Label.SCHEMA, Label.SCHEMA), "call 1 f (id c1): parse_error: bad json; parsing: other"
    )
    sample = il.InspectSample((inspect_call("timeout", "bad json", "bad json"),), NoToolRule(False, ""))
    assert InspectSemantics().step((sample, 0), ToolCall("f")) == Rejected(
        (Label.SCHEMA, Label.STATE_CONSISTENCY), "call 1 f (id c1): parse_error: bad json; timeout: bad json"
    )


@pytest.mark.spec("INS-LABEL-RULES")
def test_inspect_rules_see_type_and_message(tmp_path: Path) -> None:
    # Rules are tried on "<type>: <message>" with the message masked: an absent message is empty,
    # an empty type stays empty.
    path = tmp_path / "rules.toml"
    path.write_text(
        '[[inspect]]\npattern = "^timeout: $"\nlabel = "information"\n'
        '[[inspect]]\npattern = "^: gone \u2039arg\u203a$"\nlabel = "dependency"\n',
        encoding="utf-8",
    )
    semantics = InspectSemantics(load_label_rules(str(path), "inspect"))
    assert semantics.error_label(inspect_call("timeout", None)) is Label.INFORMATION
    assert semantics.error_label(inspect_call("timeout", "late")) is Label.STATE_CONSISTENCY
    assert semantics.error_label(inspect_call("", "gone a.txt")) is Label.DEPENDENCY
    assert semantics.error_label(inspect_call("", "gone b.txt")) is None


# --- adapters/labels.py (spec/adapters/labels.md) ----------------------------------------------

#: The labels in CONV-LABEL-ORDER (spec/conventions: schema, dependency, precondition,
#: state_consistency, information), as the error about a bad 'label' lists them.
LABEL_NAMES = "schema, dependency, precondition, state_consistency, information"


@pytest.mark.spec("LABEL-RULES")
@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("chat = [1]\n", "chat rule 1: must be a table with 'pattern' and 'label'"),
        (
            '[[chat]]\npattern = "x"\nlabel = "schema"\nwhy = 1\n',
            "chat rule 1: unknown key 'why' (a rule has 'pattern' and 'label')",
        ),
        ('[[chat]]\npattern = ""\nlabel = "schema"\n', "chat rule 1: 'pattern' must be a non-empty string"),
        (
            '[[chat]]\npattern = "x"\nlabel = "schema"\n[[chat]]\npattern = "y"\nlabel = "syntax"\n',
            f"chat rule 2: 'label' must be one of {LABEL_NAMES}: 'syntax'",
        ),
        (
            '[[chat]]\npattern = "("\nlabel = "schema"\n',
            "chat rule 1: 'pattern' is not a valid regular expression: missing ): ( (patterns are "
            "matched in linear time with RE2: no lookaround, backreferences or possessive repetition; "
            "HOSTILE-REGEX)",
        ),
        (
            '[[nope]]\npattern = "x"\nlabel = "schema"\n',
            "unknown adapter 'nope' in the label rules (known: chat, inspect, taubench, toolsandbox, otel, "
            "openinference, agents, langsmith, mlflow, atif)",
        ),
        ("chat = 3\n", "[chat] must be an array of tables ([[chat]]), one per rule"),
        (
            '[[taubench]]\npattern = "x"\nlabel = "schema"\n',
            "the label rules hold no rule for the chat adapter",
        ),
    ],
)
def test_bad_rule_files_name_the_file_and_the_fault(tmp_path: Path, text: str, what: str) -> None:
    # Bad input: an InputError naming the file and what is wrong (the quality bar's rule).
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_label_rules(str(path), "chat")
    assert (caught.value.where, caught.value.what) == (str(path), what)


@pytest.mark.spec("LABEL-RULES")
def test_unreadable_rule_files_name_the_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "absent.toml")
    for read in (lambda p: load_label_rules(p, "chat"), file_digest):
        with pytest.raises(InputError) as caught:
            read(missing)
        assert (caught.value.where, caught.value.what) == (
            missing,
            "cannot read the label rules: no such file",
        )
    path = tmp_path / "latin1.toml"
    path.write_bytes('[[chat]]\npattern = "caf\xe9"\nlabel = "schema"\n'.encode("latin-1"))
    with pytest.raises(InputError) as caught:
        load_label_rules(str(path), "chat")
    assert (caught.value.where, caught.value.what) == (str(path), "label rules are not UTF-8 text")
    with pytest.raises(InputError) as caught:
        load_label_rules(str(path), "bfcl")
    assert (caught.value.where, caught.value.what) == (
        "--label-rules",
        "the bfcl adapter does not label calls from message text "
        "(label rules apply to: chat, inspect, taubench, toolsandbox, otel, openinference, agents, "
        "langsmith, mlflow, atif)",
    )


@pytest.mark.spec("LABEL-MASK")
def test_masking_is_by_length_not_by_text() -> None:
    # "masked longest first": "a b" is masked whole although "b" sorts after it as text.
    assert mask_arguments("see a b", {"x": "b", "y": "a b"}) == f"see {MASK}"
    assert mask_arguments("see a b", {"y": "a b", "x": "b"}) == f"see {MASK}"


# --- bfcl (spec/adapters/bfcl.md) --------------------------------------------------------------


@pytest.mark.spec("BFCL-MISS-PARAM")
def test_bfcl_scalars_of_a_value() -> None:
    # "some scalar of the value (a string, or a number, an integral float written as an integer;
    # the items of lists and dicts; not booleans or None)".
    value = ["a", 1, [2.0, 2.5, None], {"k": "b", "t": True, "f": False}, (3,)]
    assert list(bfcl_semantics._atoms(value)) == ["a", "1", "2", "2.5", "b", "3"]
    nothings: list[object] = [None, True, False, [], {}]
    for nothing in nothings:
        assert list(bfcl_semantics._atoms(nothing)) == []


@pytest.mark.spec("BFCL-INFERENCE-ERROR")
def test_bfcl_inference_error_message() -> None:
    # "the result without its `Error during inference` prefix and the `:` after it".
    message = bfcl_semantics.inference_error_message
    assert message("Error during inference: Timeout") == "Timeout"
    assert message("Error during inference:X-ray failed") == "X-ray failed"
    assert message("Error during inference::Xyz") == "Xyz"
    # Without the prefix the text is kept whole; an empty message keeps the result.
    assert message("a crash reported in some other words") == "a crash reported in some other words"
    assert message("Error during inference:") == "Error during inference:"


@pytest.mark.spec("BFCL-MISS-PARAM", "BFCL-REASON")
def test_bfcl_withheld_parameter_messages() -> None:
    # multi_turn_miss_param_2: turn 0 withholds touch's file_name, turn 1 supplies it (the data,
    # as tests/test_bfcl_rules.py finds it). The message names both turns, counted from 1
    # (BFCL-TURNS): turns 1 and 2.
    task = bfcl.task("multi_turn_miss_param_2")
    assert dict(task.withheld) == {0: frozenset({("touch", "file_name")})}
    assert (task.withheld_functions(0), task.withheld_functions(1)) == (frozenset({"touch"}), frozenset())
    fault = bfcl_semantics.information_fault
    assert (
        fault(task, "touch", {}, 0)
        == "`touch` called without `file_name`, which turn 1 withholds and turn 2 supplies"
    )
    assert fault(task, "touch", {"file_name": "zzz_guess.txt"}, 0) == (
        "`touch` called with file_name='zzz_guess.txt' before the user gives `file_name` "
        "(turn 1 withholds it, turn 2 supplies it; it occurs in no earlier tool result)"
    )
    # An earlier tool result that holds the value grounds it (BFCL-MISS-PARAM); one that holds it
    # only inside a longer word does not.
    guess = {"file_name": "zzz_guess.txt"}
    assert fault(task, "touch", guess, 0, ["{'files': ['zzz_guess.txt']}"]) is None
    assert fault(task, "touch", guess, 0, ["{'files': ['azzz_guess.txt']}"]) is not None
    # A value without letters or digits names nothing; another function is judged like any call.
    assert fault(task, "touch", {"file_name": ".."}, 0) is None
    assert fault(task, "cd", {}, 0) is None
    assert fault(task, "touch", {}, 1) is None


@pytest.mark.spec("BFCL-REASON")
@pytest.mark.parametrize("size", [159, 160, 161, 300])
def test_bfcl_reason_shows_at_most_160_characters_of_the_call(size: int) -> None:
    # "the call as written (at most 160 characters)"; a longer call ends in "...".
    text = "f(x='" + "a" * (size - 7) + "')"
    assert len(text) == size
    shown = bfcl_semantics._shown(ParsedCall("f", text=text))
    assert shown == (text if size <= 160 else text[:157] + "...")
    assert len(shown) == min(size, 160)
    assert bfcl_semantics._shown(ParsedCall("f")) == "f(...)"


@pytest.mark.spec("BFCL-API", "BFCL-REASON", "BFCL-SUCCESS")
def test_bfcl_call_records() -> None:
    # The per-call records of BFCL-API: position (from 1), turn (from 0; the reason counts it from
    # 1, BFCL-TURNS), the call as written,
    # whether it ran, its result as BFCL's executor renders it (a failed call, also one rejected
    # before it runs, as "Error during execution: ..."), labels, the BFCL-REASON reason and the
    # stage's message. multi_turn_base_0's first gold call, then a call to no function.
    gold = [list(turn) for turn in bfcl.gold_turns("multi_turn_base_0")]
    assert gold[0][0] == "cd(folder='document')"
    gold[0].insert(1, "no_such_function(x=1)")
    evaluation = bfcl.replay_calls("multi_turn_base_0", gold)
    why = "no function `no_such_function` in this task's classes"
    assert evaluation.records[:2] == (
        CallRecord(1, 0, "cd(folder='document')", True, '{"current_working_directory": "document"}'),
        CallRecord(
            2,
            0,
            "no_such_function(x=1)",
            False,
            "Error during execution: " + why,
            (Label.SCHEMA,),
            f"call 2 (turn 1) no_such_function(x=1) [schema]: {why}",
            message=why,
        ),
    )
    # A call that runs and fails: its execution error is the message.
    (record,) = bfcl.replay_calls("multi_turn_base_0", [["cd(folder='zz_nowhere')"]]).records
    why = "cd: 'zz_nowhere': No such file or directory"
    assert record == CallRecord(
        1,
        0,
        "cd(folder='zz_nowhere')",
        True,
        json.dumps({"error": why}),  # BFCL renders a dict result as JSON
        (Label.DEPENDENCY,),
        f"call 1 (turn 1) cd(folder='zz_nowhere') [dependency]: {why}",
        message=why,
    )


@pytest.mark.spec("BFCL-API", "BFCL-REASON", "BFCL-LABELS")
def test_bfcl_record_of_an_unclassified_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # With no message family (as tests/test_bfcl.py does), the executed call's error is
    # "unclassified error: <message>", unlabelled (LABEL-UNMATCHED), and its record says so.
    from prefixexec.adapters.bfcl import execute

    monkeypatch.setattr(execute, "FAMILIES", ())
    call = "mkdir(dir_name='workspace')"  # multi_turn_base_1 already has a workspace directory
    (record,) = bfcl.replay_calls("multi_turn_base_1", [[call], [], [], []], success=False).records
    why = "unclassified error: mkdir: cannot create directory 'workspace': File exists"
    assert record == CallRecord(
        1,
        0,
        call,
        True,
        json.dumps({"error": "mkdir: cannot create directory 'workspace': File exists"}),
        (),
        f"call 1 (turn 1) {call} [unlabelled]: {why}",
        unclassified=True,
        message=why,
    )


@pytest.mark.spec("BFCL-MISS-PARAM")
def test_bfcl_withheld_value_across_several_user_messages() -> None:
    # A turn's user messages are read as one text: a value at the end of one message is a whole
    # word, both in the supplying turn and in the earlier turns. multi_turn_miss_param_2's turn 1
    # supplies touch's file_name 'TeamNotes.txt'; here it is split over two messages.
    import attrs

    from prefixexec.adapters.bfcl import backend

    entry = backend.entry("multi_turn_miss_param_2")
    gold = bfcl.task("multi_turn_miss_param_2").gold
    rest = entry.questions[2:]
    split = attrs.evolve(
        entry, questions=(entry.questions[0], ("The name should be TeamNotes.txt", "thanks"), *rest)
    )
    assert dict(bfcl_semantics.withheld_parameters(split, gold)) == {0: frozenset({("touch", "file_name")})}
    # Said already in turn 0 (at the end of its first message): not withheld.
    said = attrs.evolve(
        entry,
        questions=(
            ("Go into document folder, make TeamNotes.txt", "and draft it"),
            entry.questions[1],
            *rest,
        ),
    )
    assert dict(bfcl_semantics.withheld_parameters(said, gold)) == {}


@pytest.mark.spec("BFCL-MISS-PARAM")
def test_bfcl_withheld_parameters_skip_calls_that_do_not_bind() -> None:
    # Only ground-truth calls that parse and name a known function are bound; others add nothing.
    from prefixexec.adapters.bfcl import backend

    entry = backend.entry("multi_turn_miss_param_2")
    calls = ["no_such_tool(file_name='TeamNotes.txt')", "touch(file_name=TeamNotes.txt)"]
    gold = ((), tuple(parse_call_string(c) for c in calls))
    assert gold[1][0].fault is None and gold[1][1].fault is not None
    assert dict(bfcl_semantics.withheld_parameters(entry, gold)) == {}
    # ... and the calls after them still count.
    gold = ((), tuple(parse_call_string(c) for c in [*calls, "touch(file_name='TeamNotes.txt')"]))
    assert dict(bfcl_semantics.withheld_parameters(entry, gold)) == {0: frozenset({("touch", "file_name")})}


@pytest.mark.spec("BFCL-LINEAR")
def test_bfcl_session_steps_only_its_own_actions_in_order() -> None:
    # A BFCL state steps the run's next action (the very object), nothing else, and nothing
    # after the last one.
    task = bfcl.task("multi_turn_base_0")
    run = bfcl_semantics.run_from_strings(task, [["cd(folder='document')"], [], [], []])
    twin = bfcl_semantics.run_from_strings(task, [["cd(folder='document')"], [], [], []]).actions[0]
    semantics = bfcl_semantics.BfclSemantics(track_success=False)
    state = semantics.initial_state(run)
    message = "^a BFCL run is replayed along its own actions, in order$"
    with pytest.raises(ValueError, match=message):
        semantics.step(state, twin)
    verdict = semantics.step(state, run.actions[0])
    assert not isinstance(verdict, Rejected)
    with pytest.raises(ValueError, match=message):
        semantics.step(verdict.state, run.actions[0])


@pytest.mark.spec("BFCL-LINEAR")
def test_bfcl_replay_steps_each_action_once_in_order() -> None:
    # Kernel replay over three accepted calls: each state is the next position.
    from prefixexec.kernel import replay

    task = bfcl.task("multi_turn_base_0")
    calls = ["cd(folder='document')", "mkdir(dir_name='temp')", "cd(folder='temp')"]
    run = bfcl_semantics.run_from_strings(task, [calls, [], [], []])
    outcome = replay(bfcl_semantics.BfclSemantics(track_success=False), run, run.actions)
    assert (outcome.T, outcome.fed) == (3, 4)


@pytest.mark.spec("BFCL-STEP")
def test_bfcl_decoded_steps_are_counted_per_turn() -> None:
    # BfclRun.decoded_steps: per turn, the number of steps handed to the executor; reply steps
    # (no call) are not actions and not counted.
    task = bfcl.task("multi_turn_base_0")
    step = _bfcl_step("cd(folder='document')")
    run = bfcl_semantics.make_run(task, [[step, step, REPLY], [], [step]])
    assert (run.decoded_steps, len(run.actions), run.turns) == ((2, 0, 1), 3, 3)


@pytest.mark.spec("BFCL-SUCCESS", "BFCL-API")
def test_bfcl_success_failure_and_early_stop() -> None:
    # Y = 1 on the ground truth itself, and then no failure (None, as Evaluation documents).
    gold = [list(turn) for turn in bfcl.gold_turns("multi_turn_base_0")]
    evaluation = bfcl.replay_calls("multi_turn_base_0", gold)
    assert (evaluation.success, evaluation.failure, len(evaluation.records)) == (True, None, 10)
    # Three of four turns: Y = 0 is decided before any call, so after replay's first rejection
    # (call 2) nothing more runs: 2 records of the 7 calls.
    short = gold[:3]
    short[0].insert(1, "no_such_function(x=1)")
    evaluation = bfcl.replay_calls("multi_turn_base_0", short)
    assert (evaluation.success, evaluation.T, evaluation.fed, len(evaluation.records)) == (False, 7, 2, 2)
    assert evaluation.failure == "force_terminated: the result has 3 turns, the ground truth 4"


@pytest.mark.spec("BFCL-LINEAR", "BFCL-STATE")
def test_bfcl_semantics_misuse_is_named_and_calls_return_their_results() -> None:
    # Mutants of BfclSemantics and evaluate checked after the run (tests/mutation-adapters.md).
    from prefixexec.adapters.bfcl.execute import instance_snapshot
    from prefixexec.adapters.bfcl.semantics import StaleStateError

    task = bfcl.task("multi_turn_base_0")
    run = bfcl_semantics.run_from_strings(task, [["cd(folder='document')", "ls()"], [], [], []])
    semantics = bfcl_semantics.BfclSemantics(track_success=False)
    state = semantics.initial_state(run)
    once = "a BfclSemantics replays one rollout; make a new one for the next"
    with pytest.raises(RuntimeError, match=rf"^{once}$"):
        semantics.initial_state(run)
    with pytest.raises(TypeError, match=r"^BFCL semantics steps BfclCall actions, got ToolCall$"):
        semantics.step(state, ToolCall("cd", {"folder": "document"}))
    first = semantics.step(state, run.actions[0])
    assert not isinstance(first, Rejected)
    with pytest.raises(StaleStateError, match=r"^this BFCL state was already stepped; states are used once$"):
        semantics.step(state, run.actions[0])
    second = semantics.step(first.state, run.actions[1])
    assert not isinstance(second, Rejected)
    # The observation of an accepted call is the call's own result: ls() lists the folder.
    assert second.observation == semantics.session.records[1].result and second.observation
    # evaluate keeps the final instance state only when asked to.
    plain = bfcl_semantics.evaluate(run, success=False)
    assert plain.state is None
    kept = bfcl_semantics.evaluate(run, success=False, snapshot=True)
    assert kept.state is not None and kept.state
    again = bfcl_semantics.evaluate(run, success=False, snapshot=True)
    assert kept.state == again.state
    assert kept.state != instance_snapshot({})
    # By default the semantics tracks BFCL's success too (the gold world runs beside replay).
    tracking = bfcl_semantics.BfclSemantics()
    tracking.initial_state(run)
    assert tracking.session.track and tracking.session.gold is not None


def _bfcl_step(*calls: str) -> DecodedStep:
    """A BFCL model step making ``calls`` (call strings as the model writes them)."""
    return DecodedStep(tuple(parse_call_string(c) for c in calls))


@pytest.mark.spec("BFCL-STEP")
def test_bfcl_actions_carry_their_arguments_turn_and_step() -> None:
    step = _bfcl_step
    task = bfcl.task("multi_turn_base_0")
    run = bfcl_semantics.make_run(
        task,
        [
            [step("cd(folder='document')"), step("ls()", "mkdir(dir_name='x')"), REPLY],
            [step("pwd()"), step("touch(file_name=TeamNotes.txt)")],
            [],
            [],
        ],
    )
    got = [(a.name, dict(a.arguments), a.turn, a.step) for a in run.actions]
    assert got == [
        ("cd", {"folder": "document"}, 0, 0),
        ("ls", {}, 0, 1),
        ("mkdir", {"dir_name": "x"}, 0, 1),
        ("pwd", {}, 1, 0),
        ("touch", {}, 1, 1),  # a call with a parse fault has no arguments (its raw text is kept)
    ]
    assert run.actions[-1].call.fault is not None and run.turns == 4


@pytest.mark.spec("BFCL-STEP")
def test_bfcl_call_steps_after_a_reply_step_of_the_same_turn_are_actions() -> None:
    # BFCL's checker (eval_runner.py, multi-turn) skips a step that decodes to nothing and keeps
    # the later steps of the turn: a reply is skipped, not the end of the turn's actions.
    step = _bfcl_step
    task = bfcl.task("multi_turn_base_0")
    run = bfcl_semantics.make_run(
        task, [[step("ls()"), REPLY, step("pwd()"), REPLY, step("cd(folder='document')")], [], [], []]
    )
    assert [(a.name, a.turn, a.step) for a in run.actions] == [("ls", 0, 0), ("pwd", 0, 2), ("cd", 0, 4)]
    assert run.decoded_steps == (3, 0, 0, 0)
