"""The inspect_ai adapter (spec/adapters/inspect.md).

Test data: tests/data/inspect/tiny_tools.eval (14 scenarios x 2 epochs) and tiny_tools.json
(4 scenarios, 1 epoch), made by tests/make_inspect_logs.py with inspect_ai 0.3.285's mock model.
Each scenario's script is in that file's SCENARIOS; the expected outcomes below are read off those
scripts by hand (which call fails, with which inspect error type) and the scores they set.
Other cases use small hand-built .json logs. inspect_ai is not needed to run these tests.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters import inspect_logs as il
from prefixexec.cli import main
from prefixexec.kernel import Label, Rollout

from conftest import REPO

DATA = REPO / "tests" / "data" / "inspect"
EVAL_LOG = DATA / "tiny_tools.eval"
JSON_LOG = DATA / "tiny_tools.json"


def read(*paths: Path, **options: Any) -> list[Rollout]:
    return il.read([str(p) for p in paths], AdapterOptions(**options))


def by_key(rollouts: list[Rollout]) -> dict[tuple[str, int], Rollout]:
    return {(r.task_id, r.trial): r for r in rollouts}


# (T, FED, label, Y with the default scorer "outcome") per scenario of make_inspect_logs.SCENARIOS.
EXPECTED: dict[str, tuple[int, int, Label | None, bool]] = {
    "ok": (1, 2, None, True),  # add() succeeds; "C"
    "recovered": (2, 1, Label.DEPENDENCY, True),  # read_file -> file_not_found, then add(); "C"
    "notool": (1, 1, None, False),  # no call although tools were offered; "I"
    "notool_free": (1, 2, None, True),  # no call, no tools offered; "C"
    "parse_error": (1, 1, Label.SCHEMA, False),  # ToolCall.parse_error set; "I"
    "unknown_tool": (1, 1, Label.SCHEMA, False),  # delete_everything was not offered; "I"
    "permission": (1, 1, Label.PRECONDITION, False),  # PermissionError -> permission; "I"
    "is_a_directory": (1, 1, Label.DEPENDENCY, False),  # IsADirectoryError -> is_a_directory; "I"
    "timeout": (1, 1, Label.STATE_CONSISTENCY, False),  # TimeoutError -> timeout; "I"
    "tool_error": (1, 1, None, True),  # ToolError -> unknown: unlabelled (LABEL-UNMATCHED); "C"
    "parsing_by_tool": (1, 1, Label.SCHEMA, False),  # ToolParsingError -> parsing; "I"
    "unicode": (1, 1, None, False),  # UnicodeDecodeError -> unicode_decode (unlabelled); "I"
    "parallel": (2, 2, Label.DEPENDENCY, False),  # add ok, read_file -> file_not_found; "I"
    # add ok, then the model raises: no score. A harness error (INS-HARNESS), left out by default
    # as inspect leaves it out; counted (--harness-errors failure) it is add + the harness action.
    "crash": (2, 2, None, False),
}


@pytest.mark.spec("INS-FILES", "INS-CALLS", "INS-EXEC", "INS-LABELS", "INS-SUCCESS")
@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_eval_log_outcomes(scenario: str) -> None:
    rollouts = by_key(read(EVAL_LOG, harness_errors="failure"))
    T, fed, label, y = EXPECTED[scenario]
    for epoch in (1, 2):
        outcome = rollouts[(scenario, epoch)].outcome
        assert (outcome.T, outcome.fed, outcome.label, rollouts[(scenario, epoch)].success) == (
            T,
            fed,
            label,
            y,
        )


@pytest.mark.spec("INS-FILES", "INS-HARNESS", "HARNESS-DEFAULT")
def test_eval_log_holds_every_sample() -> None:
    # 14 scenarios x 2 epochs, as make_inspect_logs.py ran them; by default without the 2 crashed
    # samples, which errored without a score (INS-HARNESS, as inspect's own metrics leave them out).
    every = sorted((s, e) for s in EXPECTED for e in (1, 2))
    assert sorted(by_key(read(EVAL_LOG, harness_errors="failure"))) == every
    assert sorted(by_key(read(EVAL_LOG))) == [k for k in every if k[0] != "crash"]


@pytest.mark.spec("INS-FILES")
def test_eval_members_are_zstd_and_need_our_reader() -> None:
    with zipfile.ZipFile(EVAL_LOG) as archive:
        infos = archive.infolist()
        # Every member of the committed log uses ZIP method 93 (zstd) ...
        assert {info.compress_type for info in infos} == {il.ZIP_ZSTD}
        # ... which the standard library cannot decompress on this Python.
        with pytest.raises(NotImplementedError):
            archive.read(infos[0])
    reader = il.EvalArchive(EVAL_LOG)
    try:
        header = json.loads(reader.read("header.json"))
    finally:
        reader.close()
    assert header["eval"]["task"] == "tiny_tools"


@pytest.mark.spec("INS-FILES")
def test_json_log_agrees_with_eval_log() -> None:
    from_json = by_key(read(JSON_LOG))
    from_eval = by_key(read(EVAL_LOG))
    # tiny_tools.json holds four of the scenarios, one epoch (JSON_SCENARIOS in the script).
    assert sorted(from_json) == [("notool", 1), ("ok", 1), ("permission", 1), ("recovered", 1)]
    for key, rollout in from_json.items():
        assert (rollout.outcome, rollout.success, rollout.condition) == (
            from_eval[key].outcome,
            from_eval[key].success,
            from_eval[key].condition,
        )


@pytest.mark.spec("INS-FILES")
def test_json_log_is_read_incrementally(monkeypatch: pytest.MonkeyPatch) -> None:
    # With tiny chunks the incremental reader gives the same rollouts ...
    monkeypatch.setattr(il.JsonStream, "CHUNK", 7)
    assert by_key(read(JSON_LOG)) == by_key(il.read([str(JSON_LOG)], AdapterOptions()))
    document = json.loads(JSON_LOG.read_text(encoding="utf-8"))
    stream = il.JsonStream(io.StringIO(json.dumps(document)), "x")
    stream.expect("{", "")
    assert stream.value("key") == "version"
    # ... and never holds the whole document: after the first key only a few chunks are buffered.
    assert len(stream.buffer) < 100


@pytest.mark.spec("INS-FILES", "INS-ERRORS")
def test_samples_stream_before_a_later_fault(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    good = sample("a", [assistant_calls(call("c1", "add"))], scores={"s": "C"})
    # inspect's order: eval, plan, then samples (the header is complete before the samples).
    path.write_text(
        json.dumps({"eval": HEADER, "plan": PLAN})[:-1] + ', "samples": [' + json.dumps(good) + ", {bad",
        "utf-8",
    )
    items = il.iter_json_log(path)
    assert next(items)[0] == "eval"
    # The first sample is delivered before the broken second one is reached.
    kind, where, value = next(items)
    assert (kind, where, value["id"]) == ("sample", f"{path}: samples[0]", "a")
    with pytest.raises(il.InputError, match=r"not valid JSON in samples\[1\]"):
        next(items)


# ---------------------------------------------------------------------------------------------
# Hand-built logs

HEADER: dict[str, Any] = {"task": "hand", "model": "m/x", "scorers": [{"name": "s"}]}
PLAN: dict[str, Any] = {"name": "plan", "steps": [{"solver": "generate", "params": {}}]}


def call(
    call_id: str, function: str, arguments: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"id": call_id, "function": function, "arguments": arguments or {}, "type": "function", **extra}


def assistant_calls(*calls: dict[str, Any], message_id: str = "m1") -> dict[str, Any]:
    return {"id": message_id, "role": "assistant", "content": "", "tool_calls": list(calls)}


def tool(call_id: str, error: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": "", "function": "f"}
    if error is not None:
        message["error"] = error
    return message


def model_event(tools: list[str], message_id: str = "m1") -> dict[str, Any]:
    return {
        "event": "model",
        "tools": [{"name": n, "description": "", "parameters": {}} for n in tools],
        "output": {"choices": [{"message": {"id": message_id, "role": "assistant"}}]},
    }


def sample(
    sample_id: str,
    messages: list[dict[str, Any]],
    scores: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
    epoch: int = 1,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": sample_id,
        "epoch": epoch,
        "messages": [{"role": "user", "content": "go"}, *messages],
        "scores": {k: {"value": v} for k, v in (scores or {}).items()},
        "events": events if events is not None else [model_event(["add", "f"])],
        **extra,
    }


def write_log(tmp_path: Path, samples: list[dict[str, Any]], header: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "hand.json"
    document = {"version": 2, "status": "success", "eval": header or HEADER, "samples": samples}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def one(tmp_path: Path, item: dict[str, Any], **options: Any) -> Rollout:
    (rollout,) = read(write_log(tmp_path, [item]), **options)
    return rollout


@pytest.mark.spec("INS-LABELS", "INS-EXEC")
@pytest.mark.parametrize(
    ("error_type", "label"),
    [
        ("parsing", Label.SCHEMA),
        ("file_not_found", Label.DEPENDENCY),
        ("is_a_directory", Label.DEPENDENCY),
        ("permission", Label.PRECONDITION),
        ("approval", Label.PRECONDITION),
        ("timeout", Label.STATE_CONSISTENCY),
        ("limit", Label.STATE_CONSISTENCY),
        ("output_limit", Label.STATE_CONSISTENCY),
        ("cancelled", Label.STATE_CONSISTENCY),
        ("sandbox_unavailable", Label.STATE_CONSISTENCY),
        ("unknown", None),
        ("unicode_decode", None),
        ("a_future_type", None),
    ],
)
def test_error_type_labels(tmp_path: Path, error_type: str, label: Label | None) -> None:
    item = sample(
        "a", [assistant_calls(call("c1", "add")), tool("c1", {"type": error_type, "message": "boom"})]
    )
    outcome = one(tmp_path, item).outcome
    # The issue's table of inspect error types (INS-LABELS); the reason names the call and keeps
    # type and message.
    assert (outcome.T, outcome.fed, outcome.label, outcome.reason) == (
        1,
        1,
        label,
        f"call 1 add (id c1): {error_type}: boom",
    )


@pytest.mark.spec("INS-EXEC")
def test_tool_not_offered_without_an_error(tmp_path: Path) -> None:
    # The tool message reports no error, but the model was only given "add".
    item = sample("a", [assistant_calls(call("c1", "rm")), tool("c1")], events=[model_event(["add"])])
    outcome = one(tmp_path, item).outcome
    assert (outcome.fed, outcome.label, outcome.reason) == (
        1,
        Label.SCHEMA,
        "call 1 rm (id c1): tool 'rm' was not offered to the model",
    )


@pytest.mark.spec("INS-EXEC")
def test_offered_tools_are_those_of_the_calls_model_event(tmp_path: Path) -> None:
    # "f" is offered in the second model call only; the first call uses it too early.
    messages = [
        assistant_calls(call("c1", "f"), message_id="m1"),
        tool("c1"),
        assistant_calls(call("c2", "f"), message_id="m2"),
        tool("c2"),
    ]
    item = sample("a", messages, events=[model_event(["add"], "m1"), model_event(["add", "f"], "m2")])
    outcome = one(tmp_path, item).outcome
    assert (outcome.T, outcome.fed, outcome.label) == (2, 1, Label.SCHEMA)
    # Without model events the check is not made.
    assert one(tmp_path, dict(item, events=[])).outcome.fed == 3


@pytest.mark.spec("INS-EXEC", "CONV-LABEL-ORDER")
def test_several_checks_give_several_labels(tmp_path: Path) -> None:
    item = sample(
        "a",
        [
            assistant_calls(call("c1", "rm", parse_error="bad json")),
            tool("c1", {"type": "permission", "message": "denied"}),
        ],
        events=[model_event(["add"])],
    )
    outcome = one(tmp_path, item).outcome
    # schema (parse error, not offered) and precondition: schema comes first in the tie-break.
    assert outcome.label is Label.SCHEMA
    assert outcome.reason == (
        "call 1 rm (id c1): parse_error: bad json; tool 'rm' was not offered to the model; permission: denied"
    )


@pytest.mark.spec("INS-EXEC", "INS-CALLS")
def test_unanswered_call_and_orphan_tool_message(tmp_path: Path) -> None:
    messages = [tool("ghost"), assistant_calls(call("c1", "add"), call("c2", "add")), tool("c2")]
    outcome = one(tmp_path, sample("a", messages)).outcome
    # The orphan tool message is no action; c1 has no tool message, c2 answered fine.
    assert (outcome.T, outcome.fed, outcome.label) == (2, 1, None)
    assert outcome.reason == "call 1 add (id c1): no tool message answers this call (the sample ended first)"


@pytest.mark.spec("INS-CALLS")
def test_repeated_call_ids_answer_in_order(tmp_path: Path) -> None:
    messages = [
        assistant_calls(call("c", "add"), message_id="m1"),
        tool("c"),
        assistant_calls(call("c", "add"), message_id="m2"),
        tool("c", {"type": "timeout", "message": "slow"}),
    ]
    outcome = one(tmp_path, sample("a", messages, events=[])).outcome
    # The first tool message answers the first call, the failing one the second: FED = 2.
    assert (outcome.T, outcome.fed, outcome.label) == (2, 2, Label.STATE_CONSISTENCY)


@pytest.mark.spec("INS-NOTOOL")
def test_no_tool_convention(tmp_path: Path) -> None:
    rollouts = by_key(read(EVAL_LOG))
    # Offered tools, no call: FED = 1, unlabelled, and the reason says what decided it (the
    # seven tools of make_inspect_logs.all_tools()). No tools offered: FED = 2.
    assert (rollouts[("notool", 1)].outcome.fed, rollouts[("notool", 1)].outcome.label) == (1, None)
    assert rollouts[("notool", 1)].outcome.reason == (
        "no tool call (the terminal no-tool action), not allowed: the model was offered tools "
        "(add, binary, flaky, read_file, slow, strict, write_file)"
    )
    assert rollouts[("notool_free", 1)].outcome.fed == 2
    assert rollouts[("notool_free", 1)].meta["no_tool"] == "every model event of the sample offered no tools"
    # metadata.no_tool_allowed overrides the offered tools either way.
    allowed = sample("a", [], metadata={"no_tool_allowed": True})
    assert one(tmp_path, allowed).outcome.fed == 2
    refused = sample("b", [], events=[model_event([])], metadata={"no_tool_allowed": False})
    assert one(tmp_path, refused).outcome.reason == (
        "no tool call (the terminal no-tool action), not allowed: "
        "the sample's metadata.no_tool_allowed is false"
    )


@pytest.mark.spec("INS-NOTOOL", "INS-CALLS")
def test_no_tool_with_tool_messages_but_no_call(tmp_path: Path) -> None:
    # No model events, but tool messages that answer no recorded call: tools were in use.
    item = sample("a", [tool("x1"), tool("x2")], events=[])
    outcome = one(tmp_path, item).outcome
    assert (outcome.T, outcome.fed, outcome.label) == (1, 1, None)
    assert outcome.reason == (
        "no tool call (the terminal no-tool action), not allowed: the sample has 2 tool messages (f) "
        "although it records no call: tools were in use"
    )
    single = one(tmp_path, sample("b", [tool("x1")], events=[])).outcome
    assert single.reason == (
        "no tool call (the terminal no-tool action), not allowed: the sample has 1 tool message (f) "
        "although it records no call: tools were in use"
    )


@pytest.mark.spec("INS-NOTOOL", "INS-FILES")
def test_no_tool_with_tools_from_the_plan(tmp_path: Path) -> None:
    # No model events and no tool messages, but the plan's use_tools step gives a tool.
    plan = {"steps": [{"solver": "use_tools", "params": {"tools": [{"type": "tool", "name": "take_sum"}]}}]}
    path = tmp_path / "plan.json"
    document = {"eval": HEADER, "plan": plan, "samples": [sample("a", [], events=[])]}
    path.write_text(json.dumps(document), encoding="utf-8")
    (rollout,) = read(path)
    assert (rollout.outcome.fed, rollout.condition.method) == (1, "use_tools")
    assert rollout.outcome.reason == (
        "no tool call (the terminal no-tool action), not allowed: the plan's use_tools step gives the "
        "model tools (take_sum)"
    )
    # A use_tools step without tools says nothing: unknown (INS-NOTOOL-UNKNOWN).
    plan["steps"][0]["params"] = {"tools": []}
    path.write_text(json.dumps(document), encoding="utf-8")
    assert read(path)[0].outcome.fed == 2


@pytest.mark.spec("INS-NOTOOL-UNKNOWN")
def test_no_tool_when_the_log_says_nothing_about_tools(tmp_path: Path) -> None:
    # No model events, no tool message, no plan: unknown is not offered, the action is allowed.
    rollout = one(tmp_path, sample("c", [], events=[]))
    assert (rollout.outcome.T, rollout.outcome.fed, rollout.outcome.label) == (1, 2, None)
    assert rollout.meta["no_tool"] == (
        "the log records nothing about tools (no model event lists tools, no tool message, no "
        "use_tools step in the plan): unknown is taken as not offered (INS-NOTOOL-UNKNOWN)"
    )
    # Model events that carry no 'tools' key say nothing either; one with tools decides.
    silent = {"event": "model", "output": {"choices": []}}
    assert one(tmp_path, sample("d", [], events=[silent])).outcome.fed == 2
    assert one(tmp_path, sample("e", [], events=[silent, model_event(["add"])])).outcome.fed == 1


@pytest.mark.spec("INS-SUCCESS")
def test_scorer_and_threshold() -> None:
    outcome = by_key(read(EVAL_LOG, harness_errors="failure"))
    quality = by_key(read(EVAL_LOG, scorer="quality"))
    lenient = by_key(read(EVAL_LOG, scorer="quality", threshold=0.5))
    # "q" values in SCENARIOS: 1.0 for ok, notool_free, tool_error; 0.75 recovered; 0.5
    # permission and parallel; crash has no score.
    assert sorted(k for k, r in outcome.items() if r.success and k[1] == 1) == [
        ("notool_free", 1),
        ("ok", 1),
        ("recovered", 1),
        ("tool_error", 1),
    ]
    assert sorted(k[0] for k, r in quality.items() if r.success and k[1] == 1) == [
        "notool_free",
        "ok",
        "tool_error",
    ]
    assert sorted(k[0] for k, r in lenient.items() if r.success and k[1] == 1) == [
        "notool_free",
        "ok",
        "parallel",
        "permission",
        "recovered",
        "tool_error",
    ]
    assert (lenient[("recovered", 1)].meta["score"], lenient[("recovered", 1)].meta["scorer"]) == (
        0.75,
        "quality",
    )
    crash = outcome[("crash", 1)]
    assert (crash.success, crash.meta["score"], crash.meta["error"]) == (
        False,
        None,
        "RuntimeError('provider down')",
    )


# (value, --threshold, Y) under inspect's value_to_float() (INS-VALUE): the float of each value,
# read off inspect_ai's src/inspect_ai/scorer/_metric.py, then compared with the threshold (1.0
# by default).
SCORE_VALUES: list[tuple[Any, float | None, bool]] = [
    ("C", None, True),  # CORRECT 1
    ("I", None, False),  # INCORRECT 0
    ("N", None, False),  # NOANSWER 0
    ("I", 0.0, True),  # 0 >= 0
    ("P", None, False),  # PARTIAL 0.5 < 1
    ("P", 0.5, True),  # 0.5 >= 0.5
    ("P", 0.6, False),
    ("yes", None, True),  # "yes"/"true" 1, in any case
    ("TRUE", None, True),
    ("No", 0.0, True),  # "no" 0 >= 0
    ("false", 0.5, False),
    ("0.75", 0.7, True),  # a number written as a string
    ("0.75", None, False),
    ("nan", 0.0, True),  # not a finite number: inspect gives 0, and 0 >= 0
    ("excellent", None, False),  # any other string 0
    ("c", None, False),  # the constants are case-sensitive: "c" is 0
    (True, None, True),
    (False, None, False),
    (0.9, None, False),
    (0.9, 0.9, True),
    (2, None, True),
    (None, None, False),  # no value
]


@pytest.mark.spec("INS-SUCCESS", "INS-VALUE")
@pytest.mark.parametrize(("value", "threshold", "y"), SCORE_VALUES)
def test_score_values(tmp_path: Path, value: Any, threshold: float | None, y: bool) -> None:
    item = sample("a", [], scores={"s": value})
    assert one(tmp_path, item, threshold=threshold).success is y


@pytest.mark.spec("INS-VALUE")
def test_value_to_float_matches_inspects_table() -> None:
    # inspect's to_float(): C 1, P 0.5, I 0, N 0, yes/true 1, no/false 0, "3.5" 3.5, others 0.
    table = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0, "Yes": 1.0, "true": 1.0, "NO": 0.0, "False": 0.0}
    assert {k: il.value_to_float(k) for k in table} == table
    assert (il.value_to_float("3.5"), il.value_to_float("inf"), il.value_to_float("A")) == (3.5, 0.0, 0.0)
    assert (il.value_to_float(True), il.value_to_float(0), il.value_to_float(None)) == (1.0, 0.0, None)
    # A non-finite number is never a success, whatever the threshold.
    assert not il.is_success(float("nan"), -1.0) and not il.is_success(float("inf"), 0.0)


@pytest.mark.spec("INS-DATASET")
def test_condition_keys(tmp_path: Path) -> None:
    rollout = by_key(read(EVAL_LOG))[("ok", 2)]
    # eval.task, eval.model, and the plan's one solver (no eval.solver); the trial is the epoch.
    assert (rollout.condition.dataset, rollout.condition.model, rollout.condition.method) == (
        "inspect/tiny_tools",
        "mockllm/model",
        "scripted_agent",
    )
    assert (rollout.task_id, rollout.trial) == ("ok", 2)
    named = by_key(read(EVAL_LOG, model="gpt", method="react"))[("ok", 1)].condition
    assert (named.model, named.method) == ("gpt", "react")
    path = write_log(tmp_path, [sample("7", [], scores={"s": "C"})], dict(HEADER, solver="basic_agent"))
    (solver_rollout,) = read(path)
    assert (solver_rollout.condition.method, solver_rollout.task_id) == ("basic_agent", "7")
    (plain,) = read(write_log(tmp_path, [sample("8", [], scores={"s": "C"})]))
    assert plain.condition.method == "default"


@pytest.mark.spec("INS-SUCCESS", "INS-LABELS", "INS-NOTOOL")
def test_cli_score_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--adapter", "inspect", str(EVAL_LOG), "--json"]) == 0
    (condition,) = json.loads(capsys.readouterr().out)["conditions"]
    exact = condition["exact"]
    # From EXPECTED, per epoch (x2), without the crashed sample (left out, as inspect leaves it
    # out: INS-HARNESS): 13 samples; fully executable ok, notool_free (TER 2/13); successes ok,
    # recovered, notool_free, tool_error (4/13); RR-eligible 11 with 2 recovered (RR 2/11); sum of
    # (FED-1)/T = 1 + 1 + 1/2 = 5/2, AUC-PEC = (5/2)/13 = 5/26.
    assert condition["N"] == 26
    assert [Fraction(exact[k]) for k in ("TER", "success", "RR", "AUC_PEC")] == [
        Fraction(2, 13),
        Fraction(4, 13),
        Fraction(2, 11),
        Fraction(5, 26),
    ]
    # Per epoch: schema 3, dependency 3, precondition 1, state consistency 1 (timeout), unlabelled
    # 3 (notool, unicode, tool_error's "unknown").
    assert condition["labels"] == {
        "schema": 6,
        "dependency": 6,
        "precondition": 2,
        "state_consistency": 2,
        "information": 0,
        "unlabelled": 6,
    }
    assert condition["harness_errors"] == {"counted": 0, "excluded": 2}


# ---------------------------------------------------------------------------------------------
# Errors


def cli_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["score", "--adapter", "inspect", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("prefixexec: error: ")
    return captured.err


def corrupt_member(tmp_path: Path, member: str) -> Path:
    """A copy of the .eval log with one byte of ``member``'s compressed data flipped."""
    data = bytearray(EVAL_LOG.read_bytes())
    with zipfile.ZipFile(EVAL_LOG) as archive:
        info = archive.getinfo(member)
    name_length = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_length = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_length + extra_length
    data[start + info.compress_size // 2] ^= 0xFF
    path = tmp_path / "corrupt.eval"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.spec("INS-ERRORS")
def test_file_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "no such file" in cli_error([str(tmp_path / "absent.eval")], capsys)
    (tmp_path / "log.txt").write_text("{}", encoding="utf-8")
    assert "expected an inspect log ending in .eval or .json" in cli_error(
        [str(tmp_path / "log.txt")], capsys
    )
    (tmp_path / "fake.eval").write_text("not a zip", encoding="utf-8")
    assert "not a ZIP archive" in cli_error([str(tmp_path / "fake.eval")], capsys)
    with zipfile.ZipFile(tmp_path / "empty.eval", "w") as archive:
        archive.writestr("samples/x_epoch_1.json", "{}")
    assert "no header.json or _journal/start.json" in cli_error([str(tmp_path / "empty.eval")], capsys)
    err = cli_error([str(corrupt_member(tmp_path, "samples/ok_epoch_1.json"))], capsys)
    assert "corrupt.eval: samples/ok_epoch_1.json: " in err
    assert "corrupt zstd data" in err or "CRC-32 mismatch" in err or "decompressed to" in err


@pytest.mark.spec("INS-FILES")
def test_deflated_eval_of_an_unfinished_run(tmp_path: Path) -> None:
    # An archive written with the standard library (deflate) reads the same as zstd, and a run
    # that never finished has only _journal/start.json as its header.
    path = tmp_path / "deflate.eval"
    reader = il.EvalArchive(EVAL_LOG)
    try:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in ("_journal/start.json", "samples/ok_epoch_1.json", "samples/parallel_epoch_1.json"):
                archive.writestr(name, reader.read(name))
    finally:
        reader.close()
    rollouts = by_key(read(path))
    assert sorted(rollouts) == [("ok", 1), ("parallel", 1)]
    assert rollouts[("parallel", 1)].outcome.fed == 2


def _json_faults() -> Iterator[tuple[str, Any, str]]:
    yield "not json", "{", "not valid JSON"
    yield "no eval", {"samples": []}, "no 'eval' object: not an inspect log"
    yield "no task", {"eval": {"model": "m"}, "samples": []}, "eval.task must be a non-empty string"
    yield "list", [], "not valid JSON: expected '{' at the start of an inspect log"
    bad_id = sample("a", [])
    bad_id["id"] = [1]
    yield (
        "sample id",
        {"eval": HEADER, "samples": [bad_id]},
        "samples[0]: 'id' must be a string or an integer",
    )
    bad_messages = sample("a", [])
    bad_messages["messages"] = "hi"
    yield (
        "messages",
        {"eval": HEADER, "samples": [bad_messages]},
        "samples[0] (id 'a', epoch 1): 'messages' must be a list",
    )
    bad_call = sample("a", [{"role": "assistant", "tool_calls": [{"id": "c", "function": 3}]}])
    yield (
        "call",
        {"eval": HEADER, "samples": [bad_call]},
        "messages[1].tool_calls[0]: expected {'id', 'function', 'arguments'}",
    )
    bad_error = sample("a", [assistant_calls(call("c1", "add")), tool("c1", {"message": "no type"})])
    yield (
        "tool error",
        {"eval": HEADER, "samples": [bad_error]},
        "messages[2]: 'error' must be null or {'type', 'message'}",
    )
    dict_score = sample("a", [], scores={"s": {"a": 1}})
    yield "dict score", {"eval": HEADER, "samples": [dict_score]}, "scores.s.value is a dict"
    twice = [sample("a", [], scores={"s": "C"}), sample("a", [], scores={"s": "I"})]
    yield "repeated", {"eval": HEADER, "samples": twice}, "repeats sample 'a' epoch 1 of"
    yield "empty", {"eval": HEADER, "samples": []}, "no samples found"
    yield (
        "no scorer",
        {"eval": {"task": "t", "model": "m"}, "samples": [sample("a", [])]},
        "the log has no scorer",
    )


JSON_FAULTS = list(_json_faults())


@pytest.mark.spec("INS-ERRORS")
@pytest.mark.parametrize(
    ("document", "message"), [f[1:] for f in JSON_FAULTS], ids=[f[0] for f in JSON_FAULTS]
)
def test_malformed_json_logs(
    tmp_path: Path, document: Any, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    err = cli_error([str(path)], capsys)
    assert message in err
    assert str(path) in err


@pytest.mark.spec("INS-ERRORS", "INS-SUCCESS")
def test_unknown_scorer_and_bad_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    err = cli_error([str(JSON_LOG), "--scorer", "acuracy"], capsys)
    assert "no scorer named 'acuracy' in this log (scorers: outcome, quality)" in err
    assert "must be a finite number" in cli_error([str(JSON_LOG), "--threshold", "inf"], capsys)


# ---------------------------------------------------------------------------------------------
# Header parts in both formats, older logs, logs without tool results, user label rules


def eval_archive(path: Path, header: dict[str, Any], samples: list[dict[str, Any]]) -> Path:
    """A deflated .eval archive with ``header`` as header.json and one member per sample."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for item in samples:
            archive.writestr(f"samples/{item['id']}_epoch_{item['epoch']}.json", json.dumps(item))
    return path


@pytest.mark.spec("INS-FILES", "INS-SUCCESS")
def test_results_scores_are_read_in_both_formats(tmp_path: Path) -> None:
    # No eval.scorers: the scorer is the first of results.scores ("b"), in .json as in .eval.
    spec = {"task": "hand", "model": "m/x"}
    results = {"scores": [{"name": "b", "scorer": "b"}, {"name": "a", "scorer": "a"}]}
    samples = [
        sample("1", [], scores={"a": "C", "b": "I"}),
        sample("2", [], scores={"a": "I", "b": "C"}),
        sample("3", []),  # never scored: Y = 0
    ]
    document = {"eval": spec, "plan": PLAN, "results": results, "samples": samples}
    json_log = tmp_path / "log.json"
    json_log.write_text(json.dumps(document), encoding="utf-8")
    eval_log = eval_archive(tmp_path / "log.eval", {"eval": spec, "plan": PLAN, "results": results}, samples)
    for path in (json_log, eval_log):
        rollouts = by_key(read(path))
        assert {k[0]: (r.success, r.meta["scorer"]) for k, r in rollouts.items()} == {
            "1": (False, "b"),
            "2": (True, "b"),
            "3": (False, "b"),
        }
    # --scorer chooses another one the header names.
    assert [r.success for r in read(json_log, scorer="a")] == [True, False, False]


@pytest.mark.spec("INS-FILES")
def test_samples_wait_for_a_complete_header(tmp_path: Path) -> None:
    # A .json log with samples before results: the samples are held until results is read, so
    # the scorer named there applies to every sample (not the first sample's first score "a").
    samples = [sample("1", [], scores={"a": "C", "b": "I"}), sample("2", [], scores={"a": "C", "b": "C"})]
    spec = {"task": "hand", "model": "m/x"}
    text = (
        '{"eval": ' + json.dumps(spec) + ', "plan": ' + json.dumps(PLAN) + ', "samples": '
        + json.dumps(samples) + ', "results": {"scores": [{"name": "b"}]}}'
    )  # fmt: skip
    path = tmp_path / "late.json"
    path.write_text(text, encoding="utf-8")
    items = list(il.iter_json_log(path))
    assert [kind for kind, _, _ in items] == ["eval", "sample", "sample"]
    assert items[0][2]["results"] == {"scores": [{"name": "b"}]}
    assert [(r.task_id, r.success) for r in read(path)] == [("1", False), ("2", True)]
    # Without plan and results the header is complete only at the end of the document.
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"eval": spec, "samples": samples}), encoding="utf-8")
    assert [r.meta["scorer"] for r in read(bare)] == ["a", "a"]


@pytest.mark.spec("INS-FILES", "INS-NOTOOL", "INS-EXEC")
def test_events_of_older_logs_are_under_transcript(tmp_path: Path) -> None:
    # inspect before 0.3.4x wrote sample.transcript.events (inspect itself migrates it to events).
    old = sample("a", [], events=[])
    del old["events"]
    old["transcript"] = {"events": [model_event([])], "content": {}}
    assert one(tmp_path, old).outcome.fed == 2  # offered no tools: the no-tool action is allowed
    assert one(tmp_path, old).meta["no_tool"] == "every model event of the sample offered no tools"
    called = sample("b", [assistant_calls(call("c1", "rm")), tool("c1")], events=[])
    del called["events"]
    called["transcript"] = {"events": [model_event(["add"])]}
    outcome = one(tmp_path, called).outcome
    assert (outcome.fed, outcome.label) == (1, Label.SCHEMA)  # rm was not offered


@pytest.mark.spec("INS-NO-RESULTS", "INS-ERRORS")
def test_a_log_with_calls_but_no_tool_result_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quiet = [
        sample("1", [assistant_calls(call("c1", "add")), {"role": "assistant"}], scores={"s": "C"}),
        sample("2", [assistant_calls(call("c2", "add"), call("c3", "f"))], scores={"s": "I"}),
        sample("3", [], scores={"s": "I"}),
    ]
    path = write_log(tmp_path, quiet)
    err = cli_error([str(path)], capsys)
    assert err == (
        f"prefixexec: error: {path}: the log records 3 tool calls but not one tool result (no 'tool' "
        "message in any sample): its writer does not log tool results, so whether the calls executed "
        "cannot be read (INS-NO-RESULTS)\n"
    )
    # Per log: one tool message anywhere in the log and it is read; the unanswered calls fail.
    quiet[2] = sample("3", [tool("orphan")], scores={"s": "I"})
    rollouts = by_key(read(write_log(tmp_path, quiet)))
    assert [rollouts[(k, 1)].outcome.fed for k in ("1", "2", "3")] == [1, 1, 1]
    # Another log given with it does not hide the fault of this one.
    good = tmp_path / "good.json"
    scored = [sample("9", [], scores={"s": "C"})]
    good.write_text(json.dumps({"eval": HEADER, "samples": scored}), encoding="utf-8")
    quiet[2] = sample("3", [], scores={"s": "I"})
    assert "not one tool result" in cli_error([str(good), str(write_log(tmp_path, quiet))], capsys)


def rules_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.spec("INS-LABEL-RULES", "INS-LABELS")
def test_user_label_rules_on_the_masked_error_text(tmp_path: Path) -> None:
    # A ToolError (type "unknown") whose message repeats the model's own argument "U-INVALID".
    error = {"type": "unknown", "message": "Usuario U-INVALID no existe"}
    item = sample(
        "a", [assistant_calls(call("c1", "add", {"user_id": "U-INVALID"})), tool("c1", error)]
    )
    path = write_log(tmp_path, [item])
    # Without rules: the type's label (none: "unknown" is unlabelled, LABEL-UNMATCHED).
    assert read(path)[0].outcome.label is None
    # A rule on "INVALID" never fires on the masked argument; the rule on "no existe" decides.
    rules = rules_file(
        tmp_path,
        '[[inspect]]\npattern = "INVALID"\nlabel = "schema"\n\n'
        '[[inspect]]\npattern = "no existe"\nlabel = "dependency"\n',
    )
    (rollout,) = read(path, label_rules=str(rules))
    assert (rollout.outcome.label, rollout.outcome.reason) == (
        Label.DEPENDENCY,
        "call 1 add (id c1): unknown: Usuario U-INVALID no existe",
    )
    # Rules see the type too, and the first matching rule wins over the type table.
    typed = rules_file(tmp_path, '[[inspect]]\npattern = "^unknown: "\nlabel = "precondition"\n')
    assert read(path, label_rules=str(typed))[0].outcome.label is Label.PRECONDITION
    # A rule that matches nothing leaves the type's label (none); parse errors stay schema.
    other = rules_file(tmp_path, '[[inspect]]\npattern = "quota"\nlabel = "precondition"\n')
    assert read(path, label_rules=str(other))[0].outcome.label is None
    bad = sample("b", [assistant_calls(call("c1", "add", parse_error="no existe")), tool("c1")])
    assert read(write_log(tmp_path, [bad]), label_rules=str(rules))[0].outcome.label is Label.SCHEMA


@pytest.mark.spec("INS-LABEL-RULES")
def test_label_rules_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = {"type": "unknown", "message": "Reservation ZZ9 not found"}
    messages = [assistant_calls(call("c1", "add", {"id": "ZZ9"})), tool("c1", error)]
    item = sample("a", messages, scores={"s": "I"})
    path = write_log(tmp_path, [item])
    rules = rules_file(tmp_path, '[[inspect]]\npattern = "not found"\nlabel = "dependency"\n')
    assert main(["score", "--adapter", "inspect", str(path), "--json", "--bootstrap", "0",
                 "--label-rules", str(rules)]) == 0  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    (condition,) = document["conditions"]
    assert condition["labels"]["dependency"] == 1 and condition["labels"]["state_consistency"] == 0
    assert "[label-rules=sha256:" in document["signature"]
    # A rules file without an [[inspect]] rule is refused before any log is read.
    taubench_only = rules_file(tmp_path, '[[taubench]]\npattern = "x"\nlabel = "schema"\n')
    err = cli_error([str(path), "--label-rules", str(taubench_only)], capsys)
    assert "no rule for the inspect adapter" in err


def audit_document(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["audit", "--adapter", "inspect", "--json", *args])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return code, document


@pytest.mark.spec("INS-LABEL-RULES", "AUDIT-INSPECT")
def test_the_audit_uses_the_label_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The permission operator writes "Permission denied: /root"; a user rule that calls that a
    # dependency failure changes what the adapter says, and the audit shows it as misses.
    rules = rules_file(tmp_path, '[[inspect]]\npattern = "Permission denied"\nlabel = "dependency"\n')
    code, document = audit_document([str(EVAL_LOG), "--label-rules", str(rules)], capsys)
    ops = {o["operator"]: o for o in document["operators"]}
    assert code == 1 and ops["permission"]["made"] > 0 and ops["permission"]["caught"] == 0
    assert ops["timeout"]["caught"] == ops["timeout"]["made"] > 0


@pytest.mark.spec("INS-NOTOOL-UNKNOWN", "AUDIT-INSPECT")
def test_the_audit_lists_no_tool_actions_decided_by_the_unknown_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [
        sample("a", [assistant_calls(call("c1", "add")), tool("c1")]),
        sample("b", [], events=[]),  # says nothing about tools
        sample("c", [], events=[]),
        sample("d", [], events=[model_event([])]),  # offered none: decided by rule 2, not listed
    ]
    code, document = audit_document([str(write_log(tmp_path, items))], capsys)
    assert code == 0 and document["gold"]["trajectories"] == 1
    assert (
        "whether tools were offered in the 2 samples without a call whose log records nothing about tools: "
        "their no-tool action was taken as allowed (INS-NOTOOL-UNKNOWN)"
    ) in document["not_checked"]


@pytest.mark.spec("INS-SUCCESS", "INS-ERRORS")
def test_old_single_score_is_read_under_the_results_scorer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Old logs: {"score": {...}} per sample; inspect files it under results.scores[0].name.
    old = [sample("1", []), sample("2", [])]
    for item, value in zip(old, ("C", "I"), strict=True):
        del item["scores"]
        item["score"] = {"value": value}
    spec = {"task": "hand", "model": "m/x"}
    document = {"eval": spec, "plan": PLAN, "results": {"scores": [{"name": "match"}]}, "samples": old}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert [(r.task_id, r.success, r.meta["scorer"]) for r in read(path)] == [
        ("1", True, "match"),
        ("2", False, "match"),
    ]
    both = dict(old[0], scores={"match": {"value": "C"}})
    path.write_text(json.dumps(dict(document, samples=[both])), encoding="utf-8")
    assert "a sample has both 'score' (old logs) and 'scores'" in cli_error([str(path)], capsys)


@pytest.mark.spec("INS-UNSCORED", "INS-SUCCESS")
def test_a_log_that_was_never_scored_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # eval.scorers names "s", but no sample has a score: Y = 0 for both, and a warning says why.
    path = write_log(tmp_path, [sample("1", []), sample("2", [])])
    assert main(["score", "--adapter", "inspect", "--json", "--bootstrap", "0", str(path)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["conditions"][0]["exact"]["success"] == "0"
    assert captured.err == (
        f"prefixexec: warning: {path}: none of its 2 samples has a score from 's' (the log was not "
        "scored): Y = 0 for every sample (INS-UNSCORED)\n"
    )
    # One scored sample is enough: an unscored sample among scored ones is an ordinary Y = 0.
    path = write_log(tmp_path, [sample("1", [], scores={"s": "C"}), sample("2", [])])
    assert [r.success for r in read(path)] == [True, False]
    assert capsys.readouterr().err == ""
