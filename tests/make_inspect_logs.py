"""Make the inspect_ai logs in tests/data/inspect/ (run by hand; the test suite never imports it).

The committed logs are what the tests read; this script is how they were made, so that anyone can
re-create them. It runs one tiny inspect task with inspect's scripted mock model (``mockllm``) and
tools that succeed and that fail in each way inspect records a tool error. It needs inspect_ai,
which is heavy, so install it into a separate virtual environment:

    python3 -m venv /tmp/venv-inspect && /tmp/venv-inspect/bin/pip install inspect-ai
    /tmp/venv-inspect/bin/python tests/make_inspect_logs.py

(The committed logs were made with inspect_ai 0.3.285.) It writes ``tiny_tools.eval`` (two
epochs, every scenario) and ``tiny_tools.json`` (one epoch, a few scenarios) into
tests/data/inspect/. Each scenario is a sample whose id names it; the mock model replays the
scenario's script one step per model call, so the logs are the same on every run up to ids and
times. tests/test_inspect_logs.py pins what the adapter reads from them.
"""

from __future__ import annotations

import errno
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.scorer._metrics import mean
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolCall, ToolError, tool
from inspect_ai.tool._tool import ToolParsingError

OUT = Path(__file__).resolve().parent / "data" / "inspect"
MODEL = "mockllm/model"

# One step: ("call", [(tool, arguments), ...]) makes one assistant message with those calls (in
# parallel when there are several); ("parse_error", tool) a call whose arguments failed to parse;
# ("answer", text) the final answer; ("crash", text) makes the model raise (a sample error).
Step = tuple[str, Any]

SCENARIOS: dict[str, dict[str, Any]] = {
    # Every call executes; the scorer says correct.
    "ok": {"steps": [("call", [("add", {"x": 2, "y": 3})]), ("answer", "5")], "C": True, "q": 1.0},
    # A failing first call (FileNotFoundError -> file_not_found), then a good one: recovered.
    "recovered": {
        "steps": [
            ("call", [("read_file", {"path": "/missing.txt"})]),
            ("call", [("add", {"x": 1, "y": 1})]),
            ("answer", "2"),
        ],
        "C": True,
        "q": 0.75,
    },
    # No tool call although tools were offered.
    "notool": {"steps": [("answer", "I guess 4")], "C": False, "q": 0.0},
    # No tool call and no tools offered.
    "notool_free": {"tools": False, "steps": [("answer", "hello")], "C": True, "q": 1.0},
    # Arguments that could not be parsed (ToolCall.parse_error).
    "parse_error": {"steps": [("parse_error", "add"), ("answer", "?")], "C": False, "q": 0.25},
    # A tool the sample did not offer: inspect answers "Tool ... not found" (parsing).
    "unknown_tool": {
        "steps": [("call", [("delete_everything", {})]), ("answer", "done")],
        "C": False,
        "q": 0.0,
    },
    "permission": {
        "steps": [("call", [("write_file", {"path": "/etc/passwd", "text": "x"})]), ("answer", "no")],
        "C": False,
        "q": 0.5,
    },
    "is_a_directory": {
        "steps": [("call", [("read_file", {"path": "/etc"})]), ("answer", "no")],
        "C": False,
        "q": 0.0,
    },
    "timeout": {"steps": [("call", [("slow", {})]), ("answer", "late")], "C": False, "q": 0.0},
    # ToolError -> error type "unknown".
    "tool_error": {"steps": [("call", [("flaky", {})]), ("answer", "ok")], "C": True, "q": 1.0},
    # ToolParsingError raised by the tool itself -> error type "parsing".
    "parsing_by_tool": {
        "steps": [("call", [("strict", {"value": "abc"})]), ("answer", "?")],
        "C": False,
        "q": 0.0,
    },
    # UnicodeDecodeError -> error type "unicode_decode".
    "unicode": {"steps": [("call", [("binary", {})]), ("answer", "?")], "C": False, "q": 0.0},
    # Two calls in one message; the second fails (file_not_found).
    "parallel": {
        "steps": [
            ("call", [("add", {"x": 1, "y": 2}), ("read_file", {"path": "/nope"})]),
            ("answer", "3"),
        ],
        "C": False,
        "q": 0.5,
    },
    # The model raises: the sample ends with an error and no score.
    "crash": {"steps": [("call", [("add", {"x": 0, "y": 0})]), ("crash", "provider down")]},
}

JSON_SCENARIOS = ("ok", "recovered", "notool", "permission")


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
        if path == "/etc":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)

    return execute


@tool
def write_file() -> Tool:
    async def execute(path: str, text: str) -> str:
        """Write a text file.

        Args:
            path: The file to write.
            text: What to write.
        """
        raise PermissionError(errno.EACCES, "Permission denied", path)

    return execute


@tool
def slow() -> Tool:
    async def execute() -> str:
        """A tool that always times out."""
        raise TimeoutError("took too long")

    return execute


@tool
def flaky() -> Tool:
    async def execute() -> str:
        """A tool that reports an error."""
        raise ToolError("the service returned 503")

    return execute


@tool
def strict() -> Tool:
    async def execute(value: str) -> str:
        """A tool that rejects its argument.

        Args:
            value: Must be a number.
        """
        raise ToolParsingError(f"value {value!r} is not a number")

    return execute


@tool
def binary() -> Tool:
    async def execute() -> str:
        """A tool whose output is not text."""
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    return execute


def all_tools() -> list[Tool]:
    return [add(), read_file(), write_file(), slow(), flaky(), strict(), binary()]


@solver
def scripted_agent() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if SCENARIOS[str(state.sample_id)].get("tools", True):
            state.tools = all_tools()
        return await generate(state, tool_calls="loop")

    return solve


@scorer(metrics=[mean()])
def outcome() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="C" if SCENARIOS[str(state.sample_id)]["C"] else "I")

    return score


@scorer(metrics=[mean()])
def quality() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=float(SCENARIOS[str(state.sample_id)]["q"]))

    return score


def scripted_output(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """The next step of the scenario named in the first user message, with a fixed token usage.

    Setting the usage keeps the mock model from counting tokens with tiktoken, which would
    download its vocabulary.
    """
    output = _scripted_step(messages)
    output.usage = ModelUsage(
        input_tokens=10 * len(messages), output_tokens=5, total_tokens=10 * len(messages) + 5
    )
    return output


def _scripted_step(messages: list[ChatMessage]) -> ModelOutput:
    scenario = str(messages[0].text).split(":", 1)[1].strip()
    step_index = sum(1 for m in messages if isinstance(m, ChatMessageAssistant))
    kind, payload = SCENARIOS[scenario]["steps"][step_index]
    if kind == "answer":
        return ModelOutput.from_content(model=MODEL, content=payload)
    if kind == "crash":
        raise RuntimeError(payload)
    if kind == "parse_error":
        calls = [
            ToolCall(
                id=f"{scenario}-{step_index}-0",
                function=payload,
                arguments={},
                parse_error="Error parsing the following tool call arguments:\n\n{x: 1,,}\n\n"
                "Error details: Expecting property name enclosed in double quotes",
            )
        ]
    else:
        calls = [
            ToolCall(id=f"{scenario}-{step_index}-{n}", function=name, arguments=arguments)
            for n, (name, arguments) in enumerate(payload)
        ]
    message = ChatMessageAssistant(content="", tool_calls=calls, model=MODEL, source="generate")
    return ModelOutput(model=MODEL, choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])


def make_task(names: tuple[str, ...]) -> Task:
    return Task(
        name="tiny_tools",
        dataset=[Sample(id=name, input=f"scenario: {name}", target="") for name in names],
        solver=scripted_agent(),
        scorer=[outcome(), quality()],
    )


def run(names: tuple[str, ...], epochs: int, log_format: str, target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        logs = eval(
            make_task(names),
            model=get_model(MODEL, custom_outputs=scripted_output),
            epochs=epochs,
            log_dir=tmp,
            log_format=log_format,
            fail_on_error=False,
            display="none",
            max_samples=1,
        )
        written = Path(logs[0].location)
        shutil.copyfile(written, target)
    print(f"wrote {target} ({target.stat().st_size} bytes)")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    run(tuple(SCENARIOS), 2, "eval", OUT / "tiny_tools.eval")
    run(JSON_SCENARIOS, 1, "json", OUT / "tiny_tools.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
