"""tau-bench rules added for real third-party runs (issue 13; spec/adapters/taubench.md).

Each test builds a small input by hand (or reads the crafted files in tests/data/taubench/) and
states the expected outcome as read off that input; the real runs are in test_taubench_real.py.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from test_taubench import (
    NONE,
    assistant,
    by_key,
    call,
    run,
    shape,
    sim,
    tau2,
    tool,
    user,
    v1_call,
    v1_record,
    v1_tool,
    v1_user,
    write,
)

from prefixexec.adapters import AdapterOptions, InputError, taubench
from prefixexec.adapters.labels import LabelRules, load_label_rules
from prefixexec.kernel import Label

from conftest import REAL, REPO, real_text

DATA = REPO / "tests" / "data" / "taubench"
HOTEL_ES = DATA / "hotel-es.json"
RULES = DATA / "spanish-rules.toml"
RETAIL_SYSTEM = {"role": "system", "content": "# Retail agent policy\n\nAs a retail agent, ..."}


def retail_record(task_id: int, traj: list[dict[str, Any]], gold: tuple[str, ...] = ()) -> dict[str, Any]:
    record = v1_record(task_id, 0, traj, gold=gold)
    record["traj"][0] = RETAIL_SYSTEM
    return record


# ============================================================================ TAU-V1-NAME


@pytest.mark.spec("TAU-V1-NAME")
@pytest.mark.parametrize(
    ("head", "strategy", "model", "guess"),
    [
        # tau-bench's own strategies with a known model family: one cut, certain.
        ("tool-calling-gpt-4o", "tool-calling", "gpt-4o", False),
        ("react-claude-3-5-sonnet-20241022", "react", "claude-3-5-sonnet-20241022", False),
        ("few-shot-o1-mini", "few-shot", "o1-mini", False),
        # A fork's hyphenated strategy with a known model family: still one cut.
        (
            "tool-calling-with-preconditions-gpt-4o-mini",
            "tool-calling-with-preconditions",
            "gpt-4o-mini",
            False,
        ),
        ("my-agent-Qwen2.5-72B-Instruct", "my-agent", "Qwen2.5-72B-Instruct", False),
        # No known family: the model is the part after the last '-', a guess.
        ("tool-calling-with-preconditions-none", "tool-calling-with-preconditions", "none", True),
        ("assertions-agent-none", "assertions-agent", "none", True),
        # Two parts could start a model: the first is taken, a guess.
        ("react-gpt-style-claude-3", "react", "gpt-style-claude-3", True),
    ],
)
def test_split_strategy_and_model(head: str, strategy: str, model: str, guess: bool) -> None:
    got = taubench.split_strategy_model(head)
    assert (got[0], got[1], got[2] is not None) == (strategy, model, guess)


@pytest.mark.spec("TAU-V1-NAME")
def test_a_known_model_or_strategy_anchors_the_split() -> None:
    head = "tool-calling-with-preconditions-none"
    assert taubench.split_strategy_model(head, model="none") == (
        "tool-calling-with-preconditions",
        "none",
        None,
    )
    assert taubench.split_strategy_model(head, strategy="tool-calling") == (
        "tool-calling",
        "with-preconditions-none",
        None,
    )
    # The real retail names (tests/test_taubench_real.py reads the files themselves).
    n = taubench.v1_naming(
        "tool-calling-with-preconditions-and-python-none-0.1_range_0--1_user-none-llm_0627144318.json"
    )
    assert (n.strategy, n.model, n.guess is not None) == (
        "tool-calling-with-preconditions-and-python",
        "none",
        True,
    )
    n = taubench.v1_naming("assertions-agent-none-0.1_range_0-100_6_18_2025.json.zst")
    assert (n.strategy, n.model, n.guess is not None) == ("assertions-agent", "none", True)


@pytest.mark.spec("TAU-V1-NAME")
def test_guess_warns_once_and_options_silence_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(
        tmp_path / "my-agent-none-0.0_range_0-1_user-x-llm_0101.json", [retail_record(0, [v1_user("hi")])]
    )
    code, out, err = run(["score", "--adapter", "taubench", "--json", str(path)], capsys)
    assert code == 0
    (cond,) = json.loads(out)["conditions"]
    assert (cond["model"], cond["method"]) == ("none", "my-agent")
    assert err.count("\n") == 1 and err.startswith(f"prefixexec: warning: {path}: the file name does not say")
    assert "read as method 'my-agent', model 'none'" in err and "--model" in err
    # --model alone anchors the split: certain, no warning.
    code, out, err = run(["score", "--adapter", "taubench", "--json", "--model", "none", str(path)], capsys)
    assert code == 0 and err == ""
    assert json.loads(out)["conditions"][0]["method"] == "my-agent"
    code, out, err = run(
        ["score", "--adapter", "taubench", "--json", "--model", "m", "--method", "s", str(path)], capsys
    )
    assert code == 0 and err == ""
    assert (json.loads(out)["conditions"][0]["model"], json.loads(out)["conditions"][0]["method"]) == (
        "m",
        "s",
    )


@pytest.mark.spec("TAU-V1-NAME")
def test_the_records_name_model_and_strategy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [retail_record(i, [v1_user("hi")]) for i in range(2)]
    for record in records:
        record["info"]["model"] = "none"
        record["agent_strategy"] = "tool-calling-with-preconditions"
    path = write(tmp_path / "tool-calling-with-preconditions-none-0.1_range_0-2_x.json", records)
    rollouts = taubench.read([str(path)], NONE)
    assert {(r.condition.model, r.condition.method) for r in rollouts} == {
        ("none", "tool-calling-with-preconditions")
    }
    assert capsys.readouterr().err == ""  # content says it: no guess
    records[1]["info"]["model"] = "other"
    with pytest.raises(InputError, match="the records name different models \\('none', 'other'\\)"):
        taubench.read([str(write(tmp_path / "x.json", records))], NONE)


# ============================================================================ TAU-V1-DOMAIN


@pytest.mark.spec("TAU-V1-DOMAIN")
def test_domain_from_the_tools_of_the_gold(tmp_path: Path) -> None:
    assert taubench.tools_domain(["think", "get_order_details", "calculate"]) == "retail"
    assert taubench.tools_domain(["search_direct_flight"]) == "airline"
    assert taubench.tools_domain(["think", "get_user_details"]) is None  # shared by both domains
    assert taubench.tools_domain(["get_order_details", "book_reservation"]) is None
    record = v1_record(0, 0, [v1_user("hi")], gold=("find_user_id_by_email", "get_order_details"))
    record["traj"] = record["traj"][1:]  # no system prompt, and a name without a domain
    (r,) = taubench.read([str(write(tmp_path / "x.json", [record]))], AdapterOptions(model="m"))
    assert r.condition.dataset == "tau-bench/retail"


# ============================================================================ TAU-PAIR, TAU-ARGS, TAU-EXEC


def v1_idless_call(name: str, arguments: str) -> dict[str, Any]:
    """The assertions-agent's shape: no id, arguments as ``str(kwargs)``."""
    return {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


@pytest.mark.spec("TAU-PAIR", "TAU-ARGS", "TAU-EXEC-COMMENT")
def test_idless_calls_pair_by_position(tmp_path: Path) -> None:
    traj = [
        v1_user("I am Yusuf Rossi, zip 19122"),
        v1_idless_call(
            "find_user_id_by_name_zip", "{'first_name': 'Yusuf', 'last_name': 'Rossi', 'zip': '19122'}"
        ),
        {"role": "tool", "name": "find_user_id_by_name_zip", "content": "yusuf_rossi_9620"},
        v1_idless_call("get_order_details", "{'order_id': '#W1'}"),
        # tool_call_id null, and the assertions-agent's commented record of an environment error
        {"role": "tool", "tool_call_id": None, "content": '# var_1 = "Error: order not found"'},
    ]
    (r,) = taubench.read([str(write(tmp_path / "m-retail.json", [retail_record(0, traj)]))], NONE)
    # Call 1 accepted, call 2 rejected by its observation; #W1 was never seen: information.
    assert shape(r) == (2, 2, "information", True)
    assert r.outcome.reason == (
        "call 2 get_order_details: Error: order not found ['#W1' never occurred earlier in the conversation]"
    )


@pytest.mark.spec("TAU-PAIR", "TAU-ERRORS")
def test_ambiguous_position_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    traj = [
        v1_user("hi"),
        v1_idless_call("get_user_details", "{}"),
        v1_idless_call("get_order_details", "{}"),  # the first call is still waiting
        {"role": "tool", "content": "{}"},
    ]
    path = write(tmp_path / "m-retail.json", [retail_record(4, traj)])
    code, out, err = run(["score", "--adapter", "taubench", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"prefixexec: error: {path}: record 0 (task 4, trial 0): traj[4]: tool message without a call id "
        "answers no call by position: 2 calls are waiting for an answer (calls 1, 2): cannot tell which "
        "it answers\n"
    )
    traj = [v1_user("hi"), {"role": "tool", "content": "{}"}]
    path = write(tmp_path / "m-retail.json", [retail_record(4, traj)])
    code, _, err = run(["score", "--adapter", "taubench", str(path)], capsys)
    assert code == 2 and "no call is waiting for an answer" in err


@pytest.mark.spec("TAU-ARGS")
def test_python_literal_arguments_are_data_only() -> None:
    parse = taubench.parse_arguments
    assert parse('{"a": 1}') == {"a": 1}
    assert parse("{'a': [1, 'x'], 'b': None, 'c': (1, 2)}") == {"a": [1, "x"], "b": None, "c": [1, 2]}
    # Not literals: nothing is evaluated, the call keeps no arguments.
    assert parse("{'a': __import__('os').getpid()}") == {}
    assert parse("{'a': {1, 2}}") == {}  # a set is not JSON-like data
    assert parse("{1: 'x'}") == {}
    assert parse("[1, 2]") == {} and parse(None) == {}
    assert parse("{" * 5000) == {}
    assert parse('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}") == {}  # too deep for json: no arguments


@pytest.mark.spec("TAU-EXEC-COMMENT", "TAU-EXEC")
def test_commented_observation() -> None:
    assert taubench.v1_verdict('# var_6 = "Error: non-delivered order cannot be returned"') == (
        False,
        "Error: non-delivered order cannot be returned",
    )
    assert taubench.v1_verdict('# var_2 = "fine"') == (True, "fine")
    assert taubench.v1_verdict("# not an assignment Error") == (True, "# not an assignment Error")
    assert taubench.v1_verdict("Unknown action x") == (False, "Unknown action x")


# ============================================================================ TAU-ENTITY-NORM


@pytest.mark.spec("TAU-ENTITY-NORM", "TAU-ENTITY")
@pytest.mark.parametrize(
    ("said", "used", "prefixes"),
    [
        ("my booking is ABC 123", "ABC\u00a0123", ()),  # non-breaking space (NFKC)
        ("my booking is ABC\u2003\u2003123", "ABC 123", ()),  # em spaces, a run of white space
        ("order xyz999 please", "XYZ999", ()),  # case
        ("order #XYZ999", "XYZ999", ()),  # '#' on the user's side
        ("order XYZ999", "#XYZ999", ()),  # '#' on the agent's side
        ("my order is 9502126", "#W9502126", ("#W",)),  # retail's id prefix
        ("my order is #W9502126", "9502126", ("#W",)),
        ("my order is w9502126", "#W9502126", ("#W",)),
        ("code \uff21\uff22\uff23\uff11\uff12", "ABC12", ()),  # full-width letters and digits (NFKC)
        ("id U\u2011100", "U-100", ()),  # non-breaking hyphen
        ("id AB\u200bC12", "ABC12", ()),  # zero-width space
    ],
)
def test_normalised_ids_are_seen(said: str, used: str, prefixes: tuple[str, ...]) -> None:
    assert taubench.occurs(used, [said], prefixes)
    labels, note = taubench.classify(f"Error: Reservation {used} not found", {}, [said], id_prefixes=prefixes)
    assert (labels, note) == ((Label.DEPENDENCY,), "")


@pytest.mark.spec("TAU-ENTITY-NORM")
def test_normalisation_keeps_whole_tokens_and_domain_prefixes_to_their_domain() -> None:
    assert not taubench.occurs("#W9502126", ["my order is 9502126"])  # airline: no W prefix
    assert not taubench.occurs("ABC12", ["see ABC123"])
    assert not taubench.occurs("9502126", ["order 19502126"], ("#W",))
    assert taubench.normalise("A\u00a0\u00a0B\u2013C\u00adD") == "a b-cd"


@pytest.mark.spec("TAU-ENTITY-NORM", "TAU-DATASET")
def test_retail_rollout_uses_the_prefix(tmp_path: Path) -> None:
    traj = [
        v1_user("My order number is 9502126."),
        v1_call("a", "get_order_details", {"order_id": "#W9502126"}),
        v1_tool("a", "get_order_details", "Error: order #W9502126 not found"),
    ]
    (r,) = taubench.read([str(write(tmp_path / "m-retail.json", [retail_record(0, traj)]))], NONE)
    assert r.outcome.label is Label.DEPENDENCY
    # The same in the airline domain: no '#W' prefix there, so the id was never seen.
    (r,) = taubench.read([str(write(tmp_path / "m-airline.json", [v1_record(0, 0, traj)]))], NONE)
    assert r.outcome.label is Label.INFORMATION


# ============================================================================ TAU-LABELS on masked text


@pytest.mark.spec("TAU-LABELS", "LABEL-MASK")
def test_families_match_the_masked_message_on_word_boundaries() -> None:
    # The caller's own id holds INVALID: masked, so not schema; Spanish: no family, unlabelled.
    labels, note = taubench.classify("Error: Usuario U-INVALID no existe", {"user_id": "U-INVALID"}, [])
    assert (labels, note) == ((), " [no label family matched]")
    assert taubench.classify("Error: invalid date", {"date": "2024-13-01"}, [])[0] == (Label.SCHEMA,)
    # "invalid" only as a word: "invalidated" matches no family (unlabelled, LABEL-UNMATCHED)
    assert taubench.classify("Error: order was invalidated", {}, [])[0] == ()
    assert taubench.classify("Error: the order is insufficiently paid", {}, [])[0] == ()  # nor "insufficient"
    # A count equal to an argument value is masked too, and still schema.
    message = "Error: book() missing 1 required positional argument: 'cabin'"
    assert taubench.classify(message, {"passengers": 1}, [])[0] == (Label.SCHEMA,)
    message = "Error: f() takes 2 positional arguments but 3 were given"
    assert taubench.classify(message, {"n": 2}, [])[0] == (Label.SCHEMA,)


@pytest.mark.spec("TAU-LABEL-RULES", "LABEL-RULES")
def test_label_rules_from_a_toml_file(capsys: pytest.CaptureFixture[str]) -> None:
    rules = load_label_rules(str(RULES), "taubench")
    assert isinstance(rules, LabelRules) and len(rules.rules) == 2
    labels, note = taubench.classify(
        "Error: Usuario U-INVALID no existe", {"user_id": "U-INVALID"}, [], rules
    )
    assert (labels, note) == ((Label.DEPENDENCY,), " [label rule 'no existe']")
    # Without the file (hand-read from hotel-es.json): (reserva, 0) fails at call 1 with no family
    # matched -> unlabelled (LABEL-UNMATCHED); (consulta, 0) likewise. With it: dependency and
    # precondition.
    plain = by_key(taubench.read([str(HOTEL_ES)], NONE))
    assert shape(plain[("reserva", 0)]) == (2, 1, None, True)
    assert shape(plain[("consulta", 0)]) == (1, 1, None, False)
    ruled = by_key(taubench.read([str(HOTEL_ES)], AdapterOptions(label_rules=str(RULES))))
    assert shape(ruled[("reserva", 0)]) == (2, 1, "dependency", True)
    assert shape(ruled[("consulta", 0)]) == (1, 1, "precondition", False)
    assert ruled[("reserva", 0)].outcome.reason == (
        "call 1 obtener_usuario (id c1): Error: Usuario U-INVALID no existe [label rule 'no existe']"
    )
    # Through the command line: the signature pins the file; the labels follow the rules.
    code, out, err = run(
        ["score", "--adapter", "taubench", "--json", "--label-rules", str(RULES), str(HOTEL_ES)], capsys
    )
    assert code == 0 and err == ""
    document = json.loads(out)
    assert "label-rules=sha256:" in document["signature"]
    (cond,) = document["conditions"]
    assert cond["labels"]["dependency"] == 1 and cond["labels"]["precondition"] == 1


@pytest.mark.spec("TAU-LABEL-RULES")
def test_label_rules_reach_the_audit(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["audit", "--adapter", "taubench", "--json", "--label-rules", str(RULES), str(HOTEL_ES)], capsys
    )
    assert code == 0 and json.loads(out)["status"] == "pass"


# ============================================================================ TAU-EMPTY


@pytest.mark.spec("TAU-EMPTY", "TAU-ERRORS")
def test_an_empty_run_contributes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = write(tmp_path / "empty.json", tau2([]))
    good = write(tmp_path / "results.json", tau2([sim("free", 0, [user("hi"), assistant(content="bye")])]))
    empty_v1 = write(tmp_path / "m-airline.json", [])
    code, out, err = run(
        ["score", "--adapter", "taubench", "--json", str(empty), str(good), str(empty_v1)], capsys
    )
    assert code == 0
    assert json.loads(out)["conditions"][0]["N"] == 1
    assert err == (
        f"prefixexec: warning: {empty}: no simulations, nothing read\n"
        f"prefixexec: warning: {empty_v1}: the result list is empty, nothing read\n"
    )
    code, out, err = run(["score", "--adapter", "taubench", str(empty), str(empty_v1)], capsys)
    assert (code, out) == (2, "")
    assert err == f"prefixexec: error: {empty}, {empty_v1}: no rollouts found (every file is empty)\n"


# ============================================================================ TAU-TEXT-CALL


@pytest.mark.spec("TAU-TEXT-CALL")
def test_calls_written_as_text_are_found() -> None:
    find = taubench.text_calls
    assert find('{"function_call": {"action": "get_user_details", "action_input": {"user_id": "u"}}}') == [
        "get_user_details"
    ]
    assert find('Sure.\n```json\n{"name": "book", "arguments": {"a": 1}}\n```') == ["book"]
    assert find(
        '{"tool_calls": [{"function": {"name": "a", "arguments": "{}"}}, {"tool": "b", "args": {}}]}'
    ) == [
        "a",
        "b",
    ]
    # JSON with // comments (as the real grok-3-mini reply writes it); a comment marker in a string stays.
    assert find('{"name": "x", "arguments": {"u": "http://h"}  // note\n}') == ["x"]
    # Not calls: a message object, a name without arguments, a name that is not an identifier, prose.
    assert find('{"message": "Hello"}') == []
    assert find('{"name": "Sophia"}') == []
    assert find('{"name": "two words", "arguments": {}}') == []
    assert find("I will call get_user_details now.") == [] and find(None) == []
    assert find('{"name": "x", "arguments": ' + "[" * 100_000) == []  # too deep, never a crash


@pytest.mark.spec("TAU-TEXT-CALL", "TAU-NOTOOL", "TAU-REASONS")
def test_a_reply_with_a_text_call_keeps_the_no_tool_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = '{"function_call": {"action": "cancel_reservation", "action_input": {"reservation_id": "ZFA04Y"}}}'
    messages = [user("Cancel ZFA04Y"), assistant(content=text), user("ok?"), assistant(content=text)]
    path = write(tmp_path / "results.json", tau2([sim("gold", 0, messages, reward=0.0)]))
    (r,) = taubench.read([str(path)], NONE)
    assert shape(r) == (1, 1, None, False) and r.meta["text_calls"] == 2
    assert r.outcome.reason == (
        "terminal no-tool action: the rollout made no tool call, which the task does not allow (it has 1 "
        "gold assistant action(s)); the reply at messages[1] holds a call written as text "
        "('cancel_reservation') (and 1 more), not a tool call, so it was never executed"
    )
    code, out, _ = run(["audit", "--adapter", "taubench", "--json", str(path)], capsys)
    document = json.loads(out)
    assert code == 0
    summary = "calls written as text (TAU-TEXT-CALL): 1 rollout(s) wrote 2 call(s) as text in a reply"
    assert summary + ", never executed" in document["checked"]
    assert any(
        line.startswith(
            "calls written as text: task 'gold', trial 0 (tau-bench/airline / gpt-4.1): 2 written"
        )
        and line.endswith("no tool call, scored by the no-tool rule")
        for line in document["checked"]
    )


@pytest.mark.spec("TAU-TEXT-CALL")
def test_v1_reply_with_a_text_call(tmp_path: Path) -> None:
    traj = [v1_user("hi"), {"role": "assistant", "content": '{"name": "get_user_details", "arguments": {}}'}]
    (r,) = taubench.read(
        [str(write(tmp_path / "m-airline.json", [v1_record(0, 0, traj, gold=("x",))]))], NONE
    )
    assert "written as text ('get_user_details')" in (r.outcome.reason or "")
    # A real call in the same rollout: the no-tool rule does not apply; the text call is counted.
    traj += [v1_call("a", "get_user_details", {}), v1_tool("a", "get_user_details", "{}")]
    (r,) = taubench.read([str(write(tmp_path / "m-airline.json", [v1_record(0, 0, traj)]))], NONE)
    assert shape(r) == (1, 2, None, True) and r.meta["text_calls"] == 1


# ============================================================================ TAU-REASONS


@pytest.mark.spec("TAU-REASONS", "TAU-UNANSWERED")
def test_every_failing_rollout_says_which_call_and_why(tmp_path: Path) -> None:
    messages = [
        user("hi"),
        assistant(call("c1", "get_user_details", user_id="u")),
        tool("c1", "Error: whatever", error=True),
    ]
    (r,) = taubench.read([str(write(tmp_path / "r.json", tau2([sim("free", 0, messages)])))], NONE)
    assert r.outcome.reason == "call 1 get_user_details (id c1): Error: whatever [no label family matched]"
    long = "Error: " + "x" * 400
    messages[2] = tool("c1", long, error=True)
    (r,) = taubench.read([str(write(tmp_path / "r.json", tau2([sim("free", 0, messages)])))], NONE)
    assert len(r.outcome.reason or "") == taubench.REASON_LIMIT + len(" [no label family matched]")


# ============================================================================ TAU-EXEC-NOFLAG


@pytest.mark.spec("TAU-EXEC-NOFLAG", "TAU-EXEC")
def test_tool_messages_without_the_error_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # A writer that drops tau2's `error` field (seen in a leaderboard submission's trajectories):
    # the text decides, as in v1. A present field still decides alone.
    def bare(call_id: str, content: str) -> dict[str, Any]:
        return {"id": call_id, "role": "tool", "content": content, "requestor": "assistant"}

    messages = [
        user("hi"),
        assistant(call("c1", "list_all_airports")),
        bare("c1", '["JFK"]'),
        assistant(call("c2", "book_reservation")),
        bare("c2", "Error: Payment amount does not add up, total price is 405, but paid 299"),
        assistant(call("c3", "book_reservation")),
        tool("c3", "Error: flagged false, so accepted", error=False),
    ]
    path = write(tmp_path / "results.json", tau2([sim("free", 0, messages)]))
    code, _, err = run(["score", "--adapter", "taubench", "--json", str(path)], capsys)
    assert code == 0
    assert err == (
        f"prefixexec: warning: {path}: 2 tool message(s) carry no 'error' field: each is rejected iff "
        "its text starts with 'Error' (TAU-EXEC-NOFLAG)\n"
    )
    (r,) = taubench.read([str(path)], NONE)
    assert shape(r) == (3, 2, "state_consistency", True) and r.meta["rejected_calls"] == 1
    messages[6] = {**bare("c3", "{}"), "error": "yes"}
    with pytest.raises(InputError, match="tool message 'error' must be true or false, got 'yes'"):
        taubench.read([str(write(tmp_path / "bad.json", tau2([sim("free", 0, messages)])))], NONE)


@pytest.mark.spec("TAU-ERRORS")
def test_a_file_nested_too_deeply_is_an_input_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    code, out, err = run(["score", "--adapter", "taubench", str(path)], capsys)
    assert (code, out, err) == (2, "", f"prefixexec: error: {path}: not valid JSON: nested too deeply\n")


@pytest.mark.spec("TAU-UNKNOWN-ACTION", "LABEL-MASK")
def test_an_unknown_action_keeps_its_label_when_an_argument_is_the_word_unknown() -> None:
    # The real assertions-agent run, record of task 98: call 5 is modify_pending_order_address with
    # address1 = zip = 'Unknown' (read from the raw file here). Had the agent named a tool tau-bench
    # does not have, v1 would answer "Unknown action <tool>"; masking the argument 'Unknown' made
    # that unlabelled, and the audit's unknown-action mutant of this call a miss.
    from prefixexec.adapters.taubench.semantics import classify

    run = REAL / "tau-bench-v1-retail" / "assertions-agent-none-0.1_range_0-100_6_18_2025.json.zst"
    record = next(r for r in json.loads(real_text(run)) if r["task_id"] == 98)
    calls = [c["function"] for m in record["traj"] for c in (m.get("tool_calls") or [])]
    arguments = ast.literal_eval(calls[4]["arguments"])  # the file writes them as a Python literal
    assert calls[4]["name"] == "modify_pending_order_address" and arguments["address1"] == "Unknown"
    tool = "modify_pending_order_address_nonexistent"
    labels, note = classify(f"Unknown action {tool}", arguments, (), tool=tool)
    assert labels == (Label.SCHEMA,) and note == ""
    # Only tau-bench's own whole message is read unmasked: the argument still masks other text.
    labels, _ = classify("Unknown zip: invalid", arguments, (), tool=tool)
    assert labels == (Label.SCHEMA,)  # "invalid" is the env's word, still matched
    assert classify("Unknown action", arguments, (), tool=tool)[0] == ()
