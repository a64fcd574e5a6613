"""Make the ATIF trajectories in tests/data/traces-atif/ (run by hand; the suite never imports it).

ATIF (Harbor's Agent Trajectory Interchange Format) trajectories made by the ``harbor`` package's
own converter: a scripted tool-calling agent loop (the scenarios and model replies of
tests/make_otlp_traces.py, the real tools of tests/make_agent_traces.py) writes the message
events a Strands agent run leaves (``{"kind": "message", "message": {"role", "content":
[{"text"} | {"toolUse": {"toolUseId", "name", "input"}} | {"toolResult": {"toolUseId",
"status", "content"}}]}}``; a tool that raises answers ``status: "error"`` with its message, a
tool the agent does not have answers ``Unknown tool``), and
``harbor.agents.installed.strands_trajectory.convert_strands_to_atif`` turns them into a validated
``harbor.models.trajectories.Trajectory`` (ATIF-v1.7), written with ``to_json_dict()`` as one
``atif-<scenario>.json`` per trajectory (the scenario is the ``session_id``). ATIF has no field
for the task's verdict (Harbor keeps rewards in its trial results): the script's evaluator (the
answer holds the expected word) is written into the trajectory's ``extra.success``.

``harbor`` requires Python 3.12 on PyPI; this machine has 3.11, where the converter and the
models run unchanged: it was installed with ``--no-deps --ignore-requires-python`` and pydantic.

Usage::

    python3.11 -m venv /tmp/atif-venv
    /tmp/atif-venv/bin/pip install pydantic shortuuid
    /tmp/atif-venv/bin/pip install --no-deps --ignore-requires-python harbor
    /tmp/atif-venv/bin/python tests/make_atif_trajectories.py
"""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_otlp_traces import DEFINITIONS, MODEL, SCENARIOS, TOOLS

OUT = Path(__file__).resolve().parent / "data" / "traces-atif"
AGENT = "orders-agent"


def events_of(scenario: str, script: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The message events of one run, and the final answer."""
    instruction = f"scenario {scenario}"
    events: list[dict[str, Any]] = [
        {"kind": "message", "message": {"role": "user", "content": [{"text": instruction}]}}
    ]
    answer = ""
    for number, step in enumerate(script["steps"]):
        if isinstance(step, str):
            events.append({"kind": "message", "message": {"role": "assistant", "content": [{"text": step}]}})
            answer = step
            break
        uses = [
            {"toolUse": {"toolUseId": f"call_{scenario}_{number}_{i}", "name": name, "input": arguments}}
            for i, (name, arguments) in enumerate(step)
        ]
        events.append({"kind": "message", "message": {"role": "assistant", "content": uses}})
        results = []
        for use in uses:
            call = use["toolUse"]
            if call["name"] not in TOOLS:
                status, text = "error", f"Unknown tool: {call['name']}"
            else:
                try:
                    status, text = "success", TOOLS[call["name"]](**call["input"])
                except Exception as exc:  # the agent answers the model with the error
                    status, text = "error", f"Error: {exc}"
            results.append(
                {
                    "toolResult": {
                        "toolUseId": call["toolUseId"],
                        "status": status,
                        "content": [{"text": text}],
                    }
                }
            )
        events.append({"kind": "message", "message": {"role": "user", "content": results}})
    return events, answer


def main() -> int:
    from harbor.agents.installed.strands_trajectory import convert_strands_to_atif

    tools = [
        {"name": d["name"], "description": d["description"], "inputSchema": {"json": d["parameters"]}}
        for d in DEFINITIONS
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    written = 0
    for scenario, script in SCENARIOS.items():
        if script.get("mcp"):
            continue
        events, answer = events_of(scenario, script)
        trajectory = convert_strands_to_atif(
            instruction=f"scenario {scenario}",
            result={"output": answer, "observed_model": {"model_id": MODEL}, "tools": tools},
            events=events,  # type: ignore[arg-type]  # the converter's TypedDict of the same keys
            agent_name=AGENT,
            agent_version="1.0",
            session_id=scenario,
        )
        trajectory.extra = {**(trajectory.extra or {}), "success": script["expect"] in answer}
        text = json.dumps(trajectory.to_json_dict(), indent=2) + "\n"
        (OUT / f"atif-{scenario}.json").write_text(text, encoding="utf-8")
        written += 1
    versions = [f"Python {sys.version.split()[0]}"] + [
        f"{p} {metadata.version(p)}" for p in ("harbor", "pydantic")
    ]
    (OUT / "versions.txt").write_text("\n".join(versions) + "\n", encoding="utf-8")
    print(f"{written} trajectories -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
