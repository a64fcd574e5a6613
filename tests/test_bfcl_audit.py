"""``prefixexec audit`` and the BFCL audit: gold, mutants, cross-check with BFCL's own code.

Spec: AUDIT-CLI, BFCL-AUDIT, BFCL-MUTANTS, BFCL-CROSSCHECK, BFCL-DIFF. The per-category gold
numbers and the five findings were read in the benchmark's data by hand (see
tests/test_bfcl.py); mutant counts that can be computed from the raw data without the adapter
are computed here from the JSON files with a separate loop.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from fractions import Fraction
from importlib import resources
from typing import Any

import pytest

from prefixexec.adapters import AdapterOptions, bfcl
from prefixexec.adapters.bfcl import backend, reference
from prefixexec.adapters.bfcl.operators import OPERATORS, BfclAuditReport, mutants, run_audit
from prefixexec.adapters.bfcl.parse import decode_step
from prefixexec.adapters.bfcl.reference import CrossCheck, cross_check
from prefixexec.cli import main
from prefixexec.kernel import Label


@pytest.fixture(scope="module")
def report() -> BfclAuditReport:
    return run_audit(AdapterOptions(extra={"seed": 0}))


def _raw(name: str) -> list[dict[str, Any]]:
    text = resources.files("bfcl_eval").joinpath("data", name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _names(calls: list[str]) -> Iterator[ast.Call]:
    for call in calls:
        node = ast.parse(call, mode="eval").body
        assert isinstance(node, ast.Call)
        yield node


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif value is not None and not isinstance(value, bool):
        yield str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _said(text: str, value: str) -> bool:
    # Case-folded, runs of whitespace as one space (the spec's normalisation; the data has values
    # with newlines that the user message writes with spaces, e.g. miss_param_15's table).
    value, text = " ".join(value.casefold().split()), " ".join(text.casefold().split())
    return bool(value) and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None


def _first_mentioned(calls: list[str], question: list[list[dict[str, str]]], turn: int) -> bool:
    """Whether an argument value of ``calls`` is said in turn ``turn``'s user message and not before."""
    said = " ".join(m["content"] for m in question[turn] if m["role"] == "user")
    before = " ".join(m["content"] for t in question[:turn] for m in t if m["role"] == "user")
    values = [
        leaf
        for node in _names(calls)
        for arg in [*node.args, *(k.value for k in node.keywords)]
        for leaf in _leaves(ast.literal_eval(arg))
    ]
    return any(_said(said, v) and not _said(before, v) for v in values)


def _values(call: str) -> list[str]:
    node = next(_names([call]))
    arguments = [*node.args, *(k.value for k in node.keywords)]
    return [leaf for arg in arguments for leaf in _leaves(ast.literal_eval(arg))]


@pytest.mark.spec("BFCL-AUDIT")
def test_gold_audit_per_category(report: BfclAuditReport) -> None:
    table = {c.category: (c.tasks, c.gold_calls, c.TER, c.success) for c in report.categories}
    # Tasks and gold calls per category: counted from the raw files by the note's loop
    # (1142 + 1140 + 1140 + 1203 = 4,625); TER: the five findings of test_bfcl.py.
    assert table == {
        "multi_turn_base": (200, 1142, Fraction(199, 200), Fraction(1)),
        "multi_turn_miss_func": (200, 1140, Fraction(198, 200), Fraction(1)),
        "multi_turn_miss_param": (200, 1140, Fraction(199, 200), Fraction(1)),
        "multi_turn_long_context": (200, 1203, Fraction(199, 200), Fraction(1)),
    }
    findings = {(f.task_id, f.call, f.label) for c in report.categories for f in c.findings}
    assert findings == {
        ("multi_turn_miss_func_49", "tail(file_name='file3.txt')", "schema"),
        *(
            (f"multi_turn_{c}_173", "close_ticket(ticket_id='ticket_001')", "schema")
            for c in ("base", "miss_func", "miss_param", "long_context")
        ),
    }
    assert report.unclassified == ()
    assert report.passed


@pytest.mark.spec("BFCL-MUTANTS")
def test_mutants_are_rejected_where_and_as_expected(report: BfclAuditReport) -> None:
    by_name = {o.name: o for o in report.operators}
    assert list(by_name) == [o.name for o in OPERATORS]
    for operator in report.operators:
        assert operator.made > 0, operator.name
        if operator.required:
            assert operator.as_expected == operator.made and operator.misses == (), operator.name
    # rename: every gold trajectory's first call is accepted, so every one of the 800 gets a mutant.
    assert by_name["rename"].made == 800
    # early-held-out: miss_func tasks with a held-out function (exposed from turn k >= 1) that
    # their gold calls at turn >= k, counted from the raw JSON (198), less miss_func_49, whose
    # gold replay stops at its own fault (call 3) before the insertion point.
    raw = 0
    answers = {g["id"]: g["ground_truth"] for g in _raw("possible_answer/BFCL_v4_multi_turn_miss_func.json")}
    for entry in _raw("BFCL_v4_multi_turn_miss_func.json"):
        gt = answers[entry["id"]]
        raw += any(
            isinstance(node.func, ast.Name) and node.func.id == name
            for k, names in entry["missed_function"].items()
            if int(k) >= 1
            for name in names
            for turn in gt[int(k) :]
            for node in _names(turn)
        )
    assert raw == 198 and by_name["early-held-out"].made == raw - 1
    # withheld-call: miss_param tasks with an empty gold turn k whose next turn's gold calls have
    # an argument value that turn k+1's user message mentions first (BFCL-MISS-PARAM), counted
    # from the raw JSON with a separate loop (ast.literal_eval of each argument, case-folded
    # whole-word search in the user messages): 126 tasks.
    answers = {g["id"]: g["ground_truth"] for g in _raw("possible_answer/BFCL_v4_multi_turn_miss_param.json")}
    questions = {e["id"]: e["question"] for e in _raw("BFCL_v4_multi_turn_miss_param.json")}
    raw = sum(
        any(
            not gt[k] and gt[k + 1] and _first_mentioned(gt[k + 1], questions[tid], k + 1)
            for k in range(len(gt) - 1)
        )
        for tid, gt in answers.items()
    )
    assert raw == 126
    # Of these, a task gets no withheld-call mutant when every value its next turn gives first
    # already occurs in a result of the gold calls before (BFCL-MISS-PARAM: a value an earlier
    # tool result holds is grounded). Counted with BFCL's own executor on the gold turns 0..k
    # (trusted input) and the same whole-word search in its results: 6 tasks (3, 14, 33, 45,
    # 146, 196), so 120 mutants.
    first = {
        tid: next(
            k
            for k in range(len(gt) - 1)
            if not gt[k] and gt[k + 1] and _first_mentioned(gt[k + 1], questions[tid], k + 1)
        )
        for tid, gt in answers.items()
        if any(
            not gt[k] and gt[k + 1] and _first_mentioned(gt[k + 1], questions[tid], k + 1)
            for k in range(len(gt) - 1)
        )
    }
    replies = reference.reference_results(
        [(tid, answers[tid][: k + 1] + [[]] * (len(answers[tid]) - k - 1)) for tid, k in first.items()]
    )
    grounded = set()
    for (tid, k), reply in zip(first.items(), replies, strict=True):
        said = " ".join(m["content"] for m in questions[tid][k + 1] if m["role"] == "user")
        before = " ".join(m["content"] for t in questions[tid][: k + 1] for m in t if m["role"] == "user")
        seen = " ".join(text for turn in reply["results"] for text in turn)
        if not any(
            _said(said, v) and not _said(before, v) and not _said(seen, v)
            for call in answers[tid][k + 1]
            for v in _values(call)
        ):
            grounded.add(tid.removeprefix("multi_turn_miss_param_"))
    assert grounded == {"3", "14", "33", "45", "146", "196"}
    assert by_name["withheld-call"].made == raw - len(grounded) == 120
    remove = by_name["remove-state"]
    assert remove.as_expected + len(remove.executable) == remove.made and remove.misses == ()


@pytest.mark.spec("BFCL-MUTANTS")
def test_mutant_positions_follow_the_seed() -> None:
    bt = bfcl.task("multi_turn_base_0")
    first = mutants(bt, 11, seed=0)
    assert mutants(bt, 11, seed=0) == first
    assert {m.operator for m in first} >= {
        "rename",
        "drop-required",
        "wrong-type",
        "bad-reference",
        "remove-state",
    }
    assert any(mutants(bt, 11, seed=s) != first for s in range(1, 6))
    # Only positions the gold replay accepts: with gold FED 2 only call 1 may be mutated.
    assert all(m.position == 1 for m in mutants(bt, 2, seed=0) if m.operator in {"rename", "wrong-type"})


@pytest.mark.spec("AUDIT-CLI", "BFCL-AUDIT")
def test_audit_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--adapter", "bfcl", "--category", "miss_func"]) == 0
    out, _ = capsys.readouterr()
    assert "multi_turn_miss_func       200       1140  0.990 (198/200)   1.000 (200/200)" in out
    # BFCL-TURNS: the second turn (index 1 in BFCL's data) is turn 2
    assert "multi_turn_miss_func_49  turn 2  call 3  tail(file_name='file3.txt')" in out
    assert "Checked:" in out and "Not checked:" in out and out.rstrip().endswith("Result: PASS")
    assert main(["audit", "--adapter", "bfcl", "--category", "base", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["passed"] is True and document["categories"][0]["TER"] == "199/200"
    assert main(["audit", "--adapter", "parquet"]) == 2
    err = capsys.readouterr().err
    assert "this adapter has no audit" in err and "bfcl, " in err.split("adapters with an audit: ")[1]
    assert main(["audit", "--adapter", "bfcl", "--category", "nope"]) == 2
    assert "unknown BFCL multi-turn category" in capsys.readouterr().err


@pytest.mark.spec("AUDIT-CLI")
def test_audit_exit_status_reports_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from prefixexec.adapters.bfcl import operators as _bfcl_audit

    # Make every mutant of an operator miss (expect a label replay never gives it): exit 1.
    broken = tuple(
        _bfcl_audit.Operator(o.name, o.description, Label.INFORMATION, o.make) if o.name == "rename" else o
        for o in _bfcl_audit.OPERATORS
    )
    monkeypatch.setattr(_bfcl_audit, "OPERATORS", broken)
    assert main(["audit", "--adapter", "bfcl", "--category", "base"]) == 1
    out = capsys.readouterr().out
    assert "rename: mutants not rejected as expected (200)" in out and "Result: FAIL" in out


# --- cross-check with BFCL's own executor and checker (BFCL-CROSSCHECK) -----------------------------


@pytest.mark.slow
@pytest.mark.spec("BFCL-CROSSCHECK")
def test_cross_check_with_bfcls_own_executor_and_checker() -> None:
    # All 800 gold trajectories and the mutants of every fifth task of each category.
    variants: list[tuple[str, tuple[tuple[str, ...], ...], str]] = []
    for category in backend.CATEGORIES:
        for index, (task_id, entry) in enumerate(backend.entries(category).items()):
            variants.append((task_id, entry.gold, "gold"))
            if index % 5 == 0:
                fed = bfcl.replay_calls(task_id, entry.gold, success=False).outcome.fed
                variants += [(task_id, m.turns, m.operator) for m in mutants(bfcl.task(task_id), fed, seed=0)]
    result = cross_check(variants)
    assert result.variants == len(variants) and result.calls > 4625
    assert result.agrees, result.render_lines()[:20]
    # The gold trajectories replayed as fully executable: 800 less the five findings.
    assert result.executable_confirmed >= 795


@pytest.mark.spec("BFCL-CROSSCHECK")
def test_cross_check_notices_differences(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefixexec.adapters.bfcl import reference as _bfcl_reference

    task_id = "multi_turn_base_1"
    turns = bfcl.gold_turns(task_id)
    (reference,) = _bfcl_reference.reference_results([(task_id, turns)])
    assert reference["valid"] is True and len([r for t in reference["results"] for r in t]) == 6

    def altered(variants: Any) -> list[dict[str, Any]]:
        changed = json.loads(json.dumps(reference))
        changed["results"][3][0] = "something else"
        changed["valid"] = False
        changed["state"]["GorillaFileSystem"] = {}
        return [changed]

    # Only plain literal calls ever reach BFCL's eval-based executor.
    with pytest.raises(ValueError, match="plain literal calls only"):
        _bfcl_reference.reference_results([(task_id, [["ls(a=__import__('os').getpid())"]])])
    monkeypatch.setattr(_bfcl_reference, "reference_results", altered)
    result: CrossCheck = cross_check([(task_id, turns, "gold")])
    kinds = sorted(d.what.split(":")[0].split(" ")[0] for d in result.differences)
    assert not result.agrees and kinds == ["call", "final", "success"]


@pytest.mark.spec("BFCL-DIFF", "BFCL-CROSSCHECK")
def test_deliberate_difference_bare_names_are_not_executed() -> None:
    # BFCL's decoder reads `cd(folder=workspace)` as cd(folder='workspace') and runs it; here
    # the bare name is not a literal: schema, not executed, so pwd stays at the root.
    path = ["[cd(folder=workspace)]", "[pwd()]"]
    run = bfcl.make_run(
        bfcl.task("multi_turn_base_1"),
        [[decode_step(s, function_calling=False) for s in path], [], [], []],
    )
    evaluation = bfcl.evaluate(run, success=False, execute_all=True)
    assert evaluation.outcome.label is Label.SCHEMA and not evaluation.records[0].executed
    assert evaluation.records[1].result == json.dumps({"current_working_directory": "/alex"})
