"""Reading inspect_ai logs, ``.eval`` and ``.json``, into rollouts (spec: spec/adapters/inspect.md).

Reads the logs without inspect_ai: a ``.eval`` log is a ZIP archive whose members are
zstd-compressed JSON since inspect_ai 0.3.206 (ZIP method 93, which :mod:`zipfile` cannot
decompress before Python 3.14), so the raw member bytes are decompressed with ``zstandard``; a
``.json`` log is one JSON document, read incrementally so that samples are processed one at a
time (INS-FILES). Both give the same header (``eval``, ``plan``, ``results``) and samples; each
sample becomes an :class:`~.semantics.InspectSample` (INS-CALLS, INS-NOTOOL) replayed by the
kernel with :class:`~.semantics.InspectSemantics`, and Y is read from one scorer (INS-SUCCESS).
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs
import zstandard

from prefixexec.kernel import ConditionKey, Rollout, ToolCall, replay

from .. import harness
from ..errors import InputError
from ..inputs import open_seekable, open_text, plain_name, reading
from ..labels import load_label_rules
from ..limits import DEEP, MAX_MEMBER_BYTES, MAX_RATIO, MAX_TRIAL, RATIO_FLOOR, notice
from ..numbers import json_fault
from ..records import unique_rollouts
from ..text import one_line
from .semantics import (
    DEFAULT_THRESHOLD,
    InspectCall,
    InspectSample,
    InspectSemantics,
    ScoreShapeError,
    is_success,
    no_tool_rule,
    value_to_float,
)

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET_PREFIX = "inspect"
DEFAULT_METHOD = "default"
#: ZIP compression method of zstd members (APPNOTE 4.4.5).
ZIP_ZSTD = 93


# ---------------------------------------------------------------------------------------------
# Reading .eval archives (INS-FILES)


#: ZIP general-purpose flag bits that an inspect writer never sets, with what each means: the
#: member cannot be read without a password or a patch (zipfile raises RuntimeError or
#: NotImplementedError for them).
_FLAG_FAULTS = (
    (0x1, "is encrypted (ZIP flag bit 0): it needs a password"),
    (0x20, "holds compressed patched data (ZIP flag bit 5)"),
    (0x40, "uses strong encryption (ZIP flag bit 6)"),
)


#: What zipfile raises for a member it cannot decompress.
_MEMBER_FAULTS = (zipfile.BadZipFile, zlib.error, OSError, RuntimeError, NotImplementedError, EOFError)


class EvalArchive:
    """Members of a ``.eval`` ZIP archive, decompressed one at a time (zstd or deflate)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Opened with the checks of every input (no device, FIFO or pseudo-file: HOSTILE-*).
        # A gzip or zstd copy of the archive is decompressed to a seekable file (INPUT-COMPRESSED).
        self.handle = open_seekable(str(path), "an inspect .eval log")
        try:
            self.zip = zipfile.ZipFile(self.handle)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            self.handle.close()
            raise InputError(
                str(path), f"not a ZIP archive (an .eval log is one): {one_line(str(exc))}"
            ) from None
        self.names = self.zip.namelist()
        try:
            self._check_layout()
        except BaseException:
            self.close()
            raise

    def _check_layout(self) -> None:
        """HOSTILE-ZIP-OVERLAP: every member's local header is where the central directory says,
        names the same member with the same method, and its data ends before the next member (or
        the directory) begins: members that share bytes (hundreds of entries pointing at one
        member, each within HOSTILE-ZIP's bounds, decompressed 25.6 GB from 147 KB) are refused,
        as Python 3.12's zipfile refuses them. One read of 30 bytes and the name per member."""
        infos = sorted(self.zip.infolist(), key=lambda info: info.header_offset)
        start_dir: int = getattr(self.zip, "start_dir", 0) or 0
        with reading(str(self.path)):
            for index, info in enumerate(infos):
                where = f"{self.path}: {info.filename}"
                following = infos[index + 1].header_offset if index + 1 < len(infos) else start_dir
                self.handle.seek(info.header_offset)
                header = self.handle.read(30)
                if len(header) != 30 or header[:4] != b"PK\x03\x04":
                    raise InputError(where, "corrupt archive: no local file header where the directory says")
                method = struct.unpack("<H", header[8:10])[0]
                name_length, extra_length = struct.unpack("<HH", header[26:30])
                name = self.handle.read(name_length).decode(
                    "utf-8" if info.flag_bits & 0x800 else "cp437", "replace"
                )
                if name != info.orig_filename or method != info.compress_type:
                    raise InputError(
                        where,
                        "corrupt archive: the local header does not match the directory entry "
                        "(HOSTILE-ZIP-OVERLAP)",
                    )
                end = info.header_offset + 30 + name_length + extra_length + info.compress_size
                if end > following:
                    raise InputError(
                        where,
                        "member overlaps the next member of the archive (HOSTILE-ZIP-OVERLAP: members "
                        "that share bytes are refused)",
                    )

    def close(self) -> None:
        self.zip.close()
        self.handle.close()

    def read(self, name: str) -> bytes:
        """The decompressed bytes of member ``name``, checked against its size and CRC-32."""
        where = f"{self.path}: {name}"
        info = self.zip.getinfo(name)
        for bit, what in _FLAG_FAULTS:
            if info.flag_bits & bit:
                raise InputError(where, f"member {what} (HOSTILE-ZIP: an .eval log's members are not)")
        if info.file_size > MAX_MEMBER_BYTES:
            raise InputError(
                where,
                f"member declares {info.file_size} bytes, over the limit {MAX_MEMBER_BYTES} (HOSTILE-ZIP)",
            )
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise InputError(
                where,
                f"member expands {info.compress_size} bytes to {info.file_size}, more than "
                f"{MAX_RATIO} times (HOSTILE-ZIP: a compression bomb)",
            )
        if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            try:
                return self.zip.read(info)
            except _MEMBER_FAULTS as exc:
                raise InputError(where, f"corrupt member: {one_line(str(exc))}") from None
        if info.compress_type != ZIP_ZSTD:
            raise InputError(where, f"unsupported ZIP compression method {info.compress_type}")
        with reading(str(self.path)):
            handle = self.handle
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
            raise InputError(where, f"not valid JSON: {json_fault(exc)}") from None
        except RecursionError:
            raise InputError(where, f"not valid JSON: {DEEP}") from None


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
            except RecursionError:
                raise InputError(self.name, f"not valid JSON in {what}: {DEEP}") from None
            except ValueError as exc:  # an integer beyond Python's limit on digits
                raise InputError(self.name, f"not valid JSON in {what}: {json_fault(exc)}") from None
            if end == len(self.buffer) and not self.eof and self._more():
                continue  # a number or literal may continue in the next chunk
            self.pos = end
            return value


#: The parts of a ``.json`` log that make its header (INS-FILES).
HEADER_KEYS = ("eval", "plan", "results")


def _header_complete(parts: Mapping[str, Any]) -> bool:
    """Whether the header parts read so far settle the method and the scorer (INS-FILES)."""
    if "eval" not in parts:
        return False
    spec = parts["eval"]
    if not isinstance(spec, dict):
        return True  # read_header reports it
    solver = spec.get("solver")
    method_known = (isinstance(solver, str) and bool(solver)) or "plan" in parts
    scorer_known = bool(spec.get("scorers")) or "results" in parts
    return method_known and scorer_known


def iter_json_log(path: Path) -> Iterator[tuple[str, str, Any]]:
    """Like :func:`iter_eval_log` for a ``.json`` log, reading the ``samples`` list one by one.

    The header is ``{"eval", "plan", "results"}`` (those the log has). inspect writes them before
    ``samples``; a sample that comes before the header is complete (``eval`` read, and ``plan``
    unless ``eval.solver`` names the method, and ``results`` unless ``eval.scorers`` names the
    scorers) is held until it is, or until the document ends.
    """
    handle = open_text(str(path), "an inspect .json log")
    name = str(path)
    header_where = f"{path}: eval"
    parts: dict[str, Any] = {}
    held: list[tuple[str, Any]] = []
    emitted = False
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
                            if emitted:
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
                    if key in HEADER_KEYS and not emitted and key not in parts:
                        parts[key] = value
                        if _header_complete(parts):
                            emitted = True
                            yield "eval", header_where, dict(parts)
                            yield from (("sample", where, sample) for where, sample in held)
                            held.clear()
                if stream.peek() == ",":
                    stream.pos += 1
                    continue
                stream.expect("}", "or ',' after a value of the log object")
                break
        if stream.peek() is not None:
            raise InputError(name, "not valid JSON: extra data after the log object")
    except UnicodeDecodeError as exc:
        raise InputError(name, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:  # HOSTILE-READ: a read that fails names the file
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None
    finally:
        handle.close()
    if "eval" not in parts:
        raise InputError(name, "no 'eval' object: not an inspect log")
    if not emitted:
        yield "eval", header_where, dict(parts)
        yield from (("sample", where, sample) for where, sample in held)


def iter_log(path: Path) -> Iterator[tuple[str, str, Any]]:
    """The header and samples of one log, by its file name (INS-FILES)."""
    name = plain_name(path.name)  # x.eval.gz, x.json.zst: read decompressed (INPUT-COMPRESSED)
    if name.endswith(".eval"):
        return iter_eval_log(path)
    if name.endswith(".json"):
        return iter_json_log(path)
    raise InputError(str(path), "expected an inspect log ending in .eval or .json")


# ---------------------------------------------------------------------------------------------
# The header (INS-DATASET, INS-SUCCESS, INS-NOTOOL)


@attrs.frozen(slots=True)
class LogHeader:
    """What a log's header says about its condition, scorers and the tools its plan gives."""

    task: str
    model: str
    method: str
    scorers: tuple[str, ...]
    #: Tools of the plan's ``use_tools`` steps; ``None``: the plan gives none it records.
    plan_tools: tuple[str, ...] | None = None
    #: ``results.scores[0].name``: the scorer of a sample's single ``score`` in old logs.
    results_scorer: str | None = None


def _list(value: Any, where: str, what: str) -> list[Any]:
    """``value`` if it is a list, ``[]`` when absent or null; InputError otherwise."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(where, f"{what} must be a list, got {type(value).__name__}")
    return value


def read_header(header: Any, where: str, options: AdapterOptions) -> LogHeader:
    """The condition (dataset ``inspect/<task>``, model, method), scorers and plan tools of a log."""
    spec = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(spec, dict):
        raise InputError(where, "expected an 'eval' object (the log's task, model and scorers)")
    task, model = spec.get("task"), spec.get("model")
    if not isinstance(task, str) or not task:
        raise InputError(where, f"eval.task must be a non-empty string, got {task!r}")
    if not isinstance(model, str) or not model:
        raise InputError(where, f"eval.model must be a non-empty string, got {model!r}")
    plan = header.get("plan")
    method = options.method or _method(spec, plan)
    scorers: list[str] = []
    for item in _list(spec.get("scorers"), where, "eval.scorers"):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            scorers.append(item["name"])
    results = header.get("results")
    result_names: list[str] = []
    if isinstance(results, dict):
        for item in _list(results.get("scores"), where, "results.scores"):
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                result_names.append(item["name"])
    first_result = result_names[0] if result_names else None
    chosen = tuple(scorers or result_names)
    return LogHeader(task, options.model or model, method, chosen, _plan_tools(plan), first_result)


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


def _plan_tools(plan: Any) -> tuple[str, ...] | None:
    """Names of the tools the plan's ``use_tools`` steps give (``None``: no such step gives any)."""
    steps = plan.get("steps") if isinstance(plan, dict) else None
    found: list[str] | None = None
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict) or not isinstance(step.get("solver"), str):
            continue
        params = step.get("params")
        tools = params.get("tools") if isinstance(params, dict) else None
        if step["solver"].rsplit("/", 1)[-1] != "use_tools" or not isinstance(tools, list) or not tools:
            continue
        found = found or []
        found.extend(t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str))
    return None if found is None else tuple(found)


# ---------------------------------------------------------------------------------------------
# Samples -> tasks (INS-CALLS, INS-NOTOOL)


def sample_events(sample: Mapping[str, Any]) -> Any:
    """The sample's events: ``events``, or in logs before inspect_ai 0.3.4x ``transcript.events``."""
    events = sample.get("events")
    if events is None:
        transcript = sample.get("transcript")
        if isinstance(transcript, dict):
            events = transcript.get("events")
    return events


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


@attrs.frozen(slots=True)
class SampleCalls:
    """The calls of a sample with their tool messages, and the tool messages no call claimed."""

    calls: tuple[InspectCall, ...]
    #: Every ``tool`` message of the sample (answering a call or not).
    tool_messages: int
    #: ``function`` of each tool message that answers no recorded call.
    unclaimed: tuple[str, ...]
    #: The 1-based user turn of each call, and the number of user messages (TURN-MAP).
    turns: tuple[int, ...] = ()
    user_turns: int = 0


def sample_calls(sample: Mapping[str, Any], where: str) -> SampleCalls:
    """The calls of a sample in message order, each with its tool message (INS-CALLS)."""
    messages = sample.get("messages")
    if not isinstance(messages, list):
        raise InputError(where, "'messages' must be a list")
    by_message, union = _offered_tools(sample_events(sample))
    calls: list[InspectCall] = []
    pending: dict[str, list[int]] = {}
    tool_messages = 0
    unclaimed: list[str] = []
    user_turns = 0
    turns: list[int] = []
    for index, message in enumerate(messages):
        here = f"{where}: messages[{index}]"
        if not isinstance(message, dict):
            raise InputError(here, f"expected a message object, got {type(message).__name__}")
        role = message.get("role")
        if role == "user":
            user_turns += 1
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
                turns.append(max(user_turns, 1))
        elif role == "tool":
            tool_messages += 1
            call_id = message.get("tool_call_id")
            queue = pending.get(call_id) if isinstance(call_id, str) else None
            if not queue:
                # answers no recorded call (e.g. a call removed by compaction): not an action
                function = message.get("function")
                unclaimed.append(function if isinstance(function, str) else "?")
                continue
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
    return SampleCalls(tuple(calls), tool_messages, tuple(unclaimed), tuple(turns), user_turns)


def _metadata_no_tool(sample: Mapping[str, Any], where: str) -> bool | None:
    metadata = sample.get("metadata")
    if isinstance(metadata, dict) and "no_tool_allowed" in metadata:
        value = metadata["no_tool_allowed"]
        if not isinstance(value, bool):
            raise InputError(where, f"metadata.no_tool_allowed must be a boolean, got {value!r}")
        return value
    return None


def sample_task(
    sample: Mapping[str, Any], header: LogHeader, where: str
) -> tuple[InspectSample, SampleCalls]:
    """The task replayed for one sample (INS-CALLS, INS-NOTOOL) and what its messages held."""
    found = sample_calls(sample, where)
    _, union = _offered_tools(sample_events(sample))
    rule = no_tool_rule(_metadata_no_tool(sample, where), union, found.unclaimed, header.plan_tools)
    return InspectSample(found.calls, rule), found


# ---------------------------------------------------------------------------------------------
# Success (INS-SUCCESS, INS-VALUE)


def sample_success(
    sample: Mapping[str, Any], scorer: str, threshold: float, where: str
) -> tuple[bool, object]:
    """``(Y, value)``: the value's float (INS-VALUE) >= threshold; no score is a failure."""
    scores = sample.get("scores")
    if scores is not None and not isinstance(scores, dict):
        raise InputError(where, f"'scores' must be an object, got {type(scores).__name__}")
    score = (scores or {}).get(scorer)
    if score is None:
        return False, None
    if not isinstance(score, dict) or "value" not in score:
        raise InputError(where, f"scores.{scorer} must be an object with a 'value'")
    value = score["value"]
    try:
        return is_success(value, threshold), value
    except ScoreShapeError as exc:
        raise InputError(
            where, f"scores.{scorer}.value is a {exc}; give --scorer a scorer with one value"
        ) from None


def _threshold(value: float | None) -> float:
    threshold = DEFAULT_THRESHOLD if value is None else value
    if not math.isfinite(threshold):
        raise InputError("--threshold", f"the inspect score threshold must be a finite number: {threshold}")
    return threshold


#: The key inspect gives a sample's single ``score`` before it knows the scorer's name.
SCORER_PLACEHOLDER = "88F74D2C"


def migrate_score(sample: Any, header: LogHeader, where: str) -> Any:
    """A sample of an old log with one ``score`` as ``scores`` under the results' first scorer.

    inspect's own migration (``EvalSample.migrate_deprecated`` and
    ``EvalLog.populate_scorer_name_for_samples``): ``{"score": s}`` becomes ``{"scores": {name: s}}``
    where ``name`` is ``results.scores[0].name`` (INS-SUCCESS).
    """
    if not isinstance(sample, dict) or "score" not in sample:
        return sample
    if "scores" in sample:
        raise InputError(where, "a sample has both 'score' (old logs) and 'scores'")
    migrated = {k: v for k, v in sample.items() if k != "score"}
    migrated["scores"] = {header.results_scorer or SCORER_PLACEHOLDER: sample["score"]}
    return migrated


def _first_score(sample: Any) -> str | None:
    scores = sample.get("scores") if isinstance(sample, dict) else None
    if isinstance(scores, dict) and scores:
        return str(next(iter(scores)))
    return None


# ---------------------------------------------------------------------------------------------
# Logs -> rollouts


def semantics_for(options: AdapterOptions) -> InspectSemantics:
    """The semantics with the user's label rules for inspect (INS-LABEL-RULES)."""
    return InspectSemantics(load_label_rules(options.label_rules, "inspect"))


@attrs.frozen(slots=True)
class LogItem:
    """One sample of a log: where it is (``place`` adds its id and epoch), its rollout and task."""

    where: str
    place: str
    rollout: Rollout
    task: InspectSample


def log_items(path: str, options: AdapterOptions, semantics: InspectSemantics) -> Iterator[LogItem]:
    """Every sample of one log, validated as it streams by (INS-ERRORS, INS-NO-RESULTS)."""
    threshold = _threshold(options.threshold)
    harness.policy(options, "inspect")  # checks the value
    errors: list[harness.HarnessError] = []
    header: LogHeader | None = None
    scorer = options.scorer
    scorer_seen = False
    calls = tool_messages = samples = 0
    for kind, where, value in iter_log(Path(path)):
        if kind == "eval":
            header = read_header(value, where, options)
            continue
        if header is None:
            raise InputError(where, "sample before the log header")
        value = migrate_score(value, header, where)
        if scorer is None:
            scorer = header.scorers[0] if header.scorers else _first_score(value)
        if scorer is not None and isinstance(value, dict) and scorer in (value.get("scores") or {}):
            scorer_seen = True
        place, rollout, task, found = sample_rollout(value, header, scorer or "", threshold, where, semantics)
        calls += len(found.calls)
        tool_messages += found.tool_messages
        samples += 1
        message = harness_message(value)
        if message is not None:  # INS-HARNESS: the sample errored
            scored = scorer is not None and scorer in (value.get("scores") or {})
            counted = scored if options.harness_errors is None else options.harness_errors == "failure"
            key = rollout.condition
            errors.append(harness.HarnessError(place, key, rollout.task_id, rollout.trial, message, counted))
            if not counted:
                continue
            rollout = harness.counted_rollout(rollout, message, len(task.calls))
        yield LogItem(where, place, rollout, task)
    if header is not None and header.scorers == () and scorer is None:
        raise InputError(path, "the log has no scorer and no scores: its success Y cannot be read")
    if header is not None and scorer is not None and not scorer_seen and scorer not in header.scorers:
        available = ", ".join(header.scorers) or "none"
        raise InputError(path, f"no scorer named {scorer!r} in this log (scorers: {available})")
    if calls and not tool_messages:
        raise InputError(
            path,
            f"the log records {calls} tool calls but not one tool result (no 'tool' message in any "
            "sample): its writer does not log tool results, so whether the calls executed cannot be "
            "read (INS-NO-RESULTS)",
        )
    if samples and scorer is not None and not scorer_seen:
        notice(
            f"prefixexec: warning: {path}: none of its {samples} samples has a score from {scorer!r} "
            "(the log was not scored): Y = 0 for every sample (INS-UNSCORED)"
        )
    harness.report("inspect", errors)


def harness_message(sample: Mapping[str, Any]) -> str | None:
    """What an errored sample's ``error`` says (INS-HARNESS): its message and, from its traceback,
    where it was raised (HARNESS-WHERE); ``None`` for a sample without an error."""
    error = sample.get("error")
    if not isinstance(error, dict):
        return None
    text = harness.shorten(str(error.get("message") or "no message"), 200)
    trace = error.get("traceback")
    where = harness.traceback_summary(trace) if isinstance(trace, str) else None
    return f"the sample errored{' ' + where if where else ''}: {text}"


def sample_rollout(
    sample: Any,
    header: LogHeader,
    scorer: str,
    threshold: float,
    where: str,
    semantics: InspectSemantics,
) -> tuple[str, Rollout, InspectSample, SampleCalls]:
    """``(place, rollout, task, calls)`` of one sample: replayed through the kernel (INS-EXEC), with
    its Y (INS-SUCCESS); ``place`` is ``where`` with the sample's id and epoch."""
    if not isinstance(sample, dict):
        raise InputError(where, f"expected a sample object, got {type(sample).__name__}")
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    if isinstance(sample_id, bool) or not isinstance(sample_id, str | int):
        raise InputError(where, f"'id' must be a string or an integer, got {sample_id!r}")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise InputError(where, f"'epoch' must be an integer >= 0, got {epoch!r}")
    if epoch > MAX_TRIAL:  # HOSTILE-TRIAL, named by the log's own field (the epoch is the trial)
        what = f"'epoch' = {epoch} exceeds the limit {MAX_TRIAL} = 2**62 - 1 (HOSTILE-TRIAL)"
        raise InputError(where, what)
    where = f"{where} (id {sample_id!r}, epoch {epoch})"
    task, found = sample_task(sample, header, where)
    outcome = replay(semantics, task, [c.action for c in task.calls])
    success, value = sample_success(sample, scorer, threshold, where)
    error = sample.get("error")
    limit = sample.get("limit")
    meta: dict[str, object] = {
        "scorer": scorer,
        "score": value,
        "threshold": threshold,
        "error": error.get("message") if isinstance(error, dict) else None,
        "limit": limit.get("type") if isinstance(limit, dict) else None,
        "action_turns": list(found.turns),  # TURN-MAP
        "turns": found.user_turns,
    }
    if not task.calls:
        meta["no_tool"] = task.no_tool.why
    key = ConditionKey(f"{DATASET_PREFIX}/{header.task}", header.model, header.method)
    return where, Rollout(key, str(sample_id), epoch, outcome, success, meta), task, found


def read_log(path: str, options: AdapterOptions) -> Iterator[tuple[str, Rollout]]:
    """``(where, rollout)`` for every sample of one log, validated as it streams by."""
    semantics = semantics_for(options)
    for item in log_items(path, options, semantics):
        yield item.where, item.rollout


def _repeated(rollout: Rollout, first: str) -> str:
    return f"repeats sample {rollout.task_id!r} epoch {rollout.trial} of {first}"


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read inspect logs into rollouts; the key (condition, sample id, epoch) must be unique."""
    semantics = semantics_for(options)
    return unique_rollouts(
        paths,
        ((item.where, item.rollout) for path in paths for item in log_items(path, options, semantics)),
        _repeated,
        "no samples found",
    )


def read_items(paths: Sequence[str], options: AdapterOptions, semantics: InspectSemantics) -> list[LogItem]:
    """Every sample of ``paths``, validated as :func:`read` validates them."""
    items = [item for path in paths for item in log_items(path, options, semantics)]
    unique_rollouts(paths, ((item.where, item.rollout) for item in items), _repeated, "no samples found")
    return items


__all__ = [
    "DATASET_PREFIX",
    "DEFAULT_METHOD",
    "ZIP_ZSTD",
    "EvalArchive",
    "JsonStream",
    "LogHeader",
    "LogItem",
    "SampleCalls",
    "iter_eval_log",
    "iter_json_log",
    "iter_log",
    "log_items",
    "read",
    "read_header",
    "read_items",
    "read_log",
    "sample_calls",
    "sample_success",
    "sample_task",
    "semantics_for",
    "value_to_float",
]
