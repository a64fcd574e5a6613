"""Write the conformance vectors of spec/vectors/ (spec: CONF-VECTORS, CONF-COVERAGE).

Usage: python spec/vectors/generate.py [--out DIR]   (default: the folder of this script)

The inputs are the hand-written edge cases and the paper's worked example below, and RANDOM
cases drawn with ``random.Random(SEED)``. Each ``expected`` is the condition object that
``prefixexec score --json`` prints for the vector's records, computed here with the package's
library (record reader -> ``prefixexec.inference.evaluate`` -> ``condition_json``). Because that is the
scorer under test, tests/test_conformance.py checks the edge cases and the paper example
against hand computations and every vector against the loop-by-loop transcription
tests/naive.py. Running the script again must give byte-identical files (a test checks it).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from prefixexec.conformance import Vector, triple_records, vector_rollouts
from prefixexec.inference import evaluate
from prefixexec.scoring import condition_json

SEED = 20260209
RANDOM = 300
LABELS = ["schema", "dependency", "precondition", "state_consistency", "information"]
TOOLS = ["search", "book", "login", "cd", "ls", "send_message", "get_balance", "cancel"]


def _exec(tool: str = "search") -> dict[str, Any]:
    return {"tool": tool, "executable": True}


def _fail(tool: str, label: str | list[str] | None, reason: str | None = None) -> dict[str, Any]:
    action: dict[str, Any] = {"tool": tool, "executable": False}
    if label is not None:
        action["label"] = label
    if reason is not None:
        action["reason"] = reason
    return action


def _rec(task: str | int, success: bool, trial: int | None = None, **body: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "dataset": "conformance",
        "model": "vector",
        "method": "records",
        "task_id": task,
        "success": success,
    }
    if trial is not None:
        record["trial"] = trial
    record.update(body)
    return record


# ---------------------------------------------------------------------------------------------
# Hand-written edge cases (their expected values are checked by hand in tests/test_conformance.py)

EDGE: list[tuple[str, str, dict[str, Any]]] = [
    ("edge-n1", "N = 1: one rollout failing at depth 2 of 3, successful", {"triples": [[3, 2, 1]]}),
    (
        "edge-n1-executable",
        "N = 1: one fully executable rollout of horizon 1 that fails the task (s = 0, RR undefined)",
        {"triples": [[1, 2, 0]]},
    ),
    (
        "edge-no-eligible",
        "no RR-eligible rollout: every rollout fully executable, mixed horizons and successes",
        {"triples": [[2, 3, 1], [5, 6, 0], [1, 2, 1]]},
    ),
    (
        "edge-all-executable",
        "all executable and successful under a common horizon T = 4 (TER = PEC(4) = AUC = 1)",
        {"triples": [[4, 5, 1]] * 5},
    ),
    (
        "edge-all-fail-depth1",
        "every rollout fails at depth 1 (PEC = 0, AUC = 0, mean FED = 1, s undefined)",
        {"triples": [[1, 1, 0], [3, 1, 1], [5, 1, 0], [2, 1, 1]]},
    ),
    (
        "edge-notool-allowed",
        "rollouts ending before any tool call on tasks that allow it (no-tool action: T = 1, FED = 2)",
        {
            "records": [
                _rec("t1", True, actions=[], no_tool_allowed=True),
                _rec("t2", False, actions=[], no_tool_allowed=True),
                _rec("t3", True, actions=[_exec("search"), _exec("book")]),
            ]
        },
    ),
    (
        "edge-notool-refused",
        "rollouts ending before any tool call on tasks that require tools (T = 1, FED = 1, unlabelled)",
        {
            "records": [
                _rec("t1", False, actions=[]),
                _rec("t2", True, actions=[], no_tool_allowed=False),
                _rec(
                    "t3", False, actions=[_exec("login"), _fail("book", "schema", "unknown argument 'when'")]
                ),
            ]
        },
    ),
    (
        "edge-t1-everywhere",
        "horizon T = 1 for every rollout (PEC has one depth; TER = PEC(1) = AUC-PEC)",
        {"triples": [[1, 2, 1], [1, 1, 0], [1, 2, 0], [1, 1, 1], [1, 2, 1]]},
    ),
    (
        "edge-long-horizon",
        "very long horizons (T up to 1000): curves over 1000 depths, AUC-PEC with large denominators",
        {"triples": [[1000, 1001, 1], [997, 500, 0], [400, 401, 1], [1, 1, 0]]},
    ),
    (
        "edge-trials",
        "several trials per task (task a: trials 0-2, task b: trials 0-1); each trial is one rollout",
        {
            "records": [
                _rec("a", True, 0, outcome={"T": 3, "fed": 4}),
                _rec("a", False, 1, outcome={"T": 3, "fed": 2, "label": "precondition"}),
                _rec("a", True, 2, outcome={"T": 2, "fed": 1, "label": "schema"}),
                _rec("b", False, 0, outcome={"T": 5, "fed": 6}),
                _rec("b", True, 1, outcome={"T": 4, "fed": 3}),
            ]
        },
    ),
    (
        "edge-label-ties",
        "first-failure labels with ties, resolved in the order schema, dependency, precondition, "
        "state_consistency, information; actions after the first rejection are not replayed",
        {
            "records": [
                _rec(
                    "t1", True, actions=[_exec(), _fail("book", ["information", "dependency"]), _exec("book")]
                ),
                _rec("t2", False, actions=[_fail("cd", ["state_consistency", "precondition", "schema"])]),
                _rec(
                    "t3",
                    False,
                    actions=[_exec(), _exec("ls"), _fail("cd", ["information", "state_consistency"])],
                ),
                _rec(
                    "t4",
                    True,
                    actions=[_fail("login", "information", "user id not given"), _fail("login", "schema")],
                ),
                _rec("t5", False, actions=[_exec(), _fail("cancel", None, "rejected without a reason code")]),
                _rec("t6", True, actions=[_exec(), _exec("book")]),
                _rec("t7", False, actions=[_fail("send_message", ["precondition", "precondition"])]),
            ]
        },
    ),
    (
        "edge-pec-elig-nonmonotone",
        "the eligible-depth curve rises while PEC falls (short failing rollouts leave the eligible set)",
        {"triples": [[1, 1, 0], [1, 1, 0], [1, 1, 0], [2, 3, 1]]},
    ),
]


def _paper_example() -> list[list[int]]:
    # Paper, section 3.1: BFCL multi-turn, Llama-4 Maverick, Plan-Conditioned ReAct. 200 rollouts,
    # 10 fully executable and all successful, 138 of the 190 failing ones successful. Horizons are
    # not given; T = 6 with failures at depths 1..6 in turn (TER, RR and success do not depend on it).
    executable = [[6, 7, 1]] * 10
    failing = [[6, 1 + i % 6, int(i < 138)] for i in range(190)]
    return executable + failing


PAPER = (
    "paper-worked-example",
    "the paper's worked example (section 3.1, BFCL, Llama-4 Maverick, Plan-Conditioned ReAct): "
    "N = 200, 10 fully executable and successful, 138 of 190 failing rollouts successful; horizons "
    "T = 6 chosen here (the paper does not give them)",
    {"triples": _paper_example()},
)


# ---------------------------------------------------------------------------------------------
# Random cases


def _random_triples(rng: random.Random) -> tuple[str, list[list[int]]]:
    n = 1 if rng.random() < 0.05 else rng.randint(1, 40)
    style = rng.choice(["short", "medium", "long", "common"])
    max_t = {"short": 4, "medium": 12, "long": 40, "common": rng.randint(1, 15)}[style]
    p_full, p_y_full, p_y_fail = rng.random(), rng.random(), rng.random()
    triples = []
    for _ in range(n):
        T = max_t if style == "common" else rng.randint(1, max_t)
        full = rng.random() < p_full
        fed = T + 1 if full else rng.randint(1, T)
        y = int(rng.random() < (p_y_full if full else p_y_fail))
        triples.append([T, fed, y])
    return f"N = {n}, {style} horizons (max {max_t})", triples


def _random_labels(rng: random.Random) -> str | list[str] | None:
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.65:
        return rng.choice(LABELS)
    return [rng.choice(LABELS) for _ in range(rng.randint(1, 3))]


def _random_record(rng: random.Random, task: str | int, trial: int | None) -> dict[str, Any]:
    y = rng.random() < 0.5
    kind = rng.random()
    if kind < 0.15:
        body: dict[str, Any] = {"actions": []}
        if rng.random() < 0.7:
            body["no_tool_allowed"] = rng.random() < 0.5
        return _rec(task, y, trial, **body)
    T = rng.randint(1, 8)
    fed = T + 1 if rng.random() < 0.4 else rng.randint(1, T)
    if kind < 0.5:
        outcome: dict[str, Any] = {"T": T, "fed": fed}
        if fed <= T:
            label = _random_labels(rng)
            if label is not None:
                outcome["label"] = label
            if rng.random() < 0.3:
                outcome["reason"] = "recorded elsewhere"
        return _rec(task, y, trial, outcome=outcome)
    actions: list[dict[str, Any]] = []
    for t in range(1, T + 1):
        tool = rng.choice(TOOLS)
        if t < fed:
            action = _exec(tool)
        elif t == fed:
            action = _fail(tool, _random_labels(rng), "rejected" if rng.random() < 0.5 else None)
        else:  # after the first rejection: any verdict, never replayed
            action = _exec(tool) if rng.random() < 0.5 else _fail(tool, _random_labels(rng))
        if rng.random() < 0.3:
            action["arguments"] = {"x": rng.randint(0, 9)}
        actions.append(action)
    return _rec(task, y, trial, actions=actions)


def _random_records(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    n_tasks = rng.randint(1, 15)
    max_trials = rng.choice([1, 1, 2, 3])
    integer_ids = rng.random() < 0.25
    records = []
    for j in range(n_tasks):
        task: str | int = j * 7 + 3 if integer_ids else f"task-{j}"
        trials = rng.randint(1, max_trials)
        for trial in range(trials):
            records.append(_random_record(rng, task, trial if max_trials > 1 or rng.random() < 0.3 else None))
    rng.shuffle(records)
    return f"{n_tasks} tasks, up to {max_trials} trial(s) each, {len(records)} records", records


# ---------------------------------------------------------------------------------------------
# Writing


def expected_condition(ident: str, body: dict[str, Any]) -> dict[str, Any]:
    """The ``score --json`` condition object of the vector's records (the package's own scorer)."""
    if "triples" in body:
        records, form = triple_records(body["triples"]), "triples"
    else:
        records, form = body["records"], "records"
    vector = Vector(ident, "", f"<{ident}>", tuple(records), {}, form)
    (result,) = evaluate(vector_rollouts(vector), None)
    return condition_json(result.key, result.metrics)


def render(doc: dict[str, Any]) -> str:
    """Deterministic layout: one input row per line, one expected key per line."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))

    lines = ["{"]
    lines.append(f'  "id": {compact(doc["id"])},')
    lines.append(f'  "description": {compact(doc["description"])},')
    key = "triples" if "triples" in doc else "records"
    rows = doc[key]
    lines.append(f'  "{key}": [')
    lines.extend(f"    {compact(r)}" + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows))
    lines.append("  ],")
    lines.append('  "expected": {')
    items = list(doc["expected"].items())
    lines.extend(
        f"    {compact(k)}: {compact(v)}" + ("," if i < len(items) - 1 else "")
        for i, (k, v) in enumerate(items)
    )
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def all_vectors() -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    cases: list[tuple[str, str, dict[str, Any]]] = [*EDGE, PAPER]
    for i in range(1, RANDOM + 1):
        if i % 3 == 0:
            summary, records = _random_records(rng)
            cases.append(
                (f"random-{i:04d}", f"random records case {i} (seed {SEED}): {summary}", {"records": records})
            )
        else:
            summary, triples = _random_triples(rng)
            cases.append(
                (f"random-{i:04d}", f"random triples case {i} (seed {SEED}): {summary}", {"triples": triples})
            )
    return [
        {"id": ident, "description": description, **body, "expected": expected_condition(ident, body)}
        for ident, description, body in cases
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for doc in all_vectors():
        (args.out / f"{doc['id']}.json").write_text(render(doc), encoding="utf-8")


if __name__ == "__main__":
    main()
