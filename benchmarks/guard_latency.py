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

Usage: ``python benchmarks/guard_latency.py [--calls N] [--burst N] [--server git]``. Targets
(issue 41): added latency within 1 ms at the median and 5 ms at p99; throughput within 1.2x.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent

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
    parser.add_argument("--server", choices=("sqlite", "git"), default="sqlite")
    args = parser.parse_args()
    make = sqlite_server if args.server == "sqlite" else git_server
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plain_command, tool, arguments = make(folder, "plain")
        guarded_command, _, guarded_arguments = make(folder, "guarded")
        trace = folder / "trace.jsonl"
        guard = [sys.executable, "-m", "prefixexec", "guard", "--trace", str(trace), "--", *guarded_command]
        plain, guarded = Client(plain_command), Client(guard)
        for _ in range(50):  # warm up both (the guard lists the tools before its first call)
            plain.call(tool, arguments)
            guarded.call(tool, guarded_arguments)
        alone: list[int] = []
        behind: list[int] = []
        for _ in range(args.calls):
            alone.append(plain.call(tool, arguments))
            behind.append(guarded.call(tool, guarded_arguments))
        bursts_alone: list[int] = []
        bursts_behind: list[int] = []
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
    print(f"server: mcp-server-{args.server}, tool {tool}; {args.calls} calls each, side by side; "
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
