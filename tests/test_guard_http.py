"""``prefixexec guard --listen HOST:PORT --upstream URL``: the streamable-HTTP guard (GUARD-HTTP) in
front of a real MCP server over streamable HTTP (tests/guard_http_server.py: the official SDK's
FastMCP on uvicorn, 127.0.0.1), driven by the official ``mcp`` client and by raw HTTP.

What reached the server is its own log (one line per tool call it ran), not what the client
was told. Expected decisions are counted by hand from each test's calls.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from conftest import REPO

SERVER = [sys.executable, str(REPO / "tests" / "guard_http_server.py")]
GUARD = [sys.executable, "-m", "prefixexec", "guard"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


class Running:
    """A process that prints where it listens first (the server: its port on stdout; the guard:
    its URL on stderr), stopped at the end."""

    def __init__(self, command: list[str], *, url_on_stderr: bool) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stream = self.process.stderr if url_on_stderr else self.process.stdout
        assert stream is not None
        self.first = stream.readline().strip()

    def stop(self) -> str:
        """Stop it (SIGTERM); its stderr after the first line."""
        self.process.terminate()
        _, err = self.process.communicate(timeout=20)
        return err


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The FastMCP server (event streams): its URL and the log of what reached it."""
    log = tmp_path / "reached.jsonl"
    server = Running([*SERVER, str(log)], url_on_stderr=False)
    yield f"http://127.0.0.1:{server.first}/mcp", log
    server.stop()


def guard_of(url: str, *options: str) -> Running:
    guard = Running([*GUARD, *options, "--listen", "127.0.0.1:0", "--upstream", url], url_on_stderr=True)
    assert guard.first.startswith("prefixexec guard: listening on http://127.0.0.1:"), guard.first
    return guard


def listening(guard: Running) -> str:
    return guard.first.rsplit(" ", 1)[1]


def reached(log: Path) -> list[tuple[str, dict[str, Any]]]:
    if not log.exists():
        return []
    return [tuple(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]  # type: ignore[misc]  # a [tool, arguments] pair


def explain(trace: Path, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [*GUARD[:3], "explain", "--adapter", "otel", "--success-attr", "@ok", "--json", str(trace), *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    row: dict[str, Any] = json.loads(done.stdout)
    return row


async def session(url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    """The official client's session: (isError, first text) of each call."""
    answers: list[tuple[bool, str]] = []
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as client:
        await client.initialize()
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            text = result.content[0].text if result.content and result.content[0].type == "text" else ""
            answers.append((result.isError, text))
    return answers


#: list_orders shows W1024 and W2048; then a valid call, a schema violation (an integer), an
#: invented id, a tool the server does not have, and a valid call the server fails (W7 is not an
#: order: it occurred in no result, so it is W2048's turn... see below)
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_orders", {}),
    ("get_order", {"order_id": "W1024"}),
    ("get_order", {"order_id": 1024}),
    ("get_order", {"order_id": "W9999"}),
    ("refund_order", {"order_id": "W1024"}),
    ("get_order", {"order_id": "W2048"}),
]


@pytest.mark.spec("GUARD-HTTP", "GUARD-CHECKS", "GUARD-MODES", "GUARD-TRACE-SAME")
def test_the_official_client_through_the_http_guard(upstream: tuple[str, Path], tmp_path: Path) -> None:
    url, log = upstream
    trace = tmp_path / "trace.jsonl"
    guard = guard_of(url, "--trace", str(trace))
    try:
        answers = asyncio.run(session(listening(guard), CALLS))
    finally:
        # SIGTERM ends the guard as it ends every command (HOSTILE-SIGNAL), the trace closed
        assert guard.stop() == "prefixexec: terminated\n" and guard.process.returncode == 143
    assert [error for error, _ in answers] == [False, False, True, True, True, False]
    assert answers[0][1] == "W1024 (shipped), W2048 (pending)"
    assert answers[2][1].startswith("blocked by prefixexec guard: GUARD-SCHEMA (schema): ")
    assert answers[3][1].startswith("blocked by prefixexec guard: GUARD-PROVENANCE (information): ")
    assert answers[4][1].startswith("blocked by prefixexec guard: GUARD-TOOL (schema): ")
    # the server saw the allowed calls only
    assert reached(log) == [
        ("list_orders", {}),
        ("get_order", {"order_id": "W1024"}),
        ("get_order", {"order_id": "W2048"}),
    ]
    row = explain(trace)
    assert (row["T"], row["fed"], row["label"]) == (6, 3, "schema")
    assert [(r["position"], r["label"]) for r in row["rejections"]] == [
        (3, "schema"),
        (4, "information"),
        (5, "schema"),
    ]


class Raw:
    """A streamable-HTTP session in plain HTTP requests (one connection, kept alive)."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.path = parts.path
        self.connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        self.session: str | None = None

    def post(self, message: object) -> tuple[int, str, bytes]:
        """(status, content type, body) of one POST of ``message`` as JSON."""
        return self.post_bytes(json.dumps(message).encode())

    def post_bytes(self, data: bytes) -> tuple[int, str, bytes]:
        """(status, content type, body) of one POST of ``data``."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        if self.session is not None:
            headers["Mcp-Session-Id"] = self.session
        self.connection.request("POST", self.path, data, headers)
        response = self.connection.getresponse()
        body = response.read()
        self.session = response.getheader("mcp-session-id") or self.session
        return response.status, response.getheader("content-type", ""), body

    def close(self) -> None:
        self.connection.close()

    def start(self) -> None:
        status, _, _ = self.post(INITIALIZE)
        assert status == 200
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202

    def call(self, request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        status, _, body = self.post({**message, "params": {"name": name, "arguments": arguments}})
        assert status == 200, body
        return body


def answer_of(body: bytes) -> dict[str, Any]:
    """The JSON-RPC message of a body: JSON, or the data of an event stream's one event."""
    text = body.decode()
    if text.startswith("{"):
        message: dict[str, Any] = json.loads(text)
        return message
    (data,) = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    event: dict[str, Any] = json.loads(data)
    return event


@pytest.mark.spec("GUARD-HTTP")
@pytest.mark.parametrize("form", ["event stream", "json"])
def test_valid_calls_answer_byte_for_byte_as_the_server_alone(form: str, tmp_path: Path) -> None:
    log = tmp_path / "reached.jsonl"
    server = Running([*SERVER, str(log), *(["--json"] if form == "json" else [])], url_on_stderr=False)
    url = f"http://127.0.0.1:{server.first}/mcp"
    guard = guard_of(url)
    alone, behind = Raw(url), Raw(listening(guard))
    try:
        alone.start()
        behind.start()
        for request_id, name, arguments in [
            (1, "list_orders", {}),
            (2, "get_order", {"order_id": "W1024"}),
            (3, "get_order", {"order_id": "W2048"}),
        ]:
            direct, guarded = (
                alone.call(request_id, name, arguments),
                behind.call(request_id, name, arguments),
            )
            assert guarded == direct
            assert answer_of(guarded)["result"]["isError"] is False
        assert (b"event: message" in direct) == (form == "event stream")
        # a blocked call: the guard's own JSON answer; the server never sees it
        blocked = answer_of(behind.call(4, "get_order", {"order_id": "W31"}))
        assert blocked["id"] == 4 and blocked["result"]["isError"] is True
        assert "GUARD-PROVENANCE (information)" in blocked["result"]["content"][0]["text"]
        # a text the agent saw (prefixexec/context, not forwarded) makes W31 usable: the server
        # then answers that it has no such order
        assert (
            behind.post({"jsonrpc": "2.0", "method": "prefixexec/context", "params": {"text": "#W31"}})[0]
            == 202
        )
        failed = answer_of(behind.call(5, "get_order", {"order_id": "W31"}))
        assert failed["result"]["isError"] is True and "not found" in failed["result"]["content"][0]["text"]
    finally:
        alone.close()
        behind.close()
        guard.stop()
        server.stop()
    calls = [("list_orders", {}), ("get_order", {"order_id": "W1024"}), ("get_order", {"order_id": "W2048"})]
    # each valid call reached the server twice (alone, then behind the guard), then W31 once
    assert reached(log) == [*(c for c in calls for _ in range(2)), ("get_order", {"order_id": "W31"})]


@pytest.mark.spec("GUARD-HTTP", "GUARD-PROXY")
def test_a_batch_with_a_call_and_a_body_that_is_not_json_are_refused(upstream: tuple[str, Path]) -> None:
    url, log = upstream
    guard = guard_of(url)
    raw = Raw(listening(guard))
    try:
        raw.start()
        batch = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "list_orders", "arguments": {}},
            },
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        status, kind, body = raw.post(batch)
        answers = json.loads(body)
        assert (status, kind) == (200, "application/json")
        assert [(a["id"], a["error"]["code"]) for a in answers] == [(1, -32000), (2, -32000)]
        status, _, body = raw.post_bytes(b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", ')
        assert status == 400 and answer_of(body)["error"]["code"] == -32700
        # the session goes on
        assert answer_of(raw.call(4, "list_orders", {}))["result"]["isError"] is False
    finally:
        raw.close()
        guard.stop()
    assert reached(log) == [("list_orders", {})]


@pytest.mark.spec("GUARD-HTTP", "GUARD-FAULTS")
def test_a_server_that_hangs_gives_one_error_and_the_session_goes_on(
    upstream: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = upstream
    trace = tmp_path / "trace.jsonl"
    guard = guard_of(url, "--timeout", "1", "--trace", str(trace))

    async def run() -> tuple[str, str]:
        async with (
            streamable_http_client(listening(guard)) as (read, write, _),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            with pytest.raises(McpError) as raised:
                await client.call_tool("hang", {})
            after = await client.call_tool("list_orders", {})
            assert after.content[0].type == "text"
            return raised.value.error.message, after.content[0].text

    try:
        message, after = asyncio.run(run())
    finally:
        guard.stop()
    assert message == "timeout: the MCP server did not answer within 1 s"
    assert after == "W1024 (shipped), W2048 (pending)"
    assert reached(log) == [("hang", {}), ("list_orders", {})]
    row = explain(trace)  # the hung call is recorded as failed (a timeout: state_consistency)
    assert (row["T"], row["fed"], row["label"]) == (2, 1, "state_consistency")


@pytest.mark.spec("GUARD-HTTP", "GUARD-FAULTS")
def test_a_server_that_cannot_be_reached(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    guard = guard_of("http://127.0.0.1:9/mcp", "--trace", str(trace))  # port 9 (discard): nothing listens
    raw = Raw(listening(guard))
    try:
        status, _, body = raw.post(INITIALIZE)
        assert status == 502 and answer_of(body)["error"]["code"] == -32000
        answer = answer_of(raw.call(1, "list_orders", {}))
        assert answer["id"] == 1 and "cannot be reached" in answer["error"]["message"]
    finally:
        raw.close()
        err = guard.stop()
    assert "the server's tools/list failed" in err
    # the call is recorded as failed; no tools/list answered, so no model span names the model
    row = explain(trace, "--model", "client")
    assert (row["T"], row["fed"]) == (1, 1) and "cannot be reached" in row["reason"]


@pytest.mark.spec("GUARD-HTTP")
@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--listen", "127.0.0.1:0"], "--listen and --upstream go together"),
        (["--listen", "localhost", "--upstream", "http://127.0.0.1:1/mcp"], "must be HOST:PORT"),
        (["--listen", "127.0.0.1:0", "--upstream", "ftp://x/mcp"], "must be an http:// or https:// URL"),
        (["--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/", "--", "server"], "not both"),
    ],
)
def test_bad_http_options_are_one_error_line(options: list[str], says: str) -> None:
    done = subprocess.run([*GUARD, *options], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert says in line
