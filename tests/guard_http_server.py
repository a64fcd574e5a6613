"""An MCP server over streamable HTTP (the official SDK's FastMCP on uvicorn, 127.0.0.1 only) for
the streamable-HTTP guard's tests (GUARD-HTTP) and benchmark.

Usage: ``python tests/guard_http_server.py LOG [--json]``: listens on a free port of 127.0.0.1,
prints ``PORT`` on its first line of stdout, and appends every tool call that reaches it to LOG
(one JSON line ``[tool, arguments]``): what the server saw, whatever the client was told.
``--json``: answer with JSON bodies instead of event streams.

Tools: ``list_orders()``; ``get_order(order_id)`` (``LookupError`` for an order it does not
have); ``hang()``, which never answers; ``echo(text)`` answers ``text`` (logged as its length:
the guard's large-body tests send megabytes).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys

import uvicorn
from mcp.server.fastmcp import FastMCP

LOG = sys.argv[1]
server = FastMCP("shop", json_response="--json" in sys.argv[2:], log_level="WARNING")
ORDERS = {"W1024": "shipped", "W2048": "pending"}


def reached(tool: str, arguments: dict[str, object]) -> None:
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps([tool, arguments]) + "\n")


@server.tool()
def list_orders() -> str:
    """The customer's orders."""
    reached("list_orders", {})
    return ", ".join(f"{k} ({v})" for k, v in ORDERS.items())


@server.tool()
def get_order(order_id: str) -> str:
    """The status of one order."""
    reached("get_order", {"order_id": order_id})
    if order_id not in ORDERS:
        raise LookupError(f"order {order_id} not found")
    return f"order {order_id}: {ORDERS[order_id]}"


@server.tool()
def echo(text: str) -> str:
    """Answer ``text``."""
    reached("echo", {"length": len(text)})
    return text


@server.tool()
async def hang() -> str:
    """Never answer."""
    reached("hang", {})
    await asyncio.sleep(3600)
    return "late"


def main() -> None:
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind(("127.0.0.1", 0))
    print(listening.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[listening])


if __name__ == "__main__":
    main()
