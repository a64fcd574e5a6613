"""An MCP server (the official SDK's FastMCP, stdio) that fails on request, for GUARD-FAULTS tests.

Tools: ``echo(text)`` answers ``text``; ``crash()`` ends the process with status 3 before
answering; ``hang()`` never answers; ``garbage()`` writes a line that is not JSON on stdout and
then answers nothing; ``write(line)`` writes ``line`` on stdout (a message of the server's own
making), then answers ``"written"``.
"""

from __future__ import annotations

import asyncio
import os

from mcp.server.fastmcp import FastMCP

server = FastMCP("fault")


@server.tool()
def echo(text: str) -> str:
    """Answer ``text``."""
    return text


@server.tool()
def crash() -> str:
    """End the server at once."""
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answer (other requests are still served)."""
    await asyncio.sleep(3600)
    return "late"


@server.tool()
async def garbage() -> str:
    """Write garbage on stdout, then never answer."""
    os.write(1, b"this is not JSON-RPC\n")
    await asyncio.sleep(3600)
    return "late"


@server.tool()
def write(line: str) -> str:
    """Write ``line`` on stdout as a line of its own, then answer."""
    os.write(1, line.encode() + b"\n")
    return "written"


if __name__ == "__main__":
    server.run()
