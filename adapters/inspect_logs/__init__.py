"""inspect_ai evaluation logs, ``.eval`` and ``.json`` (spec: spec/adapters/inspect.md, INS-*).

Reads the logs without inspect_ai: a ``.eval`` log is a ZIP archive whose members are
zstd-compressed JSON since inspect_ai 0.3.206 (ZIP method 93, which :mod:`zipfile` cannot
decompress before Python 3.14), so the raw member bytes are decompressed with ``zstandard``; a
``.json`` log is one JSON document, read incrementally so that samples are processed one at a
time. The calls of a sample are the assistant messages' ``tool_calls``; the tool message with the
same ``tool_call_id`` carries inspect's ``error`` when the call failed. Y is the value of one
scorer ("C", or a number >= threshold).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs
import zstandard

from prefixexec.kernel import Accepted, ConditionKey, Label, Outcome, Rejected, Rollout, ToolCall, replay
from prefixexec.kernel.actions import Action, NoToolAction

from ..audit import (
    AuditPlan,
    Expect,
    GenericAuditReport,
    Mutant,
    Operator,
    accepted_prefixes,
    replace_at,
    run_audit,
    seed_of,
)
from ..errors import InputError
from ..records import unique_rollouts

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET_PREFIX = "inspect"
DEFAULT_METHOD = "default"
#: Default threshold for numeric score values (INS-SUCCESS).
DEFAULT_THRESHOLD = 1.0
#: ZIP compression method of zstd members (APPNOTE 4.4.5).
ZIP_ZSTD = 93

#: Label of each inspect ``ToolCallError.type`` (INS-LABELS). ``None``: rejected, unlabelled.
ERROR_LABELS: Mapping[str, Label | None] = {
    "parsing": Label.SCHEMA,
    "file_not_found": Label.DEPENDENCY,
    "is_a_directory": Label.DEPENDENCY,
    "permission": Label.PRECONDITION,
    "approval": Label.PRECONDITION,
    "timeout": Label.STATE_CONSISTENCY,
    "limit": Label.STATE_CONSISTENCY,
    "output_limit": Label.STATE_CONSISTENCY,
    "cancelled": Label.STATE_CONSISTENCY,
    "sandbox_unavailable": Label.STATE_CONSISTENCY,
    "unknown": Label.STATE_CONSISTENCY,
    "unicode_decode": None,
}


# ---------------------------------------------------------------------------------------------
# Semantics (INS-EXEC, INS-LABELS, INS-NOTOOL)


@attrs.frozen(slots=True)
class InspectCall:
    """One assistant tool call and what its tool message recorded.

    ``offered`` is the set of tool names the model was given when it made the call (``None``
    when the log does not record it); ``answered`` is false when no tool message answers it.
    """

    action: ToolCall
    parse_error: str | None = None
    offered: frozenset[str] | None = None
    answered: bool = False
    error_type: str | None = None
    error_message: str | None = None


@attrs.frozen(slots=True)
class InspectSample:
    """What the inspect semantics needs of one sample."""

    calls: tuple[InspectCall, ...]
    no_tool_allowed: bool


class InspectSemantics:
    """inspect_ai's recorded tool execution: the state is the position in the sample's calls.

    Every violated check of a call is a label (the kernel picks the primary one): a
    ``parse_error`` (schema), a tool the model was not offered (schema), and the tool message's
    ``error`` type (:data:`ERROR_LABELS`). The reason keeps each check's text.
    """

    def initial_state(self, task: InspectSample) -> tuple[InspectSample, int]:
        return (task, 0)

    def step(
        self, state: tuple[InspectSample, int], action: Action
    ) -> Accepted[tuple[InspectSample, int]] | Rejected:
        sample, position = state
        if isinstance(action, NoToolAction):
            if sample.no_tool_allowed:
                return Accepted((sample, position + 1))
            return Rejected((), "no tool call in a sample that was offered tools")
        call = sample.calls[position]
        labels: list[Label] = []
        reasons: list[str] = []
        if call.parse_error is not None:
            labels.append(Label.SCHEMA)
            reasons.append(f"parse_error: {call.parse_error}")
        if call.offered is not None and call.action.name not in call.offered:
            labels.append(Label.SCHEMA)
            reasons.append(f"tool {call.action.name!r} was not offered to the model")
        if not call.answered:
            reasons.append(f"no tool message answers call {call.action.call_id!r}")
        elif call.error_type is not None:
            label = ERROR_LABELS.get(call.error_type)
            if label is not None:
                labels.append(label)
            if call.error_type != "parsing" or call.error_message != call.parse_error:
                reasons.append(f"{call.error_type}: {call.error_message or ''}".rstrip())
        if reasons:
            return Rejected(labels, "; ".join(reasons))
        return Accepted((sample, position + 1))


SEMANTICS = InspectSemantics()


# ---------------------------------------------------------------------------------------------
# Reading .eval archives (INS-FILES)


class EvalArchive:
    """Members of a ``.eval`` ZIP archive, decompressed one at a time (zstd or deflate)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
        except FileNotFoundError:
            raise InputError(str(path), "no such file") from None
        except IsADirectoryError:
            raise InputError(str(path), "is a directory, expected an inspect .eval log") from None
        except PermissionError:
            raise InputError(str(path), "permission denied") from None
        except (zipfile.BadZipFile, OSError) as exc:
            raise InputError(str(path), f"not a ZIP archive (an .eval log is one): {exc}") from None
        self.names = self.zip.namelist()

    def close(self) -> None:
        self.zip.close()

    def read(self, name: str) -> bytes:
        """The decompressed bytes of member ``name``, checked against its size and CRC-32."""
        where = f"{self.path}: {name}"
        info = self.zip.getinfo(name)
        if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            try:
                return self.zip.read(info)
            except (zipfile.BadZipFile, zlib.error, OSError) as exc:
                raise InputError(where, f"corrupt member: {exc}") from None
        if info.compress_type != ZIP_ZSTD:
            raise InputError(where, f"unsupported ZIP compression method {info.compress_type}")
        with self.path.open("rb") as handle:
            handle.seek(info.header_offset)
            header = handle.read(30)
            if len(header) != 30 or header[:4] != b"PK\x03\x04":
                raise InputError(where, "corrupt archive: no local file header")
            name_length, extra_length = struct.unpack("<HH", header[26:30])
            handle.seek(info.header_offset + 30 + name_length + extra_length)
            raw = handle.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise InputError(where, "corrupt archive: member is truncated")
        try:
            reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
            data = reader.read(info.file_size + 1)
        except zstandard.ZstdError as exc:
            raise InputError(where, f"corrupt zstd data: {exc}") from None
        if len(data) != info.file_size:
            raise InputError(where, f"decompressed to {len(data)}+ bytes, the archive says {info.file_size}")
        if zlib.crc32(data) != info.CRC:
            raise InputError(where, "CRC-32 mismatch: the member is corrupt")
        return data

    def json(self, name: str) -> Any:
        where = f"{self.path}: {name}"
        try:
            return json.loads(self.read(name).decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(where, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except ValueError as exc:
            raise InputError(where, f"not valid JSON: {exc}") from None


def iter_eval_log(path: Path) -> Iterator[tuple[str, str, Any]]:
    """``("eval", where, header)`` then ``("sample", where, sample)`` for each sample member."""
    archive = EvalArchive(path)
    try:
        header_name = next((n for n in ("header.json", "_journal/start.json") if n in archive.names), None)
        if header_name is None:
            raise InputError(str(path), "no header.json or _journal/start.json: not an inspect .eval log")
        yield "eval", f"{path}: {header_name}", archive.json(header_name)
        for name in archive.names:
            if name.startswith("samples/") and name.endswith(".json"):
                yield "sample", f"{path}: {name}", archive.json(name)
    finally:
        archive.close()


# ---------------------------------------------------------------------------------------------
# Reading .json logs incrementally (INS-FILES)


class JsonStream:
    """An incremental reader of one JSON document: values are decoded as the text arrives.

    The buffer keeps only the unread part; when a value is incomplete it grows by at least its
    own size, so the total decoding work stays linear in the document.
    """

    CHUNK = 1 << 16

    def __init__(self, handle: IO[str], name: str) -> None:
        self.handle = handle
        self.name = name
        self.buffer = ""
        self.pos = 0
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _more(self) -> bool:
        if self.eof:
            return False
        data = self.handle.read(max(self.CHUNK, len(self.buffer) - self.pos))
        if not data:
            self.eof = True
            return False
        self.buffer = self.buffer[self.pos :] + data
        self.pos = 0
        return True

    def peek(self) -> str | None:
        """The next non-whitespace character (not consumed), or ``None`` at the end."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._more():
                return None

    def expect(self, char: str, what: str) -> None:
        found = self.peek()
        if found != char:
            got = "the end of the file" if found is None else repr(found)
            raise InputError(self.name, f"not valid JSON: expected {char!r} {what}, found {got}")
        self.pos += 1

    def value(self, what: str) -> Any:
        """Decode the next JSON value."""
        if self.peek() is None:
            raise InputError(self.name, f"not valid JSON: the file ends before {what}")
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                raise InputError(self.name, f"not valid JSON in {what}: {exc.msg}") from None
            if end == len(self.buffer) and not self.eof and self._more():
                continue  # a number or literal may continue in the next chunk
            self.pos = end
            return value


def iter_json_log(path: Path) -> Iterator[tuple[str, str, Any]]:
    """Like :func:`iter_eval_log` for a ``.json`` log, reading the ``samples`` list one by one.

    inspect writes ``eval`` before ``samples``; a log with ``samples`` first has its samples held
    until the header has been read.
    """
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), "is a directory, expected an inspect .json log") from None
    except PermissionError:
        raise InputError(str(path), "permission denied") from None
    name = str(path)
    held: list[tuple[str, Any]] = []
    header_seen = False
    try:
        stream = JsonStream(handle, name)
        stream.expect("{", "at the start of an inspect log")
        if stream.peek() == "}":
            stream.pos += 1
        else:
            while True:
                key = stream.value("a key of the log object")
                if not isinstance(key, str):
                    raise InputError(name, "not valid JSON: an object key must be a string")
                stream.expect(":", f"after the key {key!r}")
                if key == "samples":
                    stream.expect("[", "to open the samples list")
                    index = 0
                    if stream.peek() == "]":
                        stream.pos += 1
                    else:
                        while True:
                            sample = stream.value(f"samples[{index}]")
                            where = f"{path}: samples[{index}]"
                            if header_seen:
                                yield "sample", where, sample
                            else:
                                held.append((where, sample))
                            index += 1
                            if stream.peek() == ",":
                                stream.pos += 1
                                continue
                            stream.expect("]", "or ',' after a sample")
                            break
                else:
                    value = stream.value(f"the value of {key!r}")
                    if key == "eval":
                        header_seen = True
                        yield "eval", f"{path}: eval", {"eval": value}
                        for where, sample in held:
                            yield "sample", where, sample
                        held.clear()
                    elif key == "plan" and header_seen:
                        yield "plan", f"{path}: plan", value
                if stream.peek() == ",":
                    stream.pos += 1
                    continue
                stream.expect("}", "or ',' after a value of the log object")
                break
        if stream.peek() is not None:
            raise InputError(name, "not valid JSON: extra data after the log object")
    except UnicodeDecodeError as exc:
        raise InputError(name, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    finally:
        handle.close()
    if not header_seen:
        raise InputError(name, "no 'eval' object: not an inspect log")


# ---------------------------------------------------------------------------------------------
# Samples -> rollouts


@attrs.frozen(slots=True)
class LogHeader:
    """What a log's header says about its condition and scorers."""

    task: str
    model: str
    method: str
    scorers: tuple[str, ...]


def read_header(header: Any, plan: Any, where: str, options: AdapterOptions) -> LogHeader:
    """The condition (dataset ``inspect/<task>``, model, method) and scorer names of a log."""
    spec = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(spec, dict):
        raise InputError(where, "expected an 'eval' object (the log's task, model and scorers)")
    task, model = spec.get("task"), spec.get("model")
    if not isinstance(task, str) or not task:
        raise InputError(where, f"eval.task must be a non-empty string, got {task!r}")
    if not isinstance(model, str) or not model:
        raise InputError(where, f"eval.model must be a non-empty string, got {model!r}")
    plan = plan if plan is not None else (header.get("plan") if isinstance(header, dict) else None)
    method = options.method or _method(spec, plan)
    scorers: list[str] = []
    for item in spec.get("scorers") or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            scorers.append(item["name"])
    results = header.get("results") if isinstance(header, dict) else None
    if not scorers and isinstance(results, dict):
        for item in results.get("scores") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                scorers.append(item["name"])
    return LogHeader(task, options.model or model, method, tuple(scorers))


def _method(spec: Mapping[str, Any], plan: Any) -> str:
    solver = spec.get("solver")
    if isinstance(solver, str) and solver:
        return solver
    steps = plan.get("steps") if isinstance(plan, dict) else None
    if isinstance(steps, list):
        names = [s["solver"] for s in steps if isinstance(s, dict) and isinstance(s.get("solver"), str)]
        if names:
            return "+".join(names)
    return DEFAULT_METHOD


def _offered_tools(events: Any) -> tuple[dict[str, frozenset[str]], frozenset[str] | None]:
    """Tools given to the model: per assistant message id, and their union (``None``: unknown)."""
    by_message: dict[str, frozenset[str]] = {}
    union: set[str] | None = None
    if not isinstance(events, list):
        return by_message, None
    for event in events:
        if (
            not isinstance(event, dict)
            or event.get("event") != "model"
            or not isinstance(event.get("tools"), list)
        ):
            continue
        names = frozenset(
            t["name"] for t in event["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)
        )
        union = set(names) if union is None else union | names
        output = event.get("output")
        choices = output.get("choices") if isinstance(output, dict) else None
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                by_message[message["id"]] = names
    return by_message, (None if union is None else frozenset(union))


def sample_calls(sample: Mapping[str, Any], where: str) -> list[InspectCall]:
    """The calls of a sample in message order, each with its tool message (INS-CALLS)."""
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise InputError(where, "'messages' must be a list")
    by_message, union = _offered_tools(sample.get("events"))
    calls: list[InspectCall] = []
    pending: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        here = f"{where}: messages[{index}]"
        if not isinstance(message, dict):
            raise InputError(here, f"expected a message object, got {type(message).__name__}")
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            tool_calls = message["tool_calls"]
            if not isinstance(tool_calls, list):
                raise InputError(here, "'tool_calls' must be a list")
            message_id = message.get("id")
            offered = by_message.get(message_id, union) if isinstance(message_id, str) else union
            for n, call in enumerate(tool_calls):
                call_where = f"{here}.tool_calls[{n}]"
                if not isinstance(call, dict) or not isinstance(call.get("function"), str):
                    raise InputError(call_where, "expected {'id', 'function', 'arguments'}")
                call_id = call.get("id")
                if not isinstance(call_id, str):
                    raise InputError(call_where, f"'id' must be a string, got {call_id!r}")
                arguments = call.get("arguments")
                parse_error = call.get("parse_error")
                if parse_error is not None and not isinstance(parse_error, str):
                    raise InputError(
                        call_where, f"'parse_error' must be a string or null, got {parse_error!r}"
                    )
                action = ToolCall(call["function"], arguments if isinstance(arguments, dict) else {}, call_id)
                pending.setdefault(call_id, []).append(len(calls))
                calls.append(InspectCall(action, parse_error, offered))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            queue = pending.get(call_id) if isinstance(call_id, str) else None
            if not queue:
                continue  # answers no recorded call (e.g. a call removed by compaction): not an action
            error = message.get("error")
            if error is not None and (not isinstance(error, dict) or not isinstance(error.get("type"), str)):
                raise InputError(here, f"'error' must be null or {{'type', 'message'}}, got {error!r}")
            position = queue.pop(0)
            calls[position] = attrs.evolve(
                calls[position],
                answered=True,
                error_type=None if error is None else error["type"],
                error_message=None if error is None else str(error.get("message") or ""),
            )
    return calls


def sample_success(
    sample: Mapping[str, Any], scorer: str, threshold: float, where: str
) -> tuple[bool, object]:
    """``(Y, value)``: "C" or a number >= threshold is a success; no score is a failure (INS-SUCCESS)."""
    scores = sample.get("scores")
    if scores is not None and not isinstance(scores, dict):
        raise InputError(where, f"'scores' must be an object, got {type(scores).__name__}")
    score = (scores or {}).get(scorer)
    if score is None:
        return False, None
    if not isinstance(score, dict) or "value" not in score:
        raise InputError(where, f"scores.{scorer} must be an object with a 'value'")
    value = score["value"]
    if isinstance(value, bool):
        return value, value
    if isinstance(value, int | float):
        return (math.isfinite(value) and value >= threshold), value
    if isinstance(value, str):
        return value == "C", value
    if value is None:
        return False, None
    raise InputError(
        where, f"scores.{scorer}.value is a {type(value).__name__}; give --scorer a scorer with one value"
    )


def _no_tool_allowed(sample: Mapping[str, Any], where: str) -> bool:
    metadata = sample.get("metadata")
    if isinstance(metadata, dict) and "no_tool_allowed" in metadata:
        value = metadata["no_tool_allowed"]
        if not isinstance(value, bool):
            raise InputError(where, f"metadata.no_tool_allowed must be a boolean, got {value!r}")
        return value
    _, union = _offered_tools(sample.get("events"))
    return union is not None and not union


def sample_rollout(sample: Any, header: LogHeader, scorer: str, threshold: float, where: str) -> Rollout:
    """Replay one sample through the kernel (INS-EXEC) and read its Y (INS-SUCCESS)."""
    if not isinstance(sample, dict):
        raise InputError(where, f"expected a sample object, got {type(sample).__name__}")
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    if isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
        raise InputError(where, f"'id' must be a string or an integer, got {sample_id!r}")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise InputError(where, f"'epoch' must be an integer >= 0, got {epoch!r}")
    where = f"{where} (id {sample_id!r}, epoch {epoch})"
    calls = sample_calls(sample, where)
    task = InspectSample(tuple(calls), _no_tool_allowed(sample, where))
    outcome = replay(SEMANTICS, task, [c.action for c in calls])
    success, value = sample_success(sample, scorer, threshold, where)
    error = sample.get("error")
    limit = sample.get("limit")
    meta: dict[str, object] = {
        "scorer": scorer,
        "score": value,
        "threshold": threshold,
        "error": error.get("message") if isinstance(error, dict) else None,
        "limit": limit.get("type") if isinstance(limit, dict) else None,
    }
    key = ConditionKey(f"{DATASET_PREFIX}/{header.task}", header.model, header.method)
    return Rollout(key, str(sample_id), epoch, outcome, success, meta)


def _threshold(value: float | None) -> float:
    threshold = DEFAULT_THRESHOLD if value is None else value
    if not math.isfinite(threshold):
        raise InputError("--threshold", f"the inspect score threshold must be a finite number: {threshold}")
    return threshold


def read_log(path: str, options: AdapterOptions) -> Iterator[tuple[str, Rollout]]:
    """``(where, rollout)`` for every sample of one log, validated as it streams by."""
    threshold = _threshold(options.threshold)
    target = Path(path)
    if target.suffix == ".eval":
        items = iter_eval_log(target)
    elif target.suffix == ".json":
        items = iter_json_log(target)
    else:
        raise InputError(path, "expected an inspect log ending in .eval or .json")
    header: LogHeader | None = None
    raw_header: Any = None
    header_where = path
    scorer = options.scorer
    scorer_seen = False
    for kind, where, value in items:
        if kind == "eval":
            raw_header, header_where = value, where
            header = read_header(value, None, where, options)
            continue
        if kind == "plan":
            if header is not None and options.method is None:
                header = read_header(raw_header, value, header_where, options)
            continue
        if header is None:
            raise InputError(where, "sample before the log header")
        if scorer is None:
            scorer = header.scorers[0] if header.scorers else _first_score(value)
        if scorer is not None and isinstance(value, dict) and scorer in (value.get("scores") or {}):
            scorer_seen = True
        yield where, sample_rollout(value, header, scorer or "", threshold, where)
    if header is not None and header.scorers == () and scorer is None:
        raise InputError(path, "the log has no scorer and no scores: its success Y cannot be read")
    if header is not None and scorer is not None and not scorer_seen and scorer not in header.scorers:
        available = ", ".join(header.scorers) or "none"
        raise InputError(path, f"no scorer named {scorer!r} in this log (scorers: {available})")


def _first_score(sample: Any) -> str | None:
    scores = sample.get("scores") if isinstance(sample, dict) else None
    if isinstance(scores, dict) and scores:
        return str(next(iter(scores)))
    return None


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read inspect logs into rollouts; the key (condition, sample id, epoch) must be unique."""
    return unique_rollouts(
        paths,
        (item for path in paths for item in read_log(path, options)),
        lambda r, first: f"repeats sample {r.task_id!r} epoch {r.trial} of {first}",
        "no samples found",
    )


__all__ = [
    "ERROR_LABELS",
    "SEMANTICS",
    "EvalArchive",
    "InspectCall",
    "InspectSample",
    "InspectSemantics",
    "JsonStream",
    "iter_eval_log",
    "iter_json_log",
    "read",
]


# ---------------------------------------------------------------------------------------------
# Audit (AUDIT-INSPECT): the calls the adapter accepted are the gold; mutants record what
# inspect_ai records for a faulty call, and must be rejected with that fault's label


def _audit_items(
    paths: Sequence[str], options: AdapterOptions
) -> list[tuple[str, InspectSample, tuple[Action, ...]]]:
    """Every sample of ``paths`` as ``(where, sample, calls)``, after ``read`` has validated them."""
    read(paths, options)
    items: list[tuple[str, InspectSample, tuple[Action, ...]]] = []
    for path in paths:
        target = Path(path)
        logs = iter_eval_log(target) if target.suffix == ".eval" else iter_json_log(target)
        for kind, where, value in logs:
            if kind != "sample":
                continue
            here = f"{where} (id {value.get('id')!r}, epoch {value.get('epoch', 1)})"
            calls = tuple(sample_calls(value, here))
            task = InspectSample(calls, _no_tool_allowed(value, here))
            items.append((here, task, tuple(c.action for c in calls)))
    return items


def _inspect_mutants(
    sample: InspectSample,
    actions: tuple[Action, ...],
    outcome: Outcome,
    change: Callable[[InspectCall], tuple[InspectCall, str] | None],
) -> list[Mutant[InspectSample]]:
    out = []
    for i in range(min(outcome.fed - 1, len(actions))):
        changed = change(sample.calls[i])
        if changed is None:
            continue
        call, what = changed
        mutated = InspectSample(replace_at(sample.calls, i, call), sample.no_tool_allowed)
        out.append(Mutant(mutated, replace_at(actions, i, call.action), i + 1, what))
    return out


def _rename(call: InspectCall) -> tuple[InspectCall, str] | None:
    if call.offered is None:
        return None
    name = call.action.name + "_nonexistent"
    while name in call.offered:
        name += "_"
    action = ToolCall(name, call.action.arguments, call.action.call_id)
    return attrs.evolve(call, action=action), f"tool renamed to {name!r}"


def _parse_error(call: InspectCall) -> tuple[InspectCall, str]:
    raw = json.dumps(dict(call.action.arguments))[:-1]  # the closing brace cut off
    try:
        json.loads(raw)
        details = "no error"
    except ValueError as exc:
        details = str(exc)
    error = f"Error parsing the following tool call arguments:\n\n{raw}\n\nError details: {details}"
    action = ToolCall(call.action.name, {}, call.action.call_id)
    return attrs.evolve(call, action=action, parse_error=error), f"arguments {raw!r} not parsed"


def _tool_error(error_type: str, message: str) -> Callable[[InspectCall], tuple[InspectCall, str]]:
    def change(call: InspectCall) -> tuple[InspectCall, str]:
        new = attrs.evolve(call, answered=True, error_type=error_type, error_message=message)
        return new, f"tool message error {error_type!r}"

    return change


def _operator(
    name: str,
    description: str,
    label: Label,
    change: Callable[[InspectCall], tuple[InspectCall, str] | None],
) -> Operator[InspectSample]:
    def make(
        sample: InspectSample, actions: tuple[Action, ...], outcome: Outcome
    ) -> list[Mutant[InspectSample]]:
        return _inspect_mutants(sample, actions, outcome, change)

    return Operator(name, description, Expect.LABEL, make, label)


#: The inspect audit's operators and the label each mutant must be rejected with (INS-EXEC, INS-LABELS).
AUDIT_OPERATORS: tuple[Operator[InspectSample], ...] = (
    _operator("unknown-tool", "call a tool that was not offered", Label.SCHEMA, _rename),
    _operator("arguments-not-json", "arguments inspect could not parse", Label.SCHEMA, _parse_error),
    _operator(
        "validation-error",
        "arguments that fail the tool's schema (inspect: a 'parsing' error)",
        Label.SCHEMA,
        _tool_error("parsing", "Found 1 validation errors parsing tool input arguments: required property"),
    ),
    _operator(
        "file-not-found",
        "the tool reports a missing file",
        Label.DEPENDENCY,
        _tool_error("file_not_found", "File not found: missing.txt"),
    ),
    _operator(
        "permission",
        "the tool reports a permission error",
        Label.PRECONDITION,
        _tool_error("permission", "Permission denied: /root"),
    ),
    _operator(
        "timeout",
        "the tool times out",
        Label.STATE_CONSISTENCY,
        _tool_error("timeout", "Command timed out before completing."),
    ),
)


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter inspect FILE...`` (AUDIT-INSPECT)."""
    if not paths:
        raise InputError("--adapter inspect", "the inspect audit reads logs: give FILE...")
    items = _audit_items(paths, options)
    gold, first_rejected = accepted_prefixes(SEMANTICS, items)
    without_calls = sum(1 for _, _, actions in items if not actions)
    unknown_offer = sum(1 for t in gold for c in t.task.calls[: len(t.actions)] if c.offered is None)
    plan: AuditPlan[InspectSample] = AuditPlan(
        adapter="inspect",
        source=f"{', '.join(paths)}: {len(items)} samples, {sum(len(a) for _, _, a in items)} calls",
        semantics=SEMANTICS,
        gold=gold,
        gold_kind="calls the adapter accepted, before each sample's first rejection",
        operators=AUDIT_OPERATORS,
        not_checked=(
            "whether the recorded tool messages are right: they are taken as given, nothing is executed",
            "argument schemas: the adapter does not validate arguments itself; inspect_ai records its "
            "own validation failures as 'parsing' errors, which operator validation-error writes",
            f"unknown-tool for the {unknown_offer} accepted calls whose log records no offered tools",
            "calls after each sample's first rejection (replay stops there: CONV-REPLAY)",
            f"{first_rejected} samples whose first call was rejected and {without_calls} without a "
            "call: no accepted call to mutate",
        ),
    )
    return run_audit(plan, seed_of(options))


__all__ += ["AUDIT_OPERATORS", "audit"]
