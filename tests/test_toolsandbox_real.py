"""The ToolSandbox adapter on runs that ToolSandbox itself wrote (spec TSB-REAL, issue 20).

Test data: tests/data/toolsandbox-real/ (SOURCE.md: ToolSandbox commit 165848b, its command line,
the scenarios), made by tests/make_toolsandbox_runs.py: ToolSandbox's Hermes agent answered by a
scripted loopback server (15 scenarios), its Unhelpful agent (2) and its Cli agent typed on stdin
(2). Every expected number below was counted from the raw JSON without the adapter, by
:func:`independent_counts` (a plain walk over the rows, written for this test) and, before it,
by a throwaway script with the same rules whose printout is the EXPECTED table; the comment on
each entry says what the scripted agent did (tests/data/toolsandbox-real/server.log lists it).
"""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, InputError
from prefixexec.adapters import toolsandbox as tsb
from prefixexec.adapters.toolsandbox.operators import audit
from prefixexec.cli import main
from prefixexec.kernel import Label, Rollout

from conftest import REPO

DATA = REPO / "tests" / "data" / "toolsandbox-real"


def run_folder(pattern: str) -> Path:
    """The one run folder matching ``pattern`` (the folder names hold ToolSandbox's timestamps)."""
    found = sorted(DATA.glob(pattern))
    assert len(found) == 1, f"expected one run folder {pattern} in {DATA}, found {found}"
    return found[0]


HERMES = run_folder("agent_NousResearch/Hermes-2-Pro-Mistral-7B_user_cli_user_*")
UNHELPFUL = run_folder("agent_Unhelpful_user_cli_user_*")
CLI = run_folder("agent_cli_agent_user_cli_user_*")
RUNS = {"hermes": HERMES, "unhelpful": UNHELPFUL, "cli": CLI}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def read(run: Path, **options: Any) -> dict[str, Rollout]:
    return {r.task_id: r for r in tsb.read([str(run)], AdapterOptions(**options))}


# ---------------------------------------------------------------------------------------------
# The independent count: no adapter code, only the rows of each execution_context.json.


def independent_counts(run: Path, entry: dict[str, Any]) -> tuple[int, int, int | None, str | None]:
    """``(calls, exceptions, first failing call (1-based) or None, why)`` of one scenario.

    Walks ``_dbs.SANDBOX`` in file order: a call is a row sent by AGENT to
    EXECUTION_ENVIRONMENT, a reply a row sent back; a call's reply is the first later reply not
    yet used with the same ``openai_tool_call_id`` (null for the Cli agent); ``exceptions``
    counts replies whose ``tool_call_exception`` is set. The first failing call is the first
    call whose reply has an exception or that has no reply; a summary entry with
    ``exception_type == "KeyError"`` (ToolSandbox aborted on an unknown tool) adds one failing
    call after the recorded ones.
    """
    rows = load(run / "trajectories" / entry["name"] / "execution_context.json")["_dbs"]["SANDBOX"]
    calls = [
        i for i, r in enumerate(rows) if (r["sender"], r["recipient"]) == ("AGENT", "EXECUTION_ENVIRONMENT")
    ]
    replies = [
        i for i, r in enumerate(rows) if (r["sender"], r["recipient"]) == ("EXECUTION_ENVIRONMENT", "AGENT")
    ]
    exceptions = sum(1 for i in replies if rows[i]["tool_call_exception"] is not None)
    used: set[int] = set()
    for k, i in enumerate(calls, 1):
        ident = rows[i]["openai_tool_call_id"]
        reply = next(
            (j for j in replies if j > i and j not in used and rows[j]["openai_tool_call_id"] == ident), None
        )
        if reply is None:
            return len(calls), exceptions, k, "no reply"
        used.add(reply)
        if rows[reply]["tool_call_exception"] is not None:
            return len(calls), exceptions, k, str(rows[reply]["tool_call_exception"])
    if entry["exception_type"] == "KeyError":
        return len(calls), exceptions, len(calls) + 1, "KeyError abort"
    return len(calls), exceptions, None, None


def summary(run: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = load(run / "result_summary.json")["per_scenario_results"]
    return entries


# (run, scenario) -> (calls, exceptions, first failing call, its exception's first words), printed
# by the throwaway count over the raw JSON (same rules as independent_counts) and checked against
# server.log and SOURCE.md's table of what the scripted agent did.
COUNTS: dict[tuple[str, str], tuple[int, int, int | None, str | None]] = {
    # search; send (cellular off); cellular on; send.
    ("hermes", "send_message_with_contact_content_cellular_off"): (4, 1, 2, "ConnectionError: Cellular"),
    # remove with the phone number as person_id; search; remove by id.
    ("hermes", "remove_contact_by_phone"): (3, 1, 1, "polars.exceptions.NoDataError: No db entry"),
    # on='off', then on=False.
    ("hermes", "wifi_off"): (2, 1, 1, "TypeError: Parameter 'on'"),
    # disable_cellular_service is not allowed: no row, ToolSandbox aborted (KeyError).
    ("hermes", "cellular_off"): (0, 0, 1, "KeyError abort"),
    # parallel battery off + wifi on (reversed order fails, its replies kept); wifi on.
    ("hermes", "turn_on_wifi_low_battery_mode"): (3, 1, 2, "PermissionError: Wifi cannot"),
    # battery mode off twice.
    ("hermes", "turn_on_cellular_low_battery_mode"): (2, 1, 2, "ValueError: low_battery_mode already"),
    # phone number "Fredrik"; then the right number.
    ("hermes", "send_message_with_phone_number_and_content"): (2, 1, 1, "phonenumbers.phonenumberutil."),
    # full_name=...; then name=...
    ("hermes", "search_phone_number_with_name"): (2, 1, 1, "TypeError: got an unexpected keyword"),
    # {'verbose': nan}: NameError; ToolSandbox then crashed (ValueError) before the next turn.
    ("hermes", "get_cellular"): (1, 1, 1, "NameError: name 'nan'"),
    ("hermes", "search_name_with_relationship"): (1, 0, None, None),
    ("hermes", "remove_contact_by_phone_multiple_user_turn"): (2, 0, None, None),
    ("hermes", "find_current_city_insufficient_information"): (0, 0, None, None),
    ("hermes", "get_wifi"): (0, 0, None, None),
    # 14 answered calls, then two parallel calls cut off by the message limit.
    ("hermes", "search_relationship_with_phone_number"): (16, 0, 15, "no reply"),
    # currency code "not found"; then a valid call without RAPID_API_KEY.
    ("hermes", "convert_currency"): (2, 2, 1, "ValueError: not found is not"),
    ("unhelpful", "get_wifi"): (0, 0, None, None),
    ("unhelpful", "find_current_location_insufficient_information"): (0, 0, None, None),
    # Cli agent: on='off' (TypeError), then on=False.
    ("cli", "cellular_off"): (2, 1, 1, "TypeError: Parameter 'on'"),
    ("cli", "get_wifi"): (1, 0, None, None),
}

# (T, FED, label, Y) the adapter must give, from COUNTS: T = calls (+1 for the KeyError abort; 1
# for a scenario without calls, the no-tool action), FED = the first failing call (T + 1 if
# none; for no calls: 2 in INSUFFICIENT_INFORMATION scenarios, else 1), the label of the first
# failing exception by TSB-LABELS, Y = ToolSandbox's similarity == 1.0 (result_summary.json).
EXPECTED: dict[tuple[str, str], tuple[int, int, Label | None, bool]] = {
    ("hermes", "send_message_with_contact_content_cellular_off"): (4, 2, Label.PRECONDITION, False),
    ("hermes", "remove_contact_by_phone"): (3, 1, Label.DEPENDENCY, False),
    ("hermes", "wifi_off"): (2, 1, Label.SCHEMA, True),
    ("hermes", "cellular_off"): (1, 1, Label.SCHEMA, False),
    ("hermes", "turn_on_wifi_low_battery_mode"): (3, 2, Label.PRECONDITION, False),
    ("hermes", "turn_on_cellular_low_battery_mode"): (2, 2, Label.STATE_CONSISTENCY, False),
    ("hermes", "send_message_with_phone_number_and_content"): (2, 1, Label.SCHEMA, False),
    ("hermes", "search_phone_number_with_name"): (2, 1, Label.SCHEMA, False),
    # ToolSandbox's own ValueError abort after the call (a harness error, TSB-HARNESS): + 1 action
    ("hermes", "get_cellular"): (2, 1, Label.SCHEMA, False),
    ("hermes", "search_name_with_relationship"): (1, 2, None, True),
    ("hermes", "remove_contact_by_phone_multiple_user_turn"): (2, 3, None, False),
    ("hermes", "find_current_city_insufficient_information"): (1, 2, None, True),
    ("hermes", "get_wifi"): (1, 1, None, False),
    ("hermes", "search_relationship_with_phone_number"): (16, 15, None, False),
    ("hermes", "convert_currency"): (2, 1, Label.SCHEMA, False),
    ("unhelpful", "get_wifi"): (1, 1, None, False),
    ("unhelpful", "find_current_location_insufficient_information"): (1, 2, None, True),
    # ToolSandbox's own AssertionError aborts (harness errors, TSB-HARNESS): + 1 action each; get_wifi's
    # one call is executable, so its first failure is the harness error at 2 = T
    ("cli", "cellular_off"): (3, 1, Label.SCHEMA, False),
    ("cli", "get_wifi"): (2, 2, None, False),
}


@pytest.mark.spec("TSB-REAL")
def test_the_table_covers_every_scenario_toolsandbox_wrote() -> None:
    listed = {(key, e["name"]) for key, run in RUNS.items() for e in summary(run)}
    assert listed == set(COUNTS) == set(EXPECTED)
    # Every run folder records the ToolSandbox commit it was made with (SOURCE.md).
    assert {load(run / "result_summary.json")["git_sha"] for run in RUNS.values()} == {
        "165848b9a78cead7ca7fe7c89c688b58e6501219"
    }


@pytest.mark.spec("TSB-REAL", "TSB-CALLS", "TSB-CLI")
@pytest.mark.parametrize(("run", "scenario"), sorted(COUNTS), ids=[f"{r}-{s}" for r, s in sorted(COUNTS)])
def test_independent_count_matches_the_table(run: str, scenario: str) -> None:
    entry = next(e for e in summary(RUNS[run]) if e["name"] == scenario)
    calls, exceptions, first, why = independent_counts(RUNS[run], entry)
    want = COUNTS[(run, scenario)]
    assert (calls, exceptions, first) == want[:3]
    assert (why is None) == (want[3] is None) and (why or "").startswith(want[3] or "")


@pytest.mark.spec("TSB-REAL", "TSB-FILES", "TSB-CALLS", "TSB-CLI", "TSB-EXEC", "TSB-ABORT", "TSB-UNANSWERED")
@pytest.mark.parametrize(("run", "scenario"), sorted(EXPECTED), ids=[f"{r}-{s}" for r, s in sorted(EXPECTED)])
def test_adapter_agrees_with_the_independent_count(run: str, scenario: str) -> None:
    rollout = read(RUNS[run])[scenario]
    outcome = rollout.outcome
    assert (outcome.T, outcome.fed, outcome.label, rollout.success) == EXPECTED[(run, scenario)]
    # The recorded calls (and the abort's extra one: the unknown tool's call, TSB-ABORT, or the
    # harness error's terminal action, TSB-HARNESS) are the count's calls; FED is the count's first
    # failing call, for scenarios with calls.
    entry = next(e for e in summary(RUNS[run]) if e["name"] == scenario)
    calls, _, first, why = independent_counts(RUNS[run], entry)
    if calls or first is not None:
        assert outcome.T == calls + (1 if entry["exception_type"] is not None else 0)
        assert outcome.fed == (first if first is not None else calls + 1)
    if first is not None and why not in ("no reply", "KeyError abort"):
        # The reason names the call and quotes the recorded exception (TSB-REASON).
        assert outcome.reason is not None and outcome.reason.endswith(": " + str(why))
        assert outcome.reason.startswith(f"call {first} ")


@pytest.mark.spec("TSB-REAL", "TSB-SUCCESS")
@pytest.mark.parametrize("run", sorted(RUNS))
def test_y_is_toolsandboxs_own_similarity(run: str) -> None:
    rollouts = read(RUNS[run])
    for entry in summary(RUNS[run]):
        rollout = rollouts[entry["name"]]
        # ToolSandbox's own rule, recomputed from its two scores: a minefield hit zeroes it.
        assert entry["similarity"] == int(entry["minefield_similarity"] == 0) * entry["milestone_similarity"]
        assert rollout.meta["similarity"] == entry["similarity"]
        assert rollout.success == (entry["similarity"] >= 1.0)
        assert read(RUNS[run], threshold=0.9)[entry["name"]].success == (entry["similarity"] >= 0.9)


@pytest.mark.spec("TSB-REAL", "TSB-REASON", "TSB-NOTOOL", "TSB-HARNESS")
@pytest.mark.parametrize("run", sorted(RUNS))
def test_every_failing_rollout_says_which_call_and_why(run: str) -> None:
    for rollout in read(RUNS[run]).values():
        if rollout.outcome.fully_executable:
            assert rollout.outcome.reason is None
            continue
        reason = rollout.outcome.reason or ""
        first_call = reason.startswith(f"call {rollout.outcome.fed} ") and ": " in reason
        lost = reason.startswith("harness error: ToolSandbox aborted the scenario with ")
        assert first_call or lost or reason.startswith("no tool call: "), reason


@pytest.mark.spec("TSB-REAL", "TSB-REASON", "TSB-ABORT", "TSB-UNANSWERED", "TSB-NOTOOL")
def test_reasons_on_real_output() -> None:
    rollouts = read(HERMES)
    # The parallel reply that failed came back first; the reason names the second call, call_2.
    assert rollouts["turn_on_wifi_low_battery_mode"].outcome.reason == (
        "call 2 set_wifi_status (id call_2): PermissionError: Wifi cannot be turned on in low battery mode"
    )
    assert rollouts["cellular_off"].outcome.reason == (
        "call 1 disable_cellular_service: not an allowed tool, ToolSandbox aborted the scenario (KeyError)"
    )
    # The 15th call (first of the two parallel calls, id call_1) was never answered.
    assert rollouts["search_relationship_with_phone_number"].outcome.reason == (
        "call 15 search_contacts (id call_1): no execution_environment reply (the run ended before it)"
    )
    assert rollouts["get_wifi"].outcome.reason == (
        "no tool call: the agent made no tool call in a scenario that requires tools"
    )
    # The Cli agent's calls have no id.
    assert read(CLI)["cellular_off"].outcome.reason == (
        "call 1 set_cellular_service_status: TypeError: Parameter 'on' is of type '<class 'str'>', "
        "but expected '<class 'bool'>'."
    )


@pytest.mark.spec("TSB-REAL", "TSB-CALLS", "TSB-CODE")
def test_parallel_calls_with_reversed_replies_and_reused_ids() -> None:
    rows = load(HERMES / "trajectories" / "turn_on_wifi_low_battery_mode" / "execution_context.json")["_dbs"][
        "SANDBOX"
    ]
    pairs = [
        (r["sender"], r["openai_tool_call_id"])
        for r in rows
        if "EXECUTION_ENVIRONMENT" in (r["sender"], r["recipient"])
        and "AGENT" in (r["sender"], r["recipient"])
    ]
    # As ToolSandbox wrote them: two calls, the replies in reversed order, then call_1 reused.
    assert pairs == [
        ("AGENT", "call_1"),
        ("AGENT", "call_2"),
        ("EXECUTION_ENVIRONMENT", "call_2"),
        ("EXECUTION_ENVIRONMENT", "call_1"),
        ("AGENT", "call_1"),
        ("EXECUTION_ENVIRONMENT", "call_1"),
    ]
    runs = {r.entry.name: r for r in tsb.read_scenarios(HERMES)}
    calls = runs["turn_on_wifi_low_battery_mode"].scenario.calls
    assert [
        (c.action.name, dict(c.action.arguments), c.action.call_id, c.exception is None) for c in calls
    ] == [
        ("set_low_battery_mode_status", {"on": False}, "call_1", True),
        ("set_wifi_status", {"on": True}, "call_2", False),
        ("set_wifi_status", {"on": True}, "call_1", True),
    ]


@pytest.mark.spec("TSB-REAL", "TSB-CLI", "TSB-CODE")
def test_cli_agent_calls_without_ids() -> None:
    runs = {r.entry.name: r for r in tsb.read_scenarios(CLI)}
    calls = runs["cellular_off"].scenario.calls
    # The two rows ToolSandbox wrote: print(repr(set_cellular_service_status(on='off'))) and on=False.
    assert [(c.action.name, dict(c.action.arguments), c.action.call_id, c.problem) for c in calls] == [
        ("set_cellular_service_status", {"on": "off"}, None, None),
        ("set_cellular_service_status", {"on": False}, None, None),
    ]
    assert [c.exception is None for c in calls] == [False, True]
    # ToolSandbox's own evaluation failed on these calls; the adapter keeps the calls as recorded.
    assert runs["cellular_off"].entry.exception_type == "AssertionError"


@pytest.mark.spec("TSB-REAL", "TSB-CODE", "TSB-ABORT")
def test_nan_argument_is_kept_unparsed() -> None:
    rollout = read(HERMES)["get_cellular"]
    # The recorded code is "call_1_parameters = {'verbose': nan}": not a literal, never evaluated.
    assert rollout.meta["unparsed_calls"] == [{"id": "call_1", "problem": "arguments are not a literal"}]
    # ToolSandbox crashed on the same code after recording the call's NameError reply.
    assert rollout.meta["exception_type"] == "ValueError"


@pytest.mark.spec("TSB-REAL", "TSB-DATASET")
def test_model_names_from_toolsandboxs_folder_names() -> None:
    models = {key: {r.condition.model for r in read(run).values()} for key, run in RUNS.items()}
    # ToolSandbox named the Hermes run agent_NousResearch/Hermes-2-Pro-Mistral-7B_user_cli_user_<time>.
    assert models == {
        "hermes": {"NousResearch/Hermes-2-Pro-Mistral-7B"},
        "unhelpful": {"Unhelpful"},
        "cli": {"cli_agent"},
    }
    assert tsb.model_from_run(Path("agent_x/y_z")) == "y_z"
    assert tsb.model_from_run(Path("agent_a_user_b/agent_c_user_d_12_03_2026_02_02_51")) == "c"


@pytest.mark.spec("TSB-REAL", "TSB-FALLBACK")
def test_conversation_json_gives_the_same_calls() -> None:
    # Wherever ToolSandbox wrote both files, the calls and which of them failed agree.
    checked = 0
    for run in RUNS.values():
        for entry in summary(run):
            folder = run / "trajectories" / entry["name"]
            if not (folder / "conversation.json").is_file():
                continue
            ours = tsb.calls_from_context(folder / "execution_context.json")
            theirs = tsb.calls_from_conversation(folder / "conversation.json")
            view = [
                [
                    (c.action.name, dict(c.action.arguments), c.action.call_id, c.answered, c.exception)
                    for c in calls
                ]
                for calls in (ours, theirs)
            ]
            assert view[0] == view[1], entry["name"]
            checked += 1
    # conversation.json exists for the 13 Hermes scenarios that did not end in an exception (all
    # but cellular_off and get_cellular) and for the 2 Unhelpful ones: `ls
    # tests/data/toolsandbox-real/*/trajectories/*/conversation.json
    # tests/data/toolsandbox-real/*/*/trajectories/*/conversation.json | wc -l` prints 15.
    assert checked == 15


@pytest.mark.spec("TSB-REAL", "TSB-CATEGORY")
@pytest.mark.parametrize("run", sorted(RUNS))
def test_category_split_matches_toolsandboxs_summary(run: str) -> None:
    aggregated = load(RUNS[run] / "result_summary.json")["category_aggregated_results"]
    sums: dict[str, list[float]] = {}
    for rollout in tsb.split_by_category(read(RUNS[run]).values()):
        value = rollout.meta["similarity"]
        assert isinstance(value, float)
        sums.setdefault(rollout.condition.dataset.split("/", 1)[1], []).append(value)
    ours = {c: sum(v) / len(v) for c, v in sums.items()}
    theirs = {c: v["similarity"] for c, v in aggregated.items() if c != "ALL_CATEGORIES"}
    assert set(ours) == set(theirs)
    assert ours == pytest.approx(theirs)


@pytest.mark.spec("TSB-REAL", "TSB-LABELS", "LABEL-MASK")
def test_argument_value_in_the_message_is_masked() -> None:
    runs = {r.entry.name: r for r in tsb.read_scenarios(HERMES)}
    call = runs["convert_currency"].scenario.calls[0]
    assert call.exception == "ValueError: not found is not a known 3 letter ISO 4217 currency code"
    assert call.action.arguments["to_currency_code"] == "not found"
    # Unmasked, the caller's "not found" would add the dependency family; masked it cannot.
    assert tsb.exception_labels(call.exception) == (Label.SCHEMA, Label.DEPENDENCY)
    assert tsb.exception_labels(call.exception, call.action.arguments) == (Label.SCHEMA,)
    assert tsb.masked_exception(call.exception, call.action.arguments) == (
        "ValueError: \u2039arg\u203a is not a known 3 letter ISO 4217 currency code"
    )


RULES = """
[[toolsandbox]]
pattern = "already disabled"
label = "precondition"

[[toolsandbox]]
pattern = "not found"
label = "information"
"""


@pytest.mark.spec("TSB-REAL", "TSB-LABELS", "LABEL-RULES", "LABEL-MASK")
def test_user_label_rules_on_real_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES, encoding="utf-8")
    plain, ruled = read(HERMES), read(HERMES, label_rules=str(rules))
    # "ValueError: low_battery_mode already disabled": the first rule decides.
    assert plain["turn_on_cellular_low_battery_mode"].outcome.label == Label.STATE_CONSISTENCY
    assert ruled["turn_on_cellular_low_battery_mode"].outcome.label == Label.PRECONDITION
    # "not found" in convert_currency's message is the caller's value: masked, the second rule
    # does not match and the built-in families give schema.
    assert ruled["convert_currency"].outcome.label == Label.SCHEMA
    # Nothing else changes.
    changed = {k for k in plain if plain[k].outcome != ruled[k].outcome}
    assert changed == {"turn_on_cellular_low_battery_mode"}

    assert (
        main(["score", "--adapter", "toolsandbox", "--label-rules", str(rules), str(HERMES), "--json"]) == 0
    )
    document = json.loads(capsys.readouterr().out)
    (condition,) = document["conditions"]
    # From EXPECTED with the one label moved from state_consistency to precondition.
    assert condition["labels"] == {
        "schema": 6,
        "dependency": 1,
        "precondition": 3,
        "state_consistency": 0,
        "information": 0,
        "unlabelled": 2,
    }
    assert "label-rules=sha256:" in document["signature"]


@pytest.mark.spec("LABEL-RULES", "TSB-ERRORS")
def test_label_rules_for_another_adapter_only(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('[[chat]]\npattern = "x"\nlabel = "schema"\n', encoding="utf-8")
    with pytest.raises(InputError, match="no rule for the toolsandbox adapter"):
        read(HERMES, label_rules=str(rules))


@pytest.mark.spec("TSB-REAL", "TSB-SUCCESS", "TSB-LABELS")
def test_cli_score_on_the_hermes_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--adapter", "toolsandbox", str(HERMES), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (condition,) = document["conditions"]
    exact = condition["exact"]
    # From EXPECTED (hermes rows): N = 15; fully executable: search_name_with_relationship,
    # remove_contact_by_phone_multiple_user_turn, find_current_city_insufficient_information
    # (TER 3/15); Y = 1: those with similarity 1.0, search_name_with_relationship,
    # find_current_city_insufficient_information, wifi_off (3/15); RR-eligible: the 12 others, of
    # which wifi_off succeeded (1/12). Sum of (FED-1)/T: 1 + 1 + 1 (the three executable) + 14/16
    # + 1/2 + 1/3 + 1/4 (the failures after the first call) = 119/24, so AUC-PEC = 119/360.
    assert condition["N"] == 15
    assert (Fraction(exact["TER"]), Fraction(exact["success"]), Fraction(exact["RR"])) == (
        Fraction(1, 5),
        Fraction(1, 5),
        Fraction(1, 12),
    )
    assert Fraction(exact["AUC_PEC"]) == Fraction(119, 360)
    assert condition["labels"] == {
        "schema": 6,
        "dependency": 1,
        "precondition": 2,
        "state_consistency": 1,
        "information": 0,
        "unlabelled": 2,
    }
    assert condition["model"] == "NousResearch/Hermes-2-Pro-Mistral-7B"


@pytest.mark.spec("TSB-REAL", "TSB-DATASET")
def test_all_three_runs_together(tmp_path: Path) -> None:
    # The three runs are three agents: three conditions, 15 + 2 + 2 rollouts.
    rollouts = tsb.read([str(run) for run in RUNS.values()], AdapterOptions())
    assert len(rollouts) == 19
    assert {r.condition.model for r in rollouts} == {
        "NousResearch/Hermes-2-Pro-Mistral-7B",
        "Unhelpful",
        "cli_agent",
    }
    # A copy of the Hermes run under another time is trial 1 of the same scenarios.
    copy = tmp_path / "agent_NousResearch" / HERMES.name
    shutil.copytree(HERMES, copy)
    twice = tsb.read([str(HERMES), str(copy)], AdapterOptions())
    assert sorted(r.trial for r in twice if r.task_id == "wifi_off") == [0, 1]


@pytest.mark.spec("TSB-REAL", "TSB-FILES")
def test_headguard_rows_inside_the_database_are_skipped() -> None:
    rows = load(HERMES / "trajectories" / "turn_on_wifi_low_battery_mode" / "execution_context.json")["_dbs"][
        "SANDBOX"
    ]
    # ToolSandbox wrote 29 rows: 4 with null sender and recipient (not only the first), 12 visible
    # only to the user simulator, and the conversation (python one-liner over the file).
    assert len(rows) == 29
    headguards = [i for i, r in enumerate(rows) if r["sender"] is None and r["recipient"] is None]
    assert len(headguards) == 4 and headguards[0] == 0
    assert sum(1 for r in rows if r["visible_to"] == ["USER"]) == 12
    assert read(HERMES)["turn_on_wifi_low_battery_mode"].outcome.T == 3


# ---------------------------------------------------------------------------------------------
# The audit (TSB-AUDIT), on the three runs ToolSandbox wrote


def run_audit(*paths: Path, **options: Any) -> Any:
    return audit([str(p) for p in paths], AdapterOptions(**options))


@pytest.mark.spec("TSB-AUDIT", "TSB-REAL")
def test_audit_passes_on_toolsandboxs_runs() -> None:
    report = run_audit(*RUNS.values())
    assert report.passed
    document = report.to_json()
    assert document["gold"] is None
    # Bases: scenarios with an accepted call before their first rejection, from EXPECTED: FED > 1
    # and at least one call -- send_message_with_contact_content_cellular_off,
    # turn_on_wifi_low_battery_mode, turn_on_cellular_low_battery_mode,
    # search_name_with_relationship, remove_contact_by_phone_multiple_user_turn,
    # search_relationship_with_phone_number, and the Cli agent's get_wifi: 7.
    operators = {o["operator"]: o for o in document["operators"]}
    assert set(operators) == {
        "type-error",
        "no-data",
        "cellular-off",
        "already-enabled",
        "unanswered",
        "unknown-tool",
    }
    assert all((o["made"], o["caught"]) == (7, 7) for o in operators.values())
    checks = {c["check"]: c for c in document["checks"]}
    # 19 scenarios; conversation.json in 15 of them (test_conversation_json_gives_the_same_calls);
    # categories in the three summaries' "categories" lists: Hermes 8 (SINGLE/MULTIPLE_TOOL_CALL,
    # SINGLE/MULTIPLE_USER_TURN, STATE_DEPENDENCY, CANONICALIZATION, INSUFFICIENT_INFORMATION,
    # NO_DISTRACTION_TOOLS), Unhelpful 4 (SINGLE_TOOL_CALL, SINGLE_USER_TURN, NO_DISTRACTION_TOOLS,
    # INSUFFICIENT_INFORMATION), Cli 3 (the first three): 15.
    assert {n: (c["checked"], c["failures"]) for n, c in checks.items()} == {
        "call-count": (19, []),
        "similarity-rule": (19, []),
        "conversation-agrees": (15, []),
        "category-summary": (15, []),
    }


@pytest.mark.spec("TSB-AUDIT", "LABEL-RULES")
def test_audit_fails_when_a_rule_misfires(tmp_path: Path) -> None:
    # A user rule that calls the cellular-off exception an information failure: the audit's
    # cellular-off operator expects precondition, so every one of its mutants is a miss.
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[toolsandbox]]\npattern = "^ConnectionError"\nlabel = "information"\n', encoding="utf-8"
    )
    report = run_audit(HERMES, label_rules=str(rules))
    assert not report.passed
    operators = {o["operator"]: o for o in report.to_json()["operators"]}
    assert operators["cellular-off"]["caught"] == 0 and operators["cellular-off"]["made"] > 0
    assert operators["type-error"]["caught"] == operators["type-error"]["made"]


@pytest.mark.spec("TSB-AUDIT")
def test_audit_checks_catch_inconsistent_files(tmp_path: Path) -> None:
    copy = tmp_path / "agent_x_user_y_12_03_2026_02_02_51"
    shutil.copytree(HERMES, copy)
    document = load(copy / "result_summary.json")
    entry = next(e for e in document["per_scenario_results"] if e["name"] == "wifi_off")
    entry["minefield_similarity"] = 0.5  # then ToolSandbox's rule gives similarity 0, not 1.0
    document["category_aggregated_results"]["SINGLE_TOOL_CALL"]["similarity"] = 0.25
    (copy / "result_summary.json").write_text(json.dumps(document), encoding="utf-8")
    conversation = copy / "trajectories" / "wifi_off" / "conversation.json"
    messages = load(conversation)
    tool = next(m for m in messages if m.get("role") == "tool")
    tool["content"] = "None"  # the failing reply now reads as a success
    conversation.write_text(json.dumps(messages), encoding="utf-8")
    report = run_audit(copy)
    checks = {c["check"]: c["failures"] for c in report.to_json()["checks"]}
    assert not report.passed
    assert [f.split(": ", 1)[1] for f in checks["similarity-rule"]] == [
        "wifi_off: similarity 1.0 is not 1{minefield == 0} * milestone (0.0)"
    ]
    assert len(checks["conversation-agrees"]) == 1 and "wifi_off" in checks["conversation-agrees"][0]
    assert len(checks["category-summary"]) == 1 and "SINGLE_TOOL_CALL" in checks["category-summary"][0]
    assert checks["call-count"] == []


@pytest.mark.spec("TSB-AUDIT", "TSB-ERRORS")
def test_audit_needs_run_directories(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="give RUN_DIR"):
        audit([], AdapterOptions())
    with pytest.raises(InputError, match="no such run directory"):
        run_audit(tmp_path / "absent")
