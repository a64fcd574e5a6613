"""Make the MLflow traces in tests/data/traces-mlflow/ (run by hand; the test suite never imports it).

A scripted tool-calling agent loop (no model service: each scenario's model replies are written
in tests/make_otlp_traces.py's :data:`SCENARIOS`) is traced by MLflow Tracing (``mlflow-skinny``,
``@mlflow.trace``): the agent function is an ``AGENT`` span, each model reply a ``CHAT_MODEL``
span (inputs: model, messages; outputs: an OpenAI chat completion with ``tool_calls``; the tools
offered set with ``mlflow.tracing.set_span_chat_tools``), each tool a ``TOOL`` span around the
real tool function (an exception: recorded by MLflow, status ERROR). The scenario is the trace's
session (``mlflow.trace.session`` metadata); after each run the script plays the evaluator (the
answer holds the expected word) and sets the trace tag ``success``. Traces go to a local file
store (``file:`` tracking URI; no server), are read back with ``mlflow.get_trace`` and exported
with ``Trace.to_json()``:

* ``mlflow-traces.jsonl``: one ``to_json()`` per line, every scenario but ``mcp-is-error`` (MLflow
  has no MCP convention);
* ``mlflow-recovered.json``: the ``recovered`` trace alone, ``to_json(pretty=True)``.

Usage::

    python3.11 -m venv /tmp/mlflow-venv
    /tmp/mlflow-venv/bin/pip install mlflow-skinny
    /tmp/mlflow-venv/bin/python tests/make_mlflow_traces.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_otlp_traces import DEFINITIONS, MODEL, SCENARIOS, TOOLS

OUT = Path(__file__).resolve().parent / "data" / "traces-mlflow"


def main() -> int:
    store = tempfile.mkdtemp(prefix="mlflow-store-")
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # the local file store, no server
    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    import mlflow
    from mlflow.entities import SpanType

    mlflow.set_tracking_uri(f"file://{store}")
    mlflow.set_experiment("prefixexec-traces")
    client = mlflow.MlflowClient()
    tools_offered = [
        {"type": "function", "function": {k: v for k, v in d.items() if k != "type"}} for d in DEFINITIONS
    ]

    def traced_tool(name: str) -> Any:
        return mlflow.trace(TOOLS[name], name=name, span_type=SpanType.TOOL)

    @mlflow.trace(span_type=SpanType.CHAT_MODEL)
    def chat(model: str, messages: list[dict[str, Any]], step: Any, call_prefix: str) -> dict[str, Any]:
        mlflow.tracing.set_span_chat_tools(mlflow.get_current_active_span(), tools_offered)
        if isinstance(step, str):
            message: dict[str, Any] = {"role": "assistant", "content": step}
        else:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"{call_prefix}_{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                    for i, (name, arguments) in enumerate(step)
                ],
            }
        return {"model": model, "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    def run(scenario: str, script: dict[str, Any]) -> str:
        @mlflow.trace(name="orders-agent", span_type=SpanType.AGENT)
        def agent(question: str) -> str:
            mlflow.update_current_trace(metadata={"mlflow.trace.session": scenario})
            messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
            for number, step in enumerate(script["steps"]):
                reply = chat(MODEL, messages, step, f"call_{scenario}_{number}")["choices"][0]["message"]
                messages.append(reply)
                if isinstance(step, str):
                    return step
                for call in reply["tool_calls"]:
                    name = call["function"]["name"]
                    arguments = json.loads(call["function"]["arguments"])
                    if name not in TOOLS:
                        content = f"Error: no such tool {name!r}"
                    else:
                        try:
                            content = traced_tool(name)(**arguments)
                        except Exception as exc:  # the loop answers the model with the error
                            content = f"Error: {exc}"
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            return ""

        return agent(f"scenario {scenario}")

    OUT.mkdir(parents=True, exist_ok=True)
    lines = []
    for scenario, script in SCENARIOS.items():
        if script.get("mcp"):
            continue
        answer = run(scenario, script)
        trace_id = mlflow.get_last_active_trace_id()
        client.set_trace_tag(trace_id, "success", "true" if script["expect"] in answer else "false")
        trace = mlflow.get_trace(trace_id)
        lines.append(trace.to_json())
        if scenario == "recovered":
            (OUT / "mlflow-recovered.json").write_text(trace.to_json(pretty=True) + "\n", encoding="utf-8")
    (OUT / "mlflow-traces.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    versions = [f"Python {sys.version.split()[0]}"] + [
        f"{p} {metadata.version(p)}" for p in ("mlflow-skinny", "opentelemetry-sdk")
    ]
    (OUT / "versions.txt").write_text("\n".join(versions) + "\n", encoding="utf-8")
    print(f"{len(lines)} traces -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
