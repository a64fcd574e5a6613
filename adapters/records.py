"""The JSONL record format (spec: REC-FORMAT, REC-OUTCOME, REC-UNIQUE, REC-ERRORS).

One JSON object per line; its JSON Schema is ``spec/record.schema.json``. A record carries
either recorded per-action verdicts (``actions``), replayed here through the kernel, or an
already replayed ``outcome``. Reading validates everything before anything is scored.
"""

from __future__ import annotations

import codecs
import functools
import gc
import json
import operator
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import IO, TYPE_CHECKING, Any

import attrs
import numpy as np
import numpy.typing as npt

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

from . import limits
from .errors import InputError
from .inputs import open_binary, open_text, reading
from .limits import (
    DEEP,
    MAX_HORIZON,
    MAX_INT_ID,
    MAX_TRIAL,
    MIN_INT_ID,
    LineTooLong,
    bounded_lines,
    check_stdin,
)
from .numbers import json_fault

if TYPE_CHECKING:
    import jsonschema

    from prefixexec.kernel.accumulator import IntArray, RolloutArrays

    from . import AdapterOptions
    from .audit import GenericAuditReport, Mutant, Operator

STDIN = "-"


@cache
def record_schema() -> dict[str, Any]:
    """The record JSON Schema shipped with the package (identical to spec/record.schema.json)."""
    from importlib import resources

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
    """Parse one JSON document strictly: no NaN/Infinity, no repeated keys in an object, no
    nesting beyond what the parser can hold (HOSTILE-DEPTH)."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError(DEEP) from None


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
    # An integral float is its integer (JSON Schema's rule, HOSTILE-INTEGRAL): T 2.0 is 2, task_id 1.0 is "1".
    raw_id = record["task_id"]
    task_id = str(int(raw_id) if isinstance(raw_id, float) else raw_id)
    trial = int(record.get("trial", 0))
    if "outcome" in record:
        raw = record["outcome"]
        labels = _labels(raw.get("label"))
        T, fed = int(raw["T"]), int(raw["fed"])
        if not 1 <= fed <= T + 1:
            raise ValueError(f"outcome.fed must be in [1, T+1] = [1, {T + 1}]: {fed}")
        if fed == T + 1 and (labels or "reason" in raw):
            raise ValueError("outcome.label/reason given for a fully executable rollout (fed = T+1)")
        outcome = Outcome(T=T, fed=fed, label=primary_label(labels), reason=raw.get("reason"))
    else:
        verdicts: list[RecordedVerdict] = []
        calls: list[Action] = []
        for index, action in enumerate(record["actions"]):
            if action["executable"] and (action.get("label") is not None or "reason" in action):
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
        check_stdin()
        yield from bounded_lines(stream, "<stdin>")
        return
    with reading(path, "a JSONL file"), open_text(path, "a JSONL file") as handle:
        yield from bounded_lines(handle, path)  # lines end at \n only (HOSTILE-LINES)


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
            raise InputError(where, f"not valid JSON: {json_fault(exc)}") from None


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
            raise InputError(where, f"not valid JSON: {json_fault(exc)}") from None
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
# the re-encoded structs: any repeat makes the counts differ (the block reader counts a block of
# outcome records from the decoded values instead, :func:`_only_counted_members`, and decodes the
# names seen so far as literals, :class:`_BlockDecoder`). Cross-field rules (exactly one of
# actions/outcome, FED range, no label with FED = T + 1, no label on an executable action) are
# checked on the decoded values. A chunk with anything the fast path cannot vouch for (any
# rejected line, an integral float such as ``2.0`` in an integer field, a number beyond 64 bits,
# a lone surrogate) is read again line by line by :func:`legacy_iter_lines`, which gives
# today's decision and message; the fast path only ever accepts lines the reference accepts,
# with equal rollouts (tests/test_records_fast.py checks both directions with Hypothesis).

#: Non-blank lines decoded per chunk.
CHUNK_LINES = 1 << 14


@cache
def _fast() -> Any:
    """The msgspec decoder of a record line, an encoder, ``UNSET`` and the decoding errors."""
    import msgspec

    return (
        _record_decoder(None, None, None),
        msgspec.json.Encoder().encode,
        msgspec.UNSET,
        (msgspec.MsgspecError, ValueError, RecursionError),
    )


Names = tuple[str, ...] | None


@functools.lru_cache(maxsize=16)
def _record_decoder(datasets: Names, models: Names, methods: Names, tasks: Names = None) -> Any:
    """The msgspec decoder of a record line; ``datasets``, ``models``, ``methods``, ``tasks``:
    the names those fields may hold (a record with another name does not decode; an integer
    task id always does), or ``None``: any name."""
    from typing import Annotated, Literal

    import msgspec
    from msgspec import UNSET, Meta, UnsetType

    NonEmpty = Annotated[str, Meta(min_length=1)]
    Horizon = Annotated[int, Meta(ge=1, le=MAX_HORIZON)]  # HOSTILE-HORIZON
    Depth = Annotated[int, Meta(ge=1, le=MAX_HORIZON + 1)]
    LabelName = Literal["schema", "dependency", "precondition", "state_consistency", "information"]
    Labels = LabelName | Annotated[list[LabelName], Meta(min_length=1)] | None  # null: no label
    Amount = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]

    def name(known: Names) -> Any:
        # A literal decodes to the same string object each time (no new string per record).
        return NonEmpty if known is None else Literal[known]

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
            ("T", Horizon),
            ("fed", Depth),
            ("label", Labels | UnsetType, UNSET),
            ("reason", str | UnsetType, UNSET),
        ],
    )
    record = struct(
        "FastRecord",
        [
            ("dataset", name(datasets)),
            ("task_id", name(tasks) | Annotated[int, Meta(ge=MIN_INT_ID, le=MAX_INT_ID)]),
            ("model", name(models)),
            ("method", name(methods)),
            ("success", bool),
            ("trial", Annotated[int, Meta(ge=0, le=MAX_TRIAL)] | UnsetType, UNSET),
            ("actions", list[action] | UnsetType, UNSET),  # type: ignore[valid-type]  # runtime struct
            ("outcome", outcome | UnsetType, UNSET),
            ("no_tool_allowed", bool | UnsetType, UNSET),
            ("cost", dict[Literal["tokens", "latency_s"], Amount] | UnsetType, UNSET),
            ("meta", dict[str, Any] | UnsetType, UNSET),
        ],
    )
    return msgspec.json.Decoder(record)


#: Distinct names a field may take before the block reader decodes it as any text (dataset,
#: model, method; task_id).
LITERAL_NAMES = 64
LITERAL_TASKS = 4096


class _BlockDecoder:
    """Decodes blocks of record lines; the dataset, model, method and task names seen so far
    are decoded as literals (no string made per record: a file holds few of them, each on many
    lines). A block with another name is decoded again by the decoder of any name, which
    decides as always; its names are then learnt, for the next blocks (up to
    :data:`LITERAL_NAMES` a field, :data:`LITERAL_TASKS` task ids)."""

    FIELDS = ("dataset", "model", "method", "task_id")

    def __init__(self) -> None:
        self.known: list[dict[str, None] | None] = [{}, {}, {}, {}]
        self.typed: Any = None
        self.learnt = False  # names learnt since the decoder was made (made for the next block)

    def decode(self, block: bytes) -> list[Any] | None:
        if self.learnt:
            names = [None if known is None else tuple(known) or None for known in self.known]
            self.typed = None if names == [None] * len(names) else _record_decoder(*names)
            self.learnt = False
        if self.typed is not None:
            decoded = _decode_block(block, self.typed.decode_lines)
            if decoded is not None:
                return decoded
        decoded = _decode_block(block, _fast()[0].decode_lines)
        if decoded is not None:
            self._learn(decoded)
        return decoded

    def _learn(self, decoded: list[Any]) -> None:
        limits = (LITERAL_NAMES, LITERAL_NAMES, LITERAL_NAMES, LITERAL_TASKS)
        for i, field in enumerate(self.FIELDS):
            known = self.known[i]
            if known is None:
                continue
            for value in dict.fromkeys(map(operator.attrgetter(field), decoded)):
                if value not in known and value.__class__ is str:
                    known[value] = None
                    self.learnt = True
            if len(known) > limits[i]:
                self.known[i] = None


def _fast_lines() -> tuple[Callable[[bytes], list[Any]], Callable[[Any], bytes], tuple[type[Exception], ...]]:
    decoder, encode, _, errors = _fast()
    return decoder.decode_lines, encode, errors


#: A JSON string token, and whether a ':' follows it (then it is an object key).
_STRING_TOKEN = r'"[^"\\]*(?:\\.[^"\\]*)*"([ \t\r\n]*:)?'


@cache
def _string_token() -> re.Pattern[str]:
    return re.compile(_STRING_TOKEN)


def _key_count(text: str) -> int:
    """The number of object keys in valid JSON text (string tokens followed by ':')."""
    found = _string_token().findall(text)
    return len(found) - found.count("")


def _no_repeated_keys(text: str, decoded: Sequence[Any], encode: Callable[[Any], bytes]) -> bool:
    """Whether no object of ``text`` (valid JSON lines, decoded as ``decoded``) repeats a key.

    Decoding keeps one entry per key, so the re-encoded values hold fewer keys exactly when a
    key repeats. Without a backslash in the text every ':' outside strings is a key's and every
    ':' inside one is kept literally, so counting ':' compares the keys; otherwise the keys are
    counted by tokenizing both texts.
    """
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
    decoder, encode, _, errors = _fast()
    decode = decoder.decode
    with _collector_paused():
        try:
            decoded = [decode(line) for line in lines]
        except errors:
            return None
    if not _no_repeated_keys("".join(lines), decoded, encode):
        return None
    return decoded


def _count(data: bytes, byte: bytes) -> int:
    """``data.count(byte)`` for a single byte (numpy compares a few times faster)."""
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == ord(byte)))


def _decode_block(block: bytes, decode_lines: Callable[[bytes], list[Any]] | None = None) -> list[Any] | None:
    """The typed records of the non-blank lines of ``block`` (UTF-8, ``\\n``-separated), or
    ``None`` when one does not decode (``decode_lines``: a decoder's, by default the one of any
    name); repeated keys are not checked here (:func:`_block_keys_unique`)."""
    errors = _fast()[3]
    if decode_lines is None:
        decode_lines = _fast()[0].decode_lines
    with _collector_paused():
        try:
            decoded: list[Any] = decode_lines(block)
        except errors:
            return None
    return decoded


def _block_keys_unique(block: bytes, decoded: list[Any]) -> bool:
    """Whether no object of ``block`` repeats a key (``decoded``: its records)."""
    encode = _fast_lines()[1]
    if b"\\" not in block:
        return _count(block, b":") == _count(encode(decoded), b":")
    return _no_repeated_keys(block.decode("utf-8"), decoded, encode)


def _colons(values: list[Any]) -> int:
    """The ':' in the strings of ``values`` (other values have none)."""
    try:
        return "".join(values).count(":")
    except TypeError:  # an integer task id
        return "".join([x for x in values if x.__class__ is str]).count(":")


def _only_counted_members(block: bytes, names: list[list[Any]], reasons: list[str], members: int) -> bool:
    """Whether the records of ``block`` (with an outcome) hold exactly ``members`` members, no
    key repeated: ``names`` are their dataset, model, method and task_id columns, ``reasons``
    the outcome reasons given, ``members`` the members counted from the decoded records without
    the ones this does not count (actions, no_tool_allowed, cost, meta).

    Without a backslash in the text every string is written as it is decoded: the text's ':'
    are one per member written plus those inside strings, so at least ``members`` plus those
    inside the decoded names and reasons; exactly that many when no key repeats and no
    uncounted member is given. ``False`` when that is not shown.
    """
    if b"\\" in block:
        return False
    inside = sum(map(_colons, names)) + _colons(reasons)
    return _count(block, b":") == members + inside


class _collector_paused:
    """Pause the cyclic garbage collector: it would scan a chunk's new containers again and
    again while they are made (they hold no cycles). Restores the previous state."""

    def __enter__(self) -> None:
        self.collecting = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.collecting:
            gc.enable()


def _joined(pieces: list[npt.NDArray[Any]]) -> npt.NDArray[Any]:
    """The pieces of a column as one array, which becomes the list's only piece (an empty
    column: an empty int64 array)."""
    if len(pieces) != 1:
        pieces[:] = [np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)]
    return pieces[0]


class _Codes:
    """Distinct values in first-seen order (``values``) and a code per row: the value's index
    among them. Codes are given a block at a time, while the block's strings are fresh in the
    processor's cache (they are hashed once, here)."""

    __slots__ = ("index", "pieces", "rows")

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.pieces: list[IntArray] = []
        self.rows: list[list[Any]] = []

    def add(self, values: list[Any]) -> None:
        index = self.index
        n = len(values)
        fresh = dict.fromkeys(values)
        for value in fresh:  # the block's distinct values, in first-seen order
            if value not in index:
                index[value] = len(index)
        if len(fresh) == 1:  # one value (common: files are grouped by condition)
            self.pieces.append(np.full(n, index[values[0]], dtype=np.int64))
        else:
            self.pieces.append(np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=n))
        self.rows.append(values)

    def codes(self) -> IntArray:
        return _joined(self.pieces)

    def values(self) -> list[Any]:
        return list(self.index)

    def split(self, size: int) -> _Codes:
        """The first ``size`` rows' codes (against the same values); these are coded again for
        the rest only."""
        head = _Codes()
        head.index = self.index
        codes = self.codes()
        head.pieces = [codes[:size]]
        rest: list[Any] = []
        left = codes.shape[0] - size
        for values in reversed(self.rows):
            if len(rest) >= left:
                break
            rest[:0] = values
        self.index, self.pieces, self.rows = {}, [], []
        if left > 0:
            self.add(rest[len(rest) - left :])
        return head


def _first_seen(codes: IntArray) -> tuple[IntArray, IntArray]:
    """For integer codes: the row where each distinct code is first seen, in first-seen order,
    and each row's index among those codes."""
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(order.shape[0], dtype=np.int64)
    rank[order] = np.arange(order.shape[0], dtype=np.int64)
    return first[order], rank[inverse.reshape(-1)]


def _conditions_of(columns: Sequence[_Codes]) -> tuple[list[ConditionKey], IntArray]:
    """Distinct conditions (dataset, model, method) in first-seen order, and each row's index."""
    values = [column.values() for column in columns]
    codes = [column.codes() for column in columns]
    if all(len(v) == 1 for v in values):
        return [ConditionKey(values[0][0], values[1][0], values[2][0])], codes[0]
    combined = codes[0]
    for distinct, code in zip(values[1:], codes[1:], strict=True):
        # Re-coded after each step: the combined code stays below rows x distinct values.
        _, combined = _first_seen(combined * len(distinct) + code)
    rows, condition = _first_seen(combined)
    (ds, d), (ms, m), (es, e) = zip(values, codes, strict=True)
    keys = [ConditionKey(ds[d[i]], ms[m[i]], es[e[i]]) for i in rows.tolist()]
    return keys, condition


def _readonly(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The array, read-only (the kernel's columns take it as it is, without a copy)."""
    array.flags.writeable = False
    return array


_DATASET = operator.attrgetter("dataset")
_MODEL = operator.attrgetter("model")
_METHOD = operator.attrgetter("method")
_TASK_ID = operator.attrgetter("task_id")
_TRIAL = operator.attrgetter("trial")
_OUTCOME = operator.attrgetter("outcome")
_ACTIONS = operator.attrgetter("actions")
_SUCCESS = operator.attrgetter("success")
_T = operator.attrgetter("T")
_FED = operator.attrgetter("fed")
_LABEL = operator.attrgetter("label")
_REASON = operator.attrgetter("reason")


def _label_codes(outcomes: list[Any], unset: Any) -> IntArray:
    """Kernel label codes (-1 for none) of the outcomes' label fields: a name, a list of names
    or unset."""
    lookup = {**_LABEL_RANK, unset: NO_LABEL_CODE, None: NO_LABEL_CODE}
    try:
        codes = map(lookup.__getitem__, map(_LABEL, outcomes))
        return np.fromiter(codes, dtype=np.int64, count=len(outcomes))
    except TypeError:  # a list of names
        labels = list(map(_LABEL, outcomes))
        return np.array(
            [lookup[x] if x.__class__ is str or x is unset or x is None else _label_code(x) for x in labels],
            dtype=np.int64,
        )


class _Rows:
    """Kernel columns of decoded records, gathered a block at a time (the decoded records can
    then be freed: memory is reused while decoding, which is much faster than holding a whole
    chunk of records). Names are coded as they come; numbers are kept as one array per block."""

    NUMBERS = ("trial", "T", "fed", "label", "reason", "Y")
    NAMES = ((_DATASET, "dataset"), (_MODEL, "model"), (_METHOD, "method"), (_TASK_ID, "task_id"))

    def __init__(self) -> None:
        self.unset = _fast()[2]
        self.size = 0
        self.names = {name: _Codes() for _, name in self.NAMES}
        self.numbers: dict[str, list[npt.NDArray[Any]]] = {name: [] for name in self.NUMBERS}

    def __len__(self) -> int:
        return self.size

    def _column(self, name: str) -> npt.NDArray[Any]:
        return _joined(self.numbers[name])

    def split(self, size: int) -> _Rows:
        """The first ``size`` rows as new columns; these keep the rest."""
        head = _Rows()
        head.size, self.size = min(size, self.size), max(self.size - size, 0)
        for name, codes in self.names.items():
            head.names[name] = codes.split(size)
        for name in self.NUMBERS:
            column = self._column(name)
            head.numbers[name] = [column[:size]]
            self.numbers[name] = [column[size:]]
        return head

    def add(self, decoded: list[Any], block: bytes | None = None) -> bool:
        """Add decoded records (of ``block``: then no object may repeat a key); ``False`` when one
        breaks a cross-field rule (then these columns are unchanged)."""
        unset = self.unset
        n = len(decoded)
        outcomes = list(map(_OUTCOME, decoded))
        names = [list(map(get, decoded)) for get, _ in self.NAMES]
        trials = list(map(_TRIAL, decoded))
        unset_trials = trials.count(unset)
        try:
            T = np.fromiter(map(_T, outcomes), dtype=np.int64, count=n)
        except AttributeError:  # an unset outcome: a record with actions (or neither)
            columns = _mixed_columns(decoded, unset)
            if columns is None or (block is not None and not _block_keys_unique(block, decoded)):
                return False
            T = np.array(columns[0], dtype=np.int64)
            fed = np.array(columns[1], dtype=np.int64)
            label = np.array(columns[2], dtype=np.int64)
            reason = np.array(columns[3], dtype=np.bool_)
        else:
            fed = np.fromiter(map(_FED, outcomes), dtype=np.int64, count=n)
            label = _label_codes(outcomes, unset)
            reasons = list(map(_REASON, outcomes))
            unset_reasons = reasons.count(unset)
            if unset_reasons == n:
                reason = np.zeros(n, dtype=np.bool_)
                reasons = []
            else:
                reason = np.array([x is not unset for x in reasons], dtype=np.bool_)
                reasons = [x for x in reasons if x is not unset]
            # Members: dataset, task_id, model, method, success, outcome, T, fed; and the ones given.
            labels = int(np.count_nonzero(label != NO_LABEL_CODE))
            members = 8 * n + (n - unset_trials) + labels + (n - unset_reasons)
            # Counted exactly: no key repeats and no other member (no actions) is given.
            if block is None or not _only_counted_members(block, names, reasons, members):
                if list(map(_ACTIONS, decoded)).count(unset) != n:
                    return False  # both actions and an outcome
                if block is not None and not _block_keys_unique(block, decoded):
                    return False
        if unset_trials == n:
            trial = np.zeros(n, dtype=np.int64)
        elif unset_trials == 0:
            trial = np.array(trials, dtype=np.int64)
        else:
            trial = np.array([0 if x is unset else x for x in trials], dtype=np.int64)
        Y = np.fromiter(map(_SUCCESS, decoded), dtype=np.bool_, count=n)
        numbers = self.numbers
        numbers["trial"].append(trial)
        numbers["T"].append(T)
        numbers["fed"].append(fed)
        numbers["label"].append(label)
        numbers["reason"].append(reason)
        numbers["Y"].append(Y)
        for (_, name), values in zip(self.NAMES, names, strict=True):
            self.names[name].add(values)
        self.size += n
        return True

    def arrays(self) -> RolloutArrays | None:
        """The columns, or ``None`` when FED is out of [1, T + 1] or a label or reason comes
        with FED = T + 1 (REC-OUTCOME)."""
        from prefixexec.kernel.accumulator import RolloutArrays

        t = self._column("T")
        f = self._column("fed")
        label = self._column("label")
        if (f > t).any():
            given = (label != NO_LABEL_CODE) | self._column("reason")
            if (f > t + 1).any() or ((f == t + 1) & given).any():
                return None
        names = self.names
        keys, condition = _conditions_of([names["dataset"], names["model"], names["method"]])
        # An integer task id means its decimal string (an int and its string may both occur:
        # repeated names mean the same task). Names no row uses may be listed: they do not count.
        tasks = [x if x.__class__ is str else str(x) for x in names["task_id"].values()]
        return RolloutArrays(
            keys,
            _readonly(condition),
            tasks,
            _readonly(names["task_id"].codes()),
            _readonly(self._column("trial")),
            _readonly(t),
            _readonly(f),
            _readonly(self._column("Y")),
            _readonly(label),
        )


def _chunk_columns(decoded: list[Any] | None) -> RolloutArrays | None:
    """The kernel columns of one chunk's decoded records (``None``: the fast path declines)."""
    if decoded is None:
        return None
    rows = _Rows()
    return rows.arrays() if rows.add(decoded) else None


def _mixed_columns(
    decoded: Sequence[Any], unset: Any
) -> tuple[list[int], list[int], list[int], list[bool]] | None:
    """(T, FED, label code, reason given) of records with actions or an outcome (one each), by
    replaying the recorded verdicts (EQ-1, CONV-NOTOOL, CONV-LABEL-ORDER)."""
    T: list[int] = []
    fed: list[int] = []
    label: list[int] = []
    reason: list[bool] = []
    for r in decoded:
        o = r.outcome
        actions = r.actions
        if o is not unset:
            if actions is not unset:
                return None
            T.append(o.T)
            fed.append(o.fed)
            label.append(NO_LABEL_CODE if o.label is unset or o.label is None else _label_code(o.label))
            reason.append(o.reason is not unset)
            continue
        if actions is unset:
            return None
        reason.append(False)
        if not actions:
            T.append(1)
            fed.append(2 if r.no_tool_allowed is True else 1)
            label.append(NO_LABEL_CODE)
            continue
        first = 0
        code = NO_LABEL_CODE
        for k, a in enumerate(actions, start=1):
            if a.executable:
                if (a.label is not unset and a.label is not None) or a.reason is not unset:
                    return None
            elif not first:
                first = k
                if a.label is not unset and a.label is not None:
                    code = _label_code(a.label)
        T.append(len(actions))
        fed.append(first or len(actions) + 1)
        label.append(code)
    return T, fed, label, reason


NO_LABEL_CODE = -1


def line_chunks(
    path: str, size: int = CHUNK_LINES, start: int = 1
) -> Iterator[tuple[list[int], list[str], InputError | None]]:
    """``(line numbers, lines, fault)`` of the non-blank lines of a JSONL file from line
    ``start`` on, ``size`` at a time; a file fault (not UTF-8, ...) comes with the lines read
    before it and ends the chunks. The file is read from its start in text mode (as
    :func:`open_lines` reads it), so that a fault is named as it is without ``start``."""
    numbers: list[int] = []
    lines: list[str] = []
    try:
        for number, line in open_lines(path):
            if number >= start and not line.isspace():
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


#: Bytes decoded at a time by :func:`record_chunks` (whole lines; a longer line is read whole).
BLOCK_BYTES = 1 << 17


def _blocks(path: str, size: int) -> Iterator[tuple[int, bytes, int]]:
    """``(number of the first line, bytes, line breaks)`` of whole lines of a file, about ``size``
    bytes each."""
    with reading(path, "a JSONL file"), open_binary(path, "a JSONL file") as handle:
        first = 1
        rest = b""
        while True:
            data = handle.read(size)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest = data
                if len(rest) > limits.max_line_bytes:
                    raise LineTooLong(path)  # the line reader names it (HOSTILE-LINE)
                continue
            block, rest = data[:cut], data[cut:]
            breaks = _count(block, b"\n")
            yield first, block, breaks
            first += breaks
        if rest:
            yield first, rest, 0


def _regular(path: str) -> bool:
    import os
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _utf8(path: str) -> bool:
    """Whether the file is UTF-8 text (read in pieces; memory stays flat)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with reading(path, "a JSONL file"), open_binary(path, "a JSONL file") as handle:
        try:
            while data := handle.read(1 << 20):
                if data.isascii() and not decoder.getstate()[0]:
                    continue  # ASCII is UTF-8 (and no sequence is pending from the last piece)
                decoder.decode(data)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True


def _block_numbers(first: int, block: bytes, breaks: int, rows: int) -> list[int] | range | None:
    """The line numbers of the ``rows`` non-blank lines of ``block``; ``None`` when a line
    break or blank would be read differently in text mode (``\\r``, other blank characters)."""
    if b"\r" in block:
        return None
    if rows == breaks + (not block.endswith(b"\n")):
        return range(first, first + rows)
    text = block.decode("utf-8").split("\n")
    numbers = [first + i for i, line in enumerate(text) if line and not line.isspace()]
    # decode_lines skips lines of JSON whitespace only; text mode skips every str.isspace() line.
    return numbers if len(numbers) == rows else None


def record_chunks(
    path: str, size: int = CHUNK_LINES, block_bytes: int = BLOCK_BYTES
) -> Iterator[tuple[RolloutArrays, Sequence[str], InputError | None]]:
    """The records of one JSONL file as kernel columns (STREAM-SCORE).

    Each item is ``(columns, FILE:LINE of each row, fault)``: rows in order, and after the first
    fault nothing more; exactly the rollouts, places and first fault of :func:`iter_file`.
    A file is read in blocks of whole lines (``block_bytes``), each decoded in one call, and
    batches of at least ``size`` rows are made of consecutive blocks; a batch or block
    the fast path cannot vouch for (a fault, a line break other than ``\\n``, bytes that are
    not UTF-8, ...) hands the rest of the file, from that batch's first line, to the line by
    line reader (``size`` lines at a time), which reads it exactly as :func:`iter_file` does.
    Standard input is read line by line.
    """
    name = "<stdin>" if path == STDIN else path
    start = 1
    # The fast path reads a file more than once: a pipe (/dev/fd/N) is read line by line, once.
    if path != STDIN and limits.max_line_bytes >= block_bytes and _regular(path):  # HOSTILE-LINE
        try:
            # Text mode stops at bytes that are not UTF-8 before it yields the lines it decoded
            # with them; such a file is read by the line reader from its start.
            if not _utf8(path):
                raise UnicodeDecodeError("utf-8", b"", 0, 0, "not UTF-8")
            rows = _Rows()
            numbers: list[int] = []
            decoder = _BlockDecoder()
            for first, block, breaks in _blocks(path, block_bytes):
                if not numbers:
                    start = first
                decoded = decoder.decode(block)
                lines = None if decoded is None else _block_numbers(first, block, breaks, len(decoded))
                if decoded is None or lines is None or not rows.add(decoded, block):
                    break
                numbers += lines
                declined = False
                while len(numbers) >= size:  # batches of exactly `size` rows, as the line reader
                    arrays = rows.split(size).arrays()
                    if arrays is None:
                        declined = True
                        break
                    yield arrays, Places(name, numbers[:size]), None
                    numbers = numbers[size:]
                    if numbers:
                        start = numbers[0]
                if declined:
                    break
            else:
                arrays = rows.arrays() if numbers else None
                if arrays is not None:
                    yield arrays, Places(name, numbers), None
                if arrays is not None or not numbers:
                    return
        except (OSError, UnicodeDecodeError, LineTooLong):
            pass  # the line reader names the fault as the reference does
    yield from _line_record_chunks(path, name, size, start)


def _line_record_chunks(
    path: str, name: str, size: int, start: int
) -> Iterator[tuple[RolloutArrays, Sequence[str], InputError | None]]:
    from prefixexec.kernel.accumulator import RolloutArrays

    for numbers, lines, fault in line_chunks(path, size, start):
        arrays = _chunk_columns(_decode_chunk(lines))
        if arrays is not None:
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
    if decoded is None or _chunk_columns(decoded) is None:
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
        if "source" not in rollout.meta:  # OUT-ROLLOUTS: where the rollout was read
            rollout = attrs.evolve(rollout, meta={**rollout.meta, "source": where})
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
    from .audit import Mutant, replace_at

    flipped = RecordedVerdict(False, (Label.INFORMATION, Label.DEPENDENCY), "audit: verdict flipped")
    return [
        Mutant(attrs.evolve(task, verdicts=replace_at(task.verdicts, i, flipped)), actions, i + 1, "rejected")
        for i in range(min(outcome.fed - 1, len(actions)))
    ]


def _flip_to_accepted(
    task: RecordedTask, actions: tuple[Action, ...], outcome: Outcome
) -> list[Mutant[RecordedTask]]:
    from .audit import Mutant, replace_at

    if not actions or outcome.fully_executable:
        return []
    i = outcome.fed - 1
    verdicts = replace_at(task.verdicts, i, RecordedVerdict(True))
    later = [k for k in range(i + 1, len(verdicts)) if not verdicts[k].executable]
    expected = later[0] + 1 if later else len(verdicts) + 1
    return [Mutant(attrs.evolve(task, verdicts=verdicts), actions, i + 1, "accepted", expected)]


@cache
def _audit_operators() -> tuple[Operator[RecordedTask], ...]:
    """The records audit's operators (EQ-1, CONV-LABEL-ORDER): ``AUDIT_OPERATORS``."""
    from .audit import Expect, Operator

    return (
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


if TYPE_CHECKING:
    AUDIT_OPERATORS: tuple[Operator[RecordedTask], ...]


def __getattr__(name: str) -> Any:
    """``AUDIT_OPERATORS``, made on first use: reading records does not load the audit module."""
    if name == "AUDIT_OPERATORS":
        return _audit_operators()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter records FILE...`` (AUDIT-RECORDS)."""
    from .audit import AuditPlan, Check, Trajectory, run_audit, seed_of

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
        operators=_audit_operators(),
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
