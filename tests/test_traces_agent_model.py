"""TRACE-AGENT-MODEL: the model read from the agent span when no model span names it.

The trace is the OpenAI Agents SDK's OTel GenAI export in tests/data/traces (written by the SDK,
tests/data/traces/SOURCE.md). Counted from its raw spans: 16 ``chat`` spans name
``gen_ai.request.model`` = 'scripted-gpt', and 8 of its 16 ``invoke_agent`` spans do too. The test
deletes the model from the chat spans (what an instrumentation that puts the model on the agent
span only writes) and checks the model comes from the ``invoke_agent`` span; for OpenInference,
whose real export carries no model on its AGENT spans, it moves ``llm.model_name`` from the LLM
spans to the AGENT spans.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prefixexec.adapters import ADAPTERS, AdapterOptions
from prefixexec.cli import main

from conftest import REPO

DATA = REPO / "tests" / "data" / "traces"
MODEL_KEYS = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")


def _edit(source: Path, target: Path, change: Callable[[dict[str, Any], dict[str, Any]], None]) -> None:
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attributes = {a["key"]: a for a in span.get("attributes", [])}
                    change(span, attributes)
                    span["attributes"] = list(attributes.values())
        lines.append(json.dumps(document))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _operation(attributes: dict[str, Any]) -> str | None:
    found = attributes.get("gen_ai.operation.name") or attributes.get("openinference.span.kind")
    return None if found is None else str(found["value"]["stringValue"])


@pytest.mark.spec("TRACE-AGENT-MODEL")
def test_the_invoke_agent_span_names_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def strip_chat(span: dict[str, Any], attributes: dict[str, Any]) -> None:
        if _operation(attributes) == "chat":
            for key in MODEL_KEYS:
                attributes.pop(key, None)

    path = tmp_path / "agent-model.jsonl"
    _edit(DATA / "agents-otel-genai.jsonl", path, strip_chat)
    rollouts = ADAPTERS["otel"].read([str(path)], AdapterOptions())
    assert rollouts and {r.condition.model for r in rollouts} == {"scripted-gpt"}

    # with no model anywhere, the error stays
    def strip_all(span: dict[str, Any], attributes: dict[str, Any]) -> None:
        for key in MODEL_KEYS:
            attributes.pop(key, None)

    _edit(DATA / "agents-otel-genai.jsonl", path, strip_all)
    assert main(["score", "--adapter", "otel", str(path)]) == 2
    assert "no model span names the model: give --model" in capsys.readouterr().err


@pytest.mark.spec("TRACE-AGENT-MODEL")
def test_an_openinference_agent_span_names_the_model(tmp_path: Path) -> None:
    def move(span: dict[str, Any], attributes: dict[str, Any]) -> None:
        kind = _operation(attributes)
        if kind == "LLM":
            attributes.pop("llm.model_name", None)
        elif kind == "AGENT":
            attributes["llm.model_name"] = {
                "key": "llm.model_name",
                "value": {"stringValue": "agent-level-model"},
            }

    path = tmp_path / "agent-model-oi.jsonl"
    _edit(DATA / "agents-openinference.jsonl", path, move)
    rollouts = ADAPTERS["openinference"].read([str(path)], AdapterOptions())
    assert rollouts and {r.condition.model for r in rollouts} == {"agent-level-model"}
    # a model span, where there is one, wins over the agent span
    untouched = ADAPTERS["openinference"].read([str(DATA / "agents-openinference.jsonl")], AdapterOptions())
    assert {r.condition.model for r in untouched} == {"scripted-gpt"}
