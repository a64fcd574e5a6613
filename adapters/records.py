"""The JSONL record format (spec: REC-FORMAT, REC-OUTCOME, REC-UNIQUE, REC-ERRORS).

One JSON object per line; its JSON Schema is ``spec/record.schema.json``. A record carries
either recorded per-action verdicts (``actions``), replayed here through the kernel, or an
already replayed ``outcome``. Reading validates everything before anything is scored.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs
import jsonschema
import jsonschema.exceptions

from prefixexec.kernel import (
    Accepted,
    ConditionKey,
    Label,
    Outcome,
    Rejected,
    Rollout,
    ToolCall,
    parse_label,
    primary_label,
    replay,
)
from prefixexec.kernel.actions import Action, NoToolAction

from .audit import (
    AuditPlan,
    Check,
    Expect,
    GenericAuditReport,
    Mutant,
    Operator,
    Trajectory,
    replace_at,
    run_audit,
    seed_of,
)
from .errors import InputError

if TYPE_CHECKING:
    from . import AdapterOptions

STDIN = "-"


@cache
def record_schema() -> dict[str, Any]:
    """The record JSON Schema shipped with the package (identical to spec/record.schema.json)."""
    text = (
        resources.files("prefixexec.adapters")
        .joinpath("schemas/record.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> jsonschema.protocols.Validator:
    schema = record_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


@attrs.frozen(slots=True)
class RecordedVerdict:
    """A verdict recorded in the input: accepted, or rejected with labels and a reason."""

    executable: bool
    labels: tuple[Label, ...] = ()
    reason: str | None = None


@attrs.frozen(slots=True)
class RecordedTask:
    """What the recorded semantics needs of a task: per-action verdicts, no-tool rule."""

    verdicts: tuple[RecordedVerdict, ...]
    no_tool_allowed: bool


class RecordedSemantics:
    """Semantics whose verdicts were recorded by the benchmark: the state is the position.

    The terminal no-tool action is executable iff the record says the task may be completed
    without tools (CONV-NOTOOL); otherwise it is rejected without a label.
    """

    def initial_state(self, task: RecordedTask) -> tuple[RecordedTask, int]:
        return (task, 0)

    def step(
        self, state: tuple[RecordedTask, int], action: Action
    ) -> Accepted[tuple[RecordedTask, int]] | Rejected:
        task, position = state
        if isinstance(action, NoToolAction):
            if task.no_tool_allowed:
                return Accepted((task, position + 1))
            return Rejected((), "terminal no-tool action on a task that requires tools")
        verdict = task.verdicts[position]
        if verdict.executable:
            return Accepted((task, position + 1))
        return Rejected(verdict.labels, verdict.reason)


RECORDED = RecordedSemantics()


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {key!r} appears twice in one object")
        result[key] = value
    return result


def parse_json_line(text: str) -> Any:
    """Parse one JSON document strictly: no NaN/Infinity, no repeated keys in an object."""
    return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant)


def _path(parts: Iterable[object]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "record"


def _labels(value: object) -> tuple[Label, ...]:
    if isinstance(value, str):
        return (parse_label(value),)
    if isinstance(value, list):
        return tuple(parse_label(str(n)) for n in value)
    return ()


def record_to_rollout(record: Mapping[str, Any]) -> Rollout:
    """Turn one schema-valid record into a rollout; raises ``ValueError`` on semantic faults."""
    key = ConditionKey(record["dataset"], record["model"], record["method"])
    task_id = str(record["task_id"])
    trial = int(record.get("trial", 0))
    if "outcome" in record:
        raw = record["outcome"]
        labels = _labels(raw.get("label"))
        T, fed = raw["T"], raw["fed"]
        if not 1 <= fed <= T + 1:
            raise ValueError(f"outcome.fed must be in [1, T+1] = [1, {T + 1}]: {fed}")
        if fed == T + 1 and (labels or "reason" in raw):
            raise ValueError("outcome.label/reason given for a fully executable rollout (fed = T+1)")
        outcome = Outcome(T=T, fed=fed, label=primary_label(labels), reason=raw.get("reason"))
    else:
        verdicts: list[RecordedVerdict] = []
        calls: list[Action] = []
        for index, action in enumerate(record["actions"]):
            if action["executable"] and ("label" in action or "reason" in action):
                raise ValueError(f"actions[{index}]: label/reason given for an executable action")
            verdicts.append(
                RecordedVerdict(action["executable"], _labels(action.get("label")), action.get("reason"))
            )
            calls.append(ToolCall(action["tool"], action.get("arguments", {}), action.get("id")))
        task = RecordedTask(tuple(verdicts), bool(record.get("no_tool_allowed", False)))
        outcome = replay(RECORDED, task, calls)
    meta: dict[str, object] = {}
    if "cost" in record:
        meta["cost"] = dict(record["cost"])
    if "meta" in record:
        meta["meta"] = record["meta"]
    return Rollout(key, task_id, trial, outcome, bool(record["success"]), meta)


def open_lines(path: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file or stdin (``-``); file faults are InputError."""
    if path == STDIN:
        stream: IO[str] = sys.stdin
        yield from enumerate(stream, start=1)
        return
    try:
        with Path(path).open(encoding="utf-8") as handle:
            yield from enumerate(handle, start=1)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a JSONL file") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None


def json_lines(path: str) -> Iterator[tuple[str, Any]]:
    """``("FILE:LINE", document)`` for every non-blank line of a JSONL file (``-``: stdin).

    Each line is parsed strictly (:func:`parse_json_line`); a line that is not JSON is an
    InputError naming the file and line.
    """
    name = "<stdin>" if path == STDIN else path
    for number, line in open_lines(path):
        where = f"{name}:{number}"
        if not line.strip():
            continue
        try:
            yield where, parse_json_line(line)
        except ValueError as exc:
            raise InputError(where, f"not valid JSON: {exc}") from None


def iter_file(path: str) -> Iterator[tuple[str, Rollout]]:
    """Yield ``("FILE:LINE", rollout)`` for every record of one JSONL file, validating each."""
    validator = _validator()
    for where, record in json_lines(path):
        if not isinstance(record, dict):
            raise InputError(where, f"expected a JSON object, got {type(record).__name__}")
        if "actions" in record and "outcome" in record:
            raise InputError(where, "give either 'actions' or 'outcome', not both")
        if "actions" not in record and "outcome" not in record:
            raise InputError(where, "missing field: one of 'actions' or 'outcome' is required")
        error = jsonschema.exceptions.best_match(validator.iter_errors(record))
        if error is not None:
            raise InputError(where, f"at {_path(error.absolute_path)}: {error.message}")
        try:
            rollout = record_to_rollout(record)
        except ValueError as exc:
            raise InputError(where, str(exc)) from None
        yield where, rollout


def unique_rollouts(
    paths: Sequence[str],
    located: Iterable[tuple[str, Rollout]],
    repeated: Callable[[Rollout, str], str],
    nothing: str,
) -> list[Rollout]:
    """The rollouts of ``located`` (``(where, rollout)`` pairs), each key seen once (REC-UNIQUE).

    The key is (condition, task_id, trial). A repeat raises InputError at its place with
    ``repeated(rollout, first_place)``; an input without rollouts raises ``nothing``.
    """
    seen: dict[tuple[ConditionKey, str, int], str] = {}
    rollouts: list[Rollout] = []
    for where, rollout in located:
        key = (rollout.condition, rollout.task_id, rollout.trial)
        if key in seen:
            raise InputError(where, repeated(rollout, seen[key]))
        seen[key] = where
        rollouts.append(rollout)
    if not rollouts:
        raise InputError(", ".join(paths) or "<no input>", nothing)
    return rollouts


def repeated_key_message(key: tuple[str, str, str, str, int], first: str) -> str:
    """The REC-UNIQUE fault for a repeated (dataset, model, method, task_id, trial) key."""
    return f"repeats the key (dataset, model, method, task_id, trial) = {key!r} first seen at {first}"


def _repeated_key(rollout: Rollout, first: str) -> str:
    c = rollout.condition
    return repeated_key_message((c.dataset, c.model, c.method, rollout.task_id, rollout.trial), first)


def read_records(paths: Sequence[str]) -> list[Rollout]:
    """Read and validate every record of ``paths``; raises :class:`InputError` on the first fault.

    The key (dataset, model, method, task_id, trial) must be unique over all files (REC-UNIQUE).
    """
    located = (item for path in paths for item in iter_file(path))
    return unique_rollouts(paths, located, _repeated_key, "no records found")


# ---------------------------------------------------------------------------------------------
# Audit (AUDIT-RECORDS): the recorded verdicts are replayable; mutants flip one of them

#: The tie-break order written out again for the audit's own check (CONV-LABEL-ORDER).
_AUDIT_LABEL_ORDER = ("schema", "dependency", "precondition", "state_consistency", "information")


def _recorded(record: Mapping[str, Any]) -> tuple[RecordedTask, tuple[Action, ...]]:
    verdicts = tuple(
        RecordedVerdict(a["executable"], _labels(a.get("label")), a.get("reason")) for a in record["actions"]
    )
    calls = tuple(ToolCall(a["tool"], a.get("arguments", {}), a.get("id")) for a in record["actions"])
    return RecordedTask(verdicts, bool(record.get("no_tool_allowed", False))), calls


def _expected_outcome(record: Mapping[str, Any]) -> tuple[int, int, str | None]:
    """``(T, FED, primary label)`` of a record by EQ-1 and CONV-NOTOOL, from its raw fields."""
    actions = record["actions"]
    if not actions:
        return 1, (2 if record.get("no_tool_allowed", False) else 1), None
    for k, action in enumerate(actions, start=1):
        if not action["executable"]:
            raw = action.get("label")
            names = [raw] if isinstance(raw, str) else list(raw or [])
            ranked = [n for n in _AUDIT_LABEL_ORDER if n in names]
            return len(actions), k, (ranked[0] if ranked else None)
    return len(actions), len(actions) + 1, None


def _flip_to_rejected(
    task: RecordedTask, actions: tuple[Action, ...], outcome: Outcome
) -> list[Mutant[RecordedTask]]:
    flipped = RecordedVerdict(False, (Label.INFORMATION, Label.DEPENDENCY), "audit: verdict flipped")
    return [
        Mutant(attrs.evolve(task, verdicts=replace_at(task.verdicts, i, flipped)), actions, i + 1, "rejected")
        for i in range(min(outcome.fed - 1, len(actions)))
    ]


def _flip_to_accepted(
    task: RecordedTask, actions: tuple[Action, ...], outcome: Outcome
) -> list[Mutant[RecordedTask]]:
    if not actions or outcome.fully_executable:
        return []
    i = outcome.fed - 1
    verdicts = replace_at(task.verdicts, i, RecordedVerdict(True))
    later = [k for k in range(i + 1, len(verdicts)) if not verdicts[k].executable]
    expected = later[0] + 1 if later else len(verdicts) + 1
    return [Mutant(attrs.evolve(task, verdicts=verdicts), actions, i + 1, "accepted", expected)]


#: The records audit's operators (EQ-1, CONV-LABEL-ORDER).
AUDIT_OPERATORS: tuple[Operator[RecordedTask], ...] = (
    Operator(
        "flip-to-rejected",
        "an accepted verdict recorded as rejected with labels [information, dependency]",
        Expect.LABEL,
        _flip_to_rejected,
        Label.DEPENDENCY,
    ),
    Operator(
        "flip-to-accepted",
        "the first rejected verdict recorded as accepted",
        Expect.FED,
        _flip_to_accepted,
    ),
)


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter records FILE...`` (AUDIT-RECORDS)."""
    if not paths:
        raise InputError("--adapter records", "the records audit reads JSONL records: give FILE...")
    if STDIN in paths:
        raise InputError(STDIN, "the records audit reads files, not standard input")
    read_records(paths)  # validates every record and the uniqueness of the keys
    bases: list[Trajectory[RecordedTask]] = []
    failures: list[str] = []
    replayable = outcomes = 0
    for path in paths:
        for number, line in open_lines(path):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            record = parse_json_line(line)
            if "actions" not in record:
                outcomes += 1
                continue
            replayable += 1
            task, calls = _recorded(record)
            if calls:
                bases.append(Trajectory(where, task, calls))
            got = record_to_rollout(record).outcome
            T, fed, label = _expected_outcome(record)
            got_label = got.label.value if got.label is not None else None
            if (got.T, got.fed, got_label) != (T, fed, label):
                failures.append(
                    f"{where}: expected T {T} FED {fed} label {label}, "
                    f"the reader gives T {got.T} FED {got.fed} label {got_label}"
                )
    plan: AuditPlan[RecordedTask] = AuditPlan(
        adapter="records",
        source=f"{', '.join(paths)}: {replayable + outcomes} records, {replayable} with actions",
        semantics=RECORDED,
        no_gold="records carry the verdicts a benchmark recorded, not a reference trajectory",
        bases=tuple(bases),
        bases_kind="records with recorded actions",
        operators=AUDIT_OPERATORS,
        checks=(
            Check(
                "eq1-recorded",
                "T, FED and the primary label of every record with actions, recomputed from its raw "
                "'executable' and 'label' fields (EQ-1, CONV-NOTOOL, CONV-LABEL-ORDER)",
                replayable,
                tuple(failures),
            ),
        ),
        not_checked=(
            f"{outcomes} records with an already replayed 'outcome': only the reader's range and label "
            "rules apply to them (REC-OUTCOME)",
            "whether the recorded verdicts are right: records carry no tool schemas and no environment",
            "Y: the recorded success is taken as is",
        ),
    )
    return run_audit(plan, seed_of(options))
