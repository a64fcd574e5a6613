"""Chat-transcript semantics: label families, tool schemas, when a call is executable.

Spec: spec/adapters/chat.md (CHAT-LABELS, CHAT-TOOLS, CHAT-EXEC, CHAT-NOTOOL) and LABEL-MASK /
LABEL-RULES of spec/adapters/labels.md. The recorded execution is checked, never repeated.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

import attrs
import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import referencing
import referencing.exceptions
from jsonschema.exceptions import ValidationError

from prefixexec.kernel import Accepted, Label, Rejected, ToolCall
from prefixexec.kernel.actions import Action, NoToolAction

from ..errors import InputError
from ..labels import ARGUMENT_FAMILIES, NO_RULES, PRECONDITION_FAMILY, LabelRules, family_labels
from ..regex import Pattern, PatternError, compile_pattern
from ..text import one_line

#: Longest excerpt of a tool result quoted in a rejection reason.
REASON_EXCERPT = 200

# ---------------------------------------------------------------------------------------------
# Labels of error results (CHAT-LABELS)

#: Families of error texts, matched case-insensitively; every matching family is a label and the
#: kernel picks the primary one (CONV-LABEL-ORDER). No match: unlabelled.
ERROR_FAMILIES: tuple[tuple[Label, re.Pattern[str]], ...] = (
    *ARGUMENT_FAMILIES,  # LABEL-ARGUMENTS: shared with tau-bench and the traces
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
    # the precondition family the tau-bench and trace adapters share (LABEL-PRECONDITION)
    (Label.PRECONDITION, PRECONDITION_FAMILY),
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


def json_error(result: str) -> str | None:
    """CHAT-JSON-ERROR: the message of a tool result that is a JSON object with an ``error`` key
    (``{"error": "..."}``, how many MCP and function-calling servers answer), else ``None``.

    A string error is its own message; another value is its JSON text. A value that says there is
    no error (``null``, ``false``, ``""``, an empty list or object) is no error.
    """
    text = result.strip()
    if not text.startswith("{") or '"error"' not in text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or "error" not in value:
        return None
    error = value["error"]
    if error is None or error is False or error == "" or error == [] or error == {}:
        return None
    return error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)


def error_labels(text: str, arguments: object = None, rules: LabelRules = NO_RULES) -> tuple[Label, ...]:
    """Labels of an error result ``text`` (CHAT-LABELS): a ``--label-rules`` rule's label, else
    every family whose pattern occurs, both matched with the call's ``arguments`` masked
    (LABEL-MASK, LABEL-RULES)."""
    return family_labels(text, arguments, ERROR_FAMILIES, rules)


# ---------------------------------------------------------------------------------------------
# Tools and their schemas (CHAT-TOOLS)


def _validator_class(schema: Mapping[str, Any]) -> type[jsonschema.protocols.Validator]:
    """The validator of the draft ``$schema`` names; draft 2020-12 when absent or unknown; with
    the keywords that match patterns or compare items replaced by bounded ones (HOSTILE-SCHEMA-COST)."""
    with warnings.catch_warnings():
        # Older jsonschema releases warn (DeprecationWarning) on an unknown $schema.
        warnings.simplefilter("ignore", DeprecationWarning)
        cls: type[jsonschema.protocols.Validator] = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
    return _bounded(cls)


@lru_cache(maxsize=16)
def _bounded(cls: type[jsonschema.protocols.Validator]) -> type[jsonschema.protocols.Validator]:
    """``cls`` with ``pattern``, ``patternProperties`` and ``additionalProperties`` matched by RE2
    (linear time, HOSTILE-REGEX) and ``uniqueItems`` decided with a set (linear, not jsonschema's
    quadratic fallback for unhashable items: HOSTILE-SCHEMA-COST)."""
    keywords = {"pattern": _pattern, "uniqueItems": _unique_items}
    from jsonschema import _keywords

    # HOSTILE-COUNT-COST: the cost of a call follows what the call holds, not the schema's size
    if cls.VALIDATORS.get("properties") is _keywords.properties:
        keywords["properties"] = _properties
    if cls.VALIDATORS.get("required") is _keywords.required:
        keywords["required"] = _required
    if "patternProperties" in cls.VALIDATORS:
        keywords["patternProperties"] = _pattern_properties
        keywords["additionalProperties"] = _additional_properties
    extended: type[jsonschema.protocols.Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]  # jsonschema leaves extend unannotated
        cls, keywords
    )
    extended.__name__ = extended.__qualname__ = cls.__name__  # the same draft, bounded keywords
    return extended


_Errors = Iterator[ValidationError]


@lru_cache(maxsize=4096)
def _re2(pattern: str) -> Pattern:
    return compile_pattern(pattern)


def _short(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _re2(pattern).search(instance):
        yield ValidationError(f"{_short(instance)} does not match {_short(pattern)}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> _Errors:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        compiled = _re2(pattern)
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


#: The position of each name in a ``properties`` object, made once per object (the objects are
#: held here, so that their ids stay theirs; one per schema the run compiled).
_ORDERS: dict[int, tuple[Mapping[str, Any], dict[str, int]]] = {}


def _order(properties: Mapping[str, Any]) -> dict[str, int]:
    held = _ORDERS.get(id(properties))
    if held is None or held[0] is not properties:
        held = _ORDERS[id(properties)] = (properties, {name: i for i, name in enumerate(properties)})
    return held[1]


def _properties(validator: Any, properties: Any, instance: Any, schema: Any) -> _Errors:
    """jsonschema's ``properties``, visiting the arguments the call holds (in the schema's order,
    so errors come as before) instead of every name of the schema: a schema of 60,000 names and
    12,000 calls cost 22.6 s (HOSTILE-COUNT-COST)."""
    if not validator.is_type(instance, "object"):
        return
    if len(instance) < len(properties):
        order = _order(properties)
        names = sorted((key for key in instance if key in properties), key=order.__getitem__)
    else:
        names = [key for key in properties if key in instance]
    for name in names:
        yield from validator.descend(instance[name], properties[name], path=name, schema_path=name)


def _required(validator: Any, required: Any, instance: Any, schema: Any) -> _Errors:
    """jsonschema's ``required``, up to the first missing name: the names before it are in the
    call (so the cost follows the call), and the first of equal errors is the one ``best_match``
    takes (HOSTILE-COUNT-COST)."""
    if not validator.is_type(instance, "object"):
        return
    for name in required:
        if name not in instance:
            yield ValidationError(f"{name!r} is a required property")
            return


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> _Errors:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = [_re2(p) for p in schema.get("patternProperties", {})]
    extras = [key for key in instance if key not in properties and not any(p.search(key) for p in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        shown = ", ".join(_short(e, 80) for e in sorted(extras)[:10]) + (", ..." if len(extras) > 10 else "")
        yield ValidationError(f"Additional properties are not allowed ({shown} unexpected)")


def _canonical(value: Any) -> Any:
    """A hashable form of a JSON value, equal for values JSON Schema calls equal (``1`` and ``1.0``;
    objects whatever their key order; ``true`` is not ``1``)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list | tuple):
        return ("l", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, _canonical(v)) for k, v in value.items()))
    return ("?", repr(value))


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield ValidationError(f"{_short(instance)} has non-unique elements")
            return
        seen.add(key)


def _schema_patterns(schema: Any) -> Iterator[str]:
    """Every pattern of a schema document: ``pattern`` values and ``patternProperties`` keys, in
    every subschema (values of ``enum``, ``const``, ``default`` and ``examples`` are data)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern" and isinstance(value, str):
                yield value
            elif key == "patternProperties" and isinstance(value, dict):
                yield from (k for k in value if isinstance(k, str))
            stack.append(value)


_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


def _keys_anywhere(schema: Any, names: frozenset[str]) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            found.update(k for k in node if k in names)
            stack.extend(v for k, v in node.items() if k not in _DATA_KEYWORDS)
    return found


def _no_remote(uri: str) -> referencing.Resource[Any]:
    """CHAT-SCHEMA-REF: a ``$ref`` outside the given schema is never fetched."""
    raise referencing.exceptions.NoSuchResource(uri)


#: The registry of every tool schema: nothing but the schema itself and the drafts' meta-schemas
#: (jsonschema's default would fetch an http(s) ``$ref``: CHAT-SCHEMA-REF).
LOCAL_ONLY: referencing.Registry[Any] = referencing.Registry(retrieve=_no_remote)  # type: ignore[call-arg]  # retrieve is an attrs field


#: Instances every tool schema is tried on when it is compiled: a schema that refers to itself
#: without descending into the instance (``{"$ref": "#"}``) recurses on any of them.
_PROBES: tuple[Any, ...] = (None, {}, [], "", 0)


@lru_cache(maxsize=256)
def _validator(canonical: str) -> jsonschema.protocols.Validator:
    schema = json.loads(canonical)
    cls = _validator_class(schema)
    cls.check_schema(schema)
    for pattern in _schema_patterns(schema):
        try:
            _re2(pattern)
        except PatternError as exc:
            raise ValueError(f"pattern {_short(pattern, 80)} is not supported: {exc}") from None
    if _keys_anywhere(schema, frozenset({"patternProperties", "unevaluatedProperties"})) == {
        "patternProperties",
        "unevaluatedProperties",
    }:
        raise ValueError(
            "'unevaluatedProperties' together with 'patternProperties' is not supported "
            "(jsonschema would match those patterns with Python's backtracking re: HOSTILE-REGEX)"
        )
    validator = cls(schema, registry=LOCAL_ONLY)
    for probe in _PROBES:
        try:
            validator.is_valid(probe)
        except RecursionError:
            raise ValueError(SELF_REFERENCE) from None
        except referencing.exceptions.Unresolvable as exc:
            raise ValueError(f"{UNRESOLVABLE}: {one_line(str(exc))}") from None
    return validator


#: CHAT-SCHEMA-REF: what a schema with a ``$ref`` outside itself is told.
UNRESOLVABLE = "has an unresolvable $ref (only references inside the schema are resolved; CHAT-SCHEMA-REF)"

#: CHAT-SCHEMA-CYCLE: what a schema that refers to itself without end is told.
SELF_REFERENCE = (
    "the schema refers to itself without end (a '$ref' to '#' or a cycle of '$defs' that never "
    "descends into the arguments; CHAT-SCHEMA-CYCLE)"
)


def compile_schema(schema: Any) -> jsonschema.protocols.Validator:
    """A validator for a tool's parameter schema (cached by its canonical JSON text).

    Raises ``ValueError`` when the schema is not a valid JSON Schema, holds a pattern RE2 cannot
    match, or refers to itself without end (CHAT-SCHEMA-*).
    """
    if not isinstance(schema, dict | bool):
        raise ValueError(f"the parameter schema must be an object, got {type(schema).__name__}")
    try:
        return _validator(json.dumps(schema, sort_keys=True))
    except jsonschema.exceptions.SchemaError as exc:
        raise ValueError(f"not a valid JSON Schema: {_short(exc.message, 300)}") from None


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
    error_pattern: Pattern | None = None
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
    except referencing.exceptions.Unresolvable as exc:  # CHAT-SCHEMA-REF: never fetched
        what = f"the schema of tool {tool.name!r} {UNRESOLVABLE}: {one_line(str(exc))}"
        raise InputError(where, what) from None
    except RecursionError:  # CHAT-SCHEMA-CYCLE, reached only by these arguments
        raise InputError(where, f"the schema of tool {tool.name!r}: {SELF_REFERENCE}") from None
    if error is None:
        return None
    return f"at {_path(list(error.absolute_path))}: {_excerpt(error.message)}"


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
        elif (error := json_error(call.result)) is not None:
            labels.extend(error_labels(error, call.action.arguments, task.label_rules))
            reasons.append(f"tool result is an object with an 'error': {_excerpt(error)}")
        elif task.error_pattern is not None and task.error_pattern.search(call.result):
            labels.extend(error_labels(call.result, call.action.arguments, task.label_rules))
            reasons.append(f"tool result matches --error-pattern: {_excerpt(call.result)}")
        if reasons:
            return Rejected(labels, "; ".join(reasons))
        return Accepted((task, position + 1), call.result)


SEMANTICS = ChatSemantics()
