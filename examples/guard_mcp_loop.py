"""An agent loop that calls MCP tools itself, with ``prefixexec.guard.Guard`` in front of each call.

The loop talks to the real ``mcp-server-sqlite`` through the official ``mcp`` client; the calls
stand for what a model proposed. Each call is decided by the guard first (the server's own
schemas, identifiers seen earlier, the precondition rules), blocked calls never reach the
server, and the session is written to a trace that ``prefixexec score --adapter otel`` reads.

Usage: ``python examples/guard_mcp_loop.py DB TRACE`` (``pip install "mcp<2" mcp-server-sqlite``).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from prefixexec.guard import Guard, load_guard_rules

RULES = """
[[requires]]            # write only after the table was created
tool = "write_query"
after = "create_table"

[[provenance]]          # a table name must have been seen (in the task or a result)
tool = "describe_table"
argument = "table_name"
values = "all"
"""

#: What the model proposed, in order.
PLAN = [
    ("write_query", {"query": "INSERT INTO notes (body) VALUES ('hi')"}),  # too early
    ("create_table", {"query": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"}),
    ("write_query", {"query": "INSERT INTO notes (body) VALUES ('hi')"}),
    ("describe_table", {"table_name": "todo"}),  # a table nobody mentioned
    ("describe_table", {"table_name": "notes"}),
]


async def main(db: str, trace: str) -> None:
    server = shutil.which("mcp-server-sqlite") or str(Path(sys.executable).parent / "mcp-server-sqlite")
    params = StdioServerParameters(command=server, args=["--db-path", db])
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as handle:
        handle.write(RULES)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        guard = Guard(
            [tool.model_dump() for tool in listed.tools],
            rules=load_guard_rules(handle.name),
            trace=trace,
            context=["Keep my notes in a table called notes."],  # the user's message
        )
        for name, arguments in PLAN:
            pending = guard.begin(name, arguments)
            if pending.decision.blocked:
                print(f"{name}: {guard.block(pending)}")
                continue
            result = await session.call_tool(name, arguments)
            guard.finish(pending, result.model_dump())
            print(f"{name}: {'error' if result.isError else 'ok'}")
        guard.close()
    Path(handle.name).unlink()
    outcome = guard.outcome()
    print(f"T = {outcome.T}, FED = {outcome.fed}, label = {outcome.label.value if outcome.label else None}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
