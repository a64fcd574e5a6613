"""Semantics for the runtime monitor: candidate calls checked before they run (MON-SCHEMA, MON-BFCL).

:class:`SchemaSemantics` checks a call against the JSON Schemas of the tools offered to the model
(chat transcripts' ``tools``, inspect's ``ToolInfo``), with the chat adapter's validator
(:func:`prefixexec.adapters.chat.semantics.compile_schema` and ``schema_violation``): the tool
must be offered and its arguments must satisfy its parameter schema (MON-SCHEMA). Nothing is
executed; the state is the number of calls so far.

:class:`BfclLiveSemantics` runs calls on the live instances of a BFCL task with the BFCL
adapter's own check-and-run (:func:`prefixexec.adapters.bfcl.semantics.check_and_run`, every stage
of BFCL-EXEC); its ``fork`` copies the instances, so the monitor's ``check`` runs a candidate on
a copy and the live state stays as it was (MON-BFCL, MON-FORK).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from prefixexec.adapters.bfcl import backend
from prefixexec.adapters.bfcl.execute import World
from prefixexec.adapters.bfcl.parse import parse_call_string
from prefixexec.adapters.bfcl.semantics import (
    INFERENCE_MESSAGE_CHARS,
    NO_TOOL_REASON,
    BfclCall,
    BfclRun,
    BfclTask,
    check_and_run,
)
from prefixexec.adapters.chat.semantics import ChatTool, compile_schema, schema_violation
from prefixexec.kernel import Accepted, Label, Rejected, ToolCall
from prefixexec.kernel.actions import Action, NoToolAction

# ---------------------------------------------------------------------------------------------
# JSON-Schema tools (MON-SCHEMA)


@attrs.frozen(slots=True)
class SchemaTask:
    """The tools offered to the model (name -> tool with its parameter validator).

    ``no_tool_allowed``: whether ending without a call is executable; by default it is exactly
    when no tool is offered (as CHAT-NOTOOL and INS-NOTOOL decide).
    """

    tools: Mapping[str, ChatTool] = attrs.field(eq=False)
    no_tool_allowed: bool | None = None

    @property
    def allows_no_tool(self) -> bool:
        return not self.tools if self.no_tool_allowed is None else self.no_tool_allowed


def schema_task(tools: Iterable[Mapping[str, Any]], *, no_tool_allowed: bool | None = None) -> SchemaTask:
    """A task from tool specs: ``{"name", "parameters"}`` (inspect's ``ToolInfo``, MCP) or
    OpenAI's ``{"type": "function", "function": {"name", "parameters"}}``.

    Raises ``ValueError`` for a spec without a name or with a parameter schema that is not a
    valid JSON Schema.
    """
    found: dict[str, ChatTool] = {}
    for n, spec in enumerate(tools):
        nested = spec.get("function")
        inner: Mapping[str, Any] = nested if isinstance(nested, Mapping) else spec
        name = inner.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool {n}: no 'name'")
        parameters = inner.get("parameters", inner.get("input_schema"))
        try:
            validator = None if parameters is None else compile_schema(parameters)
        except ValueError as exc:
            raise ValueError(f"tool {name!r}: {exc}") from None
        found[name] = ChatTool(name, validator)
    return SchemaTask(found, no_tool_allowed)


class SchemaSemantics:
    """A call is executable at the schema level iff its tool is offered and its arguments satisfy
    the tool's parameter schema (MON-SCHEMA); both failures are labelled schema. The state is the
    number of calls made; nothing is executed, so states are immutable."""

    def initial_state(self, task: SchemaTask) -> tuple[SchemaTask, int]:
        return (task, 0)

    def step(
        self, state: tuple[SchemaTask, int], action: Action
    ) -> Accepted[tuple[SchemaTask, int]] | Rejected:
        task, position = state
        if isinstance(action, NoToolAction):
            if task.allows_no_tool:
                return Accepted((task, position + 1))
            offered = ", ".join(sorted(task.tools))
            return Rejected((), f"no tool call, but the model was offered tools ({offered})")
        if not isinstance(action, ToolCall):
            raise TypeError(f"schema semantics steps tool calls, got {type(action).__name__}")
        where = f"call {action.name}" + (f" (id {action.call_id})" if action.call_id is not None else "")
        tool = task.tools.get(action.name)
        if tool is None:
            offered = ", ".join(sorted(task.tools)) or "none"
            return Rejected(
                (Label.SCHEMA,),
                f"{where}: tool {action.name!r} was not offered to the model (offered: {offered})",
            )
        violation = schema_violation(tool, action.arguments, where)
        if violation is not None:
            return Rejected(
                (Label.SCHEMA,), f"{where}: arguments violate the schema of {action.name!r} {violation}"
            )
        return Accepted((task, position + 1))


SCHEMA = SchemaSemantics()


# ---------------------------------------------------------------------------------------------
# BFCL's live instances (MON-BFCL)


@attrs.define(slots=True)
class LiveBfclState:
    """The live instances of one BFCL rollout and the number of calls run on them.

    ``world`` is advanced in place by ``step``; :meth:`BfclLiveSemantics.fork` copies it.
    """

    world: World
    position: int
    #: Results of the calls accepted so far, which ground later argument values (BFCL-MISS-PARAM).
    seen: list[str] = attrs.field(factory=list)


def fork_world(world: World) -> World:
    """A copy of ``world`` whose instances are deep copies (the method catalogue is shared)."""
    twin = World.__new__(World)
    twin.catalogue = world.catalogue
    twin.long_context = world.long_context
    twin.instances = copy.deepcopy(world.instances)
    return twin


class BfclLiveSemantics:
    """BFCL calls run on the task's instances as an agent makes them (MON-BFCL).

    The task is a :class:`~prefixexec.adapters.bfcl.semantics.BfclRun` (for a live agent, an
    empty run: :func:`live_run`); each :class:`~prefixexec.adapters.bfcl.semantics.BfclCall` goes
    through the adapter's :func:`~prefixexec.adapters.bfcl.semantics.check_and_run`, so its verdict,
    label and reason are BFCL-EXEC's. ``step`` mutates the state's instances; :meth:`fork`
    copies them for a side-effect-free check. The no-tool action is rejected as BFCL-NOTOOL says.
    """

    def __init__(self) -> None:
        self._task: BfclRun | None = None

    @property
    def _run(self) -> BfclRun:
        if self._task is None:
            raise RuntimeError("initial_state has not been called")
        return self._task

    def initial_state(self, task: BfclRun) -> LiveBfclState:
        if self._task is not None and self._task is not task:
            raise RuntimeError("a BfclLiveSemantics serves one rollout; make a new one for the next")
        self._task = task
        with backend.utc():
            return LiveBfclState(World(task.task.entry), 0)

    def fork(self, state: LiveBfclState) -> LiveBfclState:
        return LiveBfclState(fork_world(state.world), state.position, list(state.seen))

    def step(self, state: LiveBfclState, action: Action) -> Accepted[LiveBfclState] | Rejected:
        if isinstance(action, NoToolAction):
            error = self._run.inference_error
            if error is not None:
                return Rejected((), f"inference error: {error[:INFERENCE_MESSAGE_CHARS]}")
            return Rejected((), NO_TOOL_REASON)
        if not isinstance(action, BfclCall):
            raise TypeError(f"BFCL semantics steps BfclCall actions, got {type(action).__name__}")
        with backend.utc():
            record = check_and_run(state.world, self._run.task, action, state.position + 1, state.seen)
        state.position += 1
        if record.accepted:
            state.seen.append(record.result)
            return Accepted(state, record.result)
        return Rejected(record.labels, record.reason)


def live_run(task: BfclTask) -> BfclRun:
    """An empty run of ``task``: the task a live agent's monitor starts from."""
    return BfclRun(task=task, actions=(), turns=0, decoded_steps=())


def bfcl_action(text: str, turn: int, step: int = 0) -> BfclCall:
    """A candidate model output (one call, written like BFCL's ground truth) as an action.

    Parsed with ``ast`` and literals only (BFCL-PARSE); text that is not a plain call becomes a
    call with a fault, which the check rejects as a schema error.
    """
    parsed = parse_call_string(text)
    return BfclCall(
        name=parsed.name,
        arguments=dict(parsed.kwargs) if parsed.fault is None else {},
        turn=turn,
        step=step,
        call=parsed,
    )


__all__ = [
    "SCHEMA",
    "BfclLiveSemantics",
    "LiveBfclState",
    "SchemaSemantics",
    "SchemaTask",
    "bfcl_action",
    "fork_world",
    "live_run",
    "schema_task",
]
