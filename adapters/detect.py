"""``--adapter auto``: which adapter reads a file, from its path and first bytes (spec: DETECT-*).

:func:`detect` looks at one input (file, directory or ``-``) and returns a :class:`Detection`
(the adapter and why), or raises :class:`InputError` saying what the input looks like when no
adapter reads it. :func:`resolve` detects every input of a command and requires one adapter
for all of them. :func:`hint` explains a failure of an explicitly chosen adapter: what the
file looks like and which ``--adapter`` reads it.

Only the first bytes of a file are read (at most :data:`HEAD_BYTES`); standard input is peeked
at (its first line, or all of it when the first line is not a whole JSON value) and put back.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO, cast

import attrs

from .errors import InputError
from .inputs import plain_name

STDIN = "-"
#: The adapter of an empty input: none of its own (DETECT-EMPTY).
EMPTY = ""
#: Bytes read from the start of a file to recognise it.
HEAD_BYTES = 1 << 20
PARQUET_MAGIC = b"PAR1"
ZIP_MAGIC = b"PK\x03\x04"
#: BFCL result files: ``BFCL_v<N>_<category>_result.json`` (DETECT-NAME).
BFCL_NAME = re.compile(r"^BFCL_v\d+_.+_result\.json$")
#: BFCL's score files: ``BFCL_v<N>_<category>_score.json``, its own verdicts, not model output.
BFCL_SCORE_NAME = re.compile(r"^BFCL_v\d+_.+_score\.json$")
TOOLSANDBOX_SUMMARY = "result_summary.json"
#: tau2's directory results format: ``results.json`` beside ``simulations/`` (DETECT-TAU2-DIR).
TAU2_RESULTS, TAU2_SIMULATIONS = "results.json", "simulations"
#: DETECT-UNKNOWN: keys of a Claude Code session log line (``~/.claude/projects/*/<session>.jsonl``).
CLAUDE_CODE_KEYS = frozenset({"sessionId", "uuid", "type"})
#: Why the fallback reads an unknown JSON object line as records (DETECT-LINES).
RECORDS_FALLBACK = "JSON lines (records: the reader checks each line)"

#: How each adapter's input is called in messages.
FORMATS = {
    "records": "prefixexec JSONL records",
    "chat": "chat transcripts (JSONL lines with messages)",
    "taubench": "a tau-bench results file",
    "toolsandbox": "a ToolSandbox run",
    "inspect": "an inspect_ai log",
    "bfcl": "a BFCL result file",
    "parquet": "a Parquet outcome table",
    "otel": "OpenTelemetry GenAI traces (OTLP JSON Lines, JSON or protobuf)",
    "openinference": "OpenInference traces (OTLP JSON Lines or JSON)",
    "agents": "an OpenAI Agents SDK trace export",
    "langsmith": "a LangSmith run export",
    "mlflow": "an MLflow trace export (Trace.to_json())",
    "atif": "an ATIF trajectory (Harbor's Agent Trajectory Interchange Format)",
}
#: DETECT-TRACES: an OTLP file whose head holds this attribute key is OpenInference, else GenAI.
OPENINFERENCE_KEY = '"openinference.span.kind"'


#: The first field of an OTLP ``ExportTraceServiceRequest`` (``resource_spans``: field 1,
#: length-delimited) and the fields of a ``ResourceSpans`` that may follow its length.
_RESOURCE_SPANS_TAG = 0x0A
_RESOURCE_FIELDS = (0x0A, 0x12, 0x1A)


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    """The base-128 integer at ``data[at]`` and the index after it (None: cut off or too long)."""
    value = shift = 0
    for index in range(at, min(at + 10, len(data))):
        value |= (data[index] & 0x7F) << shift
        if data[index] < 0x80:
            return value, index + 1
        shift += 7
    return None


def _request_start(data: bytes) -> bool:
    """``data`` starts like an OTLP ``ExportTraceServiceRequest``: field 1 with a length, then a
    field of ``ResourceSpans`` (or an empty one)."""
    if data[:1] != bytes((_RESOURCE_SPANS_TAG,)):
        return False
    found = _varint(data, 1)
    if found is None:
        return False
    length, after = found
    return length == 0 or (after < len(data) and data[after] in _RESOURCE_FIELDS)


def protobuf_form(head: bytes) -> str | None:
    """DETECT-TRACES: ``proto`` (one OTLP ``ExportTraceServiceRequest``), ``proto-stream`` (a size
    in 4 bytes big-endian, then a request, as the Collector's file exporter writes) or None."""
    from . import limits

    if _request_start(head):
        return "proto"
    size = int.from_bytes(head[:4], "big")
    if len(head) > 4 and 0 < size <= limits.max_line_bytes and _request_start(head[4:]):
        return "proto-stream"
    return None


def _protobuf_traces(head: bytes) -> Detection | None:
    """DETECT-TRACES: OTLP protobuf (the ``otel`` and ``openinference`` adapters read both forms;
    OpenInference when the head holds its span kind's attribute key, as the JSON forms are told)."""
    form = protobuf_form(head)
    if form is None:
        return None
    adapter, convention = (
        ("openinference", "OpenInference spans")
        if OPENINFERENCE_KEY.strip('"').encode("ascii") in head
        else ("otel", "resource_spans")
    )
    if form == "proto":
        return Detection(adapter, f"OTLP protobuf: an ExportTraceServiceRequest ({convention})")
    return Detection(
        adapter,
        f"OTLP protobuf: ExportTraceServiceRequests each after a 4-byte size "
        f"(the Collector's file exporter; {convention})",
    )


def _trace_object(keys: set[str], text: str) -> Detection | None:
    """DETECT-TRACES: a JSON object of a trace format (OTLP, an Agents SDK export, a LangSmith run)."""
    if "resourceSpans" in keys:
        if OPENINFERENCE_KEY in text:
            return Detection("openinference", "OTLP JSON with 'resourceSpans' and openinference.span.kind")
        return Detection("otel", "OTLP JSON with 'resourceSpans' (OpenTelemetry GenAI spans)")
    if "object" in keys and ({"span_data", "workflow_name"} & keys):
        return Detection("agents", "JSON lines with 'object' and 'span_data' (Agents SDK trace export)")
    if "run_type" in keys and ({"trace_id", "dotted_order", "parent_run_id"} & keys):
        return Detection("langsmith", "JSON lines with 'run_type' and 'trace_id' (LangSmith runs)")
    if {"info", "data"} <= keys and '"trace_id"' in text and "mlflow" in text:
        return Detection("mlflow", "a JSON object with 'info' and 'data' (an MLflow trace, Trace.to_json())")
    if "schema_version" in keys and "steps" in keys and "ATIF" in text:
        return Detection("atif", "a JSON object with 'schema_version' ATIF and 'steps' (an ATIF trajectory)")
    return None


@attrs.frozen(slots=True)
class Detection:
    """The adapter that reads an input, and what in the input said so."""

    adapter: str
    why: str


def last_part(path: str) -> str:
    """``pathlib.Path(path).name`` without importing pathlib (start-up, #16): the last part of
    the path that is neither empty nor ``.`` (``''`` if there is none)."""
    separators = os.sep + (os.altsep or "")
    parts = re.split(f"[{re.escape(separators)}]", path)
    named = [part for part in parts if part not in ("", ".")]
    return named[-1] if named else ""


def _is_pipe(path: str) -> bool:
    import stat

    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _head(path: str) -> tuple[bytes, str | None]:
    """The first :data:`HEAD_BYTES` of a file, opened with the checks every input gets (no
    device, FIFO or pseudo-file: HOSTILE-DEVICE, HOSTILE-FIFO, HOSTILE-PSEUDO); of a gzip or zstd
    file, its first decompressed bytes and the compression's name (INPUT-COMPRESSED, DETECT-MAGIC)."""
    from .inputs import compressed_as, open_binary, reading

    with reading(path), open_binary(path) as handle:
        return handle.read(HEAD_BYTES), compressed_as(handle)


def _top_level_keys(text: str) -> list[str]:
    """The keys of the JSON object that ``text`` starts with, in order, as far as ``text`` goes.

    A key whose value is cut off by the end of ``text`` is still listed (a file's head holds the
    first keys of a document too large to read here).
    """
    decoder = json.JSONDecoder()
    keys: list[str] = []
    i = 1  # after "{"
    n = len(text)
    whitespace = " \t\r\n"
    while True:
        while i < n and text[i] in whitespace:
            i += 1
        if i >= n or text[i] != '"':
            return keys
        try:
            key, i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):  # HOSTILE-DEPTH
            return keys
        keys.append(str(key))
        while i < n and text[i] in whitespace + ":":
            i += 1
        try:
            _, i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):  # HOSTILE-DEPTH
            return keys
        while i < n and text[i] in whitespace:
            i += 1
        if i >= n or text[i] != ",":
            return keys
        i += 1


def _line_keys(keys: set[str]) -> Detection | None:
    """DETECT-LINES: the keys of a record, a chat line or a BFCL entry."""
    if "outcome" in keys or "actions" in keys:
        return Detection("records", "JSON lines with 'outcome' or 'actions'")
    found = _trace_object(keys, "")
    if found is not None and found.adapter not in ("otel", "openinference"):
        return found
    if "messages" in keys:
        return Detection("chat", "JSON lines with 'messages'")
    if "id" in keys and "result" in keys:
        return Detection("bfcl", "JSON lines with 'id' and 'result' (BFCL entries)")
    return None


def _line_object(keys: set[str]) -> Detection | None:
    """DETECT-LINES: a JSON object on one line: a record, a chat line, a BFCL entry, or a whole log."""
    found = _line_keys(keys)
    if found is not None:
        return found
    found = _document_object(keys)
    if found is not None:
        return found
    # Any other object on one line: JSON lines of records, whose reader says what is missing.
    return Detection("records", RECORDS_FALLBACK)


def _document_object(keys: set[str]) -> Detection | None:
    """DETECT-JSON: a JSON object document: an inspect log or a tau2 results file."""
    if "eval" in keys and ({"samples", "results", "status", "version"} & keys):
        return Detection("inspect", "a JSON object with 'eval' (an inspect_ai .json log)")
    if "simulations" in keys or ("info" in keys and "tasks" in keys):
        return Detection("taubench", "a JSON object with 'simulations' (tau2 results)")
    return None


def _list_document(text: str) -> Detection | None:
    """DETECT-JSON: a JSON list whose first element is a tau-bench v1 result."""
    body = text.lstrip()[1:].lstrip()
    if not body.startswith("{"):
        return None
    keys = set(_top_level_keys(body))
    if "run_type" in keys and "trace_id" in keys:
        return Detection("langsmith", "a JSON list of runs with 'run_type' and 'trace_id' (LangSmith runs)")
    if "task_id" in keys and ({"reward", "traj", "info", "trial"} & keys):
        return Detection("taubench", "a JSON list of results with 'task_id' and 'reward' (tau-bench v1)")
    return None


def _syntax_error(body: str, complete: bool) -> str | None:
    """DETECT-NOT-JSON: where ``body`` stops being JSON, or ``None`` when it is JSON or may be the
    cut-off head of a longer document (an error at its very end, unless ``complete``)."""
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        if complete or exc.pos < len(body.rstrip()):
            return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    except (ValueError, RecursionError):  # HOSTILE-DEPTH: too deep to tell
        return None
    return None


def _not_json(name: str, body: str, complete: bool) -> None:
    """Refuse text that starts like JSON but is not JSON, without calling it JSON (DETECT-NOT-JSON)."""
    error = _syntax_error(body, complete)
    if error is not None:
        raise InputError(
            name,
            f"is not valid JSON ({error}), nor JSON lines, Parquet or an .eval log: no adapter reads it "
            "('prefixexec adapters' lists the formats)",
        )


def detect_text(name: str, text: str, complete: bool = False) -> Detection:
    """DETECT-LINES, DETECT-JSON: the adapter of a text input from its beginning (``complete``:
    ``text`` is the whole input, not its head)."""
    body = text.lstrip("\ufeff \t\r\n")
    if not body:
        return Detection(EMPTY, "empty: takes the format of the other inputs (records when all are empty)")
    first_line = body.split("\n", 1)[0].strip()
    if body[0] == "[":
        found = _list_document(body)
        if found is not None:
            return found
        _not_json(name, body, complete)
        raise InputError(
            name, "is a JSON list, but not of tau-bench results (no 'task_id' and 'reward'); choose --adapter"
        )
    if body[0] != "{":
        raise InputError(
            name,
            "is neither JSON lines nor a JSON document, Parquet or an .eval log: no adapter reads it "
            "(DETECT-UNKNOWN; 'prefixexec adapters' lists the formats, --adapter chooses one)",
        )
    try:
        value: Any = json.loads(first_line)
    except (ValueError, RecursionError):  # HOSTILE-DEPTH
        value = None
    if isinstance(value, dict):
        keys = set(value)
        if CLAUDE_CODE_KEYS <= keys or {"parentUuid", "sessionId"} <= keys:
            raise InputError(
                name,
                "looks like a Claude Code session log (JSON lines with 'sessionId', 'uuid' and 'type'): "
                "no adapter reads it (DETECT-UNKNOWN; 'prefixexec adapters' lists the formats)",
            )
        found = _trace_object(keys, text) or _line_object(keys)
    elif "\n" not in body and len(text.encode("utf-8")) >= HEAD_BYTES - 4:
        # DETECT-LONG-LINE: a first line longer than the head (lines up to 64 MiB are valid) is
        # decided from the keys the head holds, as a line or a document (an OTLP line too).
        keys = set(_top_level_keys(body))
        found = _trace_object(keys, text) or _line_keys(keys) or _document_object(keys) or _line_object(keys)
    else:  # a JSON document over several lines (OTLP JSON as trace UIs download it, a log)
        listed = _top_level_keys(body)
        keys = set(listed)
        found = _trace_object(keys, text) or _document_object(keys)
    if found is not None:
        return found
    _not_json(name, body, complete)
    raise InputError(
        name,
        f"is JSON, but of no format an adapter reads (its keys: {_shown_keys(body, value)}; records "
        "have 'outcome' or 'actions', chat lines 'messages', OTLP traces 'resourceSpans', inspect logs "
        "'eval', tau2 results 'simulations'); choose one with --adapter",
    )


def _shown_keys(body: str, value: object) -> str:
    """DETECT-UNKNOWN: the first keys of the JSON object ``body`` starts with, for a refusal."""
    keys = list(value) if isinstance(value, dict) else _top_level_keys(body)
    shown = ", ".join(repr(str(k)) for k in keys[:8]) + (", ..." if len(keys) > 8 else "")
    return shown or "none"


def detect(path: str) -> Detection:
    """The adapter that reads ``path`` (DETECT-*); InputError saying what it looks like otherwise."""
    if path == STDIN:
        return detect_stdin()
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, TAU2_RESULTS)):
            return Detection("taubench", f"a directory with {TAU2_RESULTS} (a tau2 directory-format run)")
        if os.path.isfile(os.path.join(path, TOOLSANDBOX_SUMMARY)):
            return Detection("toolsandbox", f"a directory with {TOOLSANDBOX_SUMMARY} (a ToolSandbox run)")
        runs = (
            sorted(c for c in os.listdir(path) if os.path.isfile(os.path.join(path, c, TOOLSANDBOX_SUMMARY)))
            if os.path.exists(path)
            else []
        )
        if runs:
            raise InputError(
                path, f"is a folder of ToolSandbox runs: pass the run directories ({', '.join(runs)})"
            )
        raise InputError(path, f"is a directory without {TOOLSANDBOX_SUMMARY}: no adapter reads it")
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.basename(parent) == TAU2_SIMULATIONS and os.path.isfile(
        os.path.join(os.path.dirname(parent), TAU2_RESULTS)
    ):
        raise InputError(
            path,
            "is one simulation of a tau2 directory-format run (results.json + simulations/): give the "
            f"run's folder ({os.path.dirname(parent)}) or its {TAU2_RESULTS}",
        )
    if last_part(path) == TOOLSANDBOX_SUMMARY:
        return Detection("toolsandbox", f"named {TOOLSANDBOX_SUMMARY} (a ToolSandbox run)")
    from .archives import is_archive

    if is_archive(path):  # the one folder format (INPUT-COMPRESSED)
        return Detection("toolsandbox", "a tar archive of a folder (a ToolSandbox run)")
    from .inputs import check_input_file

    check_input_file(path)  # a named pipe, a device or a pseudo-file is refused before it is opened
    if _is_pipe(path):
        raise InputError(
            path,
            "is a pipe: detection would take its first bytes from the reader; choose --adapter "
            "(or give it on standard input, '-', where they are put back)",
        )
    head, compressed = _head(path)
    found = _detect_head(path, head)
    if compressed is not None:
        return Detection(found.adapter, f"{compressed}-compressed {found.why}")
    return found


def _detect_head(path: str, head: bytes) -> Detection:
    """DETECT-MAGIC, DETECT-NAME, DETECT-JSON, DETECT-LINES: the adapter of a file from its name
    and its first (decompressed) bytes."""
    if head.startswith(PARQUET_MAGIC):
        return Detection("parquet", "starts with the Parquet magic PAR1")
    if head.startswith(ZIP_MAGIC):
        return Detection("inspect", "a ZIP archive (an inspect_ai .eval log)")
    name = plain_name(last_part(path))  # x_result.json.gz is named as x_result.json (INPUT-COMPRESSED)
    if BFCL_NAME.match(name):
        return Detection("bfcl", "named BFCL_v<N>_<category>_result.json")
    if BFCL_SCORE_NAME.match(name):
        raise InputError(
            path,
            "is a BFCL score file (BFCL's own verdicts, not model output): score the result file "
            "BFCL_v<N>_<category>_result.json it was computed from",
        )
    found = _protobuf_traces(head)
    if found is not None:
        return found
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut off at the end of the head
            raise InputError(
                path,
                "is neither text nor a Parquet, ZIP (.eval) file or OTLP protobuf "
                "(ExportTraceServiceRequest): cannot tell its format",
            ) from None
        text = head[: exc.start].decode("utf-8")
    return detect_text(path, text, complete=len(head) < HEAD_BYTES)


class _Prefixed:
    """A text stream that yields ``prefix`` and then the rest of ``stream`` (stdin, put back).

    It offers what the adapters use of ``sys.stdin``: ``read``, ``readline`` and iteration.
    """

    def __init__(self, prefix: str, stream: Any) -> None:
        self._prefix = io.StringIO(prefix)
        self._stream = stream

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def read(self, size: int | None = -1) -> str:
        if size is None or size < 0:
            return self._prefix.read() + str(self._stream.read())
        got = self._prefix.read(size)
        return got if len(got) == size else got + str(self._stream.read(size - len(got)))

    def readline(self, size: int | None = -1) -> str:
        line = self._prefix.readline()
        if line.endswith("\n") or (size is not None and 0 <= size <= len(line)):
            return line
        return line + str(self._stream.readline())

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def detect_stdin() -> Detection:
    """DETECT-STDIN: detect from standard input's first line (all of it for a JSON document) and
    put what was read back, so the adapter reads the whole input."""
    from . import limits

    limits.check_stdin()  # HOSTILE-DEVICE: not from /dev/zero
    stream = sys.stdin
    first = stream.readline(limits.max_line_bytes + 1)  # HOSTILE-LINE: an endless line ends
    text = first
    try:
        json.loads(first)
        whole = True
    except (ValueError, RecursionError):  # HOSTILE-DEPTH
        whole = False
    if not whole and first.strip() and first.lstrip()[:1] in "[{":
        text = first + limits.read_stdin_document(stream)  # a JSON document over several lines: read whole
    sys.stdin = cast(TextIO, _Prefixed(text, stream))
    return detect_text("<stdin>", text, complete=not whole)


def resolve(paths: Sequence[str]) -> tuple[str, list[tuple[str, Detection]]]:
    """DETECT-ONE: the one adapter that reads every input, with each input's detection."""
    if not paths:
        raise InputError("--adapter auto", "needs input files to detect their format; choose --adapter NAME")
    found = [(path, detect(path)) for path in paths]
    adapters = sorted({d.adapter for _, d in found if d.adapter != EMPTY}) or ["records"]
    if len(adapters) > 1:
        shown = "; ".join(f"{path}: {d.adapter}" for path, d in found)
        raise InputError(
            "input",
            f"the files are of different formats ({shown}): "
            "score each format on its own, or choose --adapter",
        )
    return adapters[0], [(path, d) for path, d in found if d.adapter != EMPTY]


def hint(adapter: str, paths: Sequence[str]) -> str | None:
    """DETECT-HINT: for a file that ``adapter`` could not read, what it looks like and the
    ``--adapter`` that reads it (``None`` when every file looks like ``adapter``'s input)."""
    for path in paths:
        if path == STDIN:
            continue
        try:
            found = detect(path)
        except (InputError, OSError, ValueError, RecursionError):
            continue
        except MemoryError:  # HOSTILE-ERROR-PATH: the error being explained may be this one
            return None
        if found.why == RECORDS_FALLBACK and adapter != "records":  # no evidence of records
            return (
                f"{path}: its format is unknown (JSON lines of none of the formats "
                "'prefixexec adapters' lists)"
            )
        if found.adapter not in (adapter, EMPTY):
            return f"{path} looks like {FORMATS[found.adapter]}, {found.why}: use --adapter {found.adapter}"
    return None
