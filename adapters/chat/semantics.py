"""Chat-transcript semantics: label families, tool schemas, when a call is executable.

Spec: spec/adapters/chat.md (CHAT-LABELS, CHAT-TOOLS, CHAT-EXEC, CHAT-NOTOOL) and LABEL-MASK /
LABEL-RULES of spec/adapters/labels.md. The recorded execution is checked, never repeated.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import attrs
import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import referencing.exceptions

from prefixexec.kernel import Accepted, Label, Rejected, ToolCall
from prefixexec.kernel.actions import Action, NoToolAction

from ..errors import InputError
from ..labels import NO_RULES, LabelRules, family_labels

#: Longest excerpt of a tool result quoted in a rejection reason.
REASON_EXCERPT = 200

# ---------------------------------------------------------------------------------------------
# Labels of error results (CHAT-LABELS)

#: Families of error texts, matched case-insensitively; every matching family is a label and the
#: kernel picks the primary one (CONV-LABEL-ORDER). No match: unlabelled.
ERROR_FAMILIES: tuple[tuple[Label, re.Pattern[str]], ...] = (
    (
        Label.SCHEMA,
        re.compile(
            r"\binvalid\b|missing (?:\d+ )?required|unexpected (?:keyword )?argument|validation error"
            r"|unknown (?:tool|function|action|parameter|argument)|is not a valid|wrong type",
            re.IGNORECASE,
        ),
    ),
    (
        Label.DEPENDENCY,
        re.compile(r"not found|no such (?:file|directory)|does not exist|doesn't exist", re.IGNORECASE),
    ),
    (
        Label.PRECONDITION,
        re.compile(
            r"permission|forbidden|denied|unauthori[sz]ed"
            r"|not (?:allowed|permitted|authori[sz]ed|authenticated|logged in|enabled)",
            re.IGNORECASE,
        ),
    ),
    (
        Label.STATE_CONSISTENCY,
        re.compile(
            r"already (?:exists?|done|enabled|disabled|closed|booked|cancell?ed|in use)|conflict|duplicate"
            r"|insufficient|not enough|exceed|timed out|timeout",
            re.IGNORECASE,
        ),
    ),
    (
        Label.INFORMATION,
        re.compile(
            r"\bno (?:results?|matches|match|route)\b|ambiguous|could not (?:determine|resolve)",
            re.IGNORECASE,
        ),
    ),
)


def error_labels(text: str, arguments: object = None, rules: LabelRules = NO_RULES) -> tuple[Label, ...]:
    """Labels of an error result ``text`` (CHAT-LABELS): a ``--label-rules`` rule's label, else
    every family whose pattern occurs, both matched with the call's ``arguments`` masked
    (LABEL-MASK, LABEL-RULES)."""
    return family_labels(text, arguments, ERROR_FAMILIES, rules)


# ---------------------------------------------------------------------------------------------
# Tools and their schemas (CHAT-TOOLS)


def _validator_class(schema: Mapping[str, Any]) -> type[jsonschema.protocols.Validator]:
    """The validator of the draft ``$schema`` names; draft 2020-12 when absent or unknown."""
    with warnings.catch_warnings():
        # Older jsonschema releases warn (DeprecationWarning) on an unknown $schema.
        warnings.simplefilter("ignore", DeprecationWarning)
        cls: type[jsonschema.protocols.Validator] = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
    return cls


@lru_cache(maxsize=256)
def _validator(canonical: str) -> jsonschema.protocols.Validator:
    schema = json.loads(canonical)
    cls = _validator_class(schema)
    cls.check_schema(schema)
    return cls(schema)


def compile_schema(schema: Any) -> jsonschema.protocols.Validator:
    """A validator for a tool's parameter schema (cached by its canonical JSON text).

    Raises ``ValueError`` when the schema is not a valid JSON Schema.
    """
    if not isinstance(schema, dict | bool):
        raise ValueError(f"the parameter schema must be an object, got {type(schema).__name__}")
    try:
        return _validator(json.dumps(schema, sort_keys=True))
    except jsonschema.exceptions.SchemaError as exc:
        raise ValueError(f"not a valid JSON Schema: {exc.message}") from None


def _path(parts: Sequence[object]) -> str:
    out = "arguments"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


@attrs.frozen(slots=True)
class ChatTool:
    """A tool offered in the transcript: its name and its parameter validator (``None``: any)."""

    name: str
    validator: jsonschema.protocols.Validator | None = attrs.field(eq=False)



# ---------------------------------------------------------------------------------------------
# Semantics (CHAT-EXEC, CHAT-NOTOOL)


@attrs.frozen(slots=True)
class ChatCall:
    """One assistant tool call and its result as the transcript records them."""

    where: str
    action: ToolCall
    arguments_error: str | None = None
    answered: bool = False
    flagged: bool = False
    result: str = ""


@attrs.frozen(slots=True)
class ChatTask:
    """What the chat semantics needs of one transcript."""

    calls: tuple[ChatCall, ...]
    tools: Mapping[str, ChatTool] = attrs.field(eq=False)
    no_tool_allowed: bool
    error_pattern: re.Pattern[str] | None = None
    #: ``--label-rules`` for the chat adapter (LABEL-RULES).
    label_rules: LabelRules = attrs.field(default=NO_RULES, eq=False)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= REASON_EXCERPT else flat[: REASON_EXCERPT - 3] + "..."


def schema_violation(tool: ChatTool, arguments: Mapping[str, Any], where: str) -> str | None:
    """The best-matching violation of the tool's schema by ``arguments``, or ``None``."""
    if tool.validator is None:
        return None
    try:
        error = jsonschema.exceptions.best_match(tool.validator.iter_errors(dict(arguments)))
    except referencing.exceptions.Unresolvable as exc:
        raise InputError(where, f"the schema of tool {tool.name!r} has an unresolvable $ref: {exc}") from None
    if error is None:
        return None
    return f"at {_path(list(error.absolute_path))}: {error.message}"


def schema_checks(
    action: ToolCall,
    arguments_error: str | None,
    where: str,
    tools: Mapping[str, ChatTool] | None,
    not_offered: str,
) -> tuple[list[Label], list[str]]:
    """The schema labels and reasons of one call (CHAT-EXEC's first three checks): arguments not
    JSON, a tool not offered (``not_offered`` says so; ``tools`` ``None``: not checked), arguments
    that violate the tool's schema."""
    labels: list[Label] = []
    reasons: list[str] = []
    if arguments_error is not None:
        labels.append(Label.SCHEMA)
        reasons.append(arguments_error)
    tool = None if tools is None else tools.get(action.name)
    if tools is not None and tool is None:
        labels.append(Label.SCHEMA)
        reasons.append(not_offered)
    elif tool is not None and arguments_error is None:
        violation = schema_violation(tool, action.arguments, where)
        if violation is not None:
            labels.append(Label.SCHEMA)
            reasons.append(f"arguments violate the schema of {action.name!r} {violation}")
    return labels, reasons


class ChatSemantics:
    """The transcript's recorded execution checked against its tools: the state is the position.

    Every violated check of a call is a label (CONV-LABEL-ORDER picks the primary one) and the
    reason joins their texts: arguments not valid JSON (schema), a tool not in ``tools``
    (schema), a schema violation (schema), a result flagged as an error or matching the error
    pattern (labelled by :func:`error_labels`), no result (unlabelled).
    """

    def initial_state(self, task: ChatTask) -> tuple[ChatTask, int]:
        return (task, 0)

    def step(self, state: tuple[ChatTask, int], action: Action) -> Accepted[tuple[ChatTask, int]] | Rejected:
        task, position = state
        if isinstance(action, NoToolAction):
            if task.no_tool_allowed:
                return Accepted((task, position + 1))
            offered = len(task.tools)
            return Rejected(
                (),
                f"the rollout made no tool call, but the task offers {offered} "
                f"tool{'s' if offered != 1 else ''} and the line does not set no_tool_allowed: "
                "a task that offers tools needs at least one call (CHAT-NOTOOL)",
            )
        call = task.calls[position]
        missing = f"tool {call.action.name!r} is not in 'tools'"
        labels, reasons = schema_checks(call.action, call.arguments_error, call.where, task.tools, missing)
        if not call.answered:
            reasons.append(f"no tool result answers call {call.action.call_id!r}")
        elif call.flagged:
            labels.extend(error_labels(call.result, call.action.arguments, task.label_rules))
            reasons.append(f"tool result is an error: {_excerpt(call.result)}")
        elif task.error_pattern is not None and task.error_pattern.search(call.result):
            labels.extend(error_labels(call.result, call.action.arguments, task.label_rules))
            reasons.append(f"tool result matches --error-pattern: {_excerpt(call.result)}")
        if reasons:
            return Rejected(labels, "; ".join(reasons))
        return Accepted((task, position + 1), call.result)


SEMANTICS = ChatSemantics()
