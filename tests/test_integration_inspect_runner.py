"""Runs one tiny inspect_ai task with inspect's mock model, for tests/test_integration_inspect.py.

Not a test module (it defines no test): the tests run it in a subprocess, because importing
inspect_ai patches the standard library's ``zipfile`` (inspect imports ``zipfile_zstd``), which
would change what other tests in the same pytest process see. inspect_ai is imported only when
this file runs as a script. The scenarios are scripted as in tests/make_inspect_logs.py: the mock
model replays a scenario's steps, one per model call; tools succeed and fail in the ways inspect
records.

    python tests/test_integration_inspect_runner.py OUT_DIR FORMAT NAME,NAME,... [options]

prints the path of the log it wrote. Options: ``--no-outcome`` (only the prefixexec scorer),
``--epochs N`` (with the ``prefixexec/pool`` reducer), ``--approval FILE`` (a policy file),
``--approver-object`` (the approver passed as an object), ``--errors-ok`` (a sample may error).

    python tests/test_integration_inspect_runner.py --batch JOBS.json

runs several such runs one after the other in this one process (importing inspect_ai takes
about 2 s of CPU, more than a tiny run): JOBS.json is a list of argument lists as above; it prints
one line per run, the path of its log, in order.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
from typing import Any

MODEL = "mockllm/model"

#: Per scenario: the steps the mock model takes and whether the ``outcome`` scorer says correct.
SCENARIOS: dict[str, dict[str, Any]] = {
    "ok": {"steps": [("call", [("add", {"x": 2, "y": 3})]), ("answer", "5")], "C": True},
    "recovered": {
        "steps": [
            ("call", [("read_file", {"path": "/missing"})]),
            ("call", [("add", {"x": 1, "y": 1})]),
            ("answer", "2"),
        ],
        "C": True,
    },
    "notool": {"steps": [("answer", "4")], "C": False},
    "notool_free": {"tools": False, "steps": [("answer", "hi")], "C": True},
    "parse_error": {"steps": [("parse_error", "add"), ("answer", "?")], "C": False},
    "unknown_tool": {"steps": [("call", [("delete_everything", {})]), ("answer", "x")], "C": False},
    "bad_args": {"steps": [("call", [("add", {"x": "two", "y": 3})]), ("answer", "x")], "C": True},
    "tool_error": {"steps": [("call", [("flaky", {})]), ("answer", "ok")], "C": True},
    "parallel": {
        "steps": [("call", [("add", {"x": 1, "y": 2}), ("read_file", {"path": "/nope"})]), ("answer", "3")],
        "C": False,
    },
    # the model raises after one good call: the sample ends in an error (only used where named)
    "crash": {"steps": [("call", [("add", {"x": 0, "y": 0})]), ("crash", "provider down")], "C": False},
    "two_ok": {
        "steps": [
            ("call", [("add", {"x": 1, "y": 2})]),
            ("call", [("add", {"x": 3, "y": 4})]),
            ("answer", "7"),
        ],
        "C": False,
    },
}


def build() -> dict[str, Any]:
    """The task's parts; imports inspect_ai (only in the subprocess)."""
    from inspect_ai.model import ChatMessage, ChatMessageAssistant, ModelOutput, ModelUsage
    from inspect_ai.model._model_output import ChatCompletionChoice
    from inspect_ai.scorer import Score, Scorer, Target, scorer
    from inspect_ai.scorer._metrics import mean
    from inspect_ai.solver import Generate, Solver, TaskState, solver
    from inspect_ai.tool import Tool, ToolCall, ToolError, tool

    @tool
    def add() -> Tool:
        async def execute(x: int, y: int) -> int:
            """Add two integers.

            Args:
                x: The first integer.
                y: The second integer.
            """
            return x + y

        return execute

    @tool
    def read_file() -> Tool:
        async def execute(path: str) -> str:
            """Read a text file.

            Args:
                path: The file to read.
            """
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)

        return execute

    @tool
    def flaky() -> Tool:
        async def execute() -> str:
            """A tool that reports an error."""
            raise ToolError("the service returned 503")

        return execute

    @solver
    def scripted_agent() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if SCENARIOS[str(state.sample_id)].get("tools", True):
                state.tools = [add(), read_file(), flaky()]
            return await generate(state, tool_calls="loop")

        return solve

    @scorer(metrics=[mean()])
    def outcome() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value="C" if SCENARIOS[str(state.sample_id)]["C"] else "I")

        return score

    def scripted_output(
        messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any
    ) -> ModelOutput:
        scenario = str(messages[0].text).split(":", 1)[1].strip()
        index = sum(1 for m in messages if isinstance(m, ChatMessageAssistant))
        kind, payload = SCENARIOS[scenario]["steps"][index]
        if kind == "crash":
            raise RuntimeError(payload)
        if kind == "answer":
            output = ModelOutput.from_content(model=MODEL, content=payload)
        else:
            if kind == "parse_error":
                calls = [
                    ToolCall(
                        id=f"{scenario}-{index}-0", function=payload, arguments={}, parse_error="bad JSON"
                    )
                ]
            else:
                calls = [
                    ToolCall(id=f"{scenario}-{index}-{n}", function=name, arguments=arguments)
                    for n, (name, arguments) in enumerate(payload)
                ]
            message = ChatMessageAssistant(content="", tool_calls=calls, model=MODEL, source="generate")
            output = ModelOutput(
                model=MODEL, choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")]
            )
        # a fixed usage keeps the mock model from counting tokens with tiktoken (a download)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return {"scripted_agent": scripted_agent, "outcome": outcome, "scripted_output": scripted_output}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--batch"] and len(args) == 2:
        with open(args[1], encoding="utf-8") as f:
            jobs = json.load(f)
        parts = build()
        for job in jobs:
            status = run(job, parts)
            if status != 0:
                return status
        return 0
    return run(args, build())


def run(argv: list[str], parts: dict[str, Any]) -> int:
    """One run: ``argv`` as in the module docstring; prints the log's path."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("log_format", choices=["eval", "json"])
    parser.add_argument("names")
    parser.add_argument("--no-outcome", action="store_true")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--approval")
    parser.add_argument("--approver-object", action="store_true")
    parser.add_argument("--errors-ok", action="store_true")
    args = parser.parse_args(argv)

    from inspect_ai import Epochs, Task, eval
    from inspect_ai.approval import ApprovalPolicy
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model

    from prefixexec.integrations.inspect import prefix_executability, schema_approver

    names = args.names.split(",")
    scorers = [prefix_executability()] if args.no_outcome else [parts["outcome"](), prefix_executability()]
    task = Task(
        name="tiny_tools",
        dataset=[Sample(id=name, input=f"scenario: {name}", target="") for name in names],
        solver=parts["scripted_agent"](),
        scorer=scorers,
        epochs=Epochs(args.epochs, "prefixexec/pool") if args.epochs > 1 else None,
    )
    approval: Any = args.approval
    if args.approver_object:
        approval = [ApprovalPolicy(schema_approver(), "*")]
    logs = eval(
        task,
        model=get_model(MODEL, custom_outputs=parts["scripted_output"]),
        log_dir=args.out_dir,
        log_format=args.log_format,
        display="none",
        max_samples=1,
        approval=approval,
        fail_on_error=False if args.errors_ok else True,
    )
    if logs[0].status != "success" and not args.errors_ok:
        print(f"inspect run failed: {logs[0].error}", file=sys.stderr)
        return 1
    print(logs[0].location, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
