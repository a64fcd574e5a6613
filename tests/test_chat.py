"""The chat-transcript adapter (spec/adapters/chat.md).

Test data: tests/data/chat/transcripts.jsonl, 19 hand-written transcripts (OpenAI messages,
Anthropic blocks, MCP results), one per path through the adapter; the task ids name the path.
Expected outcomes are read off each line by hand (which call fails, and why), as noted inline.
Malformed inputs are built in temporary files.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, InputError, chat
from prefixexec.cli import main
from prefixexec.kernel import Label, Rollout

from conftest import REPO

DATA = REPO / "tests" / "data" / "chat" / "transcripts.jsonl"


def read(*paths: Path, **options: Any) -> dict[tuple[str, int], Rollout]:
    return {(r.task_id, r.trial): r for r in chat.read([str(p) for p in paths], AdapterOptions(**options))}


# (T, FED, label, Y) per line without --error-pattern, from the transcripts by hand.
EXPECTED: dict[tuple[str, int], tuple[int, int, Label | None, bool]] = {
    ("weather_ok", 0): (1, 2, None, True),  # valid call, plain result
    ("weather_ok", 1): (1, 2, None, True),  # the same task, trial 1, with the optional "unit"
    ("bad_json_recovered", 0): (2, 1, Label.SCHEMA, True),  # "{city: Rome}" is not JSON; then ok
    ("unknown_tool", 0): (1, 1, Label.SCHEMA, False),  # get_forecast is not in tools
    ("schema_type", 0): (1, 1, Label.SCHEMA, False),  # city: 42, the schema wants a string
    ("schema_required", 0): (1, 1, Label.SCHEMA, False),  # no "city", and "unit": "K" not in enum
    ("pattern_error", 0): (1, 2, None, False),  # "Error: ..." result, but no flag and no pattern
    ("no_tool_needed_tools", 0): (1, 1, None, False),  # no call, tools offered
    ("no_tool_no_tools", 0): (1, 2, None, True),  # no call, tools: []
    ("no_tool_allowed", 0): (1, 2, None, True),  # no call, "no_tool_allowed": true
    ("unanswered", 0): (2, 2, None, False),  # the second call has no result
    ("parallel_reordered", 0): (2, 2, Label.STATE_CONSISTENCY, False),  # c2 "rate limit exceeded"
    ("hostile_arguments", 0): (1, 1, Label.SCHEMA, False),  # Python code as arguments: not JSON
    ("anthropic_not_found", 0): (1, 1, Label.DEPENDENCY, False),  # is_error "Order A1 not found"
    ("anthropic_already_booked", 0): (2, 1, Label.STATE_CONSISTENCY, True),  # "already booked"
    ("anthropic_pattern_violation", 0): (1, 1, Label.SCHEMA, False),  # "17" fails the id pattern
    ("mcp_permission", 0): (1, 1, Label.PRECONDITION, False),  # isError "Permission denied"
    ("mcp_no_results", 0): (1, 1, Label.INFORMATION, False),  # isError "No results for ..."
    ("mcp_unlabelled", 0): (1, 1, None, False),  # isError "Something went wrong"
}


@pytest.mark.spec("CHAT-FORMAT", "CHAT-CALLS", "CHAT-EXEC", "CHAT-LABELS", "CHAT-SUCCESS")
@pytest.mark.parametrize("key", sorted(EXPECTED), ids=[f"{k[0]}-{k[1]}" for k in sorted(EXPECTED)])
def test_fixture_outcomes(key: tuple[str, int]) -> None:
    rollout = read(DATA)[key]
    T, fed, label, y = EXPECTED[key]
    assert (rollout.outcome.T, rollout.outcome.fed, rollout.outcome.label, rollout.success) == (
        T,
        fed,
        label,
        y,
    )


@pytest.mark.spec("CHAT-FORMAT")
def test_every_line_is_read() -> None:
    assert sorted(read(DATA)) == sorted(EXPECTED)


@pytest.mark.spec("CHAT-CALLS")
def test_calls_and_results_in_each_format() -> None:
    lines = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    by_id = {(item["task_id"], item.get("trial", 0)): item for item in lines}
    openai = chat.read_calls(by_id[("parallel_reordered", 0)]["messages"], "w")
    # Two parallel calls; the results come back c2 (flagged) then c1: matched by id.
    assert [(c.action.call_id, c.action.name, dict(c.action.arguments), c.flagged) for c in openai] == [
        ("c1", "get_weather", {"city": "Paris"}, False),
        ("c2", "get_weather", {"city": "Lyon"}, True),
    ]
    anthropic = chat.read_calls(by_id[("anthropic_already_booked", 0)]["messages"], "w")
    assert [(c.action.call_id, dict(c.action.arguments), c.flagged, c.result) for c in anthropic] == [
        ("toolu_1", {"seat": "12A"}, True, "Seat 12A is already booked"),
        ("toolu_2", {"seat": "12B"}, False, "Booked 12B"),
    ]
    mcp = chat.read_calls(by_id[("mcp_permission", 0)]["messages"], "w")
    assert [(c.flagged, c.result) for c in mcp] == [(True, "Permission denied: not logged in")]


@pytest.mark.spec("CHAT-EXEC")
def test_reasons_name_every_failed_check() -> None:
    rollouts = read(DATA)
    # schema_required: the best-matching jsonschema error (the missing required property).
    assert rollouts[("schema_required", 0)].outcome.reason == (
        "arguments violate the schema of 'get_weather' at arguments: 'city' is a required property"
    )
    assert rollouts[("schema_type", 0)].outcome.reason == (
        "arguments violate the schema of 'get_weather' at arguments.city: 42 is not of type 'string'"
    )
    assert rollouts[("unknown_tool", 0)].outcome.reason == "tool 'get_forecast' is not in 'tools'"
    assert rollouts[("unanswered", 0)].outcome.reason == "no tool result answers call 'c2'"


@pytest.mark.spec("CHAT-EXEC", "CHAT-TOOLS", "CONV-LABEL-ORDER")
def test_several_checks_on_one_call(tmp_path: Path) -> None:
    item = line(
        [
            assistant(call("c1", "get_weather", {"city": 3})),
            tool_message("c1", "Order not found", is_error=True),
        ],
        [WEATHER],
    )
    (rollout,) = read(write(tmp_path, [item])).values()
    # A schema violation and a "not found" error result: schema before dependency.
    assert rollout.outcome.label is Label.SCHEMA
    assert rollout.outcome.reason == (
        "arguments violate the schema of 'get_weather' at arguments.city: 3 is not of type 'string'; "
        "tool result is an error: Order not found"
    )


@pytest.mark.spec("CHAT-PATTERN")
def test_error_pattern() -> None:
    plain = read(DATA)
    marked = read(DATA, error_pattern="^Error:")
    # pattern_error's result "Error: city Atlantis not found" now fails (dependency family).
    assert plain[("pattern_error", 0)].outcome.fed == 2
    outcome = marked[("pattern_error", 0)].outcome
    assert (outcome.fed, outcome.label) == (1, Label.DEPENDENCY)
    assert outcome.reason == "tool result matches --error-pattern: Error: city Atlantis not found"
    # Results that do not start with "Error:" are untouched.
    assert marked[("weather_ok", 0)].outcome.fed == 2
    # Case-sensitive unless the pattern says otherwise.
    assert read(DATA, error_pattern="^error:")[("pattern_error", 0)].outcome.fed == 2
    assert read(DATA, error_pattern="(?i)^error:")[("pattern_error", 0)].outcome.fed == 1


@pytest.mark.spec("CHAT-LABELS")
@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("Invalid argument: date must be YYYY-MM-DD", (Label.SCHEMA,)),
        ("get() missing 1 required positional argument: 'id'", (Label.SCHEMA,)),
        ("No such file or directory: /tmp/x", (Label.DEPENDENCY,)),
        ("User 12 does not exist", (Label.DEPENDENCY,)),
        ("403 Forbidden", (Label.PRECONDITION,)),
        ("You are not logged in", (Label.PRECONDITION,)),
        ("Insufficient funds", (Label.STATE_CONSISTENCY,)),
        ("Request timed out", (Label.STATE_CONSISTENCY,)),
        ("Ambiguous name: 3 contacts match", (Label.INFORMATION,)),
        ("No route between A and B", (Label.INFORMATION,)),
        ("Invalid id: order not found", (Label.SCHEMA, Label.DEPENDENCY)),
        ("Internal server error", ()),
    ],
)
def test_error_labels(text: str, labels: tuple[Label, ...]) -> None:
    assert chat.error_labels(text) == labels


@pytest.mark.spec("CHAT-LABELS")
def test_every_label_the_fixture_produces() -> None:
    counts: dict[Label | None, int] = {}
    for rollout in read(DATA).values():
        if not rollout.outcome.fully_executable:
            counts[rollout.outcome.label] = counts.get(rollout.outcome.label, 0) + 1
    # From EXPECTED: schema 6 (bad JSON, unknown tool, type, required, hostile, id pattern),
    # dependency 1, precondition 1, state consistency 2, information 1, unlabelled 3 (no tool
    # needed, unanswered, mcp_unlabelled).
    assert counts == {
        Label.SCHEMA: 6,
        Label.DEPENDENCY: 1,
        Label.PRECONDITION: 1,
        Label.STATE_CONSISTENCY: 2,
        Label.INFORMATION: 1,
        None: 3,
    }


@pytest.mark.spec("CHAT-NOTOOL")
def test_no_tool_convention() -> None:
    rollouts = read(DATA)
    assert (
        rollouts[("no_tool_needed_tools", 0)].outcome.reason
        == "the rollout made no tool call, but the task offers 1 tool and the line does not set "
        "no_tool_allowed: a task that offers tools needs at least one call (CHAT-NOTOOL)"
    )
    assert [
        rollouts[(k, 0)].outcome.fed for k in ("no_tool_needed_tools", "no_tool_no_tools", "no_tool_allowed")
    ] == [
        1,
        2,
        2,
    ]


@pytest.mark.spec("CHAT-CALLS", "CHAT-EXEC")
def test_hostile_arguments_are_never_executed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "t.jsonl"
    path.write_text(DATA.read_text(encoding="utf-8").replace("PWNED_PATH", str(marker)), encoding="utf-8")
    assert str(marker) in path.read_text(encoding="utf-8")
    assert main(["score", "--adapter", "chat", str(path), "--json"]) == 0
    capsys.readouterr()
    # The arguments string calls os.system to create the marker; it is only parsed as JSON.
    assert not marker.exists()
    outcome = read(path)[("hostile_arguments", 0)].outcome
    assert outcome.reason is not None and outcome.reason.startswith("arguments are not valid JSON")


@pytest.mark.spec("CHAT-SUCCESS", "CHAT-FORMAT")
def test_condition_keys_and_options(tmp_path: Path) -> None:
    rollout = read(DATA)[("weather_ok", 1)]
    assert (rollout.condition.dataset, rollout.condition.model, rollout.condition.method) == (
        "chat",
        "gpt-x",
        "react",
    )
    item = line([], [], dataset="support-bot", task_id=7)
    del item["model"], item["method"]
    path = write(tmp_path, [item])
    (named,) = read(path, model="m", method="plan").values()
    assert (named.condition.dataset, named.condition.model, named.condition.method, named.task_id) == (
        "support-bot",
        "m",
        "plan",
        "7",
    )


@pytest.mark.spec("CHAT-SUCCESS", "CHAT-LABELS", "CHAT-NOTOOL")
def test_cli_score_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--adapter", "chat", str(DATA), "--json"]) == 0
    (condition,) = json.loads(capsys.readouterr().out)["conditions"]
    exact = condition["exact"]
    # From EXPECTED: N = 19; fully executable: weather_ok x2, pattern_error, no_tool_no_tools,
    # no_tool_allowed (TER 5/19); successes 6 (6/19); RR-eligible 14 with bad_json_recovered and
    # anthropic_already_booked successful (RR 2/14 = 1/7); sum of (FED-1)/T = 5 full rollouts
    # with FED-1 = T, plus unanswered and parallel_reordered at 1/2 each = 6, AUC-PEC = 6/19.
    assert condition["N"] == 19
    assert [Fraction(exact[k]) for k in ("TER", "success", "RR", "AUC_PEC")] == [
        Fraction(5, 19),
        Fraction(6, 19),
        Fraction(1, 7),
        Fraction(6, 19),
    ]


# ---------------------------------------------------------------------------------------------
# Malformed input

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def assistant(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def tool_message(call_id: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content, **extra}


def line(messages: Any, tools: list[Any], **extra: Any) -> dict[str, Any]:
    base = {
        "task_id": "t",
        "model": "m",
        "method": "x",
        "success": True,
        "messages": messages,
        "tools": tools,
    }
    return {**base, **extra}


def write(tmp_path: Path, items: list[Any], raw: str | None = None) -> Path:
    path = tmp_path / "in.jsonl"
    text = raw if raw is not None else "".join(json.dumps(item) + "\n" for item in items)
    path.write_text(text, encoding="utf-8")
    return path


GOOD = [assistant(call("c1", "get_weather", {"city": "Paris"})), tool_message("c1", "18 C")]

FAULTS: list[tuple[str, Any, str]] = [
    ("not json", "{oops\n", ":1: not valid JSON"),
    ("nan", '{"task_id": NaN}\n', ":1: not valid JSON: NaN is not valid JSON"),
    ("duplicate key", '{"task_id": 1, "task_id": 2}\n', "key 'task_id' appears twice"),
    ("not object", "[1, 2]\n", ":1: expected a JSON object, got list"),
    (
        "missing messages",
        {k: v for k, v in line(GOOD, [WEATHER]).items() if k != "messages"},
        "missing field 'messages'",
    ),
    ("success type", line(GOOD, [WEATHER], success="yes"), "'success' must be a boolean, got 'yes'"),
    ("no model", {k: v for k, v in line(GOOD, [WEATHER]).items() if k != "model"}, "missing field 'model'"),
    ("trial", line(GOOD, [WEATHER], trial=-1), "'trial' must be an integer >= 0, got -1"),
    ("messages type", line("hi", [WEATHER]), "'messages' must be a list, got str"),
    ("role", line([{"content": "x"}], [WEATHER]), ":1: messages[0]: 'role' must be a string"),
    (
        "legacy",
        line([{"role": "assistant", "function_call": {"name": "f"}}], [WEATHER]),
        "legacy 'function_call'",
    ),
    (
        "call id",
        line([assistant({"type": "function", "function": {"name": "f", "arguments": "{}"}})], [WEATHER]),
        ":1: messages[0].tool_calls[0]: a tool call needs an 'id'",
    ),
    (
        "orphan result",
        line([tool_message("zz", "x")], [WEATHER]),
        ":1: messages[0]: a tool result for call id 'zz'",
    ),
    (
        "flag type",
        line([GOOD[0], tool_message("c1", "x", is_error="true")], [WEATHER]),
        "'is_error' must be a boolean",
    ),
    (
        "tool name",
        line(GOOD, [{"type": "function", "function": {"description": "x"}}]),
        ":1: tools[0]: expected a tool with a 'name'",
    ),
    ("tool twice", line(GOOD, [WEATHER, WEATHER]), ":1: tools[1]: tool 'get_weather' is listed twice"),
    (
        "bad schema",
        line(GOOD, [{"name": "get_weather", "input_schema": {"type": "strng"}}]),
        ":1: tools[0]: tool 'get_weather': not a valid JSON Schema",
    ),
    (
        "remote $ref",
        line(GOOD, [{"name": "get_weather", "parameters": {"$ref": "https://example.com/x.json"}}]),
        ":1: tools[0]: tool 'get_weather': has an unresolvable $ref (only references inside the schema",
    ),
    ("repeated key", None, ":2: repeats task 't' trial 0 of"),
    ("empty", "\n\n", "no transcripts found"),
]


@pytest.mark.spec("CHAT-ERRORS")
@pytest.mark.parametrize(("item", "message"), [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_malformed_input(tmp_path: Path, item: Any, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    if item is None:
        path = write(tmp_path, [line(GOOD, [WEATHER]), line(GOOD, [WEATHER])])
    elif isinstance(item, str):
        path = write(tmp_path, [], raw=item)
    else:
        path = write(tmp_path, [item])
    assert main(["score", "--adapter", "chat", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"prefixexec: error: {path}")
    assert message in captured.err


@pytest.mark.spec("CHAT-ERRORS", "CHAT-PATTERN")
def test_bad_error_pattern_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--adapter", "chat", str(DATA), "--error-pattern", "(unclosed"]) == 2
    assert "prefixexec: error: --error-pattern: not a valid regular expression" in capsys.readouterr().err
    assert main(["score", "--adapter", "chat", str(tmp_path / "absent.jsonl")]) == 2
    assert "absent.jsonl: no such file" in capsys.readouterr().err


@pytest.mark.spec("CHAT-TOOLS")
def test_tool_forms_and_schema_cache() -> None:
    tools = chat.read_tools(
        [
            WEATHER,
            {"type": "function", "name": "flat", "parameters": {"type": "object"}},
            {"name": "anthropic", "input_schema": {"type": "object", "required": ["a"]}},
            {
                "name": "mcp",
                "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
            },
            {"name": "free"},
        ],
        "w",
    )
    assert sorted(tools) == ["anthropic", "flat", "free", "get_weather", "mcp"]
    assert tools["free"].validator is None
    assert type(tools["mcp"].validator).__name__ == "Draft7Validator"
    assert type(tools["anthropic"].validator).__name__ == "Draft202012Validator"
    unknown = chat.read_tools([{"name": "u", "inputSchema": {"$schema": "https://example.com/s"}}], "w")
    assert type(unknown["u"].validator).__name__ == "Draft202012Validator"
    # The same schema (up to key order) compiles once.
    assert chat.compile_schema({"type": "object", "required": ["a"]}) is chat.compile_schema(
        {"required": ["a"], "type": "object"}
    )
    with pytest.raises(ValueError, match="must be an object"):
        chat.compile_schema([1])
    with pytest.raises(InputError):
        chat.read_tools({"name": "x"}, "w")
