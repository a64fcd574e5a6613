"""The generic adapter audit and the audits of chat, inspect, taubench and records (spec/audit.md).

The runner is tested on a toy semantics whose expected figures are worked out by hand below.
The adapter audits run on the repository's test data and on the real tau-bench v1 fixture;
their expected counts are recomputed here from the raw JSON with separate loops, and each audit
is shown to fail when the adapter's semantics is broken on purpose (monkeypatched).
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs
import pytest

from prefixexec.adapters import ADAPTERS, AdapterOptions, chat, inspect_logs, records, taubench
from prefixexec.adapters.audit import (
    AuditPlan,
    Check,
    Expect,
    Mutant,
    Operator,
    Status,
    Trajectory,
    choose,
    run_audit,
)
from prefixexec.cli import main
from prefixexec.kernel import Accepted, Label, Outcome, Rejected, ToolCall, replay
from prefixexec.kernel.actions import Action, NoToolAction

from conftest import REAL, REPO

CHAT = REPO / "tests" / "data" / "chat" / "transcripts.jsonl"
INSPECT = REPO / "tests" / "data" / "inspect"
TAU = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
DEMO = REPO / "examples" / "demo.jsonl"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def audit_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, _ = run([*argv, "--json"], capsys)
    document: dict[str, Any] = json.loads(out)
    return code, document


def operators(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["operator"]: o for o in document["operators"]}


# --- the runner on a toy semantics (AUDIT-PLAN, AUDIT-GOLD, AUDIT-MUTANTS, AUDIT-REPORT) -------------


@attrs.frozen
class Shop:
    """Toy state: the tools that exist and whether the user has logged in."""

    tools: frozenset[str]
    logged_in: bool = False


class ShopSemantics:
    """Unknown tool: schema; ``book`` before ``login``: precondition."""

    def initial_state(self, task: frozenset[str]) -> Shop:
        return Shop(task)

    def step(self, state: Shop, action: Action) -> Accepted[Shop] | Rejected:
        if isinstance(action, NoToolAction):
            return Rejected((), "no tool")
        if action.name not in state.tools:
            return Rejected((Label.SCHEMA,), f"unknown tool {action.name}")
        if action.name == "book" and not state.logged_in:
            return Rejected((Label.PRECONDITION,), "not logged in")
        return Accepted(Shop(state.tools, state.logged_in or action.name == "login"))


TOOLS = frozenset({"login", "book", "search"})
SHOP = ShopSemantics()


def calls(*names: str) -> tuple[Action, ...]:
    return tuple(ToolCall(n) for n in names)


def _rename(
    task: frozenset[str], actions: tuple[Action, ...], outcome: Outcome
) -> list[Mutant[frozenset[str]]]:
    out = []
    for i in range(min(outcome.fed - 1, len(actions))):
        call = actions[i]
        assert isinstance(call, ToolCall)
        mutated = list(actions)
        mutated[i] = ToolCall(f"{call.name}_x")
        out.append(Mutant(task, tuple(mutated), i + 1, "renamed"))
    return out


def _remove_login(
    task: frozenset[str], actions: tuple[Action, ...], outcome: Outcome
) -> list[Mutant[frozenset[str]]]:
    return [
        Mutant(task, actions[:i] + actions[i + 1 :], i + 1, "login removed")
        for i in range(min(outcome.fed - 1, len(actions)))
        if actions[i] == ToolCall("login")
    ]


def _login_instead(
    task: frozenset[str], actions: tuple[Action, ...], outcome: Outcome
) -> list[Mutant[frozenset[str]]]:
    if outcome.fully_executable:
        return []
    i = outcome.fed - 1
    mutated = (*actions[:i], ToolCall("login"), *actions[i + 1 :])
    return [Mutant(task, mutated, i + 1, "login instead", expected_fed=replay(SHOP, task, mutated).fed)]


RENAME = Operator("rename", "unknown tool", Expect.LABEL, _rename, Label.SCHEMA)
MISLABELLED = Operator(
    "mislabelled", "unknown tool, wrong expectation", Expect.LABEL, _rename, Label.DEPENDENCY
)
REMOVE_LOGIN = Operator("remove-login", "drop the login", Expect.AT_OR_AFTER, _remove_login)
LOGIN_INSTEAD = Operator("login-instead", "the failing call replaced by login", Expect.FED, _login_instead)

GOLD = (
    Trajectory("g1", TOOLS, calls("login", "book")),
    Trajectory("g2", TOOLS, calls("search")),
    Trajectory("bad", TOOLS, calls("book")),
)


def shop_plan(gold: tuple[Trajectory[frozenset[str]], ...], *ops: Operator[frozenset[str]]) -> AuditPlan[Any]:
    return AuditPlan(
        adapter="toy",
        source="three hand-made trajectories",
        semantics=SHOP,
        gold=gold,
        gold_kind="hand-made",
        operators=ops,
        not_checked=("the toy's own rules",),
    )


@pytest.mark.spec("AUDIT-GOLD", "AUDIT-MUTANTS", "AUDIT-PLAN")
def test_runner_counts_findings_catches_and_misses() -> None:
    report = run_audit(shop_plan(GOLD, RENAME, MISLABELLED, REMOVE_LOGIN, LOGIN_INSTEAD), seed=0)
    # By hand: g1 and g2 replay fully executable; "bad" books before logging in: FED 1, precondition.
    assert report.gold is not None
    assert (report.gold.trajectories, report.gold.actions, report.gold.executable) == (3, 4, 2)
    assert [(f.id, f.fed, f.T, f.label) for f in report.gold.findings] == [("bad", 1, 1, "precondition")]
    table = {o.name: (o.made, o.caught, o.not_applicable, len(o.misses)) for o in report.operators}
    assert table == {
        # g1, g2 have accepted calls to rename; "bad" has none (n/a). Replay says schema: caught.
        "rename": (2, 2, 1, 0),
        # The same mutants, expected as dependency: every one is a miss.
        "mislabelled": (2, 0, 1, 2),
        # Only g1 has a login; without it, book fails at position 1: rejected at/after 1.
        "remove-login": (1, 1, 2, 0),
        # Only "bad" fails; login instead of book makes it fully executable (FED 2 = T + 1).
        "login-instead": (1, 1, 2, 0),
    }
    assert report.operators[1].rate == Fraction(0) and report.operators[0].rate == Fraction(1)
    assert report.status is Status.FAIL and report.exit_status == 1 and not report.passed


@pytest.mark.spec("AUDIT-MUTANTS")
def test_mutant_choice_follows_the_seed() -> None:
    long = Trajectory("long", TOOLS, calls("search", "login", "search", "book", "search"))
    candidates = _rename(TOOLS, long.actions, replay(SHOP, TOOLS, long.actions))
    assert len(candidates) == 5
    for seed in range(6):
        expected = random.Random(f"{seed}|long|rename").choice(candidates)
        assert choose(candidates, seed, "long", "rename") == expected
        report = run_audit(shop_plan((long,), RENAME), seed=seed)
        assert report.operators[0].made == 1 and report.operators[0].caught == 1
    assert len({choose(candidates, s, "long", "rename").position for s in range(20)}) > 1


@pytest.mark.spec("AUDIT-MUTANTS", "AUDIT-PLAN")
def test_operators_and_plans_are_checked() -> None:
    def beyond(
        task: frozenset[str], actions: tuple[Action, ...], outcome: Outcome
    ) -> list[Mutant[frozenset[str]]]:
        return [Mutant(task, actions, outcome.fed, "at the failing call")]

    with pytest.raises(ValueError, match="outside the accepted prefix"):
        run_audit(shop_plan(GOLD, Operator("beyond", "", Expect.LABEL, beyond, Label.SCHEMA)))
    with pytest.raises(ValueError, match="exactly when expect is LABEL"):
        Operator("x", "", Expect.AT_OR_AFTER, beyond, Label.SCHEMA)
    with pytest.raises(ValueError, match="exactly when expect is LABEL"):
        Operator("x", "", Expect.LABEL, beyond)
    with pytest.raises(ValueError, match="no_gold"):
        AuditPlan(adapter="toy", source="", semantics=SHOP)


@pytest.mark.spec("AUDIT-REPORT")
def test_report_text_and_json() -> None:
    good = run_audit(shop_plan(GOLD[:2], RENAME, REMOVE_LOGIN), seed=0)
    assert good.status is Status.PASS and good.exit_status == 0
    text = good.render()
    assert "Gold: hand-made" in text and "fully executable 2/2 (100.0%)" in text
    assert "rename               schema at the mutated call" in text
    checked = text.split("Checked:\n")[1].split("Not checked:\n")
    assert "gold replay: 2 trajectories" in checked[0] and "2 mutation operators" in checked[0]
    assert "the toy's own rules" in checked[1] and text.rstrip().endswith("Result: PASS")
    document = good.to_json()
    assert set(document) == {
        "adapter", "source", "seed", "status", "passed", "gold", "no_gold", "bases",
        "operators", "checks", "checked", "not_checked",
    }  # fmt: skip
    assert document["status"] == "pass" and document["gold"]["rate"] == "1"
    assert set(document["operators"][0]) == {
        "operator", "description", "expected", "made", "caught", "rate", "not_applicable", "misses",
    }  # fmt: skip
    bad = run_audit(shop_plan(GOLD, MISLABELLED), seed=0).render()
    assert "mislabelled: mutants not judged as expected (2)" in bad
    assert "g1 call " in bad and "got FED" in bad and "[schema]" in bad
    assert "bad: FED 1 of T 1 [precondition] not logged in" in bad and bad.rstrip().endswith("Result: FAIL")


@pytest.mark.spec("AUDIT-NOTHING", "AUDIT-REPORT")
def test_nothing_checked_report() -> None:
    plan: AuditPlan[Any] = AuditPlan(
        adapter="toy",
        source="nothing",
        semantics=SHOP,
        gold=(),
        gold_kind="hand-made",
        operators=(RENAME,),
        checks=(Check("c", "a check with no item", 0),),
    )
    report = run_audit(plan)
    assert report.status is Status.NOTHING_CHECKED and report.exit_status == 2 and not report.passed
    text = report.render()
    assert "Checked:\n  - nothing\n" in text and text.rstrip().endswith("Result: NOTHING CHECKED")
    assert "gold replay: the input holds no gold trajectory" in text
    assert "operators that found nothing to mutate in this input: rename" in text
    assert "c: nothing in this input to check" in text
    # A check with items makes it an audit again: passing when the check has no failure.
    checked = attrs.evolve(plan, checks=(Check("c", "one item", 1),))
    assert run_audit(checked).status is Status.PASS
    assert run_audit(attrs.evolve(plan, checks=(Check("c", "one item", 1, ("it failed",)),))).exit_status == 1


# --- the command (AUDIT-CLI, AUDIT-NOTHING) ----------------------------------------------------------


@pytest.mark.spec("AUDIT-CLI")
def test_command_finds_each_adapters_audit(capsys: pytest.CaptureFixture[str]) -> None:
    from prefixexec.commands.audit import auditable, find_audit

    assert auditable() == [
        "agents", "atif", "bfcl", "chat", "inspect", "langsmith", "mlflow", "openinference", "otel",
        "records", "taubench", "toolsandbox",
    ]
    # inspect's module is inspect_logs: its audit is found through the registry's field.
    assert ADAPTERS["inspect"].audit is not None and find_audit("inspect") is ADAPTERS["inspect"].audit
    code, out, err = run(["audit", "--adapter", "chat", str(CHAT)], capsys)
    assert code == 0 and out.rstrip().endswith("Result: PASS") and err == ""
    assert "Checked:" in out and "Not checked:" in out


@pytest.mark.spec("AUDIT-CLI")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--adapter", "chat"], "--adapter chat: the chat audit reads transcripts: give FILE..."),
        (["--adapter", "inspect"], "give FILE..."),
        (["--adapter", "taubench"], "give FILE..."),
        (["--adapter", "records"], "give FILE..."),
        (["--adapter", "records", "-"], "the records audit reads files, not standard input"),
        (["--adapter", "bfcl", "results.json"], "results.json: no such file"),
        (["--adapter", "chat", "--cross-check", str(CHAT)], "--cross-check: only applies to --adapter bfcl"),
        (["--adapter", "records", "--category", "base", str(DEMO)], "--category: only applies"),
        (["--adapter", "chat", "nope.jsonl"], "nope.jsonl: no such file"),
    ],
)
def test_command_input_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["audit", *argv], capsys)
    assert code == 2 and out == "" and message in err


@pytest.mark.spec("AUDIT-CLI", "AUDIT-CHAT")
def test_command_bad_input_prints_no_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = CHAT.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "t.jsonl"
    broken.write_text("\n".join([lines[0], '{"task_id": 1', *lines[1:]]) + "\n", encoding="utf-8")
    code, out, err = run(["audit", "--adapter", "chat", str(broken)], capsys)
    assert code == 2 and out == "" and f"{broken}:2: not valid JSON" in err


@pytest.mark.spec("AUDIT-NOTHING", "AUDIT-CLI")
@pytest.mark.parametrize("adapter", ["parquet"])
def test_adapters_without_an_audit(adapter: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["audit", "--adapter", adapter], capsys)
    assert code == 2 and out.rstrip().endswith("Result: NOTHING CHECKED")
    assert "Checked:\n  - nothing" in out and "Not checked:\n  - everything: " in out
    assert "this adapter has no audit" in err
    listed = (
        "agents, atif, bfcl, chat, inspect, langsmith, mlflow, openinference, otel, records, taubench, "
        "toolsandbox"
    )
    assert f"adapters with an audit: {listed}" in err
    code, document = audit_json(["audit", "--adapter", adapter], capsys)
    assert code == 2 and document["status"] == "nothing-checked" and document["checked"] == []


@pytest.mark.spec("AUDIT-NOTHING", "AUDIT-RECORDS")
def test_records_with_outcomes_only_check_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "outcomes.jsonl"
    record = {"dataset": "d", "model": "m", "method": "x", "task_id": 1, "success": True}
    path.write_text(json.dumps({**record, "outcome": {"T": 2, "fed": 3}}) + "\n", encoding="utf-8")
    code, out, err = run(["audit", "--adapter", "records", str(path)], capsys)
    assert code == 2 and "nothing in this input could be checked" in err
    assert "1 records with an already replayed 'outcome'" in out and "Result: NOTHING CHECKED" in out


# --- chat (AUDIT-CHAT) -------------------------------------------------------------------------------


def _raw_chat_calls(line: dict[str, Any]) -> int:
    """Tool calls of one transcript line: OpenAI tool_calls and Anthropic tool_use blocks."""
    count = 0
    for message in line["messages"]:
        count += len(message.get("tool_calls") or [])
        if isinstance(message.get("content"), list):
            count += sum(1 for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_use")
    return count


@pytest.mark.spec("AUDIT-CHAT", "AUDIT-GOLD")
def test_chat_audit_on_the_test_transcripts(capsys: pytest.CaptureFixture[str]) -> None:
    lines = [json.loads(t) for t in CHAT.read_text(encoding="utf-8").splitlines() if t.strip()]
    rollouts = chat.read([str(CHAT)], AdapterOptions())
    # Gold: per line with calls, the calls before the reader's FED (line order = rollout order).
    gold = [min(r.outcome.fed - 1, _raw_chat_calls(line)) for line, r in zip(lines, rollouts, strict=True)]
    gold = [g for g in gold if g > 0]
    code, document = audit_json(["audit", "--adapter", "chat", str(CHAT)], capsys)
    assert code == 0 and document["status"] == "pass"
    assert document["gold"]["trajectories"] == len(gold) and document["gold"]["actions"] == sum(gold)
    assert document["gold"]["fully_executable"] == len(gold) and document["gold"]["findings"] == []
    ops = operators(document)
    assert list(ops) == ["unknown-tool", "arguments-not-json", "drop-required", "wrong-type"]
    for name, o in ops.items():
        assert o["made"] + o["not_applicable"] == len(gold) and o["caught"] == o["made"], name
    # Every accepted call can be renamed and garbled.
    assert ops["unknown-tool"]["made"] == ops["arguments-not-json"]["made"] == len(gold)
    assert ops["drop-required"]["made"] > 0 and ops["wrong-type"]["made"] > 0


@pytest.mark.spec("AUDIT-CHAT", "AUDIT-MUTANTS")
def test_chat_mutants_of_a_hand_made_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
    }
    line = {
        "task_id": "t",
        "model": "m",
        "method": "x",
        "success": True,
        "tools": [{"type": "function", "function": {"name": "forecast", "parameters": schema}}],
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "function": {"name": "forecast", "arguments": '{"city": "Oslo", "days": 3}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "rain"},
        ],
    }
    tools = chat.read_tools(line["tools"], "here")
    found = chat.read_calls(line["messages"], "here")
    task = chat.ChatTask(tuple(found), tools, False)
    actions = tuple(c.action for c in found)
    outcome = replay(chat.SEMANTICS, task, actions)
    assert outcome.fully_executable
    made = {o.name: o.make(task, actions, outcome) for o in chat.AUDIT_OPERATORS}
    (drop,) = made["drop-required"]
    (wrong,) = made["wrong-type"]
    # The last supplied required argument is dropped; the first typed argument gets another type.
    assert isinstance(drop.actions[0], ToolCall) and isinstance(wrong.actions[0], ToolCall)
    assert dict(drop.actions[0].arguments) == {"city": "Oslo"}
    assert dict(wrong.actions[0].arguments) == {"city": 12345, "days": 3}
    (garbled,) = made["arguments-not-json"]
    assert garbled.task.calls[0].arguments_error is not None
    assert garbled.task.calls[0].arguments_error.startswith("arguments are not valid JSON")
    for mutants in made.values():
        (m,) = mutants
        got = replay(chat.SEMANTICS, m.task, m.actions)
        assert (got.fed, got.label) == (1, Label.SCHEMA)
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code, document = audit_json(["audit", "--adapter", "chat", str(path)], capsys)
    assert code == 0 and [o["made"] for o in document["operators"]] == [1, 1, 1, 1]


@pytest.mark.spec("AUDIT-CHAT", "AUDIT-CLI")
def test_chat_audit_fails_when_schemas_are_not_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(chat.semantics, "schema_violation", lambda tool, arguments, where: None)
    code, document = audit_json(["audit", "--adapter", "chat", str(CHAT)], capsys)
    ops = operators(document)
    assert code == 1 and document["status"] == "fail"
    assert ops["unknown-tool"]["caught"] == ops["unknown-tool"]["made"]
    for name in ("drop-required", "wrong-type"):
        assert ops[name]["made"] > 0 and ops[name]["caught"] == 0
        assert len(ops[name]["misses"]) == ops[name]["made"]
        assert all("got fully executable" in m for m in ops[name]["misses"])


# --- inspect (AUDIT-INSPECT) -------------------------------------------------------------------------


def _raw_inspect_gold(log: dict[str, Any]) -> list[int]:
    """Per sample with calls: how many calls precede the first one with a parse error or an error."""
    gold = []
    for sample in log["samples"]:
        results = {m.get("tool_call_id"): m for m in sample["messages"] if m["role"] == "tool"}
        accepted = 0
        calls = [c for m in sample["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        offered = {
            t["name"]
            for e in sample.get("events", [])
            if e.get("event") == "model"
            for t in e.get("tools") or []
        }
        for call in calls:
            answer = results.get(call["id"])
            if (
                call.get("parse_error")
                or answer is None
                or answer.get("error")
                or call["function"] not in offered
            ):
                break
            accepted += 1
        if accepted:
            gold.append(accepted)
    return gold


@pytest.mark.spec("AUDIT-INSPECT", "AUDIT-GOLD")
@pytest.mark.parametrize("name", ["tiny_tools.eval", "tiny_tools.json"])
def test_inspect_audit_on_the_test_logs(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    if name.endswith(".json"):
        samples = json.loads((INSPECT / name).read_text(encoding="utf-8"))["samples"]
    else:  # the archive's members decompressed (zstd), then read as plain JSON here
        archive = inspect_logs.EvalArchive(INSPECT / name)
        samples = [archive.json(n) for n in archive.names if n.startswith("samples/")]
        archive.close()
    gold = _raw_inspect_gold({"samples": samples})
    code, document = audit_json(["audit", "--adapter", "inspect", str(INSPECT / name)], capsys)
    assert code == 0 and document["status"] == "pass"
    assert document["gold"]["trajectories"] == len(gold) and document["gold"]["actions"] == sum(gold)
    ops = operators(document)
    assert list(ops) == [
        "unknown-tool", "arguments-not-json", "validation-error", "file-not-found", "permission", "timeout",
    ]  # fmt: skip
    expected = [o["expected"] for o in document["operators"]]
    assert expected == [f"{label} at the mutated call" for label in (
        "schema", "schema", "schema", "dependency", "precondition", "state_consistency",
    )]  # fmt: skip
    for o in ops.values():
        assert o["made"] == len(gold) and o["caught"] == o["made"]


@pytest.mark.spec("AUDIT-INSPECT")
def test_inspect_audit_fails_with_a_wrong_error_label(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = {**inspect_logs.ERROR_LABELS, "file_not_found": None}
    monkeypatch.setattr(inspect_logs.semantics, "ERROR_LABELS", labels)
    code, document = audit_json(["audit", "--adapter", "inspect", str(INSPECT / "tiny_tools.eval")], capsys)
    ops = operators(document)
    assert code == 1 and ops["file-not-found"]["caught"] == 0 and ops["file-not-found"]["made"] > 0
    assert all("[unlabelled]" in m for m in ops["file-not-found"]["misses"])
    assert ops["permission"]["caught"] == ops["permission"]["made"]


# --- tau-bench (AUDIT-TAU) ---------------------------------------------------------------------------


def _raw_tau(record: dict[str, Any]) -> tuple[int, bool | None]:
    """(calls, first call accepted?) of a v1 record, by the first tool call of each assistant message."""
    first: str | None = None
    count = 0
    accepted: bool | None = None
    for message in record["traj"]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            if message["tool_calls"][0].get("function") is None:
                continue
            count += 1
            if first is None:
                first = message["tool_calls"][0]["id"]
        elif message["role"] == "tool" and first is not None and accepted is None:
            if message["tool_call_id"] == first:
                content = message["content"]
                accepted = not (content.startswith("Error") or content.startswith("Unknown action"))
    return count, accepted


@pytest.fixture(scope="module")
def tau_raw() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(TAU.read_text(encoding="utf-8"))
    return data


@pytest.mark.spec("AUDIT-TAU")
def test_taubench_audit_on_the_v1_fixture(
    tau_raw: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    shapes = [_raw_tau(r) for r in tau_raw]
    no_calls = sum(1 for n, _ in shapes if n == 0)
    bases = sum(1 for n, first in shapes if n > 0 and first)
    code, document = audit_json(["audit", "--adapter", "taubench", str(TAU)], capsys)
    assert code == 0 and document["status"] == "pass"
    assert document["gold"] is None and "environment" in document["no_gold"]
    assert any(line.startswith("state replay") for line in document["not_checked"])
    checks = {c["check"]: (c["checked"], c["failures"]) for c in document["checks"]}
    assert checks == {
        "no-tool-rule": (no_calls, []),
        "gold-recording": (len(tau_raw), []),
        "outcome-recording": (len(tau_raw) - no_calls, []),
    }
    # 18 rollouts without a call (as test_taubench.py reads them); every first call was accepted.
    assert no_calls == 18 and bases == 182 and document["bases"]["trajectories"] == bases
    ops = operators(document)
    assert list(ops) == ["unanswered", "unknown-action", "invented-id", "seen-id"]
    for name, o in ops.items():
        assert o["caught"] == o["made"] and o["made"] + o["not_applicable"] == bases, name
    assert ops["unanswered"]["made"] == ops["unknown-action"]["made"] == ops["invented-id"]["made"] == bases
    assert ops["seen-id"]["made"] > 0


@pytest.mark.spec("AUDIT-TAU")
def test_taubench_audit_fails_when_labels_are_wrong(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        taubench.semantics,
        "classify",
        lambda message, arguments, seen, rules, id_prefixes, tool=None: ((Label.STATE_CONSISTENCY,), ""),
    )
    code, document = audit_json(["audit", "--adapter", "taubench", str(TAU)], capsys)
    ops = operators(document)
    assert code == 1
    assert ops["unanswered"]["caught"] == ops["unanswered"]["made"] > 0  # not labelled by classify
    for name in ("unknown-action", "invented-id", "seen-id"):
        assert ops[name]["made"] > 0 and ops[name]["caught"] == 0, name


@pytest.mark.spec("AUDIT-TAU")
def test_taubench_gold_recording_check(
    tau_raw: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tau_raw[0]
    other = json.loads(json.dumps(first))
    other["trial"] = first["trial"] + 100
    other["info"]["task"]["actions"] = other["info"]["task"]["actions"][:-1]
    other["info"]["reward_info"]["actions"] = [{"name": "get_user_details", "kwargs": {"user_id": "x"}}]
    path = tmp_path / "gpt-4o-airline.json"
    path.write_text(json.dumps([first, other]), encoding="utf-8")
    code, document = audit_json(["audit", "--adapter", "taubench", str(path)], capsys)
    (gold,) = [c for c in document["checks"] if c["check"] == "gold-recording"]
    assert code == 1 and gold["checked"] == 2 and len(gold["failures"]) == 2
    assert "info.reward_info.actions differ from info.task.actions" in gold["failures"][0]
    assert "gold actions differ from those of" in gold["failures"][1]


@pytest.mark.spec("AUDIT-TAU")
def test_taubench_no_tool_rule_check(
    tau_raw: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # If the reader counted no gold action for any task, a no-call rollout would get FED 2; the
    # audit recounts the gold from the file and reports every no-call rollout whose task has gold.
    with_gold = sum(
        1
        for r in tau_raw
        if _raw_tau(r)[0] == 0 and any(a["name"] != "respond" for a in r["info"]["task"]["actions"])
    )
    monkeypatch.setattr(taubench.reader, "gold_count_v1", lambda task, where: 0)
    code, document = audit_json(["audit", "--adapter", "taubench", str(TAU)], capsys)
    (rule,) = [c for c in document["checks"] if c["check"] == "no-tool-rule"]
    assert code == 1 and with_gold > 0 and len(rule["failures"]) == with_gold
    assert all("expected FED 1, got T 1 FED 2" in f for f in rule["failures"])


# --- records (AUDIT-RECORDS) -------------------------------------------------------------------------


@pytest.mark.spec("AUDIT-RECORDS")
def test_records_audit_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    raw = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    with_actions = [r for r in raw if "actions" in r]
    nonempty = [r["actions"] for r in with_actions if r["actions"]]
    code, document = audit_json(["audit", "--adapter", "records", str(DEMO)], capsys)
    assert code == 0 and document["status"] == "pass" and document["gold"] is None
    assert document["checks"] == [
        {
            "check": "eq1-recorded",
            "description": document["checks"][0]["description"],
            "checked": len(with_actions),
            "failures": [],
        }
    ]
    ops = operators(document)
    assert document["bases"]["trajectories"] == len(nonempty)
    # flip-to-rejected needs an accepted first action; flip-to-accepted a rejected one anywhere.
    assert ops["flip-to-rejected"]["made"] == sum(1 for a in nonempty if a[0]["executable"])
    assert ops["flip-to-accepted"]["made"] == sum(1 for a in nonempty if not all(x["executable"] for x in a))
    assert all(o["caught"] == o["made"] > 0 for o in ops.values())
    outcome_only = len(raw) - len(with_actions)
    assert f"{outcome_only} records with an already replayed 'outcome'" in " ".join(document["not_checked"])


@pytest.mark.spec("AUDIT-RECORDS", "AUDIT-MUTANTS")
def test_flip_to_accepted_moves_fed_to_the_next_rejection() -> None:
    verdicts = (
        records.RecordedVerdict(True),
        records.RecordedVerdict(False, (Label.SCHEMA,)),
        records.RecordedVerdict(True),
        records.RecordedVerdict(False, (Label.PRECONDITION,)),
    )
    task = records.RecordedTask(verdicts, False)
    actions = calls("a", "b", "c", "d")
    outcome = replay(records.RECORDED, task, actions)
    assert (outcome.fed, outcome.label) == (2, Label.SCHEMA)
    flip_rejected, flip_accepted = records.AUDIT_OPERATORS
    (mutant,) = flip_accepted.make(task, actions, outcome)
    # By hand: with call 2 accepted, the next recorded rejection is call 4.
    assert (mutant.position, mutant.expected_fed) == (2, 4)
    assert replay(records.RECORDED, mutant.task, mutant.actions).fed == 4
    (only,) = flip_rejected.make(task, actions, outcome)  # only call 1 precedes FED 2
    got = replay(records.RECORDED, only.task, only.actions)
    assert (only.position, got.fed, got.label) == (1, 1, Label.DEPENDENCY)  # tie-break: dependency first


@pytest.mark.spec("AUDIT-RECORDS")
def test_records_audit_fails_with_a_semantics_that_drops_labels(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Unlabelled(records.RecordedSemantics):
        def step(self, state: Any, action: Action) -> Any:
            verdict = super().step(state, action)
            return Rejected((), verdict.reason) if isinstance(verdict, Rejected) else verdict

    monkeypatch.setattr(records, "RECORDED", Unlabelled())
    raw = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    # Records whose first rejected action carries a label: the reader now gives them none.
    first_rejected = [next((a for a in r.get("actions", []) if not a["executable"]), None) for r in raw]
    labelled = sum(1 for a in first_rejected if a is not None and "label" in a)
    code, document = audit_json(["audit", "--adapter", "records", str(DEMO)], capsys)
    (check,) = document["checks"]
    ops = operators(document)
    assert code == 1 and labelled > 0 and len(check["failures"]) == labelled
    assert ops["flip-to-rejected"]["caught"] == 0 and ops["flip-to-rejected"]["made"] > 0
    assert all("label None" in f for f in check["failures"])
