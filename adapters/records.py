"""The JSONL record format (spec: REC-FORMAT, REC-OUTCOME, REC-UNIQUE, REC-ERRORS).

One JSON object per line; its JSON Schema is ``spec/record.schema.json``. A record carries
either recorded per-action verdicts (``actions``), replayed here through the kernel, or an
already replayed ``outcome``. Reading validates everything before anything is scored.
"""

from __future__ import annotations

import gc
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs

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
    import jsonschema

    from prefixexec.kernel.accumulator import RolloutArrays

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
    import jsonschema  # only to explain a rejected line: the fast path (_fast) needs no schema engine

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


def best_match(errors: Iterable[Any]) -> Any:
    """``jsonschema.exceptions.best_match`` (imported on first use)."""
    import jsonschema.exceptions

    return jsonschema.exceptions.best_match(errors)


def legacy_iter_lines(name: str, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[str, Rollout]]:
    """The reference reader over ``(line number, line)`` pairs of the file called ``name``:
    strict ``json`` parse, the JSON Schema (``jsonschema``), then :func:`record_to_rollout`.

    :func:`iter_file` gives exactly its results and messages, faster (see :mod:`._fast_records`).
    """
    validator = None
    for number, line in lines:
        where = f"{name}:{number}"
        if not line.strip():
            continue
        try:
            record = parse_json_line(line)
        except ValueError as exc:
            raise InputError(where, f"not valid JSON: {exc}") from None
        if validator is None:
            validator = _validator()
        yield where, _checked_rollout(where, record, validator)


def _checked_rollout(where: str, record: Any, validator: Any) -> Rollout:
    if not isinstance(record, dict):
        raise InputError(where, f"expected a JSON object, got {type(record).__name__}")
    if "actions" in record and "outcome" in record:
        raise InputError(where, "give either 'actions' or 'outcome', not both")
    if "actions" not in record and "outcome" not in record:
        raise InputError(where, "missing field: one of 'actions' or 'outcome' is required")
    error = best_match(validator.iter_errors(record))
    if error is not None:
        raise InputError(where, f"at {_path(error.absolute_path)}: {error.message}")
    try:
        return record_to_rollout(record)
    except ValueError as exc:
        raise InputError(where, str(exc)) from None


# ---------------------------------------------------------------------------------------------
# The fast path: typed, compiled decoding (msgspec) with the reference reader as the fallback
#
# A chunk of lines is decoded with msgspec into typed structs that encode the JSON Schema's
# constraints (types, lengths, minimums, enums, no unknown keys, no null for an absent field).
# msgspec keeps the last of two equal keys, so the chunk's keys are counted in the text and in
# the re-encoded structs: any repeat makes the counts differ. Cross-field rules (exactly one of
# actions/outcome, FED range, no label with FED = T + 1, no label on an executable action) are
# checked on the decoded values. A chunk with anything the fast path cannot vouch for (any
# rejected line, an integral float such as ``2.0`` in an integer field, a number beyond 64 bits,
# a lone surrogate) is read again line by line by :func:`legacy_iter_lines`, which gives
# today's decision and message; the fast path only ever accepts lines the reference accepts,
# with equal rollouts (tests/test_records_fast.py checks both directions with Hypothesis).

_INT64_MAX = 2**63 - 1
#: Non-blank lines decoded per chunk.
CHUNK_LINES = 1 << 14


@cache
def _fast() -> Any:
    """The msgspec decoder of one record line and its encoder (built on first use)."""
    from typing import Annotated, Literal

    import msgspec
    from msgspec import UNSET, Meta, UnsetType

    NonEmpty = Annotated[str, Meta(min_length=1)]
    Count = Annotated[int, Meta(ge=1, le=_INT64_MAX)]
    LabelName = Literal["schema", "dependency", "precondition", "state_consistency", "information"]
    Labels = LabelName | Annotated[list[LabelName], Meta(min_length=1)]
    Amount = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]

    # defstruct, not class statements: this module's annotations are strings (PEP 563).
    def struct(name: str, fields: list[tuple[str, Any] | tuple[str, Any, Any]]) -> Any:
        # gc=False: records hold no reference cycles; the collector need not track them.
        return msgspec.defstruct(name, fields, forbid_unknown_fields=True, gc=False)

    action = struct(
        "FastAction",
        [
            ("tool", NonEmpty),
            ("executable", bool),
            ("arguments", dict[str, Any] | UnsetType, UNSET),
            ("id", str | UnsetType, UNSET),
            ("label", Labels | UnsetType, UNSET),
            ("reason", str | UnsetType, UNSET),
        ],
    )
    outcome = struct(
        "FastOutcome",
        [
            ("T", Count),
            ("fed", Count),
            ("label", Labels | UnsetType, UNSET),
            ("reason", str | UnsetType, UNSET),
        ],
    )
    record = struct(
        "FastRecord",
        [
            ("dataset", NonEmpty),
            ("task_id", NonEmpty | int),
            ("model", NonEmpty),
            ("method", NonEmpty),
            ("success", bool),
            ("trial", Annotated[int, Meta(ge=0, le=_INT64_MAX)] | UnsetType, UNSET),
            ("actions", list[action] | UnsetType, UNSET),  # type: ignore[valid-type]  # runtime struct
            ("outcome", outcome | UnsetType, UNSET),
            ("no_tool_allowed", bool | UnsetType, UNSET),
            ("cost", dict[Literal["tokens", "latency_s"], Amount] | UnsetType, UNSET),
            ("meta", dict[str, Any] | UnsetType, UNSET),
        ],
    )
    decoder = msgspec.json.Decoder(record)
    return decoder.decode, msgspec.json.Encoder().encode, UNSET, (msgspec.MsgspecError, ValueError)


#: A JSON string token, and whether a ':' follows it (then it is an object key).
_STRING_TOKEN = r'"[^"\\]*(?:\\.[^"\\]*)*"([ \t\r\n]*:)?'


@cache
def _string_token() -> re.Pattern[str]:
    return re.compile(_STRING_TOKEN)


def _key_count(text: str) -> int:
    """The number of object keys in valid JSON text (string tokens followed by ':')."""
    found = _string_token().findall(text)
    return len(found) - found.count("")


def _no_repeated_keys(lines: Sequence[str], decoded: Sequence[Any], encode: Callable[[Any], bytes]) -> bool:
    """Whether no object of these (valid JSON) lines repeats a key.

    Decoding keeps one entry per key, so the re-encoded values hold fewer keys exactly when a
    key repeats. Without a backslash in the text every ':' outside strings is a key's and every
    ':' inside one is kept literally, so counting ':' compares the keys; otherwise the keys are
    counted by tokenizing both texts.
    """
    text = "".join(lines)
    again = encode(decoded)
    if "\\" not in text:
        return text.count(":") == again.count(b":")
    return _key_count(text) == _key_count(again.decode("utf-8"))


_LABEL_RANK = {label.value: label.rank for label in Label}


def _label_code(value: Any) -> int:
    if isinstance(value, str):
        return _LABEL_RANK[value]
    return min(_LABEL_RANK[name] for name in value)


def _decode_chunk(lines: Sequence[str]) -> list[Any] | None:
    """The typed records of ``lines``, or ``None`` when the fast path cannot vouch for all of them."""
    decode, encode, _, errors = _fast()
    # The cyclic collector would scan the chunk's new containers again and again while they are
    # made (they hold no cycles): paused while decoding, as it was before.
    collecting = gc.isenabled()
    gc.disable()
    try:
        decoded = [decode(line) for line in lines]
    except errors:
        return None
    finally:
        if collecting:
            gc.enable()
    if not _no_repeated_keys(lines, decoded, encode):
        return None
    return decoded


@attrs.frozen(slots=True)
class FastColumns:
    """The kernel columns of a chunk the fast path accepted (:meth:`RolloutArrays` inputs)."""

    conditions: list[ConditionKey]
    condition: list[int]
    tasks: list[str]
    task: list[int]
    trial: list[int]
    T: list[int]
    fed: list[int]
    Y: list[bool]
    label: list[int]


def _columns(decoded: Sequence[Any]) -> FastColumns | None:
    """Columns of decoded records, or ``None`` when a record breaks a cross-field rule."""
    _, _, unset, _ = _fast()
    conditions: dict[tuple[str, str, str], int] = {}
    tasks: dict[str, int] = {}
    condition: list[int] = []
    task: list[int] = []
    trial: list[int] = []
    T: list[int] = []
    fed: list[int] = []
    label: list[int] = []
    extra: list[bool] = []
    for r in decoded:
        key = (r.dataset, r.model, r.method)
        c = conditions.get(key)
        if c is None:
            c = conditions[key] = len(conditions)
        condition.append(c)
        t = r.task_id
        if t.__class__ is not str:
            t = str(t)
        j = tasks.get(t)
        if j is None:
            j = tasks[t] = len(tasks)
        task.append(j)
        n = r.trial
        trial.append(0 if n is unset else n)
        o = r.outcome
        if o is not unset:
            if r.actions is not unset:
                return None
            T.append(o.T)
            fed.append(o.fed)
            lab = o.label
            if lab is unset:
                label.append(NO_LABEL_CODE)
                extra.append(o.reason is not unset)
            else:
                label.append(_label_code(lab))
                extra.append(True)
            continue
        actions = r.actions
        if actions is unset:
            return None
        extra.append(False)
        if not actions:
            T.append(1)
            fed.append(2 if r.no_tool_allowed is True else 1)
            label.append(NO_LABEL_CODE)
            continue
        first = 0
        code = NO_LABEL_CODE
        for k, a in enumerate(actions, start=1):
            if a.executable:
                if a.label is not unset or a.reason is not unset:
                    return None
            elif not first:
                first = k
                if a.label is not unset:
                    code = _label_code(a.label)
        T.append(len(actions))
        fed.append(first or len(actions) + 1)
        label.append(code)
    # FED in [1, T + 1] (the lower ends are struct constraints); nothing but FED at T + 1.
    for t_, f_, x in zip(T, fed, extra, strict=True):
        if f_ > t_ and (f_ > t_ + 1 or x):
            return None
    return FastColumns(
        [ConditionKey(*k) for k in conditions],
        condition,
        list(tasks),
        task,
        trial,
        T,
        fed,
        [r.success for r in decoded],
        label,
    )


NO_LABEL_CODE = -1


def line_chunks(
    path: str, size: int = CHUNK_LINES
) -> Iterator[tuple[list[int], list[str], InputError | None]]:
    """``(line numbers, lines, fault)`` of the non-blank lines of a JSONL file, ``size`` at a time;
    a file fault (not UTF-8, ...) comes with the lines read before it and ends the chunks."""
    numbers: list[int] = []
    lines: list[str] = []
    try:
        for number, line in open_lines(path):
            if not line.isspace():
                numbers.append(number)
                lines.append(line)
                if len(lines) == size:
                    yield numbers, lines, None
                    numbers, lines = [], []
    except InputError as exc:
        yield numbers, lines, exc
        return
    if lines:
        yield numbers, lines, None


class Places(Sequence[str]):
    """``FILE:LINE`` of each row of a chunk, made when asked for."""

    __slots__ = ("_name", "_numbers")

    def __init__(self, name: str, numbers: Sequence[int]) -> None:
        self._name = name
        self._numbers = numbers

    def __len__(self) -> int:
        return len(self._numbers)

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            return [f"{self._name}:{n}" for n in self._numbers[row]]
        return f"{self._name}:{self._numbers[row]}"


def record_chunks(
    path: str, size: int = CHUNK_LINES
) -> Iterator[tuple[RolloutArrays, Sequence[str], InputError | None]]:
    """The records of one JSONL file as kernel columns, ``size`` lines at a time (STREAM-SCORE).

    Each item is ``(columns, FILE:LINE of each row, fault)``: the rows before the first fault
    of the chunk, and that fault (then the last item). Exactly the rollouts and the first fault
    of :func:`iter_file`.
    """
    from prefixexec.kernel.accumulator import RolloutArrays

    name = "<stdin>" if path == STDIN else path
    for numbers, lines, fault in line_chunks(path, size):
        decoded = _decode_chunk(lines)
        cols = None if decoded is None else _columns(decoded)
        if cols is not None:
            arrays = RolloutArrays(
                cols.conditions, cols.condition, cols.tasks, cols.task, cols.trial, cols.T, cols.fed, cols.Y,
                cols.label,
            )
            yield arrays, Places(name, numbers), fault
            if fault is not None:
                return
            continue
        rollouts: list[Rollout] = []
        wheres: list[str] = []
        try:
            for where, rollout in legacy_iter_lines(name, zip(numbers, lines, strict=True)):
                rollouts.append(rollout)
                wheres.append(where)
        except InputError as exc:
            fault = exc
        yield RolloutArrays.from_rollouts(rollouts), wheres, fault
        if fault is not None:
            return


def _struct_rollout(r: Any, unset: Any) -> Rollout:
    """The rollout of a record the fast path accepted (as :func:`record_to_rollout` makes it)."""
    key = ConditionKey(r.dataset, r.model, r.method)
    task_id = str(r.task_id)
    trial = 0 if r.trial is unset else r.trial
    o = r.outcome
    if o is not unset:
        labels = () if o.label is unset else _labels(o.label)
        outcome = Outcome(
            T=o.T, fed=o.fed, label=primary_label(labels), reason=None if o.reason is unset else o.reason
        )
    else:
        verdicts = tuple(
            RecordedVerdict(
                a.executable,
                () if a.label is unset else _labels(a.label),
                None if a.reason is unset else a.reason,
            )
            for a in r.actions
        )
        calls = [
            ToolCall(a.tool, {} if a.arguments is unset else a.arguments, None if a.id is unset else a.id)
            for a in r.actions
        ]
        no_tool = r.no_tool_allowed is True
        outcome = replay(RECORDED, RecordedTask(verdicts, no_tool), calls)
    meta: dict[str, object] = {}
    if r.cost is not unset:
        meta["cost"] = dict(r.cost)
    if r.meta is not unset:
        meta["meta"] = r.meta
    return Rollout(key, task_id, trial, outcome, r.success, meta)


def fast_rollouts(lines: Sequence[str]) -> list[Rollout] | None:
    """The rollouts of non-blank record lines if the fast path accepts every one, else ``None``."""
    decoded = _decode_chunk(lines)
    if decoded is None or _columns(decoded) is None:
        return None
    unset = _fast()[2]
    return [_struct_rollout(r, unset) for r in decoded]


def iter_file(path: str) -> Iterator[tuple[str, Rollout]]:
    """Yield ``("FILE:LINE", rollout)`` for every record of one JSONL file, validating each.

    The fast path (:func:`fast_rollouts`) reads whole chunks; a chunk it cannot vouch for is
    read by the reference reader :func:`legacy_iter_lines`, so decisions and messages are the
    reference's.
    """
    name = "<stdin>" if path == STDIN else path
    for numbers, lines, fault in line_chunks(path):
        rollouts = fast_rollouts(lines)
        if rollouts is not None:
            for number, rollout in zip(numbers, rollouts, strict=True):
                yield f"{name}:{number}", rollout
        else:
            yield from legacy_iter_lines(name, zip(numbers, lines, strict=True))
        if fault is not None:
            raise fault


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
