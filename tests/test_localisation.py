"""Every rejected call, where it sits, and the comparison with human step labels (issue 42).

Spec: OUT-REJECTIONS, OUT-SOURCE (spec/rollouts.md), LABEL-ARGUMENTS (spec/adapters/labels.md),
TAU-V1-MODEL-STEM (spec/adapters/taubench.md). The AgentRx runs (tests/data/real/agentrx-tau-retail/)
are counted here from the raw JSON with the standard library (``conftest.real_text``), never
with prefixexec's readers, and the counts are compared with what prefixexec lists.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, chat, otel, taubench
from prefixexec.adapters.rejections import VERDICTS_KEY, verdicts_of
from prefixexec.explain import explanation
from prefixexec.kernel import Label
from prefixexec.rollouts import rows

from conftest import REAL, REPO, real_text

AGENTRX = REAL / "agentrx-tau-retail" / "data"
FAILED = AGENTRX / "tau_retail" / "tau_dataset_failed.json"
FULL = AGENTRX / "tau_retail" / "tau_dataset_full.json.zst"
TRUTH = AGENTRX / "ground_truth" / "tau_ground_truth.json"
AIRLINE = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
OPTIONS = AdapterOptions(model="m")


def raw_rejections(path: Path) -> list[tuple[str, int, str, str]]:
    """``(task, message, tool, tool message)`` of every call a tool message rejects, from the raw
    JSON: tau-bench v1 rejects a call when its tool message starts with ``Error`` or ``Unknown
    action`` (TAU-EXEC); the message is the 1-based index of the call's assistant message in
    ``traj`` (the system message is 1), found by the tool message's ``tool_call_id``."""
    out = []
    for record in json.loads(real_text(path)):
        calls: dict[str, tuple[int, str]] = {}
        for j, message in enumerate(record["traj"], start=1):
            for call in message.get("tool_calls") or []:
                calls[call["id"]] = (j, call["function"]["name"])
            content = message.get("content") or ""
            if message["role"] == "tool" and content.startswith(("Error", "Unknown action")):
                at, name = calls[message["tool_call_id"]]
                out.append((str(record["task_id"]), at, name, content))
    return out


def earlier_texts(path: Path) -> dict[tuple[str, int], str]:
    """The text of every user and tool message before each message of each record (raw JSON)."""
    out: dict[tuple[str, int], str] = {}
    for record in json.loads(real_text(path)):
        seen: list[str] = []
        for j, message in enumerate(record["traj"], start=1):
            out[str(record["task_id"]), j] = "\n".join(seen)
            if message["role"] in ("user", "tool") and message.get("content"):
                seen.append(message["content"])
    return out


def expected_label(text: str, arguments: dict[str, Any], before: str) -> str:
    """The label of a retail tool message as written down by hand from the specs: ``non-delivered``
    / ``non-pending`` -> precondition (TAU-LABELS); ``should match`` / ``should be either`` ->
    schema (LABEL-ARGUMENTS); ``not found`` -> dependency when what was looked up (the id quoted
    before ``not found``, else every string argument) occurred earlier in the conversation, else
    information (TAU-ENTITY)."""
    if "non-delivered" in text or "non-pending" in text:
        return "precondition"
    if "should match" in text or "should be either" in text:
        return "schema"
    assert "not found" in text, text
    named = re.search(r"(\d+) not found", text)
    looked_up = [named[1]] if named else [v for v in arguments.values() if isinstance(v, str)]
    # compared as TAU-ENTITY-NORM says: NFKC (the Cloudflare-mangled "[email\xa0protected]" an agent
    # copied from "[email protected]", task 8), case folded, retail's "#W" order prefix optional
    # (the user's "9502126" is the agent's "#W9502126", task 46)
    text_before = unicodedata.normalize("NFKC", before).casefold()
    cores = [unicodedata.normalize("NFKC", v).casefold().removeprefix("#w") for v in looked_up]
    return "dependency" if all(core in text_before for core in cores) else "information"


def raw_arguments(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    return {
        (str(record["task_id"]), j): json.loads(message["tool_calls"][0]["function"]["arguments"])
        for record in json.loads(real_text(path))
        for j, message in enumerate(record["traj"], start=1)
        if message.get("tool_calls")
    }


@pytest.mark.spec("OUT-REJECTIONS", "OUT-SOURCE", "LABEL-ARGUMENTS", "TAU-LABELS")
@pytest.mark.parametrize(
    ("path", "calls", "rollouts", "by_label"),
    [
        # Counted by raw_rejections: 15 rejected calls in 9 of the 29 labelled rollouts; labels by
        # expected_label: 4 non-delivered + 3 + 1 non-pending = 8 precondition, 4 "user not found"
        # for an e-mail the user had typed + 2 "new item <id> not found or available" for an id an
        # earlier get_product_details listed = 6 dependency, 1 "should match" = 1 schema.
        (FAILED, 15, 9, {"precondition": 8, "dependency": 6, "schema": 1}),
        # The 100-rollout run: 34 calls in 23 rollouts; 13 "user not found", 5 "new item ... not
        # found or available", 1 "order not found" = 19 dependency; 7 + 1 non-delivered, 2 + 1
        # non-pending = 11 precondition; 3 "should match" + 1 "payment method should be either" = 4.
        (FULL, 34, 23, {"dependency": 19, "precondition": 11, "schema": 4}),
    ],
)
def test_every_rejected_call_of_the_agentrx_runs_is_listed_with_its_label(
    path: Path, calls: int, rollouts: int, by_label: dict[str, int]
) -> None:
    raw = raw_rejections(path)
    assert len(raw) == calls and len({task for task, *_ in raw}) == rollouts
    table = rows(taubench.read([str(path)], OPTIONS))
    listed = [
        (row["task_id"], r["source"]["message"], r["tool"], r["reason"], r["label"])
        for row in table
        for r in row["rejections"]
    ]
    # the same calls, in the same order, each reason quoting its tool message
    assert [(t, m, tool) for t, m, tool, *_ in listed] == [(t, m, tool) for t, m, tool, _ in raw]
    assert all(
        reason.endswith(text) or text in reason
        for (*_, reason, _), (*_, text) in zip(listed, raw, strict=True)
    )
    before, arguments = earlier_texts(path), raw_arguments(path)
    expected = [expected_label(text, arguments[t, m], before[t, m]) for t, m, _, text in raw]
    assert [label for *_, label in listed] == expected
    assert Counter(expected) == by_label
    # the share still unlabelled: none (0 of 15, 0 of 34)
    assert all(label is not None for *_, label in listed)


@pytest.mark.spec("OUT-REJECTIONS")
@pytest.mark.parametrize("path", [FAILED, FULL, AIRLINE])
def test_the_first_rejection_is_the_one_fed_counts(path: Path) -> None:
    for row in rows(taubench.read([str(path)], OPTIONS)):
        rejections = row["rejections"]
        assert (rejections == []) == row["executable"]
        if rejections:
            first, *later = rejections
            assert (first["position"], first["label"], first["reason"]) == (
                row["fed"],
                row["label"],
                row["reason"],
            )
            assert first["counted"] and not any(r["counted"] for r in later)
            assert all(a["position"] < b["position"] for a, b in itertools.pairwise(rejections))


@pytest.mark.spec("OUT-REJECTIONS")
def test_recovery_is_a_later_accepted_call_of_the_same_tool() -> None:
    # Independently from the raw JSON of the airline run: for every rejected call, the first later
    # call of the same tool whose tool message is not an error (its message index).
    records = {(str(r["task_id"]), r["trial"]): r for r in json.loads(real_text(AIRLINE))}
    checked = recovered = 0
    for rollout in taubench.read([str(AIRLINE)], OPTIONS):
        row = rows([rollout])[0]
        traj = records[row["task_id"], row["trial"]]["traj"]
        # (message, tool, accepted) per call; this file reuses call ids, so a tool message answers
        # the latest call with its id
        calls: list[tuple[int, str, bool]] = []
        open_ids: dict[str, int] = {}
        for j, m in enumerate(traj, start=1):
            if m.get("tool_calls"):
                open_ids[m["tool_calls"][0]["id"]] = len(calls)
                calls.append((j, m["tool_calls"][0]["function"]["name"], False))
            elif m["role"] == "tool":
                i = open_ids.pop(m["tool_call_id"])
                calls[i] = (*calls[i][:2], not m["content"].startswith(("Error", "Unknown action")))
        sources = [a["source"]["message"] for a in explanation(rollout)["actions"] if "source" in a]
        assert sources == [j for j, *_ in calls]  # a rollout without calls: the no-tool action, no source
        for r in row["rejections"]:
            k = r["position"]
            later = [i for i, (_, name, ok) in enumerate(calls[k:], start=k + 1) if name == r["tool"] and ok]
            assert r["recovered_at"] == (later[0] if later else None)
            assert r["recovered"] == (bool(later) or row["success"])
            checked += 1
            recovered += r["recovered_at"] is not None
    # 200 rollouts; the count of rejected calls and of those recovered by the same tool is what
    # the loop above finds, checked to be non-trivial
    assert checked > 50 and 0 < recovered < checked


@pytest.mark.spec("OUT-SOURCE")
def test_every_action_names_its_message_in_traj() -> None:
    # AgentRx numbers steps over traj from 1, the system message being 1 (SOURCE.md): the message
    # an action names holds the call with the action's call id.
    records = {str(r["task_id"]): r for r in json.loads(real_text(FAILED))}
    actions = 0
    for rollout in taubench.read([str(FAILED)], OPTIONS):
        traj = records[rollout.task_id]["traj"]
        assert traj[0]["role"] == "system"
        for action in explanation(rollout)["actions"]:
            message = traj[action["source"]["message"] - 1]
            assert message["role"] == "assistant"
            assert message["tool_calls"][0]["id"] == action["call_id"]
            actions += 1
    # every assistant message with tool calls in the file, counted from the raw JSON
    assert actions == sum(1 for r in records.values() for m in r["traj"] if m.get("tool_calls"))


@pytest.mark.spec("OUT-REJECTIONS", "OUT-EXPLAIN")
def test_explain_shows_later_rejections_not_counted() -> None:
    (rollout,) = [r for r in taubench.read([str(FAILED)], OPTIONS) if r.task_id == "20"]
    out = explanation(rollout)
    marks = [(a["position"], a["verdict"], a["rejected"]) for a in out["actions"] if a["rejected"]]
    # raw JSON, task 20: the calls at traj messages 49, 55 and 61 are rejected (raw_rejections),
    # the 18th, 20th and 23rd of its 23 calls
    assert [m for t, m, *_ in raw_rejections(FAILED) if t == "20"] == [49, 55, 61]
    assert marks == [(18, "failed", True), (20, "not_evaluated", True), (23, "not_evaluated", True)]
    rejection = out["actions"][19]["rejection"]
    assert rejection["counted"] is False and rejection["label"] == "dependency"
    assert rejection["recovered_at"] == 22  # modify_pending_order_items accepted at message 59
    assert out["actions"][17]["rejection"]["counted"] is True


@pytest.mark.spec("OUT-REJECTIONS", "OUT-EXPLAIN")
def test_explain_text_marks_later_rejections(capsys: pytest.CaptureFixture[str]) -> None:
    from prefixexec.cli import main

    assert main(["explain", "--adapter", "taubench", "--model", "m", str(FAILED), "--task", "34"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    fail = next(line for line in lines if " FAIL " in line)
    assert "find_user_id_by_email" in fail and fail.rstrip().endswith(
        "dependency  (recovered: no)  <message 5>"
    )
    later = [line for line in lines if " REJ " in line]
    assert len(later) == 2 and all("[after the first failure (not counted)]" in line for line in later)
    assert "schema" in later[0] and "<message 17>" in later[0]
    assert re.search(r"reason: .*the number of items to be exchanged should match", out)
    assert lines[-1].rstrip().endswith("2 more rejected after FED (not counted)")


@pytest.mark.spec("OUT-REJECTIONS", "HARNESS-COUNT")
def test_a_counted_harness_error_lists_no_rejections() -> None:
    # the assertions-agent run: 34 records crashed (info.error, empty traj: test_taubench_real)
    path = REAL / "tau-bench-v1-retail" / "assertions-agent-none-0.1_range_0-100_6_18_2025.json.zst"
    crashed = sum(1 for r in json.loads(real_text(path)) if "error" in r["info"] and not r["traj"])
    table = rows(taubench.read([str(path)], AdapterOptions(model="m", method="s")))
    assert crashed == 34
    assert sum(1 for row in table if row["rejections"] is None) == crashed


def chat_line(messages: list[dict[str, Any]]) -> dict[str, Any]:
    tools = [{"type": "function", "function": {"name": name}} for name in ("exchange", "pay")]
    return {
        "task_id": "t",
        "model": "m",
        "method": "x",
        "success": False,
        "messages": messages,
        "tools": tools,
    }


def chat_call(call_id: str, name: str) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps({"order_id": "#W1"})}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def chat_result(call_id: str, text: str, error: bool) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text, "is_error": error}


@pytest.mark.spec("OUT-REJECTIONS", "OUT-SOURCE", "LABEL-ARGUMENTS", "CHAT-LABELS")
def test_chat_rejections_sources_and_argument_labels(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "exchange it"},
        chat_call("a", "exchange"),  # message 2: rejected, an argument constraint
        chat_result("a", "Error: the number of items to be exchanged should match", True),
        chat_call("b", "exchange"),  # message 4: accepted
        chat_result("b", "done", False),
        chat_call("c", "pay"),  # message 6: rejected, an argument constraint again
        chat_result("c", "Error: payment method should be either the original one or a gift card", True),
    ]
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(chat_line(messages)) + "\n", encoding="utf-8")
    (rollout,) = chat.read([str(path)], AdapterOptions())
    (row,) = rows([rollout])
    assert (row["fed"], row["label"], row["failing"]["source"]) == (1, "schema", {"message": 2})
    assert [
        (r["position"], r["source"], r["label"], r["counted"], r["recovered"], r["recovered_at"])
        for r in row["rejections"]
    ] == [(1, {"message": 2}, "schema", True, True, 2), (3, {"message": 6}, "schema", False, False, None)]
    assert chat.error_labels("Error: the number of passengers does not match") == (Label.SCHEMA,)
    assert chat.error_labels("Error: the new payment method should be different from the current one") == (
        Label.SCHEMA,
    )
    # the families are matched on word bounds and with the call's own values masked (LABEL-MASK)
    assert chat.error_labels("the number of items should matchmaker") == ()
    assert chat.error_labels("shipped to either address", {"x": "should be either"}) == ()


@pytest.mark.spec("OUT-REJECTIONS", "OUT-SOURCE", "LABEL-ARGUMENTS", "TAU-LABELS")
def test_tau_argument_families_label_without_masking_the_words() -> None:
    labels, note = taubench.classify(
        "Error: there should be exactly one payment for a pending order", {"order_id": "#W1"}, ()
    )
    assert labels == (Label.SCHEMA,) and note == ""


@pytest.mark.spec("OUT-REJECTIONS", "OUT-SOURCE")
def test_trace_rejections_name_their_spans() -> None:
    data = REPO / "tests" / "data" / "traces"
    rollouts = otel.read([str(data / "agents-otel-genai.jsonl")], AdapterOptions())
    failing = 0
    for rollout in rollouts:
        (row,) = rows([rollout])
        spans = rollout.meta["action_spans"]
        actions = explanation(rollout)["actions"]
        assert [a["source"] for a in actions if "source" in a] == [{"span_id": s} for s in spans]
        assert (row["rejections"] == []) == row["executable"]
        if row["rejections"]:
            failing += 1
            assert row["rejections"][0]["position"] == row["fed"]
            assert row["failing"]["source"] == {"span_id": spans[row["fed"] - 1]}
    assert failing > 0


@pytest.mark.spec("OUT-REJECTIONS")
def test_verdicts_are_computed_only_when_asked() -> None:
    (rollout, *_) = taubench.read([str(FAILED)], OPTIONS)
    kept = rollout.meta[VERDICTS_KEY]
    assert kept._done is None  # reading does not judge the later calls (score never pays for them)
    assert verdicts_of(rollout.meta, rollout.outcome) is not None and kept._done is not None


def _benchmark() -> Any:
    spec = importlib.util.spec_from_file_location("human_labels", REPO / "benchmarks" / "human_labels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["human_labels"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.spec("OUT-REJECTIONS", "OUT-SOURCE")
def test_human_label_comparison_counts() -> None:
    # The relation of each labelled rollout, from the raw JSON only: the human first failure is the
    # smallest step_number of its failures; prefixexec's first rejected call is the first of
    # raw_rejections for the task (FED of a tau-bench v1 rollout with calls, TAU-EXEC).
    truth = json.loads(real_text(TRUTH))
    first_rejected: dict[str, int] = {}
    for task, message, _, _ in raw_rejections(FAILED):
        first_rejected.setdefault(task, message)
    counts: Counter[tuple[bool, str]] = Counter()
    for entry in truth:
        first = min(entry["failures"], key=lambda f: f["step_number"])
        step, category = first["step_number"], first["failure_category"]
        fed = first_rejected.get(str(entry["trajectory_id"]))
        relation = (
            "silent" if fed is None else "same" if fed == step else "earlier" if fed < step else "later"
        )
        counts[category in ("Invalid Invocation", "Invention of New Information"), relation] += 1
    # written down from the loop above (docs/localisation.md quotes them): the one rollout whose
    # human first failure is an Invalid Invocation (task 34) has an earlier rejected call; of the
    # 28 others, 2 same, 4 earlier, 2 later, 20 silent
    assert counts == {(True, "earlier"): 1, (False, "same"): 2, (False, "earlier"): 4, (False, "later"): 2,
                      (False, "silent"): 20}  # fmt: skip
    module = _benchmark()
    text = module.render(AGENTRX)
    # the script runs as the docs say, from the checkout, and prints the same
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "human_labels.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert done.stdout == text
    assert "| Invalid Invocation / Invention of New Information | 1 | 0 | 1 | 0 | 0 |" in text
    assert "| another category | 28 | 2 | 4 | 2 | 20 |" in text
    assert "| all | 29 | 2 | 5 | 2 | 20 |" in text
    assert "(15 calls in 9 of 29 rollouts; unlabelled: 0/15)" in text
    assert "(34 calls in 23 of 100 rollouts; unlabelled: 0/34)" in text
    # the docs quote the same output
    docs = (REPO / "docs" / "localisation.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("| all ") or line.startswith("| another") or line.startswith("| Invalid"):
            assert line in docs, line


@pytest.mark.spec("TAU-V1-MODEL-STEM")
def test_the_agentrx_file_is_read_under_its_stem(capsys: pytest.CaptureFixture[str]) -> None:
    rollouts = taubench.read([str(FULL)], AdapterOptions())
    assert {r.condition.model for r in rollouts} == {"tau_dataset_full"}  # .json.zst removed
    err = capsys.readouterr().err
    assert err.count("TAU-V1-MODEL-STEM") == 1 and "read as model 'tau_dataset_full'" in err
