"""The ToolSandbox adapter (spec/adapters/toolsandbox.md).

Test data: tests/data/toolsandbox/, hand-built run directories in ToolSandbox's format (the
benchmark ships no result data). Run ``agent_gpt-4o-2024-05-13_user_...`` has eleven scenarios,
one per path through the adapter; ``hostile_run`` has recorded code that would write a file if
anything executed it. Every expected number below is a hand count of those files, stated next to
the assertion.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, InputError
from prefixexec.adapters import toolsandbox as tsb
from prefixexec.adapters.labels import load_label_rules
from prefixexec.cli import main
from prefixexec.kernel import Label, Rollout

from conftest import REPO

DATA = REPO / "tests" / "data" / "toolsandbox"
RUN = DATA / "agent_gpt-4o-2024-05-13_user_gpt-4o-2024-05-13_12_02_2026_10_00_00"
HOSTILE = DATA / "hostile_run"


def read(*paths: Path, **options: Any) -> dict[str, Rollout]:
    rollouts = tsb.read([str(p) for p in paths], AdapterOptions(**options))
    return {r.task_id: r for r in rollouts}


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    target = tmp_path / RUN.name
    shutil.copytree(RUN, target)
    return target


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def sandbox_rows(run: Path, scenario: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = load(run / "trajectories" / scenario / "execution_context.json")["_dbs"][
        "SANDBOX"
    ]
    return rows


def edit_context(run: Path, scenario: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = run / "trajectories" / scenario / "execution_context.json"
    document = load(path)
    change(document)
    dump(path, document)


def similarity(rollout: Rollout) -> float:
    value = rollout.meta["similarity"]
    assert isinstance(value, float)
    return value


def edit_summary(run: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = load(run / "result_summary.json")
    change(document)
    dump(run / "result_summary.json", document)


# (T, FED, label, Y at the default threshold 1.0) per scenario, counted by hand from the fixture:
# the AGENT -> EXECUTION_ENVIRONMENT rows of each execution_context.json (or the tool_calls of
# conversation.json), the first reply with a tool_call_exception, and similarity == 1.0.
EXPECTED: dict[str, tuple[int, int, Label | None, bool]] = {
    # search_contacts ok, send_message ok; similarity 1.0.
    "send_message_with_contact": (2, 3, None, True),
    # send_message -> ConnectionError (cellular off), then two good calls; similarity 1.0.
    "send_message_cellular_off": (3, 1, Label.PRECONDITION, True),
    # remove_contact -> polars NoDataError, then search_contacts ok; similarity 0.625.
    "remove_contact_by_name": (2, 1, Label.DEPENDENCY, False),
    # set_wifi_status(on=True) -> ValueError "wifi already enabled"; similarity 1.0.
    "turn_on_wifi": (1, 1, Label.STATE_CONSISTENCY, True),
    # send_message -> NumberParseException, search_contacts -> TypeError; similarity 0.
    "send_message_bad_phone": (2, 1, Label.SCHEMA, False),
    # search_contacts ok, then the KeyError abort adds 'send_sms'; similarity 0.
    "send_message_hallucinated_tool": (2, 2, Label.SCHEMA, False),
    # Parallel get_cellular (ok) + set_wifi (ValueError "already disabled"), replies reversed.
    "parallel_wifi_cellular": (2, 2, Label.STATE_CONSISTENCY, False),
    # No call, category INSUFFICIENT_INFORMATION; similarity 1.0.
    "book_flight_insufficient_information": (1, 2, None, True),
    # No call in a scenario that needs tools; similarity 0.
    "send_message_no_tool": (1, 1, None, False),
    # search_contacts ok, send_message never answered; similarity 0.25.
    "send_message_max_turns": (2, 2, None, False),
    # conversation.json only: PermissionError, then two good calls; similarity 1.0.
    "current_location_conversation_only": (3, 1, Label.PRECONDITION, True),
}


@pytest.mark.spec("TSB-FILES", "TSB-CALLS", "TSB-EXEC", "TSB-SUCCESS")
@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_fixture_outcomes(scenario: str) -> None:
    rollout = read(RUN)[scenario]
    T, fed, label, y = EXPECTED[scenario]
    assert (rollout.outcome.T, rollout.outcome.fed, rollout.outcome.label, rollout.success) == (
        T,
        fed,
        label,
        y,
    )


@pytest.mark.spec("TSB-FILES")
def test_every_scenario_of_the_summary_is_read() -> None:
    # result_summary.json lists the eleven scenarios of EXPECTED.
    assert sorted(read(RUN)) == sorted(EXPECTED)


@pytest.mark.spec("TSB-EXEC", "TSB-LABELS", "TSB-REASON")
def test_reason_is_the_recorded_exception_line() -> None:
    rollout = read(RUN)["remove_contact_by_name"]
    # The reply row of call_S3a (the scenario's first call, remove_contact) records exactly this
    # tool_call_exception; the reason names the call first.
    assert (
        rollout.outcome.reason
        == "call 1 remove_contact (id call_S3a): "
        "polars.exceptions.NoDataError: No db entry matching person_id='fredrik' found"
    )


@pytest.mark.spec("TSB-CALLS")
def test_parallel_replies_are_matched_by_call_id() -> None:
    rows = sandbox_rows(RUN, "parallel_wifi_cellular")
    replies = [
        r["openai_tool_call_id"]
        for r in rows
        if r["sender"] == "EXECUTION_ENVIRONMENT" and r["recipient"] == "AGENT"
    ]
    # The fixture's replies come back in the reverse of the call order ...
    assert replies == ["call_S7b", "call_S7a"]
    # ... and the failing reply belongs to the second call, so FED = 2 (matching by position
    # would have blamed the first call and given FED = 1).
    assert read(RUN)["parallel_wifi_cellular"].outcome.fed == 2


@pytest.mark.spec("TSB-CALLS", "TSB-ERRORS")
def test_reused_call_id_after_answer_is_a_new_call(run_copy: Path) -> None:
    def reuse(document: dict[str, Any]) -> None:
        for row in document["_dbs"]["SANDBOX"]:
            if row["openai_tool_call_id"] == "call_S1b":
                row["openai_tool_call_id"] = "call_S1a"
                row["content"] = row["content"].replace("call_S1b", "call_S1a")

    edit_context(run_copy, "send_message_with_contact", reuse)
    rollout = read(run_copy)["send_message_with_contact"]
    # Both calls keep their own replies: still T = 2, fully executable.
    assert (rollout.outcome.T, rollout.outcome.fed) == (2, 3)


@pytest.mark.spec("TSB-CODE")
def test_calls_are_read_from_the_recorded_code() -> None:
    runs = {r.entry.name: r for r in tsb.read_scenarios(RUN)}
    calls = runs["send_message_with_contact"].scenario.calls
    # The two AGENT -> EXECUTION_ENVIRONMENT rows of the fixture, in order.
    assert [(c.action.name, dict(c.action.arguments), c.action.call_id) for c in calls] == [
        ("search_contacts", {"name": "Fredrik Thordendal"}, "call_S1a"),
        (
            "send_message_with_phone_number",
            {"phone_number": "+12453344098", "content": "How's the new album coming along"},
            "call_S1b",
        ),
    ]


@pytest.mark.spec("TSB-CODE", "TSB-CLI")
@pytest.mark.parametrize(
    ("code", "name", "arguments", "problem"),
    [
        (
            "call_a_parameters = {'on': True, 'n': [1, 2.5, None]}\n"
            "call_a_response = set_wifi_status(**call_a_parameters)\nprint(repr(call_a_response))",
            "set_wifi_status",
            {"on": True, "n": [1, 2.5, None]},
            None,
        ),
        # NaN in the model's JSON arguments becomes the name `nan` in the code: not a literal.
        (
            "c_parameters = {'x': nan}\nc_response = f(**c_parameters)\nprint(repr(c_response))",
            "f",
            None,
            "arguments are not a literal",
        ),
        (
            "c_parameters = [1]\nc_response = f(**c_parameters)",
            "f",
            None,
            "arguments are not a dict with string keys",
        ),
        ("c_parameters = {'a': 1}\nc_response = f(c_parameters)", None, None, "second statement is not"),
        (
            "c_parameters = {'a': 1}\nc_response = obj.f(**c_parameters)",
            None,
            None,
            "second statement is not",
        ),
        ("x.y = {}\nc_response = f(**x)", None, None, "first statement is not"),
        ("print('hi')", None, None, "not a ToolSandbox call shape"),
        ("x = 1\n", None, None, "not a ToolSandbox call shape"),
        # The Cli agent's typed call (TSB-CLI): keyword literals only.
        ("print(repr(set_wifi_status(on=False)))", "set_wifi_status", {"on": False}, None),
        ("print(repr(get_wifi_status()))", "get_wifi_status", {}, None),
        ("print(repr(f(1)))", "f", None, "arguments are not all keyword arguments"),
        ("print(repr(f(**d)))", "f", None, "arguments are not all keyword arguments"),
        ("print(repr(f(a=open('x'))))", "f", None, "arguments are not a literal"),
        ("print(repr(os.system('x')))", None, None, "the printed value is not a call of a plain tool name"),
        ("print(repr(x))", None, None, "the printed value is not a call"),
        ("print(str(f(a=1)))", None, None, "not a ToolSandbox call shape"),
        ("def (:", None, None, "not Python code (SyntaxError)"),
        ("a = {'x': 1}\x00", None, None, "not Python code"),
    ],
)
def test_parse_call_code(
    code: str, name: str | None, arguments: dict[str, Any] | None, problem: str | None
) -> None:
    parsed = tsb.parse_call_code(code)
    assert parsed.name == name
    assert (None if parsed.arguments is None else dict(parsed.arguments)) == arguments
    assert (parsed.problem is None) if problem is None else (parsed.problem or "").startswith(problem)


@pytest.mark.spec("TSB-CODE")
def test_hostile_code_is_never_executed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "hostile_run"
    shutil.copytree(HOSTILE, run)
    marker = tmp_path / "pwned"
    path = run / "trajectories" / "hostile_code" / "execution_context.json"
    path.write_text(path.read_text(encoding="utf-8").replace("PWNED_PATH", str(marker)), encoding="utf-8")
    assert str(marker) in path.read_text(encoding="utf-8")

    assert main(["score", "--adapter", "toolsandbox", str(run), "--json"]) == 0
    capsys.readouterr()
    # The recorded code calls os.system and exec to create the marker file; nothing ran it.
    assert not marker.exists()
    rollout = read(run)["hostile_code"]
    # Three call rows; the first reply records a TypeError (schema), so FED = 1.
    assert (rollout.outcome.T, rollout.outcome.fed, rollout.outcome.label) == (3, 1, Label.SCHEMA)
    # Both hostile calls are kept, unparsed, named by openai_function_name; the third parses.
    assert rollout.meta["unparsed_calls"] == [
        {"id": "call_H1", "problem": "arguments are not a literal"},
        {
            "id": "call_H2",
            "problem": "not a ToolSandbox call shape "
            "(parameters, response, print; or print(repr(tool(...))))",
        },
    ]


@pytest.mark.spec("TSB-UNANSWERED", "TSB-REASON")
def test_unanswered_call_is_rejected_unlabelled() -> None:
    rollout = read(RUN)["send_message_max_turns"]
    # call_S10b (send_message_with_phone_number, the second call) is the last row of its SANDBOX
    # database: no reply.
    assert rollout.outcome.label is None
    assert rollout.outcome.reason == (
        "call 2 send_message_with_phone_number (id call_S10b): no execution_environment reply "
        "(the run ended before it)"
    )


@pytest.mark.spec("TSB-ABORT", "TSB-REASON")
def test_keyerror_abort_appends_the_unknown_tool() -> None:
    runs = {r.entry.name: r for r in tsb.read_scenarios(RUN)}
    calls = runs["send_message_hallucinated_tool"].scenario.calls
    # One recorded call, then the tool named in the traceback.
    assert [c.action.name for c in calls] == ["search_contacts", "send_sms"]
    assert calls[-1].aborted
    outcome = read(RUN)["send_message_hallucinated_tool"].outcome
    assert outcome.reason == (
        "call 2 send_sms: not an allowed tool, ToolSandbox aborted the scenario (KeyError)"
    )


@pytest.mark.spec("TSB-ABORT")
@pytest.mark.parametrize(
    ("traceback", "name"),
    [
        # str(KeyError(msg)) is repr(msg), so a name containing a quote appears as "it\'s".
        (
            "KeyError: 'Agent tool call agent_facing_tool_name=\"it\\'s\" is not a known allowed tool.'",
            "it's",
        ),
        (
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'messaging_9'",
            "messaging_9",
        ),
        ("KeyError", "<unknown tool>"),
        (None, "<unknown tool>"),
    ],
)
def test_unknown_tool_name_from_traceback(traceback: str | None, name: str) -> None:
    entry = tsb.SummaryEntry("w", "s", (), 0.0, 0.0, 0.0, "KeyError", traceback, 30)
    assert tsb.unknown_tool_name(entry) == name


@pytest.mark.spec("TSB-ABORT", "TSB-HARNESS", "HARNESS-COUNT")
def test_another_abort_is_a_harness_error(run_copy: Path) -> None:
    def abort(document: dict[str, Any]) -> None:
        for entry in document["per_scenario_results"]:
            if entry["name"] == "send_message_with_contact":
                entry.update(
                    exception_type="RateLimitError", traceback="openai.RateLimitError: 429", similarity=0
                )

    edit_summary(run_copy, abort)
    rollout = read(run_copy)["send_message_with_contact"]
    # The two recorded calls, both executable, then the harness error's terminal action (counted by
    # default, as ToolSandbox averages the scenario with similarity 0); Y = 0 from similarity 0.
    outcome = rollout.outcome
    assert (outcome.T, outcome.fed, outcome.label, rollout.success) == (3, 3, None, False)
    assert rollout.outcome.reason == (
        "harness error: ToolSandbox aborted the scenario with RateLimitError: openai.RateLimitError: 429"
    )
    assert rollout.meta["exception_type"] == "RateLimitError"
    assert "send_message_with_contact" not in read(run_copy, harness_errors="exclude")


@pytest.mark.spec("TSB-FALLBACK")
def test_conversation_only_scenario() -> None:
    runs = {r.entry.name: r for r in tsb.read_scenarios(RUN)}
    run = runs["current_location_conversation_only"]
    assert run.source == "conversation.json"
    # The three tool_calls of the fixture's conversation.json, with their JSON arguments.
    assert [(c.action.name, dict(c.action.arguments)) for c in run.scenario.calls] == [
        ("get_current_location", {}),
        ("set_location_service_status", {"on": True}),
        ("get_current_location", {}),
    ]
    assert [c.exception for c in run.scenario.calls] == [
        "PermissionError: Location service is not enabled.",
        None,
        None,
    ]


@pytest.mark.spec("TSB-FALLBACK")
def test_execution_context_is_preferred_over_conversation(run_copy: Path) -> None:
    # Give a scenario a conversation.json that disagrees: its only call fails.
    conversation = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "z", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "z", "content": "RuntimeError: from conversation.json"},
    ]
    dump(run_copy / "trajectories" / "send_message_with_contact" / "conversation.json", conversation)
    rollout = read(run_copy)["send_message_with_contact"]
    assert (rollout.outcome.T, rollout.outcome.fed, rollout.meta["calls_from"]) == (
        2,
        3,
        "execution_context.json",
    )


@pytest.mark.spec("TSB-FALLBACK")
@pytest.mark.parametrize(
    ("content", "exception"),
    [
        (
            "ConnectionError: Cellular service is not enabled",
            "ConnectionError: Cellular service is not enabled",
        ),
        ("polars.exceptions.NoDataError: No db entry", "polars.exceptions.NoDataError: No db entry"),
        ("KeyError: 'nickname'", "KeyError: 'nickname'"),
        (
            "Traceback (most recent call last):\n  File ...\n    x(\nSyntaxError: '(' was never closed",
            "SyntaxError: '(' was never closed",
        ),
        (
            "Error: The given code was incomplete and could not be executed: 'if True:'",
            "Error: The given code was incomplete and could not be executed: 'if True:'",
        ),
        ("'Error: this is a returned string'", None),
        ("None", None),
        ("True", None),
        ("[{'person_id': '1', 'name': 'A'}]", None),
        ("{'latitude': 37.3, 'longitude': -122.0}", None),
    ],
)
def test_conversation_exception(content: str, exception: str | None) -> None:
    assert tsb.conversation_exception(content) == exception


@pytest.mark.spec("TSB-LABELS")
@pytest.mark.parametrize(
    ("exception", "labels"),
    [
        # One example per family, as ToolSandbox's tools raise them (tool_sandbox/tools/*.py).
        ("TypeError: search_contacts() got an unexpected keyword argument 'nickname'", (Label.SCHEMA,)),
        ("KeyError: 'nickname'", (Label.SCHEMA,)),
        ("NameError: name 'nan' is not defined", (Label.SCHEMA,)),
        (
            "phonenumbers.phonenumberutil.NumberParseException: (1) The string supplied did not seem to be "
            "a phone number.",
            (Label.SCHEMA,),
        ),
        (
            "ValueError: Parameter 'reminder_timestamp' is smaller than its valid range minimum of "
            "315529200.0.",
            (Label.SCHEMA,),
        ),
        ("ValueError: EURO is not a known 3 letter ISO 4217 currency code", (Label.SCHEMA,)),
        ("Error: The given code was incomplete and could not be executed: 'x('", (Label.SCHEMA,)),
        ("polars.exceptions.NoDataError: No db entry matching person_id='x' found", (Label.DEPENDENCY,)),
        ("ConnectionError: Cellular service is not enabled", (Label.PRECONDITION,)),
        ("PermissionError: Location service is not enabled.", (Label.PRECONDITION,)),
        ("ValueError: wifi already enabled", (Label.STATE_CONSISTENCY,)),
        (
            "polars.exceptions.DuplicateError: Self entry already exists. Cannot add another one.",
            (Label.STATE_CONSISTENCY,),
        ),
        # Several families: all are labels; the kernel picks the first in tie-break order.
        ("ValueError: contact not found: not a valid phone number", (Label.SCHEMA, Label.DEPENDENCY)),
        (
            "polars.exceptions.DuplicateError: More than 1 entry with person_id='x'",
            (Label.STATE_CONSISTENCY,),
        ),
        ("RuntimeError: something else", ()),
        ("ValueError: 1 and only 1 self entry should exist", ()),
    ],
)
def test_exception_labels(exception: str, labels: tuple[Label, ...]) -> None:
    assert tsb.exception_labels(exception) == labels


@pytest.mark.spec("TSB-LABELS")
def test_every_label_the_fixture_produces() -> None:
    counts: dict[Label | None, int] = {}
    for rollout in read(RUN).values():
        if not rollout.outcome.fully_executable:
            counts[rollout.outcome.label] = counts.get(rollout.outcome.label, 0) + 1
    # From EXPECTED: schema (bad phone, unknown tool), dependency (remove contact), precondition
    # (cellular off, location), state consistency (wifi, parallel), unlabelled (no tool, no reply).
    assert counts == {
        Label.SCHEMA: 2,
        Label.DEPENDENCY: 1,
        Label.PRECONDITION: 2,
        Label.STATE_CONSISTENCY: 2,
        None: 2,
    }


@pytest.mark.spec("TSB-NOTOOL", "TSB-REASON")
def test_no_tool_convention() -> None:
    rollouts = read(RUN)
    allowed = rollouts["book_flight_insufficient_information"].outcome
    required = rollouts["send_message_no_tool"].outcome
    # INSUFFICIENT_INFORMATION: the no-tool action executes (T = 1, FED = 2); otherwise FED = 1.
    assert (allowed.T, allowed.fed) == (1, 2)
    assert (required.T, required.fed, required.label) == (1, 1, None)
    assert required.reason == "no tool call: the agent made no tool call in a scenario that requires tools"


@pytest.mark.spec("TSB-SUCCESS")
def test_threshold_and_continuous_similarity() -> None:
    default = read(RUN)
    lenient = read(RUN, threshold=0.5)
    # Similarities in result_summary.json: five scenarios at 1.0, then 0.625, 0.5, 0.25, 0 x3.
    assert (
        sorted(r.meta["similarity"] for r in default.values())
        == [0.0, 0.0, 0.0, 0.25, 0.5, 0.625] + [1.0] * 5
    )
    assert sum(r.success for r in default.values()) == 5
    # At 0.5, remove_contact_by_name (0.625) and parallel_wifi_cellular (0.5) also count.
    assert sum(r.success for r in lenient.values()) == 7
    assert lenient["parallel_wifi_cellular"].success and not default["parallel_wifi_cellular"].success
    meta = default["remove_contact_by_name"].meta
    assert (meta["milestone_similarity"], meta["minefield_similarity"], meta["threshold"]) == (
        0.625,
        0.0,
        1.0,
    )


@pytest.mark.spec("TSB-SUCCESS", "TSB-ERRORS")
@pytest.mark.parametrize("threshold", ["1.5", "-0.1", "nan"])
def test_bad_threshold_is_an_input_error(threshold: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--adapter", "toolsandbox", str(RUN), "--threshold", threshold]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--threshold: the ToolSandbox similarity threshold must be in [0, 1]" in captured.err


@pytest.mark.spec("TSB-DATASET")
def test_condition_keys(tmp_path: Path) -> None:
    rollout = read(RUN)["turn_on_wifi"]
    # The agent named in the run directory name agent_<agent>_user_<user>_<timestamp>.
    assert (rollout.condition.dataset, rollout.condition.model, rollout.condition.method) == (
        "toolsandbox",
        "gpt-4o-2024-05-13",
        "default",
    )
    named = read(RUN, model="m", method="dual-loop")["turn_on_wifi"]
    assert (named.condition.model, named.condition.method) == ("m", "dual-loop")
    # A second run of the same agent: its scenarios are trial 1.
    second = tmp_path / "agent_gpt-4o-2024-05-13_user_gpt-4o-2024-05-13_12_03_2026_09_00_00"
    shutil.copytree(RUN, second)
    rollouts = tsb.read([str(RUN), str(second / "result_summary.json")], AdapterOptions())
    assert sorted(r.trial for r in rollouts if r.task_id == "turn_on_wifi") == [0, 1]
    assert len(rollouts) == 22
    assert tsb.model_from_run(Path("my_results")) == "my_results"


@pytest.mark.spec("TSB-CATEGORY")
def test_split_by_category_counts_each_category() -> None:
    rollouts = list(read(RUN).values())
    split = tsb.split_by_category(rollouts)
    datasets: dict[str, list[str]] = {}
    for rollout in split:
        datasets.setdefault(rollout.condition.dataset, []).append(rollout.task_id)
    # Hand count over the eleven "categories" lists of result_summary.json. THREE_DISTRACTION_TOOLS
    # appears twice but only with a scrambling augmentation, so it is not counted.
    assert {d: len(t) for d, t in datasets.items()} == {
        "toolsandbox/MULTIPLE_TOOL_CALL": 8,
        "toolsandbox/SINGLE_TOOL_CALL": 2,
        "toolsandbox/SINGLE_USER_TURN": 10,
        "toolsandbox/MULTIPLE_USER_TURN": 1,
        "toolsandbox/STATE_DEPENDENCY": 3,
        "toolsandbox/CANONICALIZATION": 1,
        "toolsandbox/INSUFFICIENT_INFORMATION": 1,
        "toolsandbox/NO_DISTRACTION_TOOLS": 7,
        "toolsandbox/TEN_DISTRACTION_TOOLS": 1,
        "toolsandbox/ALL_TOOLS_AVAILABLE": 1,
        "toolsandbox/TOOL_NAME_SCRAMBLED": 1,
        "toolsandbox/ARG_DESCRIPTION_SCRAMBLED": 1,
    }
    assert len(split) == 37
    # Nothing but the dataset changes.
    original = {r.task_id: r for r in rollouts}
    for rollout in split:
        assert rollout.outcome == original[rollout.task_id].outcome
        assert rollout.condition.model == "gpt-4o-2024-05-13"


@pytest.mark.spec("TSB-CATEGORY")
def test_split_matches_toolsandbox_category_summary() -> None:
    # ToolSandbox's own category_aggregated_results (mean similarity per category, written in the
    # fixture the way tool_sandbox/cli/utils.py::get_category_summary computes it).
    aggregated = load(RUN / "result_summary.json")["category_aggregated_results"]
    sums: dict[str, list[float]] = {}
    for rollout in tsb.split_by_category(read(RUN).values()):
        sums.setdefault(rollout.condition.dataset.split("/", 1)[1], []).append(similarity(rollout))
    ours = {c: sum(v) / len(v) for c, v in sums.items()}
    theirs = {c: v["similarity"] for c, v in aggregated.items() if c != "ALL_CATEGORIES"}
    assert ours == pytest.approx(theirs)
    assert set(ours) == set(theirs)


@pytest.mark.spec("TSB-CATEGORY")
def test_split_edge_cases() -> None:
    base = read(RUN)["turn_on_wifi"]
    bare = Rollout(base.condition, "x", 0, base.outcome, True, {"categories": []})
    assert [r.condition.dataset for r in tsb.split_by_category([bare])] == ["toolsandbox/NO_CATEGORY"]
    foreign = Rollout(base.condition, "y", 0, base.outcome, True, {})
    with pytest.raises(InputError, match="--by category needs ToolSandbox rollouts"):
        tsb.split_by_category([foreign])


@pytest.mark.spec("TSB-SUCCESS", "TSB-LABELS", "TSB-NOTOOL")
def test_cli_score_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--adapter", "toolsandbox", str(RUN), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (condition,) = document["conditions"]
    exact = condition["exact"]
    # From EXPECTED: N = 11; fully executable: send_message_with_contact and the allowed no-tool
    # scenario (TER 2/11); successes 5 (5/11); RR-eligible 9 of which 3 succeeded (RR 1/3);
    # sum of (FED-1)/T = 2/2 + 1/2 + 1/2 + 1/1 + 1/2 = 7/2, so AUC-PEC = 7/22.
    assert condition["N"] == 11
    assert (Fraction(exact["TER"]), Fraction(exact["success"]), Fraction(exact["RR"])) == (
        Fraction(2, 11),
        Fraction(5, 11),
        Fraction(1, 3),
    )
    assert Fraction(exact["AUC_PEC"]) == Fraction(7, 22)
    assert condition["labels"] == {
        "schema": 2,
        "dependency": 1,
        "precondition": 2,
        "state_consistency": 2,
        "information": 0,
        "unlabelled": 2,
    }


def _drop_similarity(document: dict[str, Any]) -> None:
    del document["per_scenario_results"][2]["similarity"]


def _similarity_text(document: dict[str, Any]) -> None:
    document["per_scenario_results"][0]["similarity"] = "1.0"


def _similarity_range(document: dict[str, Any]) -> None:
    document["per_scenario_results"][0]["similarity"] = 2


def _duplicate_name(document: dict[str, Any]) -> None:
    document["per_scenario_results"][1]["name"] = document["per_scenario_results"][0]["name"]


def _bad_categories(document: dict[str, Any]) -> None:
    document["per_scenario_results"][0]["categories"] = "SINGLE_TOOL_CALL"


def _no_list(document: dict[str, Any]) -> None:
    document["per_scenario_results"] = {}


def _path_name(document: dict[str, Any]) -> None:
    document["per_scenario_results"][0]["name"] = "../escape"


SUMMARY_FAULTS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (
        _drop_similarity,
        "result_summary.json: per_scenario_results[2] (remove_contact_by_name): missing field 'similarity'",
    ),
    (
        _similarity_text,
        "per_scenario_results[0] (send_message_with_contact): 'similarity' must be a number in [0, 1]",
    ),
    (_similarity_range, "'similarity' must be a number in [0, 1], got 2"),
    (
        _duplicate_name,
        "per_scenario_results[1] (send_message_with_contact): scenario 'send_message_with_contact' "
        "appears twice",
    ),
    (_bad_categories, "'categories' must be a list of strings"),
    (_no_list, "result_summary.json: expected an object with a 'per_scenario_results' list"),
    (_path_name, "per_scenario_results[0]: 'name' must be a scenario name"),
]


def run_cli_error(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["score", "--adapter", "toolsandbox", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("prefixexec: error: ")
    return captured.err


@pytest.mark.spec("TSB-ERRORS")
@pytest.mark.parametrize(("fault", "message"), SUMMARY_FAULTS, ids=[f.__name__ for f, _ in SUMMARY_FAULTS])
def test_malformed_summary(
    run_copy: Path, fault: Callable[[dict[str, Any]], None], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_summary(run_copy, fault)
    err = run_cli_error(run_copy, capsys)
    assert message in err
    assert str(run_copy / "result_summary.json") in err


def _reply_unknown_id(document: dict[str, Any]) -> None:
    for row in document["_dbs"]["SANDBOX"]:
        if row["sender"] == "EXECUTION_ENVIRONMENT" and row["openai_tool_call_id"] == "call_S1a":
            row["openai_tool_call_id"] = "call_ZZ"


def _call_without_id(document: dict[str, Any]) -> None:
    for row in document["_dbs"]["SANDBOX"]:
        if row["sender"] == "AGENT" and row["openai_tool_call_id"] == "call_S1a":
            row["openai_tool_call_id"] = None


def _call_without_code(document: dict[str, Any]) -> None:
    for row in document["_dbs"]["SANDBOX"]:
        if row["sender"] == "AGENT" and row["openai_tool_call_id"] == "call_S1a":
            row["content"] = None


def _call_bad_id(document: dict[str, Any]) -> None:
    for row in document["_dbs"]["SANDBOX"]:
        if row["sender"] == "AGENT" and row["openai_tool_call_id"] == "call_S1a":
            row["openai_tool_call_id"] = 7


def _reply_without_id(document: dict[str, Any]) -> None:
    for row in document["_dbs"]["SANDBOX"]:
        if row["sender"] == "EXECUTION_ENVIRONMENT" and row["openai_tool_call_id"] == "call_S1a":
            row["openai_tool_call_id"] = None


def _two_idless_calls(document: dict[str, Any]) -> None:
    rows = document["_dbs"]["SANDBOX"]
    call = next(r for r in rows if r["sender"] == "AGENT" and r["openai_tool_call_id"] == "call_S1a")
    call["openai_tool_call_id"] = None
    rows.insert(rows.index(call) + 1, dict(call, sandbox_message_index=99))


def _reuse_pending_id(document: dict[str, Any]) -> None:
    rows = document["_dbs"]["SANDBOX"]
    call = next(r for r in rows if r["sender"] == "AGENT" and r["openai_tool_call_id"] == "call_S1a")
    rows.insert(rows.index(call) + 1, dict(call, sandbox_message_index=99))


def _no_dbs(document: dict[str, Any]) -> None:
    del document["_dbs"]


def _row_not_object(document: dict[str, Any]) -> None:
    document["_dbs"]["SANDBOX"][3] = "hello"


def _bad_exception(document: dict[str, Any]) -> None:
    for row in document["_dbs"]["SANDBOX"]:
        if row["sender"] == "EXECUTION_ENVIRONMENT" and row["openai_tool_call_id"] == "call_S1a":
            row["tool_call_exception"] = 7


CONTEXT_FAULTS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_reply_unknown_id, "_dbs.SANDBOX[8]: reply to tool call id 'call_ZZ', which has no unanswered call"),
    # The call becomes id-less (TSB-CLI); its reply still carries the id, so nothing answers it.
    (_call_without_id, "_dbs.SANDBOX[8]: reply to tool call id 'call_S1a', which has no unanswered call"),
    (_call_bad_id, "_dbs.SANDBOX[7]: a tool call id must be a non-empty string or null, got 7"),
    (_reply_without_id, "_dbs.SANDBOX[8]: reply without a tool call id, and no id-less call is unanswered"),
    (_two_idless_calls, "_dbs.SANDBOX[8]: a second tool call without an id while the one at"),
    (_call_without_code, "_dbs.SANDBOX[7]: a tool call row needs its code as 'content'"),
    (_reuse_pending_id, "_dbs.SANDBOX[8]: tool call id 'call_S1a' is reused before its call"),
    (_no_dbs, "execution_context.json: expected an object with a '_dbs' object"),
    (_row_not_object, "_dbs.SANDBOX[3]: expected a row object, got str"),
    (_bad_exception, "'tool_call_exception' must be a string or null, got 7"),
]


@pytest.mark.spec("TSB-ERRORS", "TSB-CLI")
@pytest.mark.parametrize(("fault", "message"), CONTEXT_FAULTS, ids=[f.__name__ for f, _ in CONTEXT_FAULTS])
def test_malformed_execution_context(
    run_copy: Path, fault: Callable[[dict[str, Any]], None], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_context(run_copy, "send_message_with_contact", fault)
    err = run_cli_error(run_copy, capsys)
    assert message in err
    assert str(run_copy / "trajectories" / "send_message_with_contact" / "execution_context.json") in err


@pytest.mark.spec("TSB-ERRORS")
def test_missing_and_unreadable_files(
    tmp_path: Path, run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no such run directory" in run_cli_error(tmp_path / "absent", capsys)
    (tmp_path / "empty").mkdir()
    assert "not a ToolSandbox run directory: no result_summary.json" in run_cli_error(
        tmp_path / "empty", capsys
    )
    shutil.rmtree(run_copy / "trajectories" / "turn_on_wifi")
    err = run_cli_error(run_copy, capsys)
    assert "per_scenario_results[3] (turn_on_wifi): no execution_context.json or conversation.json" in err
    (run_copy / "result_summary.json").write_text("{not json", encoding="utf-8")
    assert "result_summary.json: not valid JSON" in run_cli_error(run_copy, capsys)
    (run_copy / "result_summary.json").write_bytes(b"\xff\xfe")
    assert "not UTF-8 text" in run_cli_error(run_copy, capsys)


@pytest.mark.spec("TSB-ERRORS")
def test_malformed_conversation(run_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = run_copy / "trajectories" / "current_location_conversation_only" / "conversation.json"
    messages = load(path)
    messages[3]["tool_call_id"] = "call_nobody"
    dump(path, messages)
    err = run_cli_error(run_copy, capsys)
    assert f"{path}: [3]: reply to tool call id 'call_nobody', which has no unanswered call" in err


@pytest.mark.spec("TSB-FILES")
def test_lower_case_enum_values_are_accepted(run_copy: Path) -> None:
    def lower(document: dict[str, Any]) -> None:
        rows = document["_dbs"].pop("SANDBOX")
        for row in rows:
            for key in ("sender", "recipient"):
                if row[key] is not None:
                    row[key] = row[key].lower()
        document["_dbs"]["sandbox"] = rows

    edit_context(run_copy, "send_message_cellular_off", lower)
    rollout = read(run_copy)["send_message_cellular_off"]
    assert (rollout.outcome.T, rollout.outcome.fed, rollout.outcome.label) == (3, 1, Label.PRECONDITION)


@pytest.mark.spec("TSB-FILES")
def test_user_simulator_rows_and_headguard_are_skipped() -> None:
    rows = sandbox_rows(RUN, "send_message_with_contact")
    # The fixture has a null headguard row and three few-shot rows visible only to the user.
    assert rows[0]["sender"] is None
    assert sum(1 for r in rows if r["visible_to"] == ["USER"]) == 3
    assert read(RUN)["send_message_with_contact"].outcome.T == 2


@pytest.mark.spec("TSB-LABELS", "LABEL-MASK")
@pytest.mark.parametrize(
    ("exception", "arguments", "labels"),
    [
        # The caller's value "not found" is masked; the validator's words remain.
        (
            "ValueError: not found is not a known 3 letter ISO 4217 currency code",
            {"to_currency_code": "not found"},
            (Label.SCHEMA,),
        ),
        # The exception type is never masked, even when an argument value equals it.
        (
            "polars.exceptions.NoDataError: No db entry matching person_id='NoDataError' found",
            {"person_id": "NoDataError"},
            (Label.DEPENDENCY,),
        ),
        # Message families match on word boundaries only.
        ("ValueError: this is not a validated request", {}, ()),
        ("RuntimeError: lookup notfound", {}, ()),
        ("RuntimeError: user x not found", {"user": "y"}, (Label.DEPENDENCY,)),
        ("RuntimeError: user x not found", {"user": "x not found"}, ()),
    ],
)
def test_exception_labels_mask_the_arguments(
    exception: str, arguments: dict[str, Any], labels: tuple[Label, ...]
) -> None:
    assert tsb.exception_labels(exception, arguments) == labels


@pytest.mark.spec("TSB-LABELS", "LABEL-RULES")
def test_label_rules_come_first_and_see_the_masked_line(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(
        '[[toolsandbox]]\npattern = "^ConnectionError: "\nlabel = "information"\n'
        '[[toolsandbox]]\npattern = "fredrik"\nlabel = "schema"\n',
        encoding="utf-8",
    )
    rules = load_label_rules(str(path), "toolsandbox")
    # The type stays in the text the rules see.
    assert tsb.exception_labels("ConnectionError: Cellular service is not enabled", {}, rules) == (
        Label.INFORMATION,
    )
    # The caller's value is masked before the rules see it: no rule matches, the families decide.
    text = "polars.exceptions.NoDataError: No db entry matching person_id='fredrik' found"
    assert tsb.masked_exception(text, {"person_id": "fredrik"}) == (
        "polars.exceptions.NoDataError: No db entry matching person_id='\u2039arg\u203a' found"
    )
    assert tsb.exception_labels(text, {"person_id": "fredrik"}, rules) == (Label.DEPENDENCY,)
    assert tsb.exception_labels(text, {}, rules) == (Label.SCHEMA,)
    # Through the reader: the cellular-off scenario of the hand-built run becomes information.
    rollout = read(RUN, label_rules=str(path))["send_message_cellular_off"]
    assert rollout.outcome.label == Label.INFORMATION
