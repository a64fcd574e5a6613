"""The guard's decisions, rules file, reasons and trace, through its Python API (spec/guard.md).

The real MCP servers are in tests/test_guard_mcp.py; here tools are plain functions and the
expected verdicts are counted by hand from the calls each test makes.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters.errors import InputError
from prefixexec.adapters.spans import trace_labels
from prefixexec.guard import PHRASES, Guard, Violation, load_guard_rules, reason_text
from prefixexec.kernel import Label
from prefixexec.kernel.actions import NoToolAction, primary_label

TOOLS = [
    {
        "name": "get_order",
        "inputSchema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    },
    {"name": "list_orders", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "cancel",
        "inputSchema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
            "required": ["order_id"],
        },
    },
]


def rules_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def explained(path: Path, *extra: str) -> dict[str, Any]:
    """``prefixexec explain --adapter otel --json`` on a trace file: the one rollout's row."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "prefixexec",
            "explain",
            "--adapter",
            "otel",
            "--success-attr",
            "@ok",
            "--json",
            str(path),
            *extra,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    (line,) = done.stdout.splitlines()
    row: dict[str, Any] = json.loads(line)
    return row


def readback(trace: str, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """:func:`explained` on the trace text, written to a file."""
    path = tmp_path / "trace.jsonl"
    path.write_text(trace, encoding="utf-8")
    return explained(path, *extra)


@pytest.mark.spec("GUARD-CHECKS", "GUARD-API")
def test_check_names_the_failed_rule_and_changes_nothing() -> None:
    guard = Guard(TOOLS, context=["I want order #W123"])
    unknown = guard.check("refund", {})
    assert (unknown.blocked, unknown.rule, unknown.label) == (True, "GUARD-TOOL", Label.SCHEMA)
    typed = guard.check("get_order", {"order_id": 5})
    assert (typed.rule, typed.label) == ("GUARD-SCHEMA", Label.SCHEMA)
    missing = guard.check("get_order", {})
    assert missing.rule == "GUARD-SCHEMA" and "order_id" in str(missing.reason)
    invented = guard.check("get_order", {"order_id": "W999"})
    assert (invented.rule, invented.label) == ("GUARD-PROVENANCE", Label.INFORMATION)
    seen = guard.check("get_order", {"order_id": "W123"})  # "#W123" occurred (TAU-ENTITY-NORM)
    assert seen.forward and seen.reason is None and seen.violations == ()
    assert guard.check("refund", {}) == unknown  # check records nothing
    assert guard.outcome().T == 1 and isinstance(guard.outcome().actions[0], NoToolAction)


@pytest.mark.spec("GUARD-PROVENANCE")
def test_identifiers_from_an_earlier_result_may_be_used() -> None:
    guard = Guard(TOOLS)
    assert guard.check("get_order", {"order_id": "W777"}).rule == "GUARD-PROVENANCE"
    ok, text = guard.run("list_orders", {}, lambda: "orders: W777, W778")
    assert ok and text == "orders: W777, W778"
    assert guard.check("get_order", {"order_id": "W777"}).forward
    assert guard.check("get_order", {"order_id": "w777"}).forward  # case folded, as occurs() does
    assert guard.check("get_order", {"order_id": "W77"}).rule == "GUARD-PROVENANCE"  # whole tokens only


@pytest.mark.spec("GUARD-PROVENANCE-KEYS")
def test_which_arguments_are_checked(tmp_path: Path) -> None:
    guard = Guard(TOOLS)
    # "reason" is not named like an id: any value passes; "order_id" is
    assert guard.check("cancel", {"order_id": "X1", "reason": "R_2"}).rule == "GUARD-PROVENANCE"
    no_keys = Guard(TOOLS, rules=load_guard_rules(None, id_keys=False))
    assert no_keys.check("cancel", {"order_id": "X1"}).forward
    path = rules_file(
        tmp_path,
        '[[provenance]]\ntool = "*"\nargument = "reason"\nvalues = "all"\n'
        '[[provenance]]\ntool = "cancel"\nargument = "order_id"\ncheck = false\n',
    )
    ruled = Guard(TOOLS, rules=load_guard_rules(path), context=["too late"])
    assert ruled.check("cancel", {"order_id": "X1", "reason": "late"}).forward
    blocked = ruled.check("cancel", {"order_id": "X1", "reason": "changed mind"})
    assert blocked.rule == "GUARD-PROVENANCE" and "reason" in str(blocked.reason)
    assert (
        ruled.check("get_order", {"order_id": "X1"}).rule == "GUARD-PROVENANCE"
    )  # the exemption is per tool


@pytest.mark.spec("GUARD-REQUIRES", "GUARD-ARGUMENT", "GUARD-RULES-FILE")
def test_precondition_rules_from_toml(tmp_path: Path) -> None:
    path = rules_file(
        tmp_path,
        '[[requires]]\ntool = "cancel"\nafter = "list_orders"\n'
        '[[argument]]\ntool = "cancel"\nargument = "reason"\npattern = "^[a-z ]+$"\n'
        'label = "state_consistency"\n',
    )
    guard = Guard(TOOLS, rules=load_guard_rules(path, id_keys=False))
    first = guard.check("cancel", {"order_id": "W1", "reason": "Bad!"})
    # both rules fail; precondition comes before state_consistency (CONV-LABEL-ORDER)
    assert [v.rule for v in first.violations] == ["GUARD-REQUIRES", "GUARD-ARGUMENT"]
    assert first.label is Label.PRECONDITION
    guard.run("list_orders", {}, lambda: "none")
    second = guard.check("cancel", {"order_id": "W1", "reason": "Bad!"})
    assert (second.rule, second.label) == ("GUARD-ARGUMENT", Label.STATE_CONSISTENCY)
    assert guard.check("cancel", {"order_id": "W1", "reason": "changed mind"}).forward
    assert guard.check("cancel", {"order_id": "W1"}).forward  # no argument: left to the schema


@pytest.mark.spec("GUARD-REQUIRES")
def test_requires_counts_only_a_call_that_succeeded(tmp_path: Path) -> None:
    path = rules_file(tmp_path, '[[requires]]\ntool = "cancel"\nafter = "list_orders"\n')
    guard = Guard(TOOLS, rules=load_guard_rules(path, id_keys=False))
    pending = guard.begin("list_orders", {})
    guard.finish(pending, {"content": [{"type": "text", "text": "backend down"}], "isError": True})
    assert guard.check("cancel", {"order_id": "W1"}).rule == "GUARD-REQUIRES"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[nope]]\ntool = "a"\n', "unknown table 'nope'"),
        ('[[requires]]\ntool = "a"\n', "requires rule 1: 'after' is absent"),
        ('[[requires]]\ntool = "a"\nafter = "b"\nlabel = "fatal"\n', "requires rule 1: 'label'"),
        ('[[argument]]\ntool = "a"\nargument = "x"\npattern = "(a"\n', "argument rule 1: 'pattern' is not"),
        ('[[provenance]]\ntool = "a"\nargument = "x"\nvalues = "some"\n', "provenance rule 1: 'values'"),
        ('[[provenance]]\ntool = "a"\nargument = "x"\ncheck = "no"\n', "provenance rule 1: 'check'"),
        ('[[provenance]]\ntool = "a"\nargument = "x"\nextra = 1\n', "unknown key 'extra'"),
        ("requires = 3\n", "[requires] must be an array of tables"),
        ("[[requires]\n", "not valid TOML"),
    ],
)
@pytest.mark.spec("GUARD-RULES-FILE")
def test_a_bad_rules_file_is_one_error_line(tmp_path: Path, text: str, message: str) -> None:
    path = rules_file(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_guard_rules(path)
    assert message in str(caught.value) and path in str(caught.value)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "prefixexec",
            "guard",
            "--rules",
            path,
            "--",
            sys.executable,
            "-c",
            "raise SystemExit(9)",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.spec("GUARD-PROXY")
def test_no_server_command_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prefixexec", "guard", "--mode", "warn"], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no server command" in done.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "prefixexec", "guard", "--", "/nonexistent/mcp-server"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert missing.returncode == 2 and "cannot start the MCP server" in missing.stderr
    assert missing.stderr.count("\n") == 1


@pytest.mark.parametrize("label", list(Label), ids=lambda label: label.value)
@pytest.mark.spec("GUARD-REASON")
def test_each_phrase_reads_as_its_label_and_no_label_before_it(label: Label) -> None:
    # the families of TRACE-LABELS (chat and trace families) on the text the trace holds
    for text in (
        reason_text(Violation("GUARD-X", label, "argument 'k' = 'v'")),
        reason_text(Violation("GUARD-X", label, "d"), with_detail=False),
    ):
        found = trace_labels(f"{text}; error.type tool_error\n{text}", {"k": "v"}, load_label_rules_none())
        assert primary_label(found) is label, (text, found)
        assert PHRASES[label] in text and text.startswith(
            f"blocked by prefixexec guard: GUARD-X ({label.value})"
        )


def load_label_rules_none() -> Any:
    from prefixexec.adapters.labels import NO_RULES

    return NO_RULES


@pytest.mark.spec("GUARD-REASON", "GUARD-TRACE-SAME")
def test_a_detail_read_as_another_label_is_left_out(tmp_path: Path) -> None:
    tools = [{"name": "merge", "inputSchema": {"type": "object"}}]
    buffer = io.StringIO()
    guard = Guard(tools, trace=buffer)
    # the argument's name holds "conflict" (state_consistency, before information)
    ok, reason = guard.run("merge", {"conflict_id": "C-17"}, lambda **_: "merged")
    assert not ok
    assert (
        reason
        == "blocked by prefixexec guard: GUARD-PROVENANCE (information): could not resolve where it came from"
    )
    outcome = guard.outcome()
    assert (outcome.fed, outcome.label) == (1, Label.INFORMATION)
    row = readback(buffer.getvalue(), tmp_path)
    assert (row["T"], row["fed"], row["label"]) == (1, 1, "information")


def _session(guard: Guard) -> list[bool]:
    """Six calls: ok, server error, ok, blocked schema, blocked provenance, ok (when forwarded)."""
    results: list[bool] = []
    results.append(guard.run("list_orders", {}, lambda: "orders: W1, W2")[0])
    pending = guard.begin("get_order", {"order_id": "W2"})
    guard.finish(pending, {"content": [{"type": "text", "text": "Order W2 not found"}], "isError": True})
    results.append(False)
    results.append(
        guard.run("get_order", {"order_id": "W1"}, lambda order_id: f"order {order_id}: shipped")[0]
    )
    results.append(guard.run("get_order", {"order_id": 1}, lambda order_id: "?")[0])
    results.append(guard.run("cancel", {"order_id": "W9"}, lambda order_id: "cancelled")[0])
    results.append(guard.run("list_orders", {}, lambda: "orders: W1")[0])
    return results


@pytest.mark.parametrize("mode", ["block", "warn"])
@pytest.mark.spec("GUARD-TRACE", "GUARD-TRACE-SAME", "GUARD-MODES")
def test_the_trace_scores_as_the_guard_decided(tmp_path: Path, mode: str) -> None:
    buffer = io.StringIO()
    guard = Guard(TOOLS, trace=buffer, mode=mode, task="orders-1", model="m", method="agent")  # type: ignore[arg-type]  # mode is a Literal; the test passes both
    results = _session(guard)
    # by hand: call 2 is the first failure, from the server's "not found" (dependency, CHAT-LABELS)
    forwarded = [True, False, True, mode == "warn", mode == "warn", True]
    assert results == forwarded
    outcome = guard.outcome()
    assert (outcome.T, outcome.fed, outcome.label) == (6, 2, Label.DEPENDENCY)
    row = readback(buffer.getvalue(), tmp_path)
    assert (row["T"], row["fed"], row["label"]) == (outcome.T, outcome.fed, outcome.label.value)
    assert (row["task_id"], row["model"], row["method"]) == ("orders-1", "m", "agent")
    spans = [
        s
        for line in buffer.getvalue().splitlines()
        for s in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    ]
    tools = [s for s in spans if s["name"].startswith("tools/call ")]
    decisions = [
        next(a["value"]["stringValue"] for a in s["attributes"] if a["key"] == "prefixexec.guard.decision")
        for s in tools
    ]
    checked = "blocked" if mode == "block" else "warned"
    assert decisions == ["forwarded", "forwarded", "forwarded", checked, checked, "forwarded"]
    for span in tools:
        values = {a["key"]: a["value"]["stringValue"] for a in span["attributes"]}
        assert values["mcp.method.name"] == "tools/call" and values["gen_ai.operation.name"] == "execute_tool"
        assert ("error.type" in values) == (
            values["gen_ai.tool.name"] != "list_orders"
            and values["gen_ai.tool.call.arguments"] != '{"order_id":"W1"}'
        )
        # a call forwarded in warn mode that broke a rule: the guard's reason is its failure
        violation = mode == "warn" and values["prefixexec.guard.decision"] == "warned"
        expected = "prefixexec.guard.violation" if violation else "tool_error"
        assert values.get("error.type", "tool_error") == expected


@pytest.mark.spec("GUARD-TRACE-SAME")
def test_a_blocked_first_call_is_the_first_error_with_the_rule_label(tmp_path: Path) -> None:
    path = rules_file(
        tmp_path, '[[requires]]\ntool = "cancel"\nafter = "list_orders"\nlabel = "dependency"\n'
    )
    buffer = io.StringIO()
    guard = Guard(TOOLS, trace=buffer, rules=load_guard_rules(path), context=["cancel W5 please"])
    ok, reason = guard.run("cancel", {"order_id": "W5"}, lambda order_id: "cancelled")
    assert not ok and reason.startswith("blocked by prefixexec guard: GUARD-REQUIRES (dependency): ")
    guard.run("list_orders", {}, lambda: "W5")
    outcome = guard.outcome()
    assert (outcome.T, outcome.fed, outcome.label) == (2, 1, Label.DEPENDENCY)
    row = readback(buffer.getvalue(), tmp_path)
    assert (row["T"], row["fed"], row["label"]) == (2, 1, "dependency")


@pytest.mark.spec("GUARD-TRACE", "GUARD-TRACE-SAME")
def test_calls_are_committed_in_the_order_they_arrived(tmp_path: Path) -> None:
    buffer = io.StringIO()
    guard = Guard(TOOLS, trace=buffer, context=["W1"])
    first = guard.begin("get_order", {"order_id": "W1"})
    second = guard.begin("list_orders", {})
    guard.finish(second, {"content": [{"type": "text", "text": "Error: permission denied"}]})
    assert guard.outcome().T == 1 and isinstance(
        guard.outcome().actions[0], NoToolAction
    )  # waits for the first
    guard.finish(first, {"content": [{"type": "text", "text": "order W1"}]})
    outcome = guard.outcome()
    # by hand: the second call's text starts like an error (TRACE-RESULT-ERROR): precondition
    assert (outcome.T, outcome.fed, outcome.label) == (2, 2, Label.PRECONDITION)
    row = readback(buffer.getvalue(), tmp_path)
    assert (row["T"], row["fed"], row["label"]) == (2, 2, "precondition")


@pytest.mark.spec("GUARD-API")
def test_a_tool_that_raises_is_recorded_as_failed_and_raises() -> None:
    guard = Guard(TOOLS)

    def broken() -> str:
        raise TimeoutError("backend timed out")

    with pytest.raises(TimeoutError):
        guard.run("list_orders", {}, broken)
    outcome = guard.outcome()
    assert (outcome.fed, outcome.label) == (1, Label.STATE_CONSISTENCY)  # "timed out" (CHAT-LABELS)
    with pytest.raises(ValueError, match="`mode` must be one of block, warn"):
        Guard(TOOLS, mode="audit")  # type: ignore[arg-type]  # the wrong value is the test


@pytest.mark.spec("GUARD-TRACE")
def test_the_trace_file_is_appended_and_each_line_flushed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    for _ in range(2):
        guard = Guard(TOOLS, trace=str(path))
        guard.run("list_orders", {}, lambda: "none")
        assert len(path.read_text(encoding="utf-8").splitlines()) % 3 == 0  # written before close
        guard.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6  # two sessions of root, tool list and one call
    assert (
        len({json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] for line in lines})
        == 2
    )
