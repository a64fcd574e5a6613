"""Make the agent traces in tests/data/traces/ (run by hand; the test suite never imports it).

The committed traces are what the tests read; this script is how they were made, so that anyone
can make them again. It runs real agents, with no model service, against an OpenAI-compatible
``/v1/chat/completions`` endpoint that this script serves itself on 127.0.0.1 and answers from a
script per scenario (:data:`SCENARIOS`):

* the OpenAI Agents SDK (``openai-agents``, chat-completions model) with function tools that
  raise on bad input, traced three ways at once: by ``opentelemetry-instrumentation-openai-agents-v2``
  (OpenTelemetry GenAI semantic conventions) and by
  ``openinference-instrumentation-openai-agents``
  (OpenInference), each into its own OpenTelemetry SDK ``TracerProvider`` whose
  ``SimpleSpanProcessor`` writes OTLP JSON Lines with ``opentelemetry-exporter-otlp-json-file``'s
  ``FileSpanExporter``, and by the SDK's own trace export through
  ``prefixexec.integrations.agents.JsonlTraceProcessor``;
* a LangGraph ReAct agent (``langgraph.prebuilt.create_react_agent`` over ``langchain-openai``'s
  ``ChatOpenAI``) with the same tools, traced by ``langsmith``'s ``LangChainTracer`` (its
  ``Client`` posts runs to this script's loopback server, which writes each run as the client
  sent it, creation and update merged: a LangSmith run export) and by
  ``openinference-instrumentation-langchain`` into OTLP JSON Lines.

After each run the script plays the team's evaluator: it decides success from the agent's final
answer (:data:`SCENARIOS` ``expect``) and records it the way each format carries evaluations: a
``gen_ai.evaluation.result`` event (name ``success``) on a span of the run's trace for the OTLP
files (the OpenTelemetry SDK, a child of the trace's root span, also carrying
``gen_ai.conversation.id`` = the scenario), an Agents SDK ``custom_span`` named ``evaluation``
for the SDK's own export, and the run's ``extra.metadata.success`` for LangSmith.

Usage (a virtual environment of its own; none of these packages is a test dependency)::

    python3.11 -m venv /tmp/traces-venv
    /tmp/traces-venv/bin/pip install openai-agents openinference-instrumentation-openai-agents \\
        opentelemetry-sdk opentelemetry-exporter-otlp-json-file \\
        opentelemetry-instrumentation-openai-agents-v2 \\
        langgraph langsmith langchain-openai openinference-instrumentation-langchain
    PYTHONPATH=. /tmp/traces-venv/bin/python tests/make_agent_traces.py

It replaces the trace files in tests/data/traces/ and writes ``server.log`` (every request the
scripted model answered) and ``versions.txt``; SOURCE.md there is written by hand. Nothing
network-facing is used except the loopback server, which answers at most :data:`MAX_REQUESTS`
requests and stops with the script.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "traces"
MAX_REQUESTS = 200
MODEL = "scripted-gpt"

# ---------------------------------------------------------------------------------------------
# The shop the tools act on

ORDERS = {
    "ORD-1001": {"status": "delivered", "total": 40.0},
    "ORD-1002": {"status": "shipped", "total": 15.5},
}


def lookup_order(order_id: str) -> str:
    """Look up an order by its id (ORD-NNNN) and return its status and total."""
    order = ORDERS.get(order_id)
    if order is None:
        raise ValueError(f"order {order_id} not found")
    return json.dumps({"order_id": order_id, **order})


def refund_order(order_id: str, amount: float) -> str:
    """Refund part or all of an order's total."""
    order = ORDERS.get(order_id)
    if order is None:
        raise ValueError(f"order {order_id} not found")
    if amount > order["total"]:
        raise ValueError(f"refund of {amount} exceeds the order total {order['total']}")
    return json.dumps({"order_id": order_id, "refunded": amount})


# ---------------------------------------------------------------------------------------------
# Scenarios: the first user message, the scripted model's replies (step k answers the k-th model
# request of the run: a list of tool calls (name, arguments) -- several are parallel calls -- or a
# text answer), and the word the final answer must contain for success.

Step = list[tuple[str, dict[str, Any]]] | str

SCENARIOS: dict[str, dict[str, Any]] = {
    "lookup": {
        "ask": "What is the status of order ORD-1001?",
        "steps": [[("lookup_order", {"order_id": "ORD-1001"})], "Order ORD-1001 was delivered."],
        "expect": "delivered",
    },
    "unknown-tool": {
        "ask": "Please cancel order ORD-1002.",
        "steps": [[("cancel_order", {"order_id": "ORD-1002"})], "I cannot cancel orders, sorry."],
        "expect": "cancelled",
    },
    "schema-error": {
        "ask": "Refund ten dollars on order ORD-1001.",
        "steps": [
            [("refund_order", {"order_id": "ORD-1001", "amount": "ten"})],
            "The refund could not be made.",
        ],
        "expect": "refunded",
    },
    "invented-id": {
        "ask": "Where is my most recent order?",
        "steps": [[("lookup_order", {"order_id": "ORD-7777"})], "I could not find that order."],
        "expect": "shipped",
    },
    "recovered": {
        "ask": "Refund order ORD-1002 in full, it was 20 dollars.",
        "steps": [
            [("refund_order", {"order_id": "ORD-1002", "amount": 20.0})],
            [("lookup_order", {"order_id": "ORD-1002"})],
            [("refund_order", {"order_id": "ORD-1002", "amount": 15.5})],
            "I refunded 15.5, the full total of order ORD-1002.",
        ],
        "expect": "refunded",
    },
    "parallel": {
        "ask": "Compare orders ORD-1001 and ORD-1003.",
        "steps": [
            [("lookup_order", {"order_id": "ORD-1001"}), ("lookup_order", {"order_id": "ORD-1003"})],
            "ORD-1001 was delivered; I found no order ORD-1003.",
        ],
        "expect": "both",
    },
    "parallel-ok": {
        "ask": "Check orders ORD-1001 and ORD-1002 for me.",
        "steps": [
            [("lookup_order", {"order_id": "ORD-1001"}), ("lookup_order", {"order_id": "ORD-1002"})],
            "ORD-1001 was delivered and ORD-1002 has shipped.",
        ],
        "expect": "shipped",
    },
    "no-tool": {
        "ask": "Hello! What can you help me with?",
        "steps": ["I can look up and refund your orders."],
        "expect": "orders",
    },
}

LOG: list[dict[str, Any]] = []
LANGSMITH_RUNS: dict[str, dict[str, Any]] = {}
LANGSMITH_ORDER: list[str] = []
_lock = threading.Lock()
_calls = [0]


def _scenario_of(messages: list[dict[str, Any]]) -> str:
    for message in messages:
        if message.get("role") == "user":
            text = message.get("content")
            if isinstance(text, list):
                text = " ".join(part.get("text", "") for part in text if isinstance(part, dict))
            for name, scenario in SCENARIOS.items():
                if scenario["ask"] == text:
                    return name
    raise RuntimeError(f"scripted model: no scenario for {messages!r}")


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    name = _scenario_of(messages)
    step_index = sum(1 for m in messages if m.get("role") == "assistant")
    steps: list[Step] = SCENARIOS[name]["steps"]
    step = steps[min(step_index, len(steps) - 1)]
    with _lock:
        _calls[0] += 1
        number = _calls[0]
    if isinstance(step, str):
        message: dict[str, Any] = {"role": "assistant", "content": step}
        finish = "stop"
    else:
        calls = [
            {
                "id": f"call_{name}_{step_index}_{i}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments)},
            }
            for i, (tool, arguments) in enumerate(step)
        ]
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        finish = "tool_calls"
    LOG.append({"request": number, "scenario": name, "step": step_index, "reply": message})
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODEL),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else {}

    def do_GET(self) -> None:
        if self.path.startswith("/langsmith/info"):
            self._json(200, {"version": "0.0.0", "batch_ingest_config": {}})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        if _calls[0] >= MAX_REQUESTS:
            self._json(503, {"error": "request limit"})
            return
        body = self._body()
        if self.path.endswith("/chat/completions"):
            self._json(200, _reply(body))
        elif self.path.rstrip("/").endswith("/langsmith/runs"):
            with _lock:
                LANGSMITH_RUNS[body["id"]] = dict(body)
                LANGSMITH_ORDER.append(body["id"])
            self._json(200, {})
        else:
            self._json(404, {"error": f"no endpoint {self.path}"})

    def do_PATCH(self) -> None:
        body = self._body()
        if "/langsmith/runs/" in self.path:
            run_id = self.path.rsplit("/", 1)[1]
            with _lock:
                LANGSMITH_RUNS.setdefault(run_id, {"id": run_id}).update(body)
            self._json(200, {})
        else:
            self._json(404, {"error": f"no endpoint {self.path}"})


def _serve() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _success(name: str, answer: str) -> bool:
    return str(SCENARIOS[name]["expect"]) in answer


# ---------------------------------------------------------------------------------------------
# OpenTelemetry: one TracerProvider per instrumentation, each writing its own OTLP JSON file


def _roots() -> Any:
    """A span processor that remembers each trace's root span (name -> span context)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class Roots(SpanProcessor):
        def __init__(self) -> None:
            self.roots: dict[str, Any] = {}

        def on_start(self, span: Any, parent_context: Any = None) -> None:
            if span.parent is None:
                self.roots[span.name] = span.get_span_context()

    return Roots()


def _provider(path: Path, service: str) -> tuple[Any, Any]:
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    roots = _roots()
    provider.add_span_processor(roots)
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(path))))
    return provider, roots


def _evaluate_otel(provider: Any, roots: Any, root_name: str, scenario: str, success: bool) -> None:
    """A ``gen_ai.evaluation.result`` event on a child of the trace's root span (the evaluator)."""
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, set_span_in_context

    context = roots.roots.get(root_name)
    if context is None:
        raise RuntimeError(f"no root span {root_name!r} was recorded: {sorted(roots.roots)}")
    tracer = provider.get_tracer("prefixexec.make_agent_traces")
    parent = set_span_in_context(NonRecordingSpan(context))
    with tracer.start_as_current_span(
        "evaluate success", context=parent, attributes={"gen_ai.conversation.id": scenario}
    ) as span:
        span.add_event(
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.name": "success",
                "gen_ai.evaluation.score.value": 1.0 if success else 0.0,
                "gen_ai.evaluation.score.label": "pass" if success else "fail",
                "gen_ai.evaluation.explanation": f"the answer {'contains' if success else 'lacks'} "
                f"{SCENARIOS[scenario]['expect']!r}",
            },
        )
    del trace


# ---------------------------------------------------------------------------------------------
# The OpenAI Agents SDK


def _tool_error(context: Any, error: Exception) -> str:
    """The error text a failed tool call returns to the model (and the traces record)."""
    return f"Error: {error}"


def run_agents(base: str) -> None:
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    import agents
    from agents import Agent, ModelBehaviorError, RunConfig, Runner, custom_span, function_tool, trace
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor as OpenInference
    from opentelemetry import context as otel_context
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor as GenAI

    from prefixexec.integrations.agents import JsonlTraceProcessor

    agents.set_default_openai_client(AsyncOpenAI(base_url=f"{base}/v1", api_key="local-scripted"))
    agents.set_default_openai_api("chat_completions")
    own = JsonlTraceProcessor(OUT / "agents-sdk.jsonl")
    agents.set_trace_processors([own])  # replaces the SDK's exporter to the OpenAI backend
    genai_provider, genai_roots = _provider(OUT / "agents-otel-genai.jsonl", "shop-agent")
    oi_provider, oi_roots = _provider(OUT / "agents-openinference.jsonl", "shop-agent")
    GenAI().instrument(tracer_provider=genai_provider, capture_message_content=True)
    OpenInference().instrument(tracer_provider=oi_provider, exclusive_processor=False)

    shop = Agent(
        name="shop-assistant",
        instructions="You help customers with their orders. Use the tools.",
        model=MODEL,
        # The tools' error text goes back to the model and into the traces (the SDK's default
        # failure function returns a fixed text and redacts the error in the trace).
        tools=[
            function_tool(lookup_order, failure_error_function=_tool_error),
            function_tool(refund_order, failure_error_function=_tool_error),
        ],
    )
    for name, scenario in SCENARIOS.items():
        # Each run starts from an empty OpenTelemetry context: the GenAI instrumentation leaves the
        # last span of a run attached, which would make the next run's root its child.
        otel_context.attach(otel_context.Context())
        with trace(f"shop {name}", group_id=name, metadata={"scenario": name}):
            try:
                result = Runner.run_sync(
                    shop, scenario["ask"], run_config=RunConfig(workflow_name=f"shop {name}")
                )
                answer = str(result.final_output)
            except ModelBehaviorError as exc:  # a call of a tool the agent does not have
                answer = f"(the run stopped: {exc})"
            success = _success(name, answer)
            with custom_span(
                "evaluation",
                data={
                    "gen_ai.evaluation.name": "success",
                    "gen_ai.evaluation.score.label": "pass" if success else "fail",
                    "gen_ai.conversation.id": name,
                },
            ):
                pass
        _evaluate_otel(genai_provider, genai_roots, f"shop {name}", name, success)
        _evaluate_otel(oi_provider, oi_roots, f"shop {name}", name, success)
        print(f"agents  {name:14} success={success}  {answer}")
    own.shutdown()
    genai_provider.shutdown()
    oi_provider.shutdown()


# ---------------------------------------------------------------------------------------------
# LangGraph


def run_langgraph(base: str) -> None:
    from langchain_core.tools import tool
    from langchain_core.tracers.langchain import LangChainTracer
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent
    from langsmith import Client
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry import context as otel_context

    oi_provider, oi_roots = _provider(OUT / "langgraph-openinference.jsonl", "shop-graph")
    LangChainInstrumentor().instrument(tracer_provider=oi_provider)
    client = Client(api_url=f"{base}/langsmith", api_key="local-scripted", auto_batch_tracing=False)
    model = ChatOpenAI(model=MODEL, base_url=f"{base}/v1", api_key="local-scripted", max_retries=0)
    # handle_tool_errors=True: a tool's exception becomes an error ToolMessage the model reads
    # (ToolNode's default re-raises every exception but invalid arguments).
    tools = ToolNode([tool(lookup_order), tool(refund_order)], handle_tool_errors=True)
    graph = create_react_agent(model, tools)
    for name, scenario in SCENARIOS.items():
        otel_context.attach(otel_context.Context())  # as for the Agents SDK runs
        tracer = LangChainTracer(client=client, project_name="shop-graph")
        config: Any = {
            "callbacks": [tracer],
            "run_name": "shop-graph",  # the root run's name: the agent (the scenario is metadata)
            "metadata": {"scenario": name},
            "recursion_limit": 12,
        }
        state = graph.invoke({"messages": [("user", scenario["ask"])]}, config=config)
        answer = str(state["messages"][-1].content)
        success = _success(name, answer)
        tracer.wait_for_futures()
        client.flush()
        # The evaluator's verdict, on the root run (as LangSmith's metadata, which a feedback
        # export would otherwise carry).
        for run in LANGSMITH_RUNS.values():
            metadata = run.get("extra", {}).get("metadata", {})
            if run.get("parent_run_id") is None and metadata.get("scenario") == name:
                metadata["success"] = success
        _evaluate_otel(oi_provider, oi_roots, "shop-graph", name, success)
        print(f"langgraph {name:14} success={success}  {answer}")
    oi_provider.shutdown()
    with (OUT / "langgraph-langsmith.jsonl").open("w", encoding="utf-8") as handle:
        for run_id in LANGSMITH_ORDER:
            handle.write(json.dumps(LANGSMITH_RUNS[run_id], sort_keys=True) + "\n")


def _versions() -> str:
    import importlib.metadata

    names = (
        "openai-agents",
        "openai",
        "openinference-instrumentation-openai-agents",
        "openinference-instrumentation-langchain",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-json-file",
        "opentelemetry-instrumentation-openai-agents-v2",
        "langgraph",
        "langchain-core",
        "langchain-openai",
        "langsmith",
    )
    lines = [f"python {sys.version.split()[0]}"]
    lines += [f"{n} {importlib.metadata.version(n)}" for n in names]
    return "\n".join(lines) + "\n"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.jsonl"):
        old.unlink()
    server, base = _serve()
    try:
        run_agents(base)
        run_langgraph(base)
    finally:
        server.shutdown()
    # one line per reply: "request N  scenario  step K  reply <JSON>" (a log, not an input)
    log = "".join(
        f"request {e['request']}  {e['scenario']}  step {e['step']}  reply {json.dumps(e['reply'])}\n"
        for e in LOG
    )
    (OUT / "server.log").write_text(log, encoding="utf-8")
    (OUT / "versions.txt").write_text(_versions(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
