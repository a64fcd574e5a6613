"""Latency and throughput that ``prefixexec guard`` adds in front of a real MCP server (issue 41).

Two sessions run side by side, each with its own copy of the same database: ``mcp-server-sqlite``
alone, and the same server behind ``prefixexec guard --trace FILE`` (every check on, every call
written to the trace). A client on the processes' pipes (JSON-RPC lines, no SDK in between)
alternates between the two, so both see the same machine load:

* latency: one ``tools/call`` at a time (``read_query`` of one row), the time from writing the
  request to reading its answer; the added latency is the guarded time minus the unguarded one,
  at the median and at the 99th percentile of each;
* throughput: ``--burst`` calls written at once, the time until every answer is read; the ratio
  is guarded time / unguarded time (1.0: no cost).

With ``--server http``, the same over streamable HTTP (GUARD-HTTP): a FastMCP server on
127.0.0.1 (tests/guard_http_server.py, event streams) alone and behind ``prefixexec guard
--listen 127.0.0.1:0 --upstream URL --trace FILE``, one server process each; the client is plain
HTTP on a kept-alive connection (``get_order`` of an order the session has seen, so the
provenance check runs), and the throughput is ``--burst`` calls from 8 connections at once.

Usage: ``python benchmarks/guard_latency.py [--calls N] [--burst N] [--server git|http]``. Targets
(issue 41): added latency within 1 ms at the median and 5 ms at p99; throughput within 1.2x.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
HTTP_SERVER = Path(__file__).resolve().parent.parent / "tests" / "guard_http_server.py"

INITIALIZE = [
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "b", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


class Client:
    """JSON-RPC over a process's pipes."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.next_id = 1
        for message in INITIALIZE:
            self.stdin.write(json.dumps(message).encode() + b"\n")
            if "id" in message:
                self.stdout.readline()

    def line(self, name: str, arguments: dict[str, Any]) -> bytes:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call"}
        message["params"] = {"name": name, "arguments": arguments}
        return json.dumps(message).encode() + b"\n"

    def call(self, name: str, arguments: dict[str, Any]) -> int:
        """Nanoseconds from writing one request to reading its answer."""
        data = self.line(name, arguments)
        start = time.perf_counter_ns()
        self.stdin.write(data)
        answer = self.stdout.readline()
        elapsed = time.perf_counter_ns() - start
        if b'"isError":true' in answer or b'"error"' in answer:
            raise SystemExit(f"the call failed: {answer[:300]!r}")
        return elapsed

    def burst(self, name: str, arguments: dict[str, Any], n: int) -> int:
        """Nanoseconds to write ``n`` requests at once and read every answer."""
        data = b"".join(self.line(name, arguments) for _ in range(n))
        # written by another thread: the pipes hold 64 KiB, so a server whose answers are not
        # read stops reading its requests
        writer = threading.Thread(target=self.stdin.write, args=(data,))
        start = time.perf_counter_ns()
        writer.start()
        for _ in range(n):
            self.stdout.readline()
        elapsed = time.perf_counter_ns() - start
        writer.join()
        return elapsed

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(10)
        self.stdout.close()


class HttpClient:
    """A streamable-HTTP session in plain HTTP requests, one connection per request.

    Not one kept-alive connection: on this machine uvicorn's event-stream answers on a kept-alive
    connection take about 40 ms more (with httpx as the client too, as the ``mcp`` client uses),
    a stall that a new connection per request does not have; the guard opens one per request
    to the server, so a kept-alive client would see the guard *remove* 40 ms."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.path = parts.path
        self.address = (parts.hostname or "", parts.port)
        self.connection = http.client.HTTPConnection(*self.address, timeout=60)
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        self.next_id = 0
        for message in INITIALIZE:
            self.post(message)

    def post(self, message: dict[str, Any]) -> bytes:
        self.connection.close()
        self.connection = http.client.HTTPConnection(*self.address, timeout=60)
        self.connection.connect()  # headers and body go out apart: no Nagle delay
        assert self.connection.sock is not None
        self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection.request("POST", self.path, json.dumps(message).encode(), self.headers)
        response = self.connection.getresponse()
        body = response.read()
        session = response.getheader("mcp-session-id")
        if session is not None:
            self.headers["Mcp-Session-Id"] = session
        return body

    def call(self, name: str, arguments: dict[str, Any]) -> int:
        """Nanoseconds from sending one request to reading its whole answer."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call"}
        message["params"] = {"name": name, "arguments": arguments}
        start = time.perf_counter_ns()
        answer = self.post(message)
        elapsed = time.perf_counter_ns() - start
        if b'"isError":true' in answer or b'"error"' in answer:
            raise SystemExit(f"the call failed: {answer[:300]!r}")
        return elapsed

    def close(self) -> None:
        self.connection.close()


def http_burst(url: str, n: int, connections: int = 8) -> int:
    """Nanoseconds for ``n`` calls from ``connections`` sessions at once (each its own thread)."""
    clients = [HttpClient(url) for _ in range(connections)]
    for client in clients:  # each session has seen the order (its own list_orders)
        client.call("list_orders", {})
    threads = [
        threading.Thread(
            target=lambda c=c: [c.call("get_order", {"order_id": "W1024"}) for _ in range(n // connections)]
        )
        for c in clients
    ]
    start = time.perf_counter_ns()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter_ns() - start
    for client in clients:
        client.close()
    return elapsed


def http_side(folder: Path, name: str, guarded: bool) -> tuple[list[subprocess.Popen[str]], str]:
    """A FastMCP server over streamable HTTP, alone or behind the guard: the processes and the URL."""
    server = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), str(folder / f"{name}.log")], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    url = f"http://127.0.0.1:{server.stdout.readline().strip()}/mcp"
    if not guarded:
        return [server], url
    trace = folder / "trace.jsonl"
    guard = subprocess.Popen(
        [sys.executable, "-m", "prefixexec", "guard", "--trace", str(trace), "--listen", "127.0.0.1:0",
         "--upstream", url],
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert guard.stderr is not None
    return [server, guard], guard.stderr.readline().rsplit(" ", 1)[1].strip()


def http_sessions(
    folder: Path, args: argparse.Namespace
) -> tuple[list[int], list[int], list[int], list[int]]:
    """Latencies and burst times, alone and guarded, over streamable HTTP."""
    alone_processes, alone_url = http_side(folder, "plain", False)
    guarded_processes, guarded_url = http_side(folder, "guarded", True)
    try:
        plain, guarded = HttpClient(alone_url), HttpClient(guarded_url)
        plain.call("list_orders", {})
        guarded.call("list_orders", {})
        tool, arguments = "get_order", {"order_id": "W1024"}
        for _ in range(50):
            plain.call(tool, arguments)
            guarded.call(tool, arguments)
        alone = [0] * args.calls
        behind = [0] * args.calls
        for n in range(args.calls):
            alone[n] = plain.call(tool, arguments)
            behind[n] = guarded.call(tool, arguments)
        plain.close()
        guarded.close()
        bursts_alone: list[int] = []
        bursts_behind: list[int] = []
        for _ in range(args.rounds):
            bursts_alone.append(http_burst(alone_url, args.burst))
            bursts_behind.append(http_burst(guarded_url, args.burst))
    finally:
        for process in [*guarded_processes[::-1], *alone_processes]:
            process.terminate()
            process.communicate(timeout=20)
    return alone, behind, bursts_alone, bursts_behind


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def sqlite_server(folder: Path, name: str) -> tuple[list[str], str, dict[str, Any]]:
    db = folder / f"{name}.db"
    setup = Client([str(BIN / "mcp-server-sqlite"), "--db-path", str(db)])
    setup.call("create_table", {"query": "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)"})
    setup.call("write_query", {"query": "INSERT INTO items (name) VALUES ('a'), ('b'), ('c')"})
    setup.close()
    return (
        [str(BIN / "mcp-server-sqlite"), "--db-path", str(db)],
        "read_query",
        {"query": "SELECT * FROM items WHERE id = 2"},
    )


def git_server(folder: Path, name: str) -> tuple[list[str], str, dict[str, Any]]:
    repo = folder / name
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    return [str(BIN / "mcp-server-git")], "git_status", {"repo_path": str(repo)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per session for the latency")
    parser.add_argument("--burst", type=int, default=2000, help="calls written at once for the throughput")
    parser.add_argument("--rounds", type=int, default=5, help="bursts per session (the median is shown)")
    parser.add_argument("--server", choices=("sqlite", "git", "http"), default="sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.server == "http":
            alone, behind, bursts_alone, bursts_behind = http_sessions(folder, args)
            trace = folder / "trace.jsonl"
            tool = "get_order"
        else:
            make = sqlite_server if args.server == "sqlite" else git_server
            plain_command, tool, arguments = make(folder, "plain")
            guarded_command, _, guarded_arguments = make(folder, "guarded")
            trace = folder / "trace.jsonl"
            guard = [
                sys.executable,
                "-m",
                "prefixexec",
                "guard",
                "--trace",
                str(trace),
                "--",
                *guarded_command,
            ]
            plain, guarded = Client(plain_command), Client(guard)
            for _ in range(50):  # warm up both (the guard lists the tools before its first call)
                plain.call(tool, arguments)
                guarded.call(tool, guarded_arguments)
            alone = []
            behind = []
            for _ in range(args.calls):
                alone.append(plain.call(tool, arguments))
                behind.append(guarded.call(tool, guarded_arguments))
            bursts_alone = []
            bursts_behind = []
            for _ in range(args.rounds):
                bursts_alone.append(plain.burst(tool, arguments, args.burst))
                bursts_behind.append(guarded.burst(tool, guarded_arguments, args.burst))
            plain.close()
            guarded.close()
        spans = sum(1 for line in trace.read_text(encoding="utf-8").splitlines() if "tools/call" in line)
    ms = 1e-6
    median_alone, median_behind = statistics.median(alone) * ms, statistics.median(behind) * ms
    p99_alone, p99_behind = percentile(alone, 0.99) * ms, percentile(behind, 0.99) * ms
    time_alone, time_behind = statistics.median(bursts_alone), statistics.median(bursts_behind)
    server = "FastMCP over streamable HTTP" if args.server == "http" else f"mcp-server-{args.server}"
    print(f"server: {server}, tool {tool}; {args.calls} calls each, side by side; "
          f"trace: {spans} tool spans written")  # fmt: skip
    print(f"latency median: {median_alone:.3f} ms alone, {median_behind:.3f} ms guarded, "
          f"added {median_behind - median_alone:.3f} ms (target <= 1 ms)")  # fmt: skip
    print(f"latency p99:    {p99_alone:.3f} ms alone, {p99_behind:.3f} ms guarded, "
          f"added {p99_behind - p99_alone:.3f} ms (target <= 5 ms)")  # fmt: skip
    rate_alone, rate_behind = args.burst / (time_alone * 1e-9), args.burst / (time_behind * 1e-9)
    ratio = time_behind / time_alone
    print(f"throughput ({args.burst} calls at once, median of {args.rounds}): {rate_alone:.0f} calls/s "
          f"alone, {rate_behind:.0f} calls/s guarded, time ratio {ratio:.2f}x (target <= 1.2x)")  # fmt: skip


if __name__ == "__main__":
    main()
