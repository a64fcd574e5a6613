"""A LangGraph tool-calling graph whose ``ToolNode`` asks ``prefixexec.guard.Guard`` before each call.

The guard is the ToolNode's ``wrap_tool_call``: LangGraph hands it every tool call the model made
(a call of a tool the node does not have too) with the function that would run it. A call the
guard blocks is answered with an error ``ToolMessage`` holding the guard's reason and never runs;
a call it allows runs, and what it returned (or the error the node made of its exception) is
recorded. Every call goes to the trace, which ``prefixexec score --adapter otel --success-attr @ok
TRACE`` reads back with the guard's FED and label.

The model is langchain-core's ``GenericFakeChatModel``, scripted with the planned tool calls: no
model service, no network.

Usage: ``python examples/guard_langgraph.py TRACE`` (``pip install langgraph langchain-core``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from prefixexec.guard import Guard

# --- the shop's tools: what ran is written down, so that a blocked call is seen not to run -----

RAN: list[str] = []
ORDERS = {"W1024": "shipped"}


@tool
def list_orders() -> str:
    """List the customer's orders."""
    RAN.append("list_orders()")
    return "W1024 (shipped), W2048 (pending)"


@tool
def get_order(order_id: str) -> str:
    """The status of one order."""
    RAN.append(f"get_order(order_id={order_id!r})")
    if order_id not in ORDERS:
        raise LookupError(f"order {order_id} not found")
    return f"order {order_id}: {ORDERS[order_id]}"


#: What the model proposes, one call per turn, then its answer.
PLAN: list[tuple[str, dict[str, Any]]] = [
    ("list_orders", {}),
    ("get_order", {"order_id": "W1024"}),
    ("get_order", {"order_id": 1024}),  # not a string: the tool's schema
    ("get_order", {"order_id": "W9999"}),  # an id the session never showed
    ("refund_order", {"order_id": "W1024"}),  # the graph has no such tool
    ("get_order", {"order_id": "W2048"}),  # allowed; the tool fails
]
ANSWER = "Order W1024 has shipped."


Execute = Callable[[ToolCallRequest], ToolMessage | Command[Any]]


def guarded(guard: Guard) -> Callable[[ToolCallRequest, Execute], ToolMessage | Command[Any]]:
    """The ToolNode's ``wrap_tool_call``: decide, then answer with the reason or run and record."""

    def wrap(request: ToolCallRequest, execute: Execute) -> ToolMessage | Command[Any]:
        call = request.tool_call
        shown = f"{call['name']} {json.dumps(call['args'])}"
        pending = guard.begin(call["name"], call["args"], call["id"])
        if pending.decision.blocked:
            reason = guard.block(pending)
            print(f"{shown}: blocked: {reason}")
            return ToolMessage(reason, tool_call_id=call["id"], name=call["name"], status="error")
        answer = execute(request)
        if not isinstance(answer, ToolMessage):  # a Command: nothing the guard reads as a result
            guard.finish(pending, "")
            return answer
        failed = answer.status == "error"
        guard.finish(pending, answer.text, is_error=failed)
        print(f"{shown}: {'failed' if failed else 'ran'}: {' '.join(answer.text.split())}")
        return answer

    return wrap


def graph(guard: Guard, tools: list[BaseTool]) -> Any:
    """agent -> (tool calls?) -> tools (behind the guard) -> agent, until the model answers."""
    script = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{n}", "type": "tool_call"}])
        for n, (name, args) in enumerate(PLAN, 1)
    ]
    model = GenericFakeChatModel(messages=iter([*script, AIMessage(ANSWER)]))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools, wrap_tool_call=guarded(guard), handle_tool_errors=True))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def main(trace: str) -> None:
    user = "Where are my orders?"
    tools: list[BaseTool] = [list_orders, get_order]
    # the guard checks against what the graph offers: the tools' own JSON schemas
    offered = [convert_to_openai_tool(t) for t in tools]
    guard = Guard(offered, trace=trace, model="scripted-model", method="langgraph", context=[user])
    state = graph(guard, tools).invoke({"messages": [("user", user)]})
    guard.close()
    print(f"answer: {state['messages'][-1].text}")
    print(f"tool functions ran: {', '.join(RAN)}")
    outcome = guard.outcome()
    print(f"T = {outcome.T}, FED = {outcome.fed}, label = {outcome.label.value if outcome.label else None}")


if __name__ == "__main__":
    main(sys.argv[1])
