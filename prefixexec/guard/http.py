"""The streamable-HTTP variant of ``prefixexec guard`` (spec: GUARD-HTTP).

``prefixexec guard --listen HOST:PORT --upstream URL`` is an HTTP reverse proxy in front of an MCP
server that speaks the streamable HTTP transport at ``URL``. Every request is relayed to the
server and every answer relayed back byte for byte (bodies as they arrive: a JSON body, or an
event stream chunk by chunk), except a ``POST`` to the server's endpoint holding

- a ``tools/call`` request: decided by :class:`~.core.Guard` first (GUARD-CHECKS). A blocked call
  is answered by the guard (``application/json``, a ``CallToolResult`` with ``isError: true``)
  and never reaches the server; a forwarded call's answer is read as it passes (the JSON body, or
  the event of the stream that answers it) and recorded;
- a ``prefixexec/context`` message: a text the agent has seen (GUARD-PROVENANCE), not forwarded;
- a batch that holds a ``tools/call``: one JSON-RPC error per request, as over stdio.

The guard asks the server's ``tools/list`` itself (ids ``prefixexec-guard/N``, in the client's
session: its ``Mcp-Session-Id``) before the first call and after a
``notifications/tools/list_changed`` passed by. A server that cannot be reached, does not answer
within ``--timeout`` seconds, or ends a call's stream without its answer: the call is recorded as
failed and the client gets one JSON-RPC error (in the stream when the stream had begun).
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

from prefixexec.adapters.errors import InputError
from prefixexec.adapters.text import printable

from .core import Guard
from .proxy import (
    GRACE,
    GUARD_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    _echoable,
    _not_json,
    blocked_answer,
    every_tool,
    observe_context,
    record_answer,
    server_json,
)

#: Headers that belong to one connection, never relayed (RFC 9110 7.6.1), and those the guard
#: sets itself.
HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
#: The client's headers that the guard's own ``tools/list`` carries (the client's session).
SESSION_HEADERS = ("mcp-session-id", "mcp-protocol-version", "authorization")
#: The largest request body read (a JSON-RPC message).
MAX_BODY = 1 << 26
#: Bytes read from the server at once.
CHUNK = 1 << 16


@attrs.frozen(slots=True)
class HttpOptions:
    """What ``prefixexec guard --listen`` was asked (converted at the CLI's boundary)."""

    host: str
    port: int
    upstream: str
    timeout: float = 60.0
    max_body: int = MAX_BODY


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) of ``--listen``; PORT 0: any free port."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise InputError("--listen", f"must be HOST:PORT (e.g. 127.0.0.1:8765): {text!r}")
    return host, int(port)


def parse_upstream(text: str) -> urllib.parse.SplitResult:
    """The ``--upstream`` URL: ``http://`` or ``https://`` with a host."""
    url = urllib.parse.urlsplit(text)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise InputError("--upstream", f"must be an http:// or https:// URL of the MCP endpoint: {text!r}")
    return url


class _Events:
    """The ``data`` of each event of a ``text/event-stream``, fed in pieces (lines end with LF,
    CRLF or CR; an empty line ends an event; ``data`` lines are joined by a line feed).

    HOSTILE-GUARD-LINE: a line is searched for once (linear in the stream), and an event longer
    than ``limit`` bytes is not kept: ``overflow`` is set and the event is skipped to its end."""

    def __init__(self, limit: int = MAX_BODY) -> None:
        self.pending = bytearray()
        self.scanned = 0  # bytes of pending known to hold no line end
        self.data: list[bytes] = []
        self.size = 0
        self.limit = limit
        self.overflow = False
        self.skipping = False

    def feed(self, piece: bytes) -> Iterator[bytes]:
        self.pending += piece
        while True:
            ends = (self.pending.find(b"\n", self.scanned), self.pending.find(b"\r", self.scanned))
            cut = min((i for i in ends if i >= 0), default=-1)
            if cut < 0 or (self.pending[cut : cut + 1] == b"\r" and cut + 1 == len(self.pending)):
                # no whole line yet (a CR may be the first half of CRLF)
                self.scanned = len(self.pending) if cut < 0 else cut
                if self.size + len(self.pending) > self.limit:
                    self.skip()
                    self.pending.clear()
                    self.scanned = 0
                return
            line = bytes(self.pending[:cut])
            step = 2 if self.pending[cut : cut + 2] == b"\r\n" else 1
            del self.pending[: cut + step]
            self.scanned = 0
            if not line:
                if self.data and not self.skipping:
                    yield b"\n".join(self.data)
                self.data, self.size, self.skipping = [], 0, False
            elif line.startswith(b"data:") and not self.skipping:
                value = line[5:]
                self.data.append(value[1:] if value.startswith(b" ") else value)
                self.size += len(value)
                if self.size > self.limit:
                    self.skip()

    def skip(self) -> None:
        """The event is longer than the limit: dropped, the rest of it skipped."""
        self.overflow = self.skipping = True
        self.data, self.size = [], 0


def _messages(data: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a body or an event (a message or a batch); none when not JSON."""
    try:
        document = server_json(data)
    except (ValueError, RecursionError):
        return []
    items = document if isinstance(document, list) else [document]
    return [m for m in items if isinstance(m, dict)]


def _json_body(message: object) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


class HttpProxy:
    """The guard in front of one streamable-HTTP MCP server (every client session through it)."""

    def __init__(self, guard: Guard, options: HttpOptions) -> None:
        self.guard = guard
        self.options = options
        self.url = parse_upstream(options.upstream)
        self.path = self.url.path or "/"
        self.stale = True
        self.own = 0
        self.listing = threading.Lock()
        #: answers relayed to the client but not yet recorded (a call that reads the session's
        #: history waits for them: GUARD-CHECKS)
        self.recording = 0
        self.recorded = threading.Condition()

    # --- the server -------------------------------------------------------------------------

    def connect(self, timeout: float | None) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self.url.scheme == "https" else http.client.HTTPConnection
        connection = kind(self.url.hostname or "", self.url.port, timeout=timeout)
        connection.connect()
        if connection.sock is not None:  # the request goes out as headers, then body
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection

    def ask_server(self, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any] | None:
        """The guard's own request in the client's session: the server's answer to it, or ``None``."""
        sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        sent.update({k: v for k, v in headers.items() if k.lower() in SESSION_HEADERS})
        connection: http.client.HTTPConnection | None = None
        try:
            connection = self.connect(self.options.timeout or None)
            connection.request("POST", self.path, _json_body(message), sent)
            response = connection.getresponse()
            streamed = response.getheader("content-type", "").startswith("text/event-stream")
            events = _Events(self.options.max_body)
            while True:
                piece = response.read1(CHUNK) if streamed else response.read(self.options.max_body)
                if not piece:
                    return None
                for data in events.feed(piece) if streamed else iter((piece,)):
                    for answer in _messages(data):
                        if answer.get("id") == message["id"] and "method" not in answer:
                            return answer
                if not streamed:
                    return None
        except (OSError, http.client.HTTPException):
            return None
        finally:
            if connection is not None:
                connection.close()

    def list_tools(self, headers: Mapping[str, str]) -> None:
        """The server's own ``tools/list`` (every page), asked by the guard (GUARD-PROXY)."""
        with self.listing:
            if not self.stale:
                return

            def ask(params: dict[str, Any]) -> dict[str, Any]:
                self.own += 1
                message = {"jsonrpc": "2.0", "id": f"prefixexec-guard/{self.own}", "method": "tools/list"}
                return self.ask_server({**message, "params": params}, headers) or {}

            tools = every_tool(ask, "no answer")
            if tools is not None:
                self.guard.set_tools(tools)
                self.stale = False

    # --- one request ------------------------------------------------------------------------

    def handle(self, request: _Handler) -> None:
        body = request.read_body()
        if body is None:  # refused (answered)
            return
        if request.command != "POST" or urllib.parse.urlsplit(request.path).path != self.path:
            self.relay(request, body or None)
            return
        try:
            message = json.loads(body, parse_constant=_not_json)
        except (ValueError, RecursionError):
            excerpt = printable(body.decode("utf-8", "replace").strip())[:120]
            error = {"code": PARSE_ERROR, "message": f"prefixexec guard: parse error: {excerpt}"}
            request.answer(400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        if not all(_echoable(m) for m in (message if isinstance(message, list) else [message])):
            # HOSTILE-GUARD-INPUT, as over stdio: not forwarded, its answer could not carry the id
            why = "an id must be a string, a finite number or null"
            error = {"code": INVALID_REQUEST, "message": f"prefixexec guard: invalid request: {why}"}
            request.answer(400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        if isinstance(message, list):
            if any(isinstance(m, dict) and m.get("method") == "tools/call" for m in message):
                error = {"code": GUARD_ERROR, "message": "prefixexec guard: send tools/call outside a batch"}
                answers = [
                    {"jsonrpc": "2.0", "id": m["id"], "error": error}
                    for m in message
                    if isinstance(m, dict) and "id" in m and "method" in m
                ]
                request.answer(200, answers)
                return
            self.relay(request, body)
            return
        if not isinstance(message, dict):
            self.relay(request, body)
            return
        method = message.get("method")
        if method == "tools/call" and "id" in message:
            self.call(request, body, message)
        elif method == "prefixexec/context":
            observe_context(self.guard, message)
            if "id" in message:
                request.answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
            else:
                request.answer(202, None)
        elif isinstance(method, str) and "id" in message:
            request_id = message["id"]
            self.relay(request, body, request_id, lambda answer: record_answer(self.guard, None, answer))
        else:
            self.relay(request, body)

    def call(self, request: _Handler, body: bytes, message: dict[str, Any]) -> None:
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        name = params.get("name")
        request_id = message["id"]
        if self.stale:
            self.list_tools(dict(request.headers.items()))
        with self.recorded:
            self.recorded.wait_for(lambda: self.recording == 0)
        pending = self.guard.begin(
            name if isinstance(name, str) else json.dumps(name), params.get("arguments", {}), str(request_id)
        )
        if pending.decision.blocked:
            request.answer(200, blocked_answer(request_id, self.guard.block(pending)))
            return
        self.relay(
            request,
            body,
            request_id,
            lambda answer: record_answer(self.guard, pending, answer),
            call=True,
            on_failure=lambda why: self.guard.finish(pending, "", error=why),
        )

    def relay(
        self,
        request: _Handler,
        body: bytes | None,
        request_id: object = None,
        on_answer: Callable[[dict[str, Any]], None] | None = None,
        *,
        call: bool = False,
        on_failure: Callable[[str], None] | None = None,
    ) -> str | None:
        """Relay the request to the server and its answer back, byte for byte. With ``on_answer``:
        the server's answer to request ``request_id`` is given to it once relayed. For a ``call``
        whose answer never comes, ``on_failure`` gets the reason before the client gets one
        JSON-RPC error (so that the record comes first), and the reason is returned; otherwise
        ``None``."""
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        headers["accept-encoding"] = "identity"  # the guard reads the answers
        # a GET stream waits for the server's messages as long as the session lasts
        timeout = (self.options.timeout or None) if request.command == "POST" else None
        connection: http.client.HTTPConnection | None = None
        started = False
        why: str | None = None
        given: list[dict[str, Any]] = []  # the answer, once given to on_answer

        def once(answer: dict[str, Any]) -> None:
            given.append(answer)
            if on_answer is not None:
                on_answer(answer)

        try:
            connection = self.connect(timeout)
            connection.request(request.command, request.path, body, headers)
            response = connection.getresponse()
            bodiless = request.command == "HEAD" or response.status in (204, 304) or response.status < 200
            length = response.getheader("content-length")
            request.send_response_only(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in HOP:
                    request.send_header(key, value)
            if not bodiless and length is None:
                request.send_header("Transfer-Encoding", "chunked")
                request.chunking = True
            elif length is not None:
                request.send_header("Content-Length", length)
            request.end_headers()
            started = True
            if not bodiless:
                self.stream(request, response, request_id, once if on_answer is not None else None)
        except TimeoutError:
            why = f"timeout: the MCP server did not answer within {self.options.timeout:g} s"
        except (OSError, http.client.HTTPException) as exc:
            why = f"the MCP server cannot be reached at {self.options.upstream}: {printable(str(exc))[:200]}"
        finally:
            if connection is not None:
                connection.close()
        if given or (started and not call):
            why = None  # answered (a fault after the answer changes nothing), or relayed as it was
        elif why is None and request.unread:  # HOSTILE-GUARD-LINE: the client has it, unrecorded
            why = (
                f"the MCP server's answer is longer than {self.options.max_body} bytes "
                "(--max-line-bytes): relayed, not read"
            )
            if on_failure is not None:
                on_failure(why)
            request.end_chunks()
            return why
        elif why is None:
            why = "the MCP server ended its answer without answering the request"
        if why is not None:
            if on_failure is not None:
                on_failure(why)
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": GUARD_ERROR, "message": why}}
            if not started:
                request.answer(200 if call else 502, error)
            elif request.chunking:  # one error to the client, in the stream it is reading
                request.chunk(b"event: message\r\ndata: " + _json_body(error) + b"\r\n\r\n")
        request.end_chunks()
        return why

    def stream(
        self,
        request: _Handler,
        response: http.client.HTTPResponse,
        request_id: object,
        on_answer: Callable[[dict[str, Any]], None] | None,
    ) -> bool:
        """Relay the body; whether the answer to ``request_id`` passed (and was given to ``on_answer``)."""
        if not response.getheader("content-type", "").startswith("text/event-stream"):
            if on_answer is None:
                while piece := response.read1(CHUNK):
                    request.send(piece)
                    if request.closed:
                        break
                return False
            limit = self.options.max_body
            whole = response.read(limit + 1)  # one JSON-RPC answer: relayed whole, then recorded
            if len(whole) > limit:  # HOSTILE-GUARD-LINE: relayed as it comes, not read
                request.unread = True
                request.send(whole)
                while piece := response.read1(CHUNK):
                    request.send(piece)
                return False
            mine = [m for m in _messages(whole) if "method" not in m and m.get("id") == request_id]
            self.relayed(request, whole, mine[0] if mine else None, on_answer)
            return bool(mine)
        events = _Events(self.options.max_body)
        answered = False
        while piece := response.read1(CHUNK):
            found = [m for data in events.feed(piece) for m in _messages(data)]
            if any(m.get("method") == "notifications/tools/list_changed" for m in found):
                self.stale = True
            mine = [m for m in found if "method" not in m and m.get("id") == request_id]
            if on_answer is not None and mine and not answered:
                self.relayed(request, piece, mine[0], on_answer)
                answered = True
            else:
                request.send(piece)
            if request.closed and (answered or on_answer is None):
                break
        request.unread = events.overflow
        return answered

    def relayed(
        self,
        request: _Handler,
        piece: bytes,
        answer: dict[str, Any] | None,
        on_answer: Callable[[dict[str, Any]], None],
    ) -> None:
        """Relay the piece that holds the answer, then record it: a call that arrives meanwhile
        waits for the record (GUARD-CHECKS)."""
        with self.recorded:
            self.recording += 1
        try:
            request.send(piece)
            if answer is not None:
                on_answer(answer)
        finally:
            with self.recorded:
                self.recording -= 1
                self.recorded.notify_all()


class _Handler(BaseHTTPRequestHandler):
    """One client connection (HTTP/1.1, kept alive)."""

    protocol_version = "HTTP/1.1"
    proxy: HttpProxy
    chunking = False
    closed = False
    #: the answer held more than --max-line-bytes in one message: relayed, not read
    unread = False

    def setup(self) -> None:
        super().setup()
        # answers go out in pieces (headers, then the body): without this, Nagle's algorithm
        # holds a piece back until the client's delayed ACK of the one before (tens of ms)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # the guard's stderr is for its faults
        return

    def read_body(self) -> bytes | None:
        """The request's body (by ``Content-Length``; none without), or ``None`` when it is refused
        (a chunked body: 411; too long: 413), the refusal answered."""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            self.answer(411, None)
            return None
        lengths = set(self.headers.get_all("content-length") or ())
        if not lengths:
            return b""
        length = lengths.pop()
        # HOSTILE-GUARD-HTTP: ASCII digits, one value (two differing ones: RFC 9112 6.3), a body
        # as long as it says
        if lengths or not (length.isascii() and length.isdigit()):
            self.send_error(400, "Content-Length must be one number")
            return None
        if len(length) > 18 or int(length) > self.proxy.options.max_body:
            self.answer(413, None)
            return None
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            self.send_error(400, "the body ended before its Content-Length")
            return None
        return body

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """HOSTILE-GUARD-HTTP: a request http.server refuses (a request line or header too long,
        too many headers, a bad request line) gets a JSON-RPC error, not an HTML page; the
        connection is closed."""
        self.close_connection = True
        why = printable(message or explain or "bad request")[:200]
        error = {"code": INVALID_REQUEST, "message": f"prefixexec guard: HTTP {code}: {why}"}
        self.answer(code, {"jsonrpc": "2.0", "id": None, "error": error})

    def answer(self, status: int, message: object) -> None:
        """The guard's own answer: a JSON body, or none."""
        body = b"" if message is None else _json_body(message)
        self.send_response_only(status)
        if message is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.write(body)

    def write(self, data: bytes) -> None:
        """Bytes to the client (a client that left is remembered, not raised)."""
        if self.closed:
            return
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.closed = True
            self.close_connection = True

    def send(self, data: bytes) -> None:
        """A piece of the body: a chunk when the answer is chunked."""
        if self.chunking:
            self.chunk(data)
        else:
            self.write(data)

    def chunk(self, data: bytes) -> None:
        if data:
            self.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def end_chunks(self) -> None:
        if self.chunking:
            self.chunking = False
            self.write(b"0\r\n\r\n")

    def handle_one_request(self) -> None:
        self.chunking = self.unread = False
        try:
            super().handle_one_request()
        except OSError:  # the client left (a reset while the next request was read)
            self.closed = True
        if self.closed:
            self.close_connection = True

    def do_POST(self) -> None:
        self.proxy.handle(self)

    do_GET = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = do_HEAD = do_POST


def serve_http(guard: Guard, options: HttpOptions, ready: Callable[[str], None] | None = None) -> int:
    """Serve until stopped (SIGINT, SIGTERM: the command line's exit statuses 130, 143);
    ``ready`` gets the URL the clients use (by default it is written to stderr)."""
    proxy = HttpProxy(guard, options)
    # HOSTILE-GUARD-HTTP: a client that sends part of a request (or nothing) and waits is
    # disconnected after --timeout seconds, its thread freed
    handler = type("Handler", (_Handler,), {"proxy": proxy, "timeout": options.timeout or None})
    try:
        server = ThreadingHTTPServer((options.host, options.port), handler)
    except OSError as exc:
        raise InputError(
            "--listen", f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}"
        ) from None
    server.daemon_threads = True
    host = f"[{options.host}]" if ":" in options.host else options.host
    url = f"http://{host}:{server.server_address[1]}{proxy.path}"
    if ready is not None:
        ready(url)
    else:
        sys.stderr.write(f"prefixexec guard: listening on {url}\n")
        sys.stderr.flush()

    try:  # until SIGINT or SIGTERM (the command line's: HOSTILE-SIGNAL)
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
        with proxy.recorded:  # answers relayed a moment ago are recorded before the trace closes
            proxy.recorded.wait_for(lambda: proxy.recording == 0, timeout=GRACE)
        guard.close()
    return 0


__all__ = ["HttpOptions", "HttpProxy", "parse_listen", "parse_upstream", "serve_http"]
