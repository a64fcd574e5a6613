"""The MCP stdio proxy of ``prefixexec guard`` (spec: GUARD-PROXY, GUARD-FAULTS).

The real server runs as a child process. Every line from the client goes to the server byte for
byte, and every line from the server to the client, except:

- a ``tools/call`` request, decided by :class:`~.core.Guard` first: a call that fails a check is
  answered by the guard with a ``CallToolResult`` with ``isError: true`` and the reason, and
  never reaches the server (``--mode block``); in ``--mode warn`` it is forwarded and recorded;
- a ``prefixexec/context`` notification (``{"text": ...}``): a text the agent has seen, for the
  provenance rule; not forwarded;
- the guard's own ``tools/list`` requests (ids ``prefixexec-guard/...``) and their answers.

Faults (GUARD-FAULTS): a server that exits, does not answer within ``--timeout`` seconds, or
writes a line that is not JSON (or longer than ``--max-line-bytes``) gets each open request of the
client one JSON-RPC error, and each open ``tools/call`` is recorded as a failed call; a client
that disconnects ends the session (the server's stdin is closed, it is stopped after a grace
period, open calls are recorded).
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

import attrs

from prefixexec.adapters.errors import InputError
from prefixexec.adapters.numbers import INT_DIGITS
from prefixexec.adapters.text import printable

from .core import Guard, Mode, Pending

#: The JSON-RPC error code of the guard's own errors (the implementation-defined server range).
GUARD_ERROR = -32000
#: JSON-RPC's parse error.
PARSE_ERROR = -32700
#: JSON-RPC's "Invalid Request": an id the guard cannot echo (HOSTILE-GUARD-INPUT).
INVALID_REQUEST = -32600
#: Seconds the server gets to exit after the client disconnected, before it is stopped.
GRACE = 2.0
#: The longest excerpt of a garbage line quoted in an error.
EXCERPT = 120
#: The interpreter's thread switch interval in the proxy (seconds).
SWITCH = 0.0002
#: Pages of the guard's own ``tools/list`` followed at most.
MAX_PAGES = 100
#: The longest line read from the client or the server (HOSTILE-GUARD-LINE; ``--max-line-bytes``),
#: HOSTILE-LINE's default: the rest of a longer line is skipped, never held.
MAX_LINE = 64 << 20
#: Bytes the guard reads from the server's output at once (a line is read in such pieces).
READ_CHUNK = 1 << 16


@attrs.frozen(slots=True)
class ProxyOptions:
    """What ``prefixexec guard`` was asked (the CLI converts its arguments to this at the boundary)."""

    command: tuple[str, ...]
    mode: Mode = "block"
    trace: str | None = None
    timeout: float = 60.0
    model: str = "mcp-client"
    method: str = "prefixexec-guard"
    task: str | None = None
    max_line: int = MAX_LINE


@attrs.define(slots=True)
class _Open:
    """A request the server has not answered: a client's ``tools/call`` (with its pending record),
    another client request, or the guard's own."""

    kind: str
    id: object
    deadline: float
    pending: Pending | None = None
    answer: dict[str, Any] | None = None
    done: threading.Event | None = None


def _not_json(constant: str) -> object:
    """``NaN``, ``Infinity`` and ``-Infinity`` are not JSON: a line holding one is not read."""
    raise ValueError(f"{constant} is not JSON")


def _echoable(message: object) -> bool:
    """HOSTILE-GUARD-INPUT: a request's id is one JSON-RPC allows (a string, a number, null) and
    the guard can write back as JSON: a finite number (``1e400`` reads as infinity), text without
    a lone surrogate (``"\\ud800"`` cannot be written as UTF-8). Anything else (an object, a
    list, ``true``) is an invalid request."""
    if not isinstance(message, dict) or "id" not in message:
        return True
    value = message["id"]
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    return False


def _integer(digits: str) -> int | str:
    """An integer of the server's JSON; one of more than 4,300 digits, which Python does not
    convert, is kept as its text (HOSTILE-BIGINT: valid JSON, not "not JSON"; the line is
    relayed as it was, so only what the guard records of it is text)."""
    return int(digits) if len(digits.lstrip("-")) <= INT_DIGITS else digits


def server_json(data: bytes) -> Any:
    """A JSON message the server wrote (any size of integer; ``ValueError`` when it is not JSON)."""
    return json.loads(data, parse_int=_integer)


def _key(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def _line(message: object) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Proxy:
    """One session: the client on ``client_in`` / ``client_out``, the server a child process."""

    def __init__(
        self, guard: Guard, options: ProxyOptions, client_in: IO[bytes], client_out: IO[bytes]
    ) -> None:
        self.guard = guard
        self.options = options
        self.client_in = client_in
        self.client_out = client_out
        self.open: dict[str, _Open] = {}
        self.expired: set[str] = set()
        self.lock = threading.Lock()
        self.out_lock = threading.Lock()
        self.in_lock = threading.Lock()
        self.server_gone: str | None = None
        self.client_gone = False
        self.stale = True
        self.own = 0
        self.closing = threading.Event()
        self.ending = False
        #: Answers forwarded to the client but not yet recorded: a call whose checks read the
        #: session's history waits for them, so that they see every earlier result (the client
        #: may send it as soon as it has the answer).
        self.recording = 0
        self.recorded = threading.Condition()
        self.server: subprocess.Popen[bytes] | None = None

    # --- writing ----------------------------------------------------------------------------

    def to_client(self, data: bytes) -> None:
        with self.out_lock:
            if self.client_gone:
                return
            try:
                self.client_out.write(data)
                self.client_out.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.client_gone = True

    def to_server(self, data: bytes) -> bool:
        server = self.server
        if server is None or server.stdin is None or self.server_gone is not None:
            return False
        with self.in_lock:
            try:
                server.stdin.write(data)
                server.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return False
        return True

    def error_to_client(self, request_id: object, message: str) -> None:
        self.to_client(
            _line({"jsonrpc": "2.0", "id": request_id, "error": {"code": GUARD_ERROR, "message": message}})
        )

    # --- the session ------------------------------------------------------------------------

    def run(self) -> int:
        """Serve until the client disconnects; the status: 0, or 1 when the server failed."""
        # three threads pass lines on: a thread that has a line to forward gets the interpreter
        # within SWITCH seconds, not Python's default 5 ms (benchmarks/guard_latency.py)
        sys.setswitchinterval(SWITCH)
        try:
            self.server = subprocess.Popen(
                list(self.options.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
            )
        except OSError as exc:
            raise InputError(
                self.options.command[0], f"cannot start the MCP server: {exc.strerror or exc}"
            ) from None
        reader = threading.Thread(target=self.read_server, name="guard-server", daemon=True)
        reader.start()
        watchdog = threading.Thread(target=self.watch, name="guard-timeout", daemon=True)
        watchdog.start()
        try:
            for line in lines(self.client_in, self.options.max_line):
                if line is None:  # HOSTILE-GUARD-LINE: not read, not forwarded
                    self.to_client(_line(too_long_answer(self.options.max_line)))
                elif line.strip():
                    self.from_client(line)
        finally:
            self.end(reader)
        return 0 if self.server_gone is None or self.server_gone == "" else 1

    def end(self, reader: threading.Thread) -> None:
        """The client disconnected (or the guard was stopped): close the server's stdin, give it
        :data:`GRACE` seconds, stop it, record the calls still open."""
        server = self.server
        assert server is not None
        self.ending = True
        with self.in_lock:
            try:
                if server.stdin is not None:
                    server.stdin.close()
            except OSError:
                pass
        deadline = time.monotonic() + GRACE
        while self.open and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            server.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            server.terminate()
            try:
                server.wait(GRACE)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        reader.join(GRACE)
        self.closing.set()
        self.fail_open("no answer: the client disconnected before the server answered", tell=False)
        self.guard.close()

    def fail_open(self, why: str, *, tell: bool = True) -> None:
        """Every open request gets one error (GUARD-FAULTS); open calls are recorded as failed."""
        with self.lock:
            entries = list(self.open.values())
            self.expired.update(self.open)
            self.open.clear()
        for entry in entries:
            self.fail(entry, why, tell=tell)

    def fail(self, entry: _Open, why: str, *, tell: bool = True) -> None:
        if entry.kind == "own":
            entry.answer = {"error": {"code": GUARD_ERROR, "message": why}}
            if entry.done is not None:
                entry.done.set()
            return
        if entry.pending is not None:
            self.guard.finish(entry.pending, "", error=why)
        if tell:
            self.error_to_client(entry.id, f"prefixexec guard: {why}")

    def watch(self) -> None:
        """GUARD-FAULTS: requests the server did not answer in ``--timeout`` seconds fail."""
        timeout = self.options.timeout
        while not self.closing.wait(0.05):
            if timeout <= 0:
                continue
            now = time.monotonic()
            with self.lock:
                late = [k for k, e in self.open.items() if e.deadline <= now]
                entries = [self.open.pop(k) for k in late]
                self.expired.update(late)
            for entry in entries:
                self.fail(entry, f"timeout: the MCP server did not answer within {timeout:g} s")

    # --- client -> server -------------------------------------------------------------------

    def from_client(self, line: bytes) -> None:
        try:
            message = json.loads(line, parse_constant=_not_json)
        except (ValueError, RecursionError):
            # not forwarded: a line the guard cannot read could be a call it cannot check
            excerpt = printable(line.decode("utf-8", "replace").strip())[:EXCERPT]
            answer = {"code": PARSE_ERROR, "message": f"prefixexec guard: parse error: {excerpt}"}
            self.to_client(_line({"jsonrpc": "2.0", "id": None, "error": answer}))
            return
        if not all(_echoable(m) for m in (message if isinstance(message, list) else [message])):
            # HOSTILE-GUARD-INPUT: not forwarded either; its answer could not carry the id
            why = "an id must be a string, a finite number or null"
            answer = {"code": INVALID_REQUEST, "message": f"prefixexec guard: invalid request: {why}"}
            self.to_client(_line({"jsonrpc": "2.0", "id": None, "error": answer}))
            return
        if isinstance(message, list):
            self.batch(line, message)
            return
        if not isinstance(message, dict):
            self.forward(line)
            return
        method = message.get("method")
        if method == "tools/call" and "id" in message:
            self.call(line, message)
        elif method == "prefixexec/context":
            observe_context(self.guard, message)
            if "id" in message:
                self.to_client(_line({"jsonrpc": "2.0", "id": message["id"], "result": {}}))
        elif isinstance(method, str) and "id" in message:
            self.request(line, message["id"], "other")
        else:
            self.forward(line)

    def forward(self, line: bytes) -> None:
        self.to_server(line)

    def request(self, line: bytes, request_id: object, kind: str, pending: Pending | None = None) -> None:
        if self.server_gone is not None:
            if pending is not None:
                self.guard.finish(pending, "", error=f"the MCP server is gone: {self.server_gone}")
            self.error_to_client(request_id, f"prefixexec guard: the MCP server is gone: {self.server_gone}")
            return
        deadline = time.monotonic() + self.options.timeout if self.options.timeout > 0 else float("inf")
        with self.lock:
            self.open[_key(request_id)] = _Open(kind, request_id, deadline, pending)
        if not self.to_server(line):
            with self.lock:
                entry = self.open.pop(_key(request_id), None)
            if entry is not None:
                self.fail(entry, "the MCP server does not read its input (it exited)")

    def batch(self, line: bytes, messages: list[Any]) -> None:
        calls = [m for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"]
        if not calls:
            self.forward(line)
            return
        answers = [
            {
                "jsonrpc": "2.0",
                "id": m["id"],
                "error": {
                    "code": GUARD_ERROR,
                    "message": "prefixexec guard: send tools/call outside a batch",
                },
            }
            for m in messages
            if isinstance(m, dict) and "id" in m and "method" in m
        ]
        self.to_client(_line(answers))

    def call(self, line: bytes, message: dict[str, Any]) -> None:
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        name = params.get("name")
        arguments = params.get("arguments", {})
        if self.stale:
            self.list_tools()
        with self.recorded:
            self.recorded.wait_for(lambda: self.recording == 0)
        request_id = message["id"]
        pending = self.guard.begin(
            name if isinstance(name, str) else json.dumps(name), arguments, str(request_id)
        )
        if pending.decision.blocked:
            self.to_client(_line(blocked_answer(request_id, self.guard.block(pending))))
            return
        self.request(line, request_id, "call", pending)

    def list_tools(self) -> None:
        """The server's own ``tools/list`` (every page), asked by the guard (GUARD-PROXY)."""
        tools = every_tool(self.ask_tools, "None")
        if tools is not None:
            self.guard.set_tools(tools)
            self.stale = False

    def ask_tools(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """One ``tools/list`` page asked of the server and its answer (``{}``: none in time);
        ``None`` when the server cannot be written to."""
        self.own += 1
        request_id = f"prefixexec-guard/{self.own}"
        done = threading.Event()
        entry = _Open("own", request_id, time.monotonic() + (self.options.timeout or 60.0), done=done)
        with self.lock:
            self.open[_key(request_id)] = entry
        if not self.to_server(
            _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params})
        ):
            with self.lock:
                self.open.pop(_key(request_id), None)
            return None
        done.wait()
        return entry.answer or {}

    # --- server -> client -------------------------------------------------------------------

    def read_server(self) -> None:
        server = self.server
        assert server is not None and server.stdout is not None
        # HOSTILE-GUARD-LINE: read in pieces through a buffer (the pipe is unbuffered, whose
        # readline asks one byte per system call: a 41 MB answer took 25 s, past the call's
        # --timeout, and every answer queued behind it expired too)
        stream = io.BufferedReader(server.stdout, READ_CHUNK)  # type: ignore[type-var]  # a FileIO: a raw stream
        for line in lines(stream, self.options.max_line):
            if line is None:
                limit = self.options.max_line
                sys.stderr.write(f"prefixexec guard: the MCP server wrote a line longer than {limit} bytes\n")
                self.fail_open(
                    f"the MCP server wrote a line longer than {limit} bytes (--max-line-bytes): not read"
                )
            elif line.strip():
                self.from_server(line)
        status = server.wait()
        why = f"the MCP server exited with status {status}"
        if self.ending:  # the client left first: the server exiting is how a session ends
            self.server_gone = ""
            return
        self.server_gone = why
        self.fail_open(why)

    def from_server(self, line: bytes) -> None:
        try:
            message = server_json(line)
        except (ValueError, RecursionError):
            excerpt = printable(line.decode("utf-8", "replace").strip())[:EXCERPT]
            sys.stderr.write(f"prefixexec guard: the MCP server wrote a line that is not JSON: {excerpt}\n")
            self.fail_open(f"the MCP server wrote a line that is not JSON-RPC: {excerpt}")
            return
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            if isinstance(message, dict) and message.get("method") == "notifications/tools/list_changed":
                self.stale = True
            self.to_client(line)
            return
        key = _key(message["id"])
        with self.lock:
            entry = self.open.pop(key, None)
            late = entry is None and key in self.expired
        if entry is None:
            if not late:
                self.to_client(line)
            return
        if entry.kind == "own":
            entry.answer = message
            assert entry.done is not None
            entry.done.set()
            return
        with self.recorded:
            self.recording += 1
        try:
            self.to_client(line)  # byte for byte, before anything is recorded
            self.record(entry, message)
        finally:
            with self.recorded:
                self.recording -= 1
                self.recorded.notify_all()

    def record(self, entry: _Open, message: dict[str, Any]) -> None:
        """Record an answer the client already has (the trace, the session's history)."""
        record_answer(self.guard, entry.pending, message)


def lines(stream: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """The lines of ``stream`` (HOSTILE-LINES: ended at ``\\n``), each read whole up to ``limit``
    bytes; ``None`` for a longer line, whose rest is read in pieces and dropped (HOSTILE-GUARD-LINE:
    the memory held is the limit, whatever the line)."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or (len(line) == limit + 1 and line.endswith(b"\n")):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(READ_CHUNK)
        yield None


def observe_context(guard: Guard, message: dict[str, Any]) -> None:
    """A ``prefixexec/context`` message: its ``params.text``, when it is text, is a text the session
    has seen (GUARD-PROXY; a value it holds may then be used by a later call)."""
    params = message.get("params")
    text = params.get("text") if isinstance(params, dict) else None
    if isinstance(text, str):
        guard.observe(text)


def too_long_answer(limit: int) -> dict[str, Any]:
    """The guard's answer to a client line longer than ``limit`` bytes (HOSTILE-GUARD-LINE): its id
    was not read, so ``null``; an invalid request (-32600)."""
    why = f"prefixexec guard: invalid request: a line longer than {limit} bytes (--max-line-bytes)"
    return {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": why}}


def every_tool(ask: Callable[[dict[str, Any]], dict[str, Any] | None], no_error: str) -> list[Any] | None:
    """Every page of the server's ``tools/list`` (at most :data:`MAX_PAGES`), each asked with
    ``ask(params)``; ``None`` when a page could not be asked (``ask`` gave ``None``) or its
    answer holds no tool list, said on stderr with the server's error (``no_error`` without one)."""
    tools: list[Any] = []
    cursor: object = None
    for _ in range(MAX_PAGES):
        answer = ask({} if cursor is None else {"cursor": cursor})
        if answer is None:
            return None
        result = answer.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            error = printable(str(answer.get("error", no_error)))[:200]
            sys.stderr.write(f"prefixexec guard: the server's tools/list failed: {error}\n")
            return None
        tools.extend(t for t in result["tools"] if isinstance(t, dict))
        cursor = result.get("nextCursor")
        if not cursor:
            break
    return tools


def blocked_answer(request_id: object, reason: str) -> dict[str, Any]:
    """GUARD-MODES: the JSON-RPC answer to a blocked call, a ``CallToolResult`` with ``isError``."""
    result = {"content": [{"type": "text", "text": reason}], "isError": True}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def record_answer(guard: Guard, pending: Pending | None, message: dict[str, Any]) -> None:
    """Record the server's answer to a request the client made: a call's result or error
    (``pending``: its record), else the result of another request as a text the session has seen
    (GUARD-PROVENANCE; not a ``tools/list``)."""
    result = message.get("result")
    try:
        if pending is not None:
            if "error" in message or not isinstance(result, dict):
                error = message.get("error")
                said = error.get("message") if isinstance(error, dict) else error
                guard.finish(pending, "", error=f"JSON-RPC error: {said}")
            else:
                guard.finish(pending, result, is_error=result.get("isError") is True)
        elif isinstance(result, dict) and "tools" not in result:
            guard.observe(json.dumps(result, ensure_ascii=False))
    except (InputError, RecursionError, ValueError, TypeError) as exc:  # an answer too deep to record
        what = exc.what if isinstance(exc, InputError) else type(exc).__name__
        sys.stderr.write(f"prefixexec guard: an answer could not be recorded: {printable(what)}\n")
        if pending is not None:
            guard.finish(pending, "", error=f"the answer could not be recorded: {what}")


def serve(
    guard: Guard,
    options: ProxyOptions,
    client_in: IO[bytes] | None = None,
    client_out: IO[bytes] | None = None,
) -> int:
    """Run the proxy on this process's stdin and stdout (or the given streams)."""
    proxy = Proxy(guard, options, client_in or sys.stdin.buffer, client_out or sys.stdout.buffer)
    return proxy.run()


__all__ = [
    "GRACE",
    "GUARD_ERROR",
    "Proxy",
    "ProxyOptions",
    "blocked_answer",
    "observe_context",
    "record_answer",
    "serve",
    "server_json",
]
