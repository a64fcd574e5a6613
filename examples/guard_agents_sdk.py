"""An OpenAI Agents SDK agent whose function tools are checked by ``prefixexec.guard.Guard``.

The guard sits in the SDK's own hooks: a tool input guardrail decides each call before the tool
function runs (a blocked call gets ``reject_content`` with the guard's reason, so the model reads
it as the tool's answer and the function never runs), a tool output guardrail and the tools'
``failure_error_function`` record what the function returned or raised, and the run's
``tool_error_formatter`` answers a call of a tool the agent does not have (the SDK asks it when
``tool_not_found_behavior="return_error_to_model"``). Every call goes to the trace, which
``prefixexec score --adapter otel --success-attr @ok TRACE`` reads back with the guard's FED and label.

The model is scripted (:class:`ScriptedModel`, an Agents SDK ``Model`` that answers each turn
with the next planned tool call): no model service, no network. SDK tracing is off.

Usage: ``python examples/guard_agents_sdk.py TRACE`` (``pip install openai-agents``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    ModelResponse,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    Tool,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolOutputGuardrailData,
    Usage,
    function_tool,
    set_tracing_disabled,
    tool_input_guardrail,
    tool_output_guardrail,
)
from agents.models.interface import Model
from agents.run_config import ToolErrorFormatterArgs
from agents.tool_context import ToolContext
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from prefixexec.guard import Guard, Pending

# --- the shop's tools: what ran is written down, so that a blocked call is seen not to run -----

RAN: list[str] = []
ORDERS = {"W1024": "shipped"}


def list_orders() -> str:
    """List the customer's orders."""
    RAN.append("list_orders()")
    return "W1024 (shipped), W2048 (pending)"


def get_order(order_id: str) -> str:
    """The status of one order."""
    RAN.append(f"get_order(order_id={order_id!r})")
    if order_id not in ORDERS:
        raise LookupError(f"order {order_id} not found")
    return f"order {order_id}: {ORDERS[order_id]}"


#: What the model proposes, one call per turn, then its answer.
PLAN: list[tuple[str, str]] = [
    ("list_orders", "{}"),
    ("get_order", '{"order_id": "W1024"}'),
    ("get_order", '{"order_id": 1024}'),  # not a string: the tool's schema
    ("get_order", '{"order_id": "W9999"}'),  # an id the session never showed
    ("refund_order", '{"order_id": "W1024"}'),  # the agent has no such tool
    ("get_order", '{"order_id": "W2048"}'),  # allowed; the tool fails
]
ANSWER = "Order W1024 has shipped."


class ScriptedModel(Model):
    """An Agents SDK model that answers turn ``n`` with the ``n``-th planned tool call, then with
    :data:`ANSWER`."""

    def __init__(self, plan: list[tuple[str, str]]) -> None:
        self.plan = plan
        self.turn = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        turn, self.turn = self.turn, self.turn + 1
        if turn < len(self.plan):
            name, arguments = self.plan[turn]
            call = ResponseFunctionToolCall(
                type="function_call", call_id=f"call_{turn + 1}", name=name, arguments=arguments
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(type="output_text", text=ANSWER, annotations=[])
        message = ResponseOutputMessage(
            type="message", id=f"msg_{turn + 1}", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")


# --- the guard in the SDK's hooks ----------------------------------------------------------------


def arguments_of(text: str | None) -> object:
    """The model's argument text as JSON (a text that is not JSON stays a text: GUARD-SCHEMA)."""
    try:
        return json.loads(text or "{}")
    except ValueError:
        return text


class GuardedRun(RunHooks[Any]):
    """The guard's hooks for one run: the model's calls (to name the arguments of a call of an
    unknown tool), the input and output guardrails, the tools' failure function and the run's
    tool error formatter."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self.asked: dict[str, str] = {}
        self.pending: dict[str, Pending] = {}
        self.raised: set[str] = set()
        self.input = tool_input_guardrail(self.before)
        self.output = tool_output_guardrail(self.after)

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        for item in response.output:
            if isinstance(item, ResponseFunctionToolCall):
                self.asked[item.call_id] = item.arguments

    def before(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        call = data.context
        arguments = arguments_of(call.tool_arguments)
        pending = self.guard.begin(call.tool_name, arguments, call.tool_call_id)
        if pending.decision.blocked:
            reason = self.guard.block(pending)
            print(f"{call.tool_name} {call.tool_arguments}: blocked: {reason}")
            return ToolGuardrailFunctionOutput.reject_content(reason)
        self.pending[call.tool_call_id] = pending
        return ToolGuardrailFunctionOutput.allow()

    def after(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        call = data.context
        failed = call.tool_call_id in self.raised
        self.guard.finish(self.pending.pop(call.tool_call_id), str(data.output), is_error=failed)
        print(f"{call.tool_name} {call.tool_arguments}: {'failed' if failed else 'ran'}: {data.output}")
        return ToolGuardrailFunctionOutput.allow()

    def failed(self, context: RunContextWrapper[Any], error: Exception) -> str:
        """The tools' ``failure_error_function``: the model reads the error (the output guardrail
        then records the call as failed)."""
        if isinstance(context, ToolContext):
            self.raised.add(context.tool_call_id)
        return f"{type(error).__name__}: {error}"

    def tool_error(self, error: ToolErrorFormatterArgs[Any]) -> str | None:
        """The run's ``tool_error_formatter``: a call of a tool the agent does not have is the
        guard's to answer (GUARD-TOOL), with the arguments the model gave."""
        if error.kind != "tool_not_found":
            return None
        asked = self.asked.get(error.call_id)
        pending = self.guard.begin(error.tool_name, arguments_of(asked), error.call_id)
        reason = self.guard.block(pending) if pending.decision.blocked else None
        print(f"{error.tool_name} {asked}: blocked: {reason}")
        return reason

    def tools(self, *functions: Callable[..., str]) -> list[Tool]:
        """``functions`` as function tools behind the guard."""
        return [
            function_tool(
                f,
                failure_error_function=self.failed,
                tool_input_guardrails=[self.input],
                tool_output_guardrails=[self.output],
            )
            for f in functions
        ]


async def main(trace: str) -> None:
    set_tracing_disabled(True)
    user = "Where are my orders?"
    guard = Guard(trace=trace, model="scripted-model", method="agents-sdk", context=[user])
    run = GuardedRun(guard)
    tools = run.tools(list_orders, get_order)
    # the guard checks against what the agent offers: the tools' own JSON schemas
    guard.set_tools(
        [{"name": t.name, "inputSchema": t.params_json_schema} for t in tools if isinstance(t, FunctionTool)]
    )
    agent = Agent(name="shop", instructions="Help the customer.", tools=tools, model=ScriptedModel(PLAN))
    config = RunConfig(
        tracing_disabled=True,
        tool_not_found_behavior="return_error_to_model",
        tool_error_formatter=run.tool_error,
    )
    result = await Runner.run(agent, user, hooks=run, run_config=config, max_turns=len(PLAN) + 2)
    guard.close()
    print(f"answer: {result.final_output}")
    print(f"tool functions ran: {', '.join(RAN)}")
    outcome = guard.outcome()
    print(f"T = {outcome.T}, FED = {outcome.fed}, label = {outcome.label.value if outcome.label else None}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
